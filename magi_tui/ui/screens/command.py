"""``magi-tui run``: the live run screen of the program being run, with its output panel.

A :class:`RunScreen` plus a :class:`ProcessLog` at the bottom (``l`` toggles it), the program's state
in the title (running / exit code), and ``ctrl+c`` stopping the program (SIGINT, then SIGTERM, then
SIGKILL; pressing it again escalates). Once the program has ended the run stays browsable.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Input, Static, TextArea

from magi_tui.live.runner import ProgramExited, ProgramRunner, ProgramStarted, RunnerEvent, SignalSent
from magi_tui.ui.actions import bindings
from magi_tui.ui.screens.run import RunScreen
from magi_tui.ui.widgets.process_log import ProcessLog


def typing_in_field(screen: Screen) -> bool:
    """Whether a key should go to a text field (filter, search) rather than run an action."""
    return isinstance(screen.focused, (Input, TextArea))


async def stop_program(screen: Screen, runner: ProgramRunner | None) -> None:
    """ctrl+c: stop the program (escalates when pressed again); a normal ctrl+c when none runs."""
    if runner is None or not runner.running:
        raise SkipAction()
    if runner.stop_requested is None:
        screen.notify("Stopping the program: SIGINT (ctrl+c again to force)", timeout=4)
    screen.run_worker(runner.stop(), group="stop-program", exit_on_error=False)


class CommandRunScreen(RunScreen):
    """The program's run, live, with its output (``l``)."""

    BINDINGS = bindings("program")
    ACTION_SCOPES = ("run", "program")

    def __init__(self, run_path: Path, runner: ProgramRunner, **kwargs: Any) -> None:
        super().__init__(run_path, live=True, **kwargs)
        self.runner = runner

    def compose(self) -> ComposeResult:
        footer = None
        for widget in super().compose():
            if isinstance(widget, Footer):
                footer = widget
                continue
            yield widget
        yield ProcessLog(self.runner, id="process-log")
        if footer is not None:
            yield footer

    def on_mount(self) -> None:
        self.runner.subscribe(self._on_runner)
        if self.runner.returncode is not None:  # it ended before this screen was up: the load reads it all
            self.live = False
            self.follow = False

    def on_unmount(self) -> None:
        self.runner.unsubscribe(self._on_runner)
        super().on_unmount()

    def on_loaded(self, events: int, seconds: float) -> None:
        super().on_loaded(events, seconds)
        if self.runner.returncode is not None and self.follower is not None:  # ended while loading
            self.read_now()
            self.stop_live()

    def _on_runner(self, event: RunnerEvent) -> None:
        if isinstance(event, (ProgramExited, SignalSent, ProgramStarted)):
            if isinstance(event, ProgramExited) and self.is_attached:
                self.read_now()  # the last events before the exit code
            if self.runner.returncode is not None:
                self.stop_live()  # the program ended: nothing more will be written
            self._update_title()
            self.refresh_bindings()

    def _update_title(self) -> None:
        super()._update_title()
        runner = getattr(self, "runner", None)
        if runner is None:
            return
        title = self.query_one("#run-title", Static)
        t = title.content.copy() if hasattr(title.content, "copy") else None
        if t is None:
            return
        if runner.returncode is None:
            t.append("  ▶ program running", style="bold green")
        else:
            ok = runner.returncode == 0
            t.append(f"  ■ program {runner.status_text()}", style="bold green" if ok else "bold red")
        title.update(t)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop_program" and not self.runner.running:
            return False
        return super().check_action(action, parameters)

    def action_toggle_log(self) -> None:
        if typing_in_field(self):
            raise SkipAction()
        log = self.query_one(ProcessLog)
        log.display = not log.display

    async def action_stop_program(self) -> None:
        await stop_program(self, self.runner)
