"""The magi-tui app: decides the first screen, holds the cross-run mark, offers every action in the
command palette, and applies colour settings (``--ansi`` / ``NO_COLOR``)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.command import Hit, Hits, Provider

from magi_tui.model.discovery import find_runs, normalise
from magi_format.text import literal


@dataclass
class Mark:
    """What ``m`` remembered: a file of an event (or of compiled_functions) in some run."""

    run_path: Path
    ref: Any  # FileRef or a plain path ref: has .path and .title

    @property
    def title(self) -> str:
        return f"{self.run_path.name}: {self.ref.title}"


class EventJumpProvider(Provider):
    """Palette: jump to any event of the open run by name or index."""

    async def search(self, query: str) -> Hits:
        from magi_tui.ui.screens.run import RunScreen

        screen = self.screen
        if not isinstance(screen, RunScreen):
            return
        matcher = self.matcher(query)
        shown = 0
        for ev in screen.run.events:
            text = f"#{ev.index} {ev.name}"
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, matcher.highlight(literal(text)), partial(screen.jump_to, ev),
                          help="jump to this event in the tree")
                shown += 1
                if shown >= 50:
                    return


class MagiApp(App):
    TITLE = "magi-tui"
    CSS_PATH = "app.tcss"
    COMMANDS = App.COMMANDS | {EventJumpProvider}
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        Binding("question_mark", "help", "Help", id="help"),
        Binding("ctrl+q", "quit", "Quit", show=False, id="quit"),
        Binding("N", "switch_newest", "Newest run", show=False, id="newest"),
    ]

    def __init__(self, path: Path, *, live: bool = False, ansi: bool = False,
                 command: list[str] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.path = Path(path)
        self.live = live
        self.command = command
        self.mark: Mark | None = None
        if ansi or os.environ.get("MAGI_TUI_ANSI"):
            self.theme = "ansi-dark"

    def on_mount(self) -> None:
        from magi_tui.ui.screens.run import RunScreen
        from magi_tui.ui.screens.runs import RunsScreen

        if self.command is not None or self.live:
            from magi_tui.ui.live import start_live_app

            start_live_app(self)
            return
        path = normalise(self.path)
        runs = find_runs(path)
        if len(runs) == 1 and runs[0].path.resolve() == path.resolve():
            self.push_screen(RunScreen(runs[0].path))
        elif len(runs) == 1:
            self.push_screen(RunScreen(runs[0].path))
        else:
            self.push_screen(RunsScreen(path))

    def action_switch_newest(self) -> None:
        """attach on a root: follow the newer run that was announced."""
        from magi_tui.ui.screens.waiting import WaitingScreen

        for screen in self.screen_stack:
            if isinstance(screen, WaitingScreen):
                if screen.newer is None:
                    self.notify("No newer run under this root.")
                    return
                while self.screen is not screen:
                    self.pop_screen()
                screen.action_switch_newest()
                return
        self.notify("N follows a newer run when attached to a root (magi-tui attach ROOT).")

    def action_help(self) -> None:
        from magi_tui.ui.screens.help import HelpScreen

        if isinstance(self.screen, HelpScreen):
            self.pop_screen()
            return
        self.push_screen(HelpScreen(self.screen))

    def get_system_commands(self, screen: Any):
        yield from super().get_system_commands(screen)
        actions = [
            ("First failure", "Jump to the first failed event", "first_failure"),
            ("Next failure", "Step to the next failed event", "step_failure(1)"),
            ("Previous failure", "Step to the previous failed event", "step_failure(-1)"),
            ("Triage panel", "Show or hide the triage panel", "toggle_triage"),
            ("Timeline", "Toggle the flat timeline", "toggle_timeline"),
            ("Diff", "Diff with the paired before (or with the mark)", "diff"),
            ("Mark", "Mark the current event/file for a diff", "mark"),
            ("Compiled functions", "Browse compiled_functions/", "compiled_functions"),
            ("Search in file", "Search the open file", "search"),
            ("Follow", "Toggle follow mode (live)", "toggle_follow"),
            ("Help", "Every key", "help"),
        ]
        for title, help_text, action in actions:
            name = action.split("(")[0]
            target = screen if hasattr(screen, f"action_{name}") else (self if hasattr(self, f"action_{name}") else None)
            if target is not None:
                yield SystemCommand(title, help_text, partial(target.run_action, action))
