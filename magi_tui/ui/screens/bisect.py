"""The bisect view: a bisect's steps as they are made, then its culprit (``magi-tui bisect --app``), or a
finished ``bisect_<ts>/`` folder read from its ``bisect.json``.

A live bisect runs in a thread worker (:class:`magi_tui.live.bisect.Bisector`); each step reaches the
screen through ``call_from_thread``. ``ctrl+c`` or ``q`` sets the bisect's cancel event: the trial running
is killed with its process group and no other starts. Enter opens a step's traced run, ``c`` the culprit
graph's run, ``d`` the diff of the culprit pass's graph before and after it: the culprit application's own
(the runs with and without it), else the whole stage's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from magi_format.text import literal
from magi_tui.model.outputs.bisect_view import culprit_diff, culprit_lines, culprit_pass_diff, load_bisect, step_line
from magi_tui.ui.actions import bindings, vim_bindings
from magi_tui.ui.screens import lazy
from magi_tui.ui.screens.run import RunScreen
from magi_tui.ui.widgets.footer import MagiFooter

_VERDICT_STYLE = {"reproduces": "bold red", "fails": "bold red", "passes": "green", "reference": "cyan",
                  "nondeterministic": "bold yellow"}


class StepList(OptionList):
    BINDINGS = vim_bindings(down="cursor_down", up="cursor_up", top="first", bottom="last")


class BisectScreen(Screen):
    BINDINGS = bindings("bisect screen")
    ACTION_SCOPES = ("bisect screen",)
    DEFAULT_CSS = """
    BisectScreen #bisect-title { height: 1; background: $panel; text-wrap: nowrap; text-overflow: ellipsis; }
    BisectScreen #bisect-steps { height: 1fr; border: none; padding: 0; }
    BisectScreen #bisect-culprit { height: auto; max-height: 10; }
    BisectScreen #bisect-status { height: 1; color: $text-muted; }
    """

    def __init__(self, path: Path, *, bisector: Any = None, **kwargs: Any) -> None:
        """``bisector``: a :class:`~magi_tui.live.bisect.Bisector` to run here; else ``path``'s bisect.json."""
        super().__init__(**kwargs)
        self.path = Path(path)
        self.bisector = bisector
        self.steps: list[dict[str, Any]] = []
        self.result: dict[str, Any] | None = None
        self.running = bisector is not None

    def compose(self) -> ComposeResult:
        what = " ".join(self.bisector.command) if self.bisector is not None else str(self.path)
        yield Static(Text.assemble((" bisect ", "bold reverse"), " ", (literal(what, 160), "bold")),
                     id="bisect-title")
        yield StepList(id="bisect-steps")
        yield Static(Text("", style="bold"), id="bisect-culprit")
        yield Static(Text("bisecting… (ctrl+c stops)" if self.running else "reading bisect.json…", style="cyan"),
                     id="bisect-status")
        yield MagiFooter()

    def on_mount(self) -> None:
        self.query_one(StepList).focus()
        if self.bisector is not None:
            self._bisect()
        else:
            self._load()

    # -- workers -------------------------------------------------------------------------------
    def _post(self, fn: Any, *args: Any) -> None:
        try:
            self.app.call_from_thread(fn, *args)
        except RuntimeError:
            pass  # the app is closing: nothing left to show it on

    @work(thread=True, exclusive=True)
    def _bisect(self) -> None:
        bis = self.bisector
        bis.on_step = lambda step: self._post(self._add_step, step.as_json())
        try:
            res = bis.run().as_json()
        except Exception as exc:  # the bisect never raises for the program's sake; this is our bug
            res = {"error": f"{type(exc).__name__}: {exc}", "steps": self.steps}
        self._post(self._finish, res)

    @work(thread=True, exclusive=True)
    def _load(self) -> None:
        try:
            obj, problem = load_bisect(self.path)
        except Exception as exc:  # load_bisect says a damaged file in words: this would be our bug, said
            obj, problem = None, f"cannot read bisect.json: {type(exc).__name__}: {exc}"
        self._post(self._show_loaded, obj, problem)

    # -- showing -------------------------------------------------------------------------------
    def _add_step(self, step: dict[str, Any]) -> None:
        self.steps.append(step)
        table = self.query_one(StepList)
        line = step_line(len(self.steps), step)
        table.add_option(Option(Text(literal(line), style=_VERDICT_STYLE.get(step.get("verdict") or "", ""),
                                     no_wrap=True, overflow="ellipsis")))
        if table.highlighted is None or table.highlighted == len(self.steps) - 2:
            table.highlighted = len(self.steps) - 1  # follow the newest unless the user moved away
        if self.running:
            self._status(f"bisecting… {len(self.steps)} run(s) so far (ctrl+c stops)", "cyan")

    def _finish(self, result: dict[str, Any]) -> None:
        self.running = False
        self.result = result
        lines = culprit_lines(result)
        bad = bool(result.get("error"))
        self.query_one("#bisect-culprit", Static).update(
            Text(literal("\n".join(lines), multiline=True), style="bold yellow" if bad else "bold"))
        hint = "Enter opens a step's run"
        if result.get("culprit"):
            hint += " · c the culprit's run · d its before/after diff"
        where = f" · {result['directory']}" if result.get("directory") else ""
        self._status(hint + where, "dim")

    def _show_loaded(self, obj: dict[str, Any] | None, problem: str | None) -> None:
        if obj is None:
            self._status(problem or "no bisect result", "yellow")
            return
        try:
            for s in obj.get("steps") or []:
                if isinstance(s, dict):
                    self._add_step(s)
            self._finish(obj)
        except Exception as exc:  # a typed result cannot do this: our bug, said in the status line, not raised
            self.result = None
            self._status(f"cannot show bisect.json: {type(exc).__name__}: {exc}", "yellow")

    def _status(self, text: str, style: str) -> None:
        self.query_one("#bisect-status", Static).update(Text(literal(text), style=style, no_wrap=True,
                                                             overflow="ellipsis"))

    # -- actions -------------------------------------------------------------------------------
    @on(OptionList.OptionSelected)
    def handle_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        message.stop()
        self.action_open_step()

    def action_open_step(self) -> None:
        i = self.query_one(StepList).highlighted
        step = self.steps[i] if i is not None and 0 <= i < len(self.steps) else None
        if step is None or not step.get("run"):
            self.notify("This step made no traced run (the command is not `python script.py`)."
                        if step is not None else "No step yet.", severity="warning")
            return
        self.app.push_screen(RunScreen(Path(step["run"])))

    def _culprit_run(self) -> str | None:
        c = (self.result or {}).get("culprit") or {}
        return ((c.get("graph") or {}).get("run") or c.get("run")) if isinstance(c, dict) else None

    def action_open_culprit(self) -> None:
        run = self._culprit_run()
        if run is None:
            self.notify("Still bisecting." if self.running else "The bisect named no culprit run.",
                        severity="warning")
            return
        self.app.push_screen(RunScreen(Path(run)))

    def action_culprit_diff(self) -> None:
        if self.result is None:
            self.notify("Still bisecting.", severity="warning")
            return
        own = culprit_pass_diff(self.result)
        if not isinstance(own, str):  # what the culprit application alone changed
            before, after, left, right = own
            self.app.push_screen(lazy("DiffScreen")(before, after, left_run=left, right_run=right))
            return
        found = culprit_diff(self.result)
        if isinstance(found, str):
            self.notify(literal(found), severity="warning")
            return
        before, after, run = found
        self.app.push_screen(lazy("DiffScreen")(before, after, left_run=run, right_run=run))

    def action_stop(self) -> None:
        if self.bisector is None or not self.running:
            self.notify("No bisect running (q quits).")
            return
        self.bisector.cancel.set()
        self._status("stopping: killing the running trial…", "yellow")

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()
        else:
            self.notify("This is the first screen: q quits.")

    def action_quit_bisect(self) -> None:
        if self.bisector is not None and self.bisector.cancel is not None:
            self.bisector.cancel.set()  # the worker kills its trial and returns; the app waits for it
        self.app.exit()

    def on_unmount(self) -> None:
        if self.bisector is not None and self.bisector.cancel is not None:
            self.bisector.cancel.set()
