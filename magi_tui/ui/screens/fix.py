"""The fix view: the newest ``magi-tui fix`` result under the root: every change tried with breaks,
recompiles and compile time before → after, whether the outputs stayed equal and whether it was kept, best
first; then each change's environment and config lines and the best one's patch.

Read by the model (:func:`magi_tui.model.sources.fix_file.find_fix`, the same lines as the CLI's table) in a thread
worker. Enter on a change opens its run; ``c`` compares the baseline run with it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from magi_format.text import literal
from magi_tui.model.outputs.fixes import fix_lines
from magi_tui.model.sources.fix_file import find_fix
from magi_tui.ui.actions import bindings, vim_bindings
from magi_tui.ui.screens import lazy
from magi_tui.ui.screens.compare import STYLES
from magi_tui.ui.screens.run import RunScreen
from magi_tui.ui.widgets.footer import MagiFooter


class FixTable(OptionList):
    BINDINGS = vim_bindings(down="cursor_down", up="cursor_up", top="first", bottom="last")


class FixScreen(Screen):
    BINDINGS = bindings("fix screen")
    ACTION_SCOPES = ("fix screen",)
    DEFAULT_CSS = """
    FixScreen #fix-title { height: 1; background: $panel; text-wrap: nowrap; text-overflow: ellipsis; }
    FixScreen #fix-table { height: 1fr; border: none; padding: 0; }
    FixScreen #fix-status { height: 1; color: $text-muted; }
    """

    def __init__(self, root: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.root = Path(root)
        self.result: dict[str, Any] | None = None
        self.row_objects: list[dict[str, Any] | None] = []
        self.loaded = False

    def compose(self) -> ComposeResult:
        yield Static(Text.assemble((" fix ", "bold reverse"), "  under ", (literal(str(self.root), 120), "bold")),
                     id="fix-title")
        yield FixTable(id="fix-table")
        yield Static(Text("reading fix.json…", style="cyan"), id="fix-status")
        yield MagiFooter()

    def on_mount(self) -> None:
        self.query_one(FixTable).focus()
        self._load()

    @work(thread=True, exclusive=True)
    def _load(self) -> None:
        try:
            path, obj, problem = find_fix(self.root)
        except Exception as exc:
            path, obj, problem = None, None, f"cannot read the fix result: {type(exc).__name__}: {exc}"
        self.app.call_from_thread(self._show, path, obj, problem)

    def _show(self, path: Path | None, obj: dict[str, Any] | None, problem: str | None) -> None:
        table = self.query_one(FixTable)
        table.clear_options()
        self.row_objects = []
        options = []
        try:
            cands = [c for c in (obj or {}).get("candidates") or [] if isinstance(c, dict)]
            for style, text, i in (fix_lines(obj, width=44) if obj else []):
                options.append(Option(Text(literal(text) or " ", style=STYLES.get(style, ""), overflow="fold")))
                self.row_objects.append(cands[i] if i is not None and i < len(cands) else None)
        except Exception as exc:  # find_fix hands a typed result: this would be our bug, said, not raised
            obj, options, self.row_objects = None, [], []
            problem = f"cannot show the fix result {path}: {type(exc).__name__}: {exc}"
        self.result = obj
        table.add_options(options)
        table.highlighted = 0 if options else None
        status = self.query_one("#fix-status", Static)
        if problem:
            status.update(Text(literal(problem), style="yellow"))
        else:
            status.update(Text(f"{literal(str(path))} · Enter opens a change's run · c compares it with the baseline",
                               style="dim"))
        self.loaded = True

    def _candidate(self) -> dict[str, Any] | None:
        i = self.query_one(FixTable).highlighted
        obj = self.row_objects[i] if i is not None and 0 <= i < len(self.row_objects) else None
        if obj is None or not obj.get("run"):
            self.notify("Select a change (a row of the table) to use its run.", severity="warning")
            return None
        return obj

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        message.stop()
        self.action_open_candidate()

    def action_open_candidate(self) -> None:
        c = self._candidate()
        if c is not None:
            self.app.push_screen(RunScreen(Path(c["run"])))

    def action_compare_candidate(self) -> None:
        c = self._candidate()
        base = ((self.result or {}).get("baseline") or {}).get("run")
        if c is None:
            return
        if not base:
            self.notify("The fix result names no baseline run.", severity="warning")
            return
        self.app.push_screen(lazy("CompareScreen")(Path(base), Path(c["run"])))
