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
from textual import on
from textual.widgets import OptionList

from magi_tui.model.outputs.fixes import fix_lines
from magi_tui.model.sources.fix_file import find_fix
from magi_tui.ui.actions import bindings
from magi_tui.ui.screens import lazy
from magi_tui.ui.screens.rows import RowsList, RowsScreen, title_text
from magi_tui.ui.screens.run import RunScreen


class FixTable(RowsList):
    pass


class FixScreen(RowsScreen):
    BINDINGS = bindings("fix screen")
    ACTION_SCOPES = ("fix screen",)
    NAME = "fix"
    READING = "reading fix.json…"
    LIST = FixTable

    def __init__(self, root: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.root = Path(root)
        self.result: dict[str, Any] | None = None

    def title_line(self) -> Text:
        return title_text(self.NAME, str(self.root), joint="  under ", cap=120)

    def read(self) -> tuple[Path | None, dict[str, Any] | None, str | None]:
        return find_fix(self.root)

    def show(self, got: tuple[Path | None, dict[str, Any] | None, str | None]) -> None:
        path, obj, problem = got
        rows: list[tuple[str, str, Any]] = []
        try:
            cands = [c for c in (obj or {}).get("candidates") or [] if isinstance(c, dict)]
            for style, text, i in (fix_lines(obj, width=44) if obj else []):
                rows.append((style, text, cands[i] if i is not None and i < len(cands) else None))
        except Exception as exc:  # find_fix hands a typed result: this would be our bug, said, not raised
            obj, rows = None, []
            problem = f"cannot show the fix result {path}: {type(exc).__name__}: {exc}"
        self.result = obj
        self.set_rows(rows)
        if problem:
            self.set_status(problem, "yellow")
        else:
            self.set_status(f"{path} · Enter opens a change's run · c compares it with the baseline")

    def _candidate(self) -> dict[str, Any] | None:
        obj = self.highlighted_object()
        if obj is None or not obj.get("run"):
            self.notify("Select a change (a row of the table) to use its run.", severity="warning")
            return None
        return obj

    @on(OptionList.OptionSelected)
    def handle_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
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
