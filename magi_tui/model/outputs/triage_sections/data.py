"""The triage findings' data: :class:`Span` (plain text with a role), :class:`Row` (a finding and where it
jumps), :class:`Section`, and the small helpers the panel rows, the report lines and the summary share."""

from __future__ import annotations

from typing import Any, Callable, Iterable

from msgspec import Struct, field

from magi_tui.model.analysis.checks import Analysis
from magi_tui.model.events import Event

ROLES = ("", "dim", "label", "warn", "bad", "strong", "key", "path", "good", "worst", "changed", "alarm",
         "title", "bar", "info")


class Span(Struct, frozen=True):
    text: str
    role: str = ""
    #: a ``bar`` span's fill (0…1); its text is empty: the renderer draws it
    value: float | None = None


class Row(Struct):
    """One finding: its spans (a ``\\n`` inside a span starts a continuation line), the event it jumps
    to (None: not a place) and the navigation family of that jump (``fail``, ``restart``, ``gb``, …:
    f / n / p find a failure's or restart's row by it)."""

    spans: list[Span]
    target: Event | None = None
    nav: str = ""
    #: shown, never chosen (a note, a ranked time); a row without a target is never chosen either
    inert: bool = False

    @property
    def text(self) -> str:
        return "".join(s.text for s in self.spans)


class Section(Struct):
    """One kind of finding. ``rows`` are the panel's (one per finding, capped at ``cap``), ``lines``
    the text report's (a heading and a few lines per finding, capped at a few unless ``show_all``);
    ``panel`` is false for a section only the report has (the cache summary)."""

    id: str
    title: str
    count: int                      # items in the section (a cascade's folded members are extra rows)
    rows: list[Row] = field(default_factory=list)
    left: int = 0                   # items not built (over the cap)
    note: Row | None = None         # a closing note (shown after the rows)
    lines: list[list[Span]] = field(default_factory=list)
    panel: bool = True
    #: where ``triage --json`` holds this section's items (``cache.misses``); None: not a list there
    json: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "count": self.count, "json": self.json}



class _Builder:
    def __init__(self, cap: int | None, expanded: Iterable[str], panel: bool, report: bool, show_all: bool) -> None:
        self.cap, self.expanded = cap, set(expanded)
        self.panel, self.report, self.show_all = panel, report, show_all
        self.out: list[Section] = []

    def section(self, sid: str, title: str, items: list, panel: bool = True,
                json: str | None = None) -> tuple[Section, list]:
        sec = Section(sid, title, len(items), panel=panel, json=json)
        self.out.append(sec)
        if not (self.panel and panel):
            return sec, []
        lim = None if title in self.expanded else self.cap
        if lim is not None and len(items) > lim:
            sec.left = len(items) - lim
            items = items[:lim]
        return sec, items

    def listed(self, sec: Section, header: str, items: list, n: int, line_of: Callable[[Any], str]) -> None:
        """The report's usual list: a header line, up to ``n`` items one line each (``line_of``), and how
        many more there are."""
        _line(sec, header)
        shown, left = self.capped(items, n)
        for item in shown:
            _line(sec, line_of(item))
        _more(sec, left)

    def capped(self, items: list, n: int) -> tuple[list, int]:
        """The report's few rows of a list, and how many it leaves out (none with ``show_all``)."""
        if self.show_all or len(items) <= n:
            return items, 0
        return items[:n], len(items) - n


def _line(sec: Section, *parts: str | tuple[str, str]) -> None:
    """A report line of ``parts``: plain text, or ``(text, role)``."""
    sec.lines.append([Span(p) if isinstance(p, str) else Span(*p) for p in parts])


def _more(sec: Section, left: int, what: str = "more") -> None:
    if left:
        _line(sec, (f"    ... {left} {what} (--all)", "dim"))


def _one(text: str | None, limit: int = 160) -> str:
    """One line of at most ``limit`` characters (the report's cut; the run's text, not yet literal)."""
    s = " ".join(str(text or "").split())
    return s if len(s) <= limit else s[:limit - 1] + "…"


def _stage(f: Any) -> str:
    ev = f.event
    where = f"subgraph {ev.subgraph_index}" if ev.subgraph_index is not None else "full graph"
    return f"{ev.lifecycle or ev.frag} ({where})"


def frame_calls_text(f: Any) -> tuple[str, str]:
    """A frame's calls served by its compiled entries and its eager calls, ``-`` where nothing counted
    them (model/analysis/runtime.py)."""
    return ("-" if f.calls is None else str(f.calls), "-" if f.eager_calls is None else str(f.eager_calls))



def first_failure(a: Analysis) -> Any:
    """The failure cascade to look at first: the first not recovered, else the first, else None (the same rule
    as :attr:`magi_tui.model.triage.Triage.first_failure`, which ``f`` jumps to)."""
    return next((c for c in a.problems if not c.recovered), a.problems[0] if a.problems else None)


