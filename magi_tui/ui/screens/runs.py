"""The runs screen: every run under a path, newest first, sortable, filterable by typing.

Runs are read in the thread worker of its base, :class:`~magi_tui.ui.screens.rows.ListScreen` (each one fully,
to know its status), and rows appear when all are read; Enter opens a run. A root usually holds tens of runs,
so a ``DataTable`` is the right widget.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import events, on
from textual.coordinate import Coordinate
from textual.widget import Widget
from textual.widgets import DataTable, Input

from magi_format.text import literal
from magi_tui.model.outputs.report import fmt_duration, fmt_time, run_label
from magi_tui.model.run import RunModel
from magi_tui.model.sources.discovery import find_runs
from magi_tui.ui.actions import bindings, vim_bindings
from magi_tui.ui.screens import lazy
from magi_tui.ui.screens.rows import ListScreen, title_text
from magi_tui.ui.screens.run import RunScreen

STATUS_STYLE = {"failed": "bold red", "interrupted": "bold red", "recovered": "yellow", "degraded": "bold yellow", "ok": "green", "incomplete": "cyan",
                "empty": "dim", "live": "bold green"}
#: the status right after the time: at 80 columns the columns past the label were cut (``faile``, ``recov``)
COLUMNS = ("started", "status", "label", "rank", "events", "failures", "duration", "path")


def status_hint(n: int, sort_key: str) -> str:
    """The line under the list: what the keys do, short enough for 80 columns (typing filters: the filter
    box says so)."""
    return f"{n} run(s) · Enter open · m mark, c compare · R ranks · s sort ({sort_key})"


class RunsTable(DataTable):
    BINDINGS = vim_bindings(down="cursor_down", up="cursor_up", top="scroll_top", bottom="scroll_bottom")

    #: typing has started a filter, and the keys typed with it go to the filter too: the filter takes the
    #: focus only after the keys already read (a word typed or pasted at once: ``item``) reach the table,
    #: where ``m`` would mark a run and ``s`` sort. Back to keys once the table has the focus again.
    typing = False

    def on_key(self, event: events.Key) -> None:
        """Typing a printable character starts filtering (no need to reach for /)."""
        ch = event.character
        if not (ch and len(ch) == 1 and ch.isprintable()):
            return
        if not self.typing and (ch in "jkgGqsr?/ " or event.key in self.screen.active_bindings):
            return
        self.typing = True
        flt = self.screen.query_one("#runs-filter", Input)
        flt.focus()
        flt.value += ch
        flt.cursor_position = len(flt.value)
        event.stop()
        event.prevent_default()

    def on_focus(self) -> None:
        self.typing = False


class RunsScreen(ListScreen):
    """A :class:`ListScreen` of a DataTable under a filter box, its read the scan of the root (``r`` rescans);
    its styles are app.tcss's."""
    BINDINGS = bindings("runs")
    ACTION_SCOPES: tuple[str, ...] = ("runs",)
    NAME = "runs"
    LIST = RunsTable
    READING = "scanning…"
    CANNOT = "cannot list the runs"
    TITLE_CSS = LIST_CSS = STATUS_CSS = None

    def __init__(self, root: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.root = root
        self.rows: list[dict[str, Any]] = []
        self.sort_key = "started"
        self.sort_reverse = True
        self.live_paths: set[str] = set()
        #: runs marked for comparison, oldest first (A, then B)
        self.marked: list[str] = []

    def title_line(self) -> Text:
        return title_text("magi-tui", str(self.root), joint="  runs under ")

    def make_list(self) -> Widget:
        return RunsTable(id=self.list_id, cursor_type="row", zebra_stripes=True)

    def compose_body(self) -> Iterable[Widget]:
        yield Input(placeholder="type to filter by label, path or status", id="runs-filter")
        yield self.make_list()

    def on_mount(self) -> None:
        table = self.query_one(RunsTable)
        for col in COLUMNS:
            table.add_column(col, key=col)

    def action_reload(self) -> None:
        self.set_status(self.READING, "cyan")
        self.load()

    def read(self) -> list[dict[str, Any]]:
        rows = []
        for r in find_runs(self.root):
            try:
                run = RunModel(r.path).load()
                rows.append(self._row(run))
            except Exception as exc:  # a broken run is a row, not a crash
                rows.append({"started": None, "label": r.path.name, "rank": None, "events": 0,
                             "failures": 0, "status": f"error: {exc}", "duration": None, "path": str(r.path)})
        return rows

    def show(self, rows: list[dict[str, Any]]) -> None:
        self._set_rows(rows)

    @staticmethod
    def _row(run: RunModel) -> dict[str, Any]:
        n = run.name_info
        started = run.started if run.started is not None else n.run_time
        return {"started": started, "label": run_label(run), "rank": n.rank, "events": len(run.events),
                "failures": len(run.triage.problems), "status": run.status, "duration": run.duration_s,
                "path": str(run.path)}

    def _set_rows(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows
        self._render_rows()
        self._show_status()

    def _show_status(self) -> None:
        n = len(self.rows)
        if n:
            self.set_status(status_hint(n, self.sort_key))
        else:
            self.set_status(f"no runs under {self.root} (a run is a directory with timeline_events/ or "
                            "compiled_functions/, a TORCH_TRACE log, or a TORCH_COMPILE_DEBUG folder)", "yellow")

    def _render_rows(self) -> None:
        table = self.query_one(RunsTable)
        flt = self.query_one("#runs-filter", Input).value.strip().lower()
        current = None
        if table.row_count and table.cursor_row is not None:
            try:
                current = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
            except Exception:
                current = None
        table.clear()

        def key(r: dict[str, Any]) -> tuple[bool, Any]:
            v = r.get(self.sort_key)
            return (v is None, v if not isinstance(v, str) else v.lower()) if v is not None else (True, 0)

        rows = sorted(self.rows, key=key, reverse=self.sort_reverse)
        if self.sort_reverse:  # keep missing values last either way
            rows = [r for r in rows if r.get(self.sort_key) is not None] + \
                   [r for r in rows if r.get(self.sort_key) is None]
        for r in rows:
            status = "live" if r["path"] in self.live_paths else r["status"]
            hay = f"{r['label']} {r['path']} {status}".lower()
            if flt and flt not in hay:
                continue
            label = Text(literal(r["label"], 40))
            if r["path"] in self.marked:
                label = Text.assemble((f"[{'AB'[self.marked.index(r['path'])]}] ", "bold reverse"), label)
            cells = {
                "started": Text(fmt_time(r["started"]) if r["started"] else "-"),
                "status": Text(literal(status, 30), style=STATUS_STYLE.get(status, "")),
                "label": label,
                "rank": Text("-" if r["rank"] is None else str(r["rank"]), justify="right"),
                "events": Text(str(r["events"]), justify="right"),
                "failures": Text(str(r["failures"]), justify="right", style="red" if r["failures"] else ""),
                "duration": Text(fmt_duration(r["duration"]), justify="right"),
                "path": Text(literal(self._shown_path(r["path"])), style="dim"),
            }
            table.add_row(*(cells[c] for c in COLUMNS), key=r["path"])
        if current is not None:
            try:
                table.move_cursor(row=table.get_row_index(current))
            except Exception:
                pass

    def _shown_path(self, path: str) -> str:
        """A run's path relative to the root given (so runs with one label stay distinguishable)."""
        try:
            rel = Path(path).relative_to(self.root)
        except ValueError:
            try:
                rel = Path(path).resolve().relative_to(self.root.resolve())
            except (ValueError, OSError):
                return path
        return str(rel) if str(rel) != "." else self.root.name or str(self.root)

    @on(Input.Changed)
    def handle_input_changed(self, message: Input.Changed) -> None:
        self._render_rows()

    @on(Input.Submitted)
    def handle_input_submitted(self, message: Input.Submitted) -> None:
        self.query_one(RunsTable).focus()

    @on(DataTable.RowSelected)
    def handle_data_table_row_selected(self, message: DataTable.RowSelected) -> None:
        path = message.row_key.value
        if path:
            self.app.push_screen(RunScreen(Path(path), live=path in self.live_paths))

    # -- run vs run, rank vs rank -----------------------------------------------------------------
    def _cursor_path(self) -> str | None:
        table = self.query_one(RunsTable)
        if not table.row_count or table.cursor_row is None:
            return None
        try:
            return table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
        except Exception:
            return None

    def action_mark_run(self) -> None:
        path = self._cursor_path()
        if path is None:
            self.notify("No run under the cursor to mark.", severity="warning")
            return
        if path in self.marked:
            self.marked.remove(path)
            self.notify(f"unmarked {literal(self._shown_path(path), 70)}", timeout=3)
        else:
            self.marked = (self.marked + [path])[-2:]
            which = "AB"[self.marked.index(path)]
            nxt = "press c to compare" if len(self.marked) == 2 else "mark another run (m), or move to one and press c"
            self.notify(f"marked {which}: {literal(self._shown_path(path), 70)} — {nxt}", timeout=4)
        self._render_rows()

    def action_compare_runs(self) -> None:
        pair = list(self.marked)
        if len(pair) == 1:
            cur = self._cursor_path()
            if cur is not None and cur != pair[0]:
                pair.append(cur)
        if len(pair) != 2:
            self.notify("Mark two runs with m (or mark one and move to another), then press c.",
                        severity="warning")
            return
        self.app.push_screen(lazy("CompareScreen")(Path(pair[0]), Path(pair[1])))

    def action_ranks(self) -> None:
        self.app.push_screen(lazy("RanksScreen")(self.root))

    def action_fix(self) -> None:
        self.app.push_screen(lazy("FixScreen")(self.root))

    def action_filter(self) -> None:
        self.query_one("#runs-filter", Input).focus()

    def action_sort(self) -> None:
        order = ["started", "label", "events", "failures", "status", "duration"]
        i = order.index(self.sort_key) if self.sort_key in order else -1
        self.sort_key = order[(i + 1) % len(order)]
        self.sort_reverse = self.sort_key in ("started", "events", "failures", "duration")
        self._render_rows()
        if self.rows:
            self._show_status()
        self.notify(f"sorted by {self.sort_key}{' (descending)' if self.sort_reverse else ''}", timeout=2)

    async def action_back(self) -> None:
        """Esc: clear the filter, else go back (quit on the first screen). Async: the attach / run screen's
        stops its program first."""
        flt = self.query_one("#runs-filter", Input)
        if flt.has_focus or flt.value:
            flt.value = ""
            self.query_one(RunsTable).focus()
            return
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()
        else:
            self.app.exit()
