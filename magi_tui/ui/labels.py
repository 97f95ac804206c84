"""Labels for events, spans and groups as ``rich.text.Text`` — never markup strings.

Every string from a run is appended as plain text (a ``str`` label would be parsed as markup:
``[dense<0>]`` silently vanishes and ``op [/foo]`` raises), and control characters are made visible so
an ANSI escape in an exception message is text, not a terminal command. Each status has a colour *and*
a symbol or word, so the tree reads the same with ``NO_COLOR``.
"""

from __future__ import annotations

import time

from rich.text import Text

from magi_format.text import fmt_ms, literal
from magi_tui.model.events import Event, Span


def plain(text: object, style: str = "", limit: int | None = None) -> Text:
    return Text(literal(text, limit), style=style, end="")


#: kind -> (mark text, style). Symbols are single-width and paired with a word.
MARKS: dict[str, tuple[str, str]] = {
    "failed": ("✗ FAILED", "bold red"),
    "recovered": ("✗ failed·recovered", "yellow"),
    #: Dynamo gave up on the frame after a graph break it could not resume from: it ran uncompiled
    "eager": ("↷ ran eagerly", "yellow"),
    "skip": ("» skipped", "dim"),
    "restart": ("↻ restart", "magenta"),
    "recompile": ("⟳ recompile", "yellow"),
    "graph_break": ("✂ graph break", "yellow"),
    "cache_hit": ("● cache hit", "green"),
    "cache_miss": ("○ cache miss", "yellow"),
    "cache_bypass": ("◌ cache bypass", "yellow"),
    "cache_store": ("▼ stored", "blue"),
    "cache_skip": ("⊘ store skipped", "yellow"),
    "open": ("… open", "cyan"),
    "ok": ("✓", "green"),
}


def _mark(text: Text, kind: str) -> None:
    mark, style = MARKS.get(kind) or (f"· {kind}", "")  # a kind the labels do not know yet is still shown
    text.append("  ")
    text.append(mark, style=style)


def index_text(ev: Event) -> Text:
    return Text(f"#{ev.index:04d} " if ev.index >= 0 else "#---- ", style="dim", end="")


BAR_WIDTH = 20
_EIGHTHS = " ▏▎▍▌▋▊▉"


def time_bar(fraction: float, width: int = BAR_WIDTH) -> str:
    """A bar ``width`` cells wide filled to ``fraction`` (eighths of a cell): ``███▍``; the same width
    whatever the value, so bars of a ranked list line up (and read the same with NO_COLOR)."""
    cells = max(0.0, min(1.0, fraction)) * width
    full = int(cells)
    part = _EIGHTHS[int((cells - full) * 8)] if full < width else ""
    return ("█" * full + part).ljust(width)


def failed_mark(recovered: bool, eager: bool) -> str:
    """A failed compile's mark: recovered, ran eagerly (the frame was skipped, the program went on: not
    a failure, as the triage says), or failed."""
    return "eager" if eager else "recovered" if recovered else "failed"


def event_label(ev: Event, *, recovered: bool = False, eager: bool = False, with_scope: bool = False,
                indent: bool = False) -> Text:
    """A point event or one phase of a span: ``#0033 after_inductor_schedule  ● cache hit``."""
    t = Text("  " * min(ev.depth, 8) if indent else "", end="")
    t.append_text(index_text(ev))
    name = ev.name if with_scope else ev.short_name
    t.append(literal(name, 80), style="bold" if ev.phase == "failed" else "")
    kind = ev.kind
    if kind == "failed":
        mark = failed_mark(recovered, eager)
        _mark(t, mark)
        exc = (ev.summary or {}).get("exception_type")
        if exc:
            t.append(" " + literal(exc, 60), style="bold red" if mark == "failed" else "yellow")
    elif kind:
        _mark(t, kind)
        s = ev.summary or {}
        reason = s.get("reason")
        if kind == "graph_break" and (s.get("gb_id") or s.get("gb_type")):
            # torch's id and short name say more than the first line of its long message
            t.append(" " + literal(" ".join(x for x in (s.get("gb_id"), s.get("gb_type")) if x), 60), style="dim")
        elif reason and kind in ("cache_miss", "cache_bypass", "cache_skip", "recompile", "graph_break", "restart"):
            t.append(" " + literal(reason, 60), style="dim")
    elif ev.summary and (ev.summary.get("expr") or ev.summary.get("symbol")):  # dynamic shapes
        t.append(" " + literal(ev.summary.get("expr") or ev.summary["symbol"], 60), style="dim")
    if ev.duration_ms is not None:
        t.append(f"  {fmt_ms(ev.duration_ms)}", style="dim")
    return t


def span_label(span: Span, *, recovered: bool = False, eager: bool = False, now: float | None = None,
               indent: bool = True) -> Text:
    """A lifecycle as one node: ``#0012 compiler_compile  ✗ FAILED TensorifyScalarRestartAnalysis  391ms``."""
    first = span.first
    t = Text("  " * min(span.depth, 8) if indent else "", end="")
    t.append_text(index_text(first))
    t.append(literal(span.lifecycle, 60), style="bold" if span.status == "failed" else "")
    status = span.status
    if status == "failed":
        mark = failed_mark(recovered, eager)
        _mark(t, mark)
        exc = (span.end.summary or {}).get("exception_type") if span.end else None
        if exc:
            t.append(" " + literal(exc, 60), style="bold red" if mark == "failed" else "yellow")
    elif status == "open":
        _mark(t, "open")
        if now is not None and first.timestamp is not None:
            t.append(f" {fmt_ms((now - first.timestamp) * 1000)}", style="cyan")
    elif status == "skip":
        _mark(t, "skip")
    else:
        end_kind = span.end.kind if span.end else ""
        if end_kind and end_kind in MARKS:
            _mark(t, end_kind)
            reason = (span.end.summary or {}).get("reason") if span.end else None
            if reason and end_kind in ("cache_miss", "cache_bypass", "cache_skip"):
                t.append(" " + literal(reason, 50), style="dim")
        else:
            _mark(t, "ok")
    d = span.duration_ms
    if d is not None:
        t.append(f"  {fmt_ms(d)}", style="dim")
    return t


#: an attribute name's unit suffix -> milliseconds per unit (``duration_ms``, ``compile_time_s``, ``dur_us``)
_DURATION_UNITS = (("_ms", 1.0), ("_seconds", 1000.0), ("_s", 1000.0), ("_us", 1e-3), ("_ns", 1e-6))
#: names with a unit that are points in time, not durations (``start_us``: chromium's start)
_NOT_DURATIONS = ("start", "timestamp", "epoch", "_at_", "time_since")


def attr_duration(key: str, value: object) -> str | None:
    """An attribute that is a duration, for people: ``duration_ms 8.994830000006004`` -> ``9.0ms``,
    ``entire_frame_compile_time_s 1.2345`` -> ``1.23s``; None when ``key`` names no duration (no unit
    suffix, a point in time) or ``value`` is not a finite number >= 0 (shown as it is)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
        return None
    k = key.lower()
    if any(w in k for w in _NOT_DURATIONS):
        return None
    for suffix, ms in _DURATION_UNITS:
        if k.endswith(suffix) and len(k) > len(suffix):
            return fmt_ms(value * ms)
    return None


def now() -> float:
    return time.time()
