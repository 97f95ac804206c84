"""One timeline event, parsed once into a compact object.

A run can hold 100k events, so an ``Event`` keeps only what the tree, the pairing and the triage
need (``__slots__``, interned strings) plus the byte span of its line in ``timeline.jsonl``; the
full attribute map is kept only for the few events triage reports on and is otherwise re-read from
that span on demand (see ``RunModel.attributes``).

Names follow FORMAT.md part A §7: ``(fullgraph|subgraph_<k>)_(before|after|failed|skip)_<frag>``; an
event is a lifecycle event only when ``attributes.lifecycle_name`` is present.
"""

from __future__ import annotations

import math
import re
import sys
from typing import Any

NAME_RE = re.compile(r"^(fullgraph|subgraph_(\d+))_(before|after|failed|skip)_(.+)$")
SCOPE_RE = re.compile(r"^(fullgraph|subgraph_(\d+))_(.+)$")

PHASES = ("before", "after", "failed", "skip")

#: attribute keys copied onto the Event (cheap to keep, needed for labels and triage)
_KEEP_FULL_ATTRS_IF = ("exception_type", "reason", "restart_reason", "reasons", "fail_type", "error_type")

_intern = sys.intern


def _opt_str(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def _opt_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    return None


def _opt_float(value: Any) -> float | None:
    """A finite float, else None (NaN / Infinity / a 400-digit int are not times nor durations)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        f = float(value)
    except OverflowError:
        return None
    return f if math.isfinite(f) else None


class Event:
    """A parsed timeline line.

    ``seq`` is the event's position in the file over all sessions (unique, stable); ``index`` is the
    writer's own counter, which restarts with each session; ``session`` counts those restarts.
    """

    __slots__ = (
        "seq", "session", "index", "name", "scope", "subgraph_index", "phase", "lifecycle",
        "frag", "relative_time", "files", "timestamp", "datetime", "duration_ms", "graph_index",
        "compile_id", "subgraph", "line_no", "offset", "length", "attrs", "summary", "depth",
    )

    def __init__(self) -> None:
        self.attrs: dict[str, Any] | None = None
        self.depth = 0  # lifecycles open when it happened (set by the Pairer)

    @classmethod
    def from_obj(cls, obj: dict[str, Any], *, seq: int, session: int, line_no: int,
                 offset: int, length: int) -> "Event":
        """Build from a decoded JSON object (already checked to be a dict with a str name)."""
        ev = cls()
        attrs = obj.get("attributes")
        if not isinstance(attrs, dict):
            attrs = {}
        name = obj["name"]
        ev.seq = seq
        ev.session = session
        idx = obj.get("index")
        ev.index = idx if isinstance(idx, int) and not isinstance(idx, bool) else -1
        ev.name = _intern(name)
        ev.line_no = line_no
        ev.offset = offset
        ev.length = length
        rt = obj.get("relative_time")
        ev.relative_time = rt if isinstance(rt, str) else ""
        files = obj.get("files")
        ev.files = tuple(_intern(f) for f in files if isinstance(f, str)) if isinstance(files, list) else ()
        ev.timestamp = _opt_float(obj.get("timestamp"))
        dt = obj.get("datetime")
        ev.datetime = dt if isinstance(dt, str) else ""
        ev.duration_ms = _opt_float(attrs.get("duration_ms"))
        ev.graph_index = _opt_int(attrs.get("graph_index"))
        cid = _opt_str(attrs.get("compile_id"))
        ev.compile_id = _intern(cid) if cid is not None else None
        sub = attrs.get("subgraph")
        ev.subgraph = sub if isinstance(sub, str) and sub else None
        lc = attrs.get("lifecycle_name")
        ev.lifecycle = _intern(lc) if isinstance(lc, str) else None

        m = NAME_RE.match(name)
        if m is not None:
            scope, sgi, phase, frag = m.groups()
            ev.phase = phase if ev.lifecycle is not None else None
            ev.frag = _intern(frag)
        else:
            ev.phase = None
            sm = SCOPE_RE.match(name)
            scope, sgi = (sm.group(1), sm.group(2)) if sm else ("fullgraph", None)
            ev.frag = _intern(sm.group(3)) if sm else ev.name
        attr_sgi = _opt_int(attrs.get("subgraph_index"))
        ev.subgraph_index = attr_sgi if attr_sgi is not None else (int(sgi) if sgi is not None else None)
        ev.scope = "fullgraph" if ev.subgraph_index is None else f"subgraph_{ev.subgraph_index}"
        ev.summary = _summary(attrs)
        if ev.phase == "failed" or any(k in attrs for k in _KEEP_FULL_ATTRS_IF) or _is_special(ev.frag):
            ev.attrs = attrs
        return ev

    # -- classification -------------------------------------------------------------------------
    @property
    def is_lifecycle(self) -> bool:
        return self.phase is not None

    @property
    def short_name(self) -> str:
        """The name without its scope prefix: ``after_compiler_compile``, ``after_inductor_schedule``
        (a point event keeps its ``after_``: only the scope is dropped)."""
        m = SCOPE_RE.match(self.name)
        return m.group(3) if m else self.name

    @property
    def pair_key(self) -> tuple:
        """Before/after/failed of one lifecycle share this key (FORMAT.md §10.8, plus compile id)."""
        return (self.lifecycle, self.subgraph_index, self.graph_index, self.compile_id)

    @property
    def kind(self) -> str:
        """A coarse category for marks: failed, skip, restart, recompile, graph_break, cache_hit,
        cache_miss, cache_store, cache_skip, or '' for a plain event."""
        if self.phase == "failed":
            return "failed"
        if self.phase == "skip":
            return "skip"
        frag = self.frag
        if "restart" in frag:
            return "restart"
        if frag.endswith("recompile"):
            return "recompile"
        if frag.endswith("graph_break"):
            return "graph_break"
        s = self.summary
        if s:
            if frag.startswith("cache_hit") or s.get("load_result") == "hit":
                return "cache_hit"
            if frag.startswith(("cache_miss", "cache_bypass")) or s.get("load_result") == "miss":
                return "cache_miss"
            if s.get("store_result") == "stored":
                return "cache_store"
            if s.get("store_result") == "skipped":
                return "cache_skip"
        elif frag.startswith("cache_hit"):
            return "cache_hit"
        elif frag.startswith(("cache_miss", "cache_bypass")):
            return "cache_miss"
        return ""

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Event({self.seq}, {self.index}, {self.name!r})"


_SUMMARY_KEYS = ("load_result", "store_result", "compile_result", "reason", "exception_type",
                 "restart_reason", "cache", "frame")


def _summary(attrs: dict[str, Any]) -> dict[str, str] | None:
    """The few short string attributes shown on a tree label (cache results, reasons)."""
    out = None
    for k in _SUMMARY_KEYS:
        v = attrs.get(k)
        if isinstance(v, (str, int, float)) and not isinstance(v, bool):
            if out is None:
                out = {}
            out[k] = str(v)[:200]
    return out


def _is_special(frag: str) -> bool:
    return ("restart" in frag or frag.endswith(("recompile", "graph_break"))
            or frag.startswith(("cache_hit", "cache_miss", "cache_bypass")))
