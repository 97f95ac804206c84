"""The diff screen: two graph files side by side (or unified), hunk by hunk.

The diff itself is computed off the UI loop (``compute_diff`` in a thread worker), and the view
highlights only the lines on screen, so a 20k-line pair opens without freezing the app.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Static

from magi_format.text import literal
from magi_tui.model.diff import diff_files
from magi_tui.ui.actions import bindings
from magi_tui.ui.widgets.diff_view import DiffView


def side_title(ref: Any, run_path: Path | None, other_run: Path | None) -> str:
    title = ref.title
    if run_path is not None and other_run is not None and run_path != other_run:
        name = run_path.name
        if run_path.name == other_run.name:  # two runs of one model: the run id tells them apart
            name = f"{run_path.parent.name}/{name}"
        title = f"{name}: {title}"
    return title


class DiffScreen(Screen):
    BINDINGS = [
        *bindings("screen"),
    ]

    def __init__(self, left: Any, right: Any, *, left_run: Path | None = None,
                 right_run: Path | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.left = left
        self.right = right
        self.left_run = left_run  # each side is read only inside its run
        self.right_run = right_run
        self.left_title = side_title(left, left_run, right_run)
        self.right_title = side_title(right, right_run, left_run)
        self.diff = None

    def compose(self) -> ComposeResult:
        t = Text(" diff ", style="bold reverse", end="", no_wrap=True, overflow="ellipsis")
        t.append(" − ", style="bold red")
        t.append(literal(self.left_title, 160), style="red")
        t.append("\n       + ", style="bold green")
        t.append(literal(self.right_title, 160), style="green")
        yield Static(t, id="diff-title")
        yield Static(Text("computing diff…", style="cyan"), id="diff-status")
        yield DiffView(id="diff-view")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(DiffView).focus()
        self._compute()

    @work(thread=True, exclusive=True)
    def _compute(self) -> None:
        # each side read once, in block reads (model.diff.read_side); a problem comes back as text
        diff, problem = diff_files(self.left.path, self.right.path,
                                   left_root=getattr(self.left, "root", None) or self.left_run,
                                   right_root=getattr(self.right, "root", None) or self.right_run)
        if diff is None:
            self.app.call_from_thread(self._failed, problem or "cannot read")
            return
        self.app.call_from_thread(self._show, diff)

    def _failed(self, message: str) -> None:
        self.query_one("#diff-status", Static).update(Text(literal(message), style="red"))

    def _show(self, diff) -> None:
        self.diff = diff
        status = self.query_one("#diff-status", Static)
        if diff.identical:
            status.update(Text("identical: both sides have the same content", style="bold green"))
        else:
            status.update(Text(f"-{diff.removed} +{diff.added}   {len(diff.hunks)} hunk(s)   "
                               "] next hunk · [ previous · u unified/side-by-side", style="dim"))
        suffix = Path(str(self.right.path)).suffix
        self.query_one(DiffView).set_diff(diff, self.left_title, self.right_title,
                                           language="python" if suffix == ".py" else None)
