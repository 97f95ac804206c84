"""The bisect view: a bisect's steps as they are made, then its culprit (``magi-tui bisect --app``), or a
finished ``bisect_<ts>/`` folder read from its ``bisect.json``.

A live bisect (:class:`magi_tui.live.bisect.Bisector`) is the screen's threaded read (its base:
:class:`~magi_tui.ui.screens.rows.ListScreen`); each step reaches the screen through ``call_from_thread``.
``ctrl+c`` or ``q`` sets the bisect's cancel event: the trial running
is killed with its process group and no other starts. Enter opens a step's traced run, ``c`` the culprit
graph's run, ``d`` the diff of the culprit pass's graph before and after it: the culprit application's own
(the runs with and without it), else the whole stage's.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on
from textual.widget import Widget
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from magi_format.text import literal
from magi_tui.model.outputs.bisect_view import culprit_diff, culprit_lines, culprit_pass_diff, load_bisect, step_line
from magi_tui.ui.actions import bindings
from magi_tui.ui.screens import lazy
from magi_tui.ui.screens.rows import ListScreen, RowsList, title_text
from magi_tui.ui.screens.run import RunScreen

_VERDICT_STYLE = {"reproduces": "bold red", "fails": "bold red", "passes": "green", "reference": "cyan",
                  "nondeterministic": "bold yellow"}


class StepList(RowsList):
    pass


class BisectScreen(ListScreen):
    """A :class:`ListScreen` whose threaded read is the bisect itself (or its bisect.json), its steps added
    as they come, and the culprit below them."""
    BINDINGS = bindings("bisect screen")
    ACTION_SCOPES = ("bisect screen",)
    NAME = "bisect"
    LIST_ID = "steps"
    LIST = StepList
    CANNOT = "cannot read bisect.json"
    STATUS_CUT = True
    DEFAULT_CSS = """
    BisectScreen #bisect-culprit { height: auto; max-height: 10; }
    """

    def __init__(self, path: Path, *, bisector: Any = None, **kwargs: Any) -> None:
        """``bisector``: a :class:`~magi_tui.live.bisect.Bisector` to run here; else ``path``'s bisect.json."""
        super().__init__(**kwargs)
        self.path = Path(path)
        self.bisector = bisector
        self.steps: list[dict[str, Any]] = []
        self.result: dict[str, Any] | None = None
        self.running = bisector is not None
        self.READING = "bisecting… (ctrl+c stops)" if self.running else "reading bisect.json…"

    def title_line(self) -> Text:
        return title_text("bisect", " ".join(self.bisector.command) if self.bisector is not None else str(self.path),
                          cap=160)

    def compose_body(self) -> Iterable[Widget]:
        yield self.make_list()
        yield Static(Text("", style="bold"), id="bisect-culprit")

    # -- the read: the bisect, or its file ------------------------------------------------------
    def _post(self, fn: Any, *args: Any) -> None:
        try:
            self.app.call_from_thread(fn, *args)
        except RuntimeError:
            pass  # the app is closing: nothing left to show it on

    def read(self) -> tuple[dict[str, Any] | None, str | None]:
        bis = self.bisector
        if bis is None:
            return load_bisect(self.path)
        bis.on_step = lambda step: self._post(self._add_step, step.as_json())
        try:
            return bis.run().as_json(), None
        except Exception as exc:  # the bisect never raises for the program's sake; this is our bug
            return {"error": f"{type(exc).__name__}: {exc}", "steps": self.steps}, None

    def show(self, got: tuple[dict[str, Any] | None, str | None]) -> None:
        obj, problem = got
        if self.bisector is not None and obj is not None:
            self._finish(obj)  # its steps came as they were made
        else:
            self._show_loaded(obj, problem)

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
            self.set_status(f"bisecting… {len(self.steps)} run(s) so far (ctrl+c stops)", "cyan")

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
        self.set_status(hint + where, "dim")

    def _show_loaded(self, obj: dict[str, Any] | None, problem: str | None) -> None:
        if obj is None:
            self.set_status(problem or "no bisect result", "yellow")
            return
        try:
            for s in obj.get("steps") or []:
                if isinstance(s, dict):
                    self._add_step(s)
            self._finish(obj)
        except Exception as exc:  # a typed result cannot do this: our bug, said in the status line, not raised
            self.result = None
            self.set_status(f"cannot show bisect.json: {type(exc).__name__}: {exc}", "yellow")

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
        self.set_status("stopping: killing the running trial…", "yellow")

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
