"""``magi-tui attach``: wait for a run to appear under a path, then follow the newest one.

The path may be a run dir (followed at once, even before its ``timeline_events/`` exists) or a root
(followed run: the newest; a newer one is announced and ``N`` switches to it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Static

from magi_tui.model.discovery import find_runs, is_run_dir, normalise
from magi_tui.ui.labels import literal

SCAN_S = 0.5


def newest_run(root: Path) -> Path | None:
    runs = find_runs(root)
    if not runs:
        return None

    def started(r) -> float:
        tl = r.path / "timeline_events"
        try:
            return tl.stat().st_mtime if tl.exists() else r.path.stat().st_mtime
        except OSError:
            return 0.0

    return max(runs, key=started).path


class WaitingScreen(Screen):
    BINDINGS = [
        Binding("escape,q", "app.quit", "Quit", id="back"),
    ]

    def __init__(self, root: Path, *, command: list[str] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.root = normalise(Path(root))
        self.command = command
        self.following: Path | None = None
        self.newer: Path | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="waiting-text")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#waiting-text", Static).update(Text.assemble(
            ("\n  waiting for a run under ", ""), (literal(str(self.root)), "bold"), " …\n\n",
            ("  A run appears when a traced program starts compiling "
             "(python -m tracer script.py, or explain_compilation in your code).", "dim")))
        self._scan()
        self.set_interval(SCAN_S, self._scan)

    def _scan(self) -> None:
        root = self.root
        if is_run_dir(root):
            self._open(root)
            return
        if not root.exists():
            return
        newest = newest_run(root)
        if newest is None:
            return
        if self.following is None:
            self._open(newest)
        elif newest != self.following and newest != self.newer:
            self.newer = newest
            self.app.notify(f"a newer run appeared: {literal(newest.name)} — press N to follow it",
                            timeout=15)

    def _open(self, path: Path) -> None:
        from magi_tui.ui.screens.run import RunScreen

        if self.following == path:
            return
        self.following = path
        self.app.push_screen(RunScreen(path, live=True))

    def action_switch_newest(self) -> None:
        """Called by the app once the screens above this one are popped."""
        if self.newer is not None:
            self.following = None
            target, self.newer = self.newer, None
            self._open(target)
