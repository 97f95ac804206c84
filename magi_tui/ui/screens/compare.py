"""The compare screen: run A against run B (what ``magi-tui compare A B`` prints, as a list to move in).

The comparison is built by the model (:func:`magi_tui.model.outputs.compare.compare_runs`) in the thread
worker of :class:`~magi_tui.ui.screens.rows.RowsScreen`.
Rows about a pass or piece present on both sides open the side-by-side diff of the graph after it,
A against B (``d`` or Enter); a frame row says so instead. A cache miss row of B opens its lookup beside
the one it was compared with (``L`` or Enter: :mod:`magi_tui.ui.screens.lookups`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on
from textual.widgets import OptionList

from magi_format.text import literal
from magi_tui.model.outputs.compare import Comparison, PassCompare, compare_rows, compare_runs
from magi_tui.model.run import RunModel
from magi_tui.ui.actions import bindings
from magi_tui.ui.screens.diff import DiffScreen
from magi_tui.ui.screens.rows import RowsList, RowsScreen

MAX_ROWS_PER_LIST = 400   # a run with 30k passes stays quick to show; the CLI's --json has them all


class CompareTable(RowsList):
    pass


def short_name(path: Path, other: Path) -> str:
    """A run's name, with its run id when both runs share the model dir name."""
    if path.name == other.name and path.parent.name != other.parent.name:
        return f"{path.parent.name}/{path.name}"
    return path.name


class CompareScreen(RowsScreen):
    BINDINGS = bindings("compare screen")
    ACTION_SCOPES = ("compare screen",)
    NAME = "compare"
    LIST = CompareTable
    READING = "comparing…"
    CANNOT = "cannot compare"
    TITLE_CSS = "height: 2; background: $panel; text-wrap: nowrap; text-overflow: ellipsis;"

    def __init__(self, a: Path, b: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.path_a = Path(a)
        self.path_b = Path(b)
        self.comparison: Comparison | None = None

    def title_line(self) -> Text:
        t = Text(" compare ", style="bold reverse", end="", no_wrap=True, overflow="ellipsis")
        t.append(" A ", style="bold red")
        t.append(literal(short_name(self.path_a, self.path_b), 120), style="red")
        t.append("\n          B ", style="bold green")
        t.append(literal(short_name(self.path_b, self.path_a), 120), style="green")
        return t

    def read(self) -> tuple[Comparison, list[tuple[str, str, Any]]]:
        c = compare_runs(RunModel(self.path_a).load(), RunModel(self.path_b).load())
        return c, compare_rows(c, cap=MAX_ROWS_PER_LIST)

    def show(self, got: tuple[Comparison, list[tuple[str, str, Any]]]) -> None:
        c, rows = got
        self.comparison = c
        self.set_rows(rows[2:])  # the title already names A and B
        n_diff = sum(1 for p in c.passes if p.after_differs)
        self.set_status(f"{'changed' if c.changed else 'no change'} · {n_diff} pass graph(s) differ · "
                        "d / Enter on a pass: diff its graph A vs B")

    def current_object(self) -> Any:
        return self.highlighted_object()

    @on(OptionList.OptionSelected)
    def handle_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        message.stop()
        from magi_tui.model.analysis.cache_explain import MissExplained

        if isinstance(self.current_object(), MissExplained):
            self.action_cache_lookups()
        else:
            self.action_diff_pass()

    def action_cache_lookups(self) -> None:
        """``L`` (or Enter) on a cache miss row of B: its lookup beside the one it was compared with (in A, or
        earlier in B), differing key components first."""
        from magi_tui.model.analysis.cache_explain import MissExplained
        from magi_tui.model.analysis.cache_terms import factors
        from magi_tui.model.analysis.cache_verdict import names_of
        from magi_tui.ui.screens import lazy

        m = self.current_object()
        if not isinstance(m, MissExplained) or self.comparison is None:
            self.notify("Select a cache miss row (under the cache counts: “B … miss”) to see its lookups.",
                        severity="warning")
            return
        if m.nearest is None:
            self.notify("No other lookup of this cache to compare this miss with.", severity="warning")
            return
        names = names_of([x.miss for x in self.comparison.cache_explained
                          if isinstance(x, MissExplained)], m.miss.compile_id)
        words = [f.text for f in factors(m.differs, names, m.nearest.graph, m.miss.graph)]
        b, a = short_name(self.path_b, self.path_a), short_name(self.path_a, self.path_b)
        self.app.push_screen(lazy("CacheLookupsScreen")(m, this_run=f"B {b}",
                                                        other_run=f"A {a}" if m.where == "baseline" else None,
                                                        factors=words, names=names))

    def action_next_pass(self) -> None:
        """Move to the next pass whose graph differs between A and B."""
        table = self.options()
        start = (table.highlighted or 0) + 1
        order = list(range(start, len(self.row_objects))) + list(range(0, start))
        for i in order:
            obj = self.row_objects[i]
            if isinstance(obj, PassCompare) and obj.after_differs:
                table.highlighted = i
                return
        self.notify("No pass graph differs between A and B.", timeout=3)

    def action_diff_pass(self) -> None:
        obj = self.current_object()
        if not isinstance(obj, PassCompare):
            self.notify("Select a pass or piece row (under “Passes and pieces”) to diff its graph A vs B.",
                        severity="warning")
            return
        a, b = obj.a, obj.b
        if a is None or b is None:  # not obj.both
            self.notify(f"{literal(obj.lifecycle)} ran on one side only: nothing to diff.", severity="warning")
            return
        left, right = a.after, b.after
        if left is None or right is None or left.path is None or right.path is None:
            why = (left.problem if left is not None and left.path is None else None) or \
                  (right.problem if right is not None and right.path is None else None) or "no graph file"
            self.notify(f"{literal(obj.lifecycle)}: cannot diff ({literal(why)}).", severity="warning")
            return
        self.app.push_screen(DiffScreen(left, right, left_run=self.path_a, right_run=self.path_b))
