"""``magi-tui attach`` / ``magi-tui run``: wait for a run under a path, follow the newest, list them all.

The screen is the runs list of the root (:class:`RunsScreen`, the followed run marked ``live``), with
a waiting message while there is none. The path may be a run dir (followed at once, even before its
``timeline_events/`` exists) or a root: the newest run is opened live; a run appearing later is
announced and ``N`` switches to it; ``Esc`` on the run comes back here.

With ``magi-tui run`` the screen also owns the program (:class:`ProgramRunner`): it starts it, shows
its output (``l``) until its run is known, opens that run (named by ``MAGI_RUN_DIR=`` on the tracer's
stderr, or else the first run appearing under the root after the start) and says when it ends. Until then
it says ``starting <program>…`` and for how long, over the program's output: the runs list (older runs
under the root, not this program's) is shown once the run is open (``Esc`` on it), or the program ended.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.timer import Timer
from textual.widgets import DataTable, Footer, Input, Static

from magi_format.text import literal
from magi_tui.live.runner import ProgramExited, ProgramRunner, RunDirAnnounced, RunnerEvent, exit_text
from magi_tui.live.scan import newest, scan_root
from magi_tui.model.sources.discovery import normalise
from magi_tui.ui.actions import bindings
from magi_tui.ui.screens.command import CommandRunScreen, stop_program, typing_in_field
from magi_tui.ui.screens.run import RunScreen
from magi_tui.ui.screens.runs import RunsScreen
from magi_tui.ui.widgets.process_log import ProcessLog

SCAN_S = 0.5        # while waiting for the first run
SCAN_FOLLOW_S = 1.0  # once following one: look for newer runs
#: the runs list's own actions: nothing to act on while the program is starting (the list is not shown)
LIST_ACTIONS = frozenset({"mark_run", "compare_runs", "sort", "filter", "reload", "ranks", "fix"})


class WaitingScreen(RunsScreen):
    BINDINGS = bindings("attach", "program")
    ACTION_SCOPES = ("runs", "attach", "program")

    def __init__(self, root: Path, *, command: list[str] | None = None,
                 runner: ProgramRunner | None = None, **kwargs: Any) -> None:
        # absolute: the tracer names its run dir as the program's cwd sees it, the scan as the root was given;
        # the same run must compare equal both ways (or it is announced as "a newer run" about itself)
        super().__init__(normalise(Path(root).absolute()), **kwargs)
        self.command = command
        self.runner = runner
        self.following: Path | None = None
        self.newer: Path | None = None
        self.known: set[Path] = set()
        self.announced: set[Path] = set()
        self.initial: set[Path] = set()  # runs already there when we started (command mode: not ours)
        self._first_scan_done = False
        self._scan_timer: Timer | None = None
        self._clock: Timer | None = None  # ticks the "starting … N s" line

    # -- layout --------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        footer = None
        first = True
        for widget in super().compose():
            if isinstance(widget, Footer):
                footer = widget
                continue
            yield widget
            if first:  # under the title
                first = False
                yield Static(id="waiting-text")
        if self.runner is not None:
            yield ProcessLog(self.runner, id="process-log", classes="-full")
        if footer is not None:
            yield footer

    def on_mount(self) -> None:
        self._show_waiting()
        self._scan_live()
        self._scan_timer = self.set_interval(SCAN_S, self._scan_live)
        if self.runner is not None:
            self.runner.subscribe(self._on_runner)
            self.run_worker(self.runner.run(), group="program", name="program", exit_on_error=False)
            self._clock = self.set_interval(1.0, self._tick)
            self.call_after_refresh(self._show_waiting)  # after the runs list took the focus

    @property
    def starting(self) -> bool:
        """``magi-tui run`` before its program's run is open, while the program runs (or is being started)."""
        r = self.runner
        return r is not None and self.following is None and r.returncode is None

    def _tick(self) -> None:
        if self.starting:
            self._show_waiting()
        elif self._clock is not None:
            self._clock.stop()
            self._clock = None

    def on_unmount(self) -> None:
        if self.runner is not None:
            self.runner.unsubscribe(self._on_runner)
            self.runner.kill_now()  # the app is going away: never leave the program behind

    def on_screen_resume(self) -> None:
        if self._first_scan_done:
            self.action_reload()  # counts and statuses of the runs may have changed meanwhile

    def _show_list(self, show: bool) -> None:
        """The runs list (filter, table, its status line) shown, or hidden while the program starts."""
        widgets = [self.query_one("#runs-filter"), self.query_one("#runs-table"), self.query_one("#runs-status")]
        changed = widgets[1].display != show
        for w in widgets:
            w.display = show
        if show and changed:
            widgets[1].focus()
        elif not show and (self.focused is None or self.focused in widgets):
            for log in self.query("#process-output"):
                log.focus()  # its keys scroll the program's output
        if changed:
            self.refresh_bindings()

    def _show_waiting(self) -> None:
        text = self.query_one("#waiting-text", Static)
        r = self.runner
        if self.starting:
            assert r is not None
            self._show_list(False)
            text.display = True
            program = literal(" ".join(self.command) if self.command else r.command_text, 200)
            t = Text.assemble(("\n  starting ", ""), (program, "bold"), " …")
            if r.started_at is not None:
                t.append(f"  {max(0, int(time.time() - r.started_at))} s", style="cyan")
            t.append("\n\n  Its run opens as soon as it starts compiling; its output is below.\n", style="dim")
            text.update(t)
            return
        self._show_list(True)
        ended_first = r is not None and r.returncode is not None and self.following is None
        if self.following is not None or (self.rows and not ended_first):
            text.display = False
            return
        text.display = True
        if ended_first:
            assert r is not None and r.returncode is not None
            text.update(Text(f"\n  The program {exit_text(r.returncode)} before any run appeared "
                             "(its output is below).\n", style="bold red" if r.returncode else "yellow"))
            return
        t = Text.assemble(("\n  waiting for a run under ", ""), (literal(str(self.root)), "bold"), " …\n")
        if r is not None:
            t.append(f"\n  program: {literal(r.command_text, 200)}\n", style="dim")
        else:
            t.append("\n  A run appears when a traced program starts compiling "
                     "(python -m tracer script.py, or explain_compilation in your code).\n", style="dim")
        text.update(t)

    def _set_rows(self, rows: list[dict[str, Any]]) -> None:
        super()._set_rows(rows)
        if not rows:
            self.query_one("#runs-status", Static).update(Text("no run yet", style="dim"))
        self._show_waiting()

    # -- following -----------------------------------------------------------------------------
    def _scan_live(self) -> None:
        root = self.root
        if self.following is None and self._is_program_dir(root):
            self._note_runs([root])
            self._open(root)
            return
        found = scan_root(root)
        if found == [root]:
            self._note_runs([root])
            self._open(root)
            return
        if found is None:
            self._first_scan_done = True
            return
        new = [p for p in found if p not in self.known]
        first = not self._first_scan_done
        self._first_scan_done = True
        if first:
            self.initial = set(found)
        if not new:
            return
        self._note_runs(new)
        if first and self.runner is None:
            # attach: follow the newest run already there
            self._open(newest(new))
            return
        if first and self.runner is not None:
            return  # runs of earlier invocations: listed, never followed
        latest = newest(new)
        if self.following is None:
            self._open(latest)
        else:
            self._announce(latest)

    def _program_dirs(self) -> set[Path]:
        return {normalise(Path(p).absolute()) for p in self.runner.run_dirs} if self.runner is not None else set()

    def _is_program_dir(self, path: Path) -> bool:
        return self.runner is not None and path in self._program_dirs()

    def is_program_run(self, path: Path) -> bool:
        """A run of the program we started (named by the tracer, or new under the root since)."""
        return self.runner is not None and (path in self._program_dirs() or
                                            (self._first_scan_done and path not in self.initial))

    def _note_runs(self, paths: list[Path]) -> None:
        fresh = [p for p in paths if p not in self.known]
        self.known.update(paths)
        if fresh:
            self.action_reload()

    def _announce(self, path: Path) -> None:
        if path == self.following or path in self.announced:
            return
        self.announced.add(path)
        self.newer = path
        self.live_paths.add(str(path))
        self.app.notify(f"a newer run appeared: {literal(path.name)} — press N to follow it", timeout=15)

    def _on_runner(self, event: RunnerEvent) -> None:
        if isinstance(event, RunDirAnnounced):
            path = normalise(Path(event.path).absolute())
            if self.following is None:
                self._open(path)
            else:
                self._announce(path)
        elif isinstance(event, ProgramExited):
            r = self.runner
            assert r is not None
            self.app.notify(f"The program {exit_text(r.returncode or 0)}.",
                            severity="information" if r.returncode == 0 else "error", timeout=10)
            self.sub_title = exit_text(r.returncode or 0)
            # the program's runs are finished: no longer "live" in the list
            self.live_paths.difference_update({p for p in self.live_paths if self.is_program_run(Path(p))})
            self._render_rows()
            self._show_waiting()
            self.refresh_bindings()

    def _program_ended(self, path: Path) -> bool:
        return self.runner is not None and self.runner.returncode is not None and self.is_program_run(path)

    def _open(self, path: Path) -> None:
        if self.following == path:
            return
        self.following = path
        if not self._program_ended(path):  # a run whose program has ended is not live
            self.live_paths.add(str(path))
        if self._scan_timer is not None:
            self._scan_timer.stop()
            self._scan_timer = self.set_interval(SCAN_FOLLOW_S, self._scan_live)
        self._show_waiting()
        if self.runner is not None:
            log = self.query_one(ProcessLog)
            log.set_class(False, "-full")
        screen = self._screen_for(path)
        screen.quit_on_close = True  # opened for the user, not from the list: q quits, as on a first screen
        self.app.push_screen(screen)

    def _screen_for(self, path: Path) -> RunScreen:
        if self.runner is not None and self.is_program_run(path):
            return CommandRunScreen(path, self.runner)
        return RunScreen(path, live=True)

    # -- actions -------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("toggle_log", "stop_program") and self.runner is None:
            return False
        if action in LIST_ACTIONS and self.starting:
            return False
        if action == "stop_program" and (self.runner is None or not self.runner.running):
            return False
        return True

    @on(DataTable.RowSelected)
    def handle_data_table_row_selected(self, message: DataTable.RowSelected) -> None:
        message.stop()
        path = message.row_key.value
        if not path:
            return
        p = Path(path)
        if self.is_program_run(p):
            self.app.push_screen(self._screen_for(p))
        else:
            self.app.push_screen(RunScreen(p, live=path in self.live_paths))

    async def action_newest(self) -> None:
        if typing_in_field(self):
            raise SkipAction()
        await self.app.run_action("switch_newest")

    def action_switch_newest(self) -> None:
        """Called by the app once the screens above this one are popped."""
        if self.newer is not None:
            self.following = None
            target, self.newer = self.newer, None
            self._open(target)

    def action_toggle_log(self) -> None:
        if typing_in_field(self) or self.runner is None:
            raise SkipAction()
        log = self.query_one(ProcessLog)
        log.display = not log.display

    async def action_stop_program(self) -> None:
        await stop_program(self, self.runner)

    async def action_back(self) -> None:
        if self.runner is not None and self.runner.running and not typing_in_field(self) \
                and not self.query_one("#runs-filter", Input).value:
            self.notify("Stopping the program before quitting…", timeout=4)
            await self.runner.stop()
        await super().action_back()
