"""The frames view's columns, one spec each: title, key, the width its values take, how a row's value is
shown, and whether (and how) it sorts. The view's layout (the frame name gets what the numbers leave) and
its sort order (``s``) are derived from this list, so a new column is one entry here (and, for new data,
a field of :class:`~magi_tui.model.analysis.checks.FrameRow`): docs/ARCHITECTURE.md, "Add a frames column".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec import Struct
from rich.text import Text

from magi_format.text import fmt_seconds
from magi_tui.model.analysis.checks import FrameRow

__all__ = ["COLUMNS", "Column", "NUMBERS_WIDTH", "SORTS", "sort_value"]

#: what DataTable draws around each cell (one space each side)
CELL_PADDING = 2


class Column(Struct, frozen=True):
    title: str
    key: str
    #: the characters its values take at most (the title's length when wider)
    width: int
    cell: Callable[[FrameRow], Text]
    #: sorted by ``s`` (FrameRow's field ``key``, biggest first; the frame name A→Z)
    sorts: bool = True


def _num(value: Any, warn: bool = False, style: str = "yellow") -> Text:
    return Text("-" if value is None else str(value), justify="right", style=style if warn else "")


def _cache(f: FrameRow) -> Text:
    return Text(f"{f.cache_hits}/{f.cache_misses}/{f.cache_bypasses}", justify="right",
                style="yellow" if f.never_hits_cache else "")


def _limit(f: FrameRow) -> Text:
    return Text(f"{f.compiles}/{f.recompile_limit}" + (" HIT" if f.limit_hit else ""), justify="right",
                style="bold red" if f.limit_hit else "dim")


#: the numbers after the frame's name, in the order they are shown
NUMBER_COLUMNS: tuple[Column, ...] = (
    Column("compiles", "compiles", 8, lambda f: _num(f.compiles)),
    Column("recomp", "recompiles", 6, lambda f: _num(f.recompiles, bool(f.recompiles))),
    Column("breaks", "graph_breaks", 6, lambda f: _num(f.graph_breaks, bool(f.graph_breaks))),
    Column("hit/miss/byp", "cache", 12, _cache, sorts=False),
    Column("time", "compile_s", 6, lambda f: Text(fmt_seconds(f.compile_s), justify="right")),
    Column("limit", "recompile_limit", 7, _limit, sorts=False),
    Column("1st call", "first_call_s", 8, lambda f: Text(fmt_seconds(f.first_call_s), justify="right",
                                                         style="" if f.first_call_s is not None else "dim")),
    Column("calls", "calls", 5, lambda f: Text("-" if f.calls is None else str(f.calls), justify="right",
                                                 style="" if f.calls else "dim")),
    Column("eager", "eager_calls", 5, lambda f: Text("-" if f.eager_calls is None else str(f.eager_calls),
                                                     justify="right", style="bold red" if f.eager_calls else "dim")),
)
#: the frame's name first (what a user looks for), cut to what the numbers leave
FRAME = Column("frame", "frame", 0, lambda f: Text(f.frame))
COLUMNS: tuple[Column, ...] = (FRAME, *NUMBER_COLUMNS)
#: what the numbers take, padding included: the frame name gets the rest of the screen's width
NUMBERS_WIDTH = sum(max(c.width, len(c.title)) + CELL_PADDING for c in NUMBER_COLUMNS) + CELL_PADDING
#: ``s`` cycles through these, the first one the default
SORTS: tuple[str, ...] = ("compile_s", *(c.key for c in NUMBER_COLUMNS if c.sorts and c.key != "compile_s"),
                          "frame")


def sort_value(f: FrameRow, key: str) -> Any:
    if key == "frame":
        return f.frame.lower()
    v = getattr(f, key)
    return -1.0 if v is None else v
