"""Frames: one row per compiled code object — compiles, recompiles, graph breaks, cache hit / miss /
bypass, compile seconds, the recompile limit, the calls its compiled entries served and those it ran
eagerly (a run our tracer recorded) — sortable (``s``), the frame's entries and events below; Enter on an
event shows it in the run's tree.

The rows are the triage analysis's (:func:`magi_tui.model.analysis.checks.analyse`, the same the CLI's
``frames`` section prints), computed in its base's thread worker (:class:`~magi_tui.ui.screens.rows.ListScreen`):
it may read ``compiled_functions/``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from rich.text import Text
from textual import on
from textual.coordinate import Coordinate
from textual.widget import Widget
from textual.widgets import DataTable, OptionList, Static
from textual.widgets.option_list import Option

from magi_format.text import fmt_seconds, literal
from magi_tui.model.analysis.checks import FrameRow, analyse, frame_events
from magi_tui.model.analysis.frames import short_frame
from magi_tui.model.events import Event
from magi_tui.model.run import RunModel
from magi_tui.ui.actions import bindings, vim_bindings
from magi_tui.ui.frames_columns import COLUMNS, NUMBER_COLUMNS, NUMBERS_WIDTH, SORTS, sort_value
from magi_tui.ui.labels import event_label
from magi_tui.ui.screens.rows import ListScreen, title_text

FRAME_MIN, FRAME_MAX = 20, 80  # the frame name's width: at 80 columns the last numbers scroll off, not the name
MAX_EVENTS = 500  # per frame shown: the tree holds them all


def entries_line(f: FrameRow) -> str:
    """`` · entries 0/0 ×30 1.7ms (1st 1.1ms), 0/1 ×20 3.0ms (1st 2.1ms) · eager ×7``: what each compiled entry
    served at run time, the first call's share told apart (a backend's lazy compile / warm-up lands there)."""
    if not f.entries and f.eager_calls is None:
        return ""
    parts = [f"{e.compile_id} ×{'?' if e.calls is None else e.calls}"
             + ("" if e.seconds is None else f" {fmt_seconds(e.seconds)}")
             + ("" if e.first_call_seconds is None or not e.calls or e.calls < 2 else
                f" (1st {fmt_seconds(e.first_call_seconds)})") for e in f.entries]
    out = " · entries " + ", ".join(parts) if parts else ""
    return out + ("" if f.eager_calls is None else f" · eager ×{f.eager_calls}")


class FramesTable(DataTable):
    BINDINGS = vim_bindings(down="cursor_down", up="cursor_up", top="scroll_top", bottom="scroll_bottom")


class FrameEvents(OptionList):
    HELP_TITLE = "A frame's events"
    BINDINGS = vim_bindings(down="cursor_down", up="cursor_up", top="first", bottom="last")


class FramesScreen(ListScreen):
    """A :class:`ListScreen` of a DataTable with the frame's events below it; no status line: the title says
    what was found, the events' title line what is missing."""
    BINDINGS = bindings("frames")
    ACTION_SCOPES = ("frames",)
    NAME = "frames"
    LIST = FramesTable
    CANNOT = "cannot analyse the frames"
    STATUS = False
    LIST_CSS = "height: 1fr;"
    DEFAULT_CSS = """
    FramesScreen #frames-events-title { height: 1; background: $boost; }
    FramesScreen #frames-events { height: 1fr; border: none; }
    """

    def __init__(self, run: RunModel, on_jump: Callable[[Event], None] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.run = run
        self.on_jump = on_jump  # called with an event after this screen is popped
        self.rows: list[FrameRow] = []
        self.sort_key = "compile_s"
        self._events: list[Event] = []

    def title_line(self) -> Text:
        return title_text("frames", self.run.path.name, ("  analysing…", "cyan"))

    def make_list(self) -> Widget:
        return FramesTable(id=self.list_id, cursor_type="row", zebra_stripes=True)

    def compose_body(self) -> Iterable[Widget]:
        yield self.make_list()
        yield Static(Text("events of the frame: Enter on a frame", style="dim"), id="frames-events-title")
        yield FrameEvents(id="frames-events")

    def on_mount(self) -> None:
        table = self.query_one(FramesTable)
        for col in COLUMNS:
            table.add_column(col.title, key=col.key)

    def read(self) -> list[FrameRow]:
        return list(analyse(self.run).frames)

    def show(self, rows: list[FrameRow]) -> None:
        self.rows = rows
        self._show_rows()

    def set_status(self, text: str, style: str = "dim") -> None:
        self.query_one("#frames-events-title", Static).update(self.status_text(text, style))

    def failed(self, message: str) -> None:
        self.query_one("#frames-title", Static).update(title_text("frames", self.run.path.name))
        super().failed(message)

    def _show_rows(self) -> None:
        table = self.query_one(FramesTable)
        table.clear()
        rows = sorted(self.rows, key=lambda f: sort_value(f, self.sort_key),
                      reverse=self.sort_key != "frame")
        name_width = max(FRAME_MIN, min(FRAME_MAX, self.app.size.width - NUMBERS_WIDTH))
        for f in rows:
            name = Text(literal(short_frame(f.frame), name_width), style="bold red" if f.limit_hit else "")
            table.add_row(name, *(col.cell(f) for col in NUMBER_COLUMNS), key=f.key)
        self.query_one("#frames-title", Static).update(title_text(
            "frames", self.run.path.name,
            (f"  {len(rows)} frame(s) · sorted by {self.sort_key} · s sort · Enter events", "dim")))
        if not rows:
            self.set_status("no compiled frames in this run (nothing recorded, and no compiled_functions/)", "yellow")

    def _row(self) -> FrameRow | None:
        table = self.query_one(FramesTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
        return next((f for f in self.rows if f.key == key), None)

    @on(DataTable.RowSelected)
    def handle_data_table_row_selected(self, message: DataTable.RowSelected) -> None:
        message.stop()
        f = self._row()
        if f is None:
            return
        self._events = frame_events(self.run, f, len(self.rows), MAX_EVENTS)
        events = self.query_one(FrameEvents)
        events.clear_options()
        events.add_options([Option(event_label(e, with_scope=True)) for e in self._events])
        shown = f"{len(self._events)} event(s)" + (" (first ones)" if len(self._events) >= MAX_EVENTS else "")
        if not self._events and f.cf_rel:
            shown = f"no timeline events: its evidence is {f.cf_rel}"
        self.query_one("#frames-events-title", Static).update(Text.assemble(
            ("events of ", "dim"), (literal(f.frame, 80), "bold"), (entries_line(f), "cyan"),
            (f"  {shown} · Enter shows it in the tree", "dim")))
        if self._events:
            events.highlighted = 0
            events.focus()

    @on(OptionList.OptionSelected)
    def handle_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        message.stop()
        if 0 <= message.option_index < len(self._events):
            ev = self._events[message.option_index]
            self.app.pop_screen()
            if self.on_jump is not None:
                self.on_jump(ev)

    def action_sort(self) -> None:
        i = SORTS.index(self.sort_key) if self.sort_key in SORTS else -1
        self.sort_key = SORTS[(i + 1) % len(SORTS)]
        self._show_rows()

    def action_back(self) -> None:
        """Esc: from the events list back to the frames; else back to the run."""
        events = self.query_one(FrameEvents)
        if events.has_focus:
            self.query_one(FramesTable).focus()
        else:
            self.app.pop_screen()
