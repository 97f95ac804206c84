"""What the compiled code cost at run time, per frame: calls and seconds per compiled entry, eager calls.

Two sources, said in :attr:`RuntimeInfo.source`:

* ``tracer``: ``runtime.json``, which our tracer writes when the traced block ends (``tracer/runtime.py``
  counts every call of every cache entry it saw compiled, and every call a frame ran eagerly after a
  cache miss no entry served);
* ``graph_execution``: a TORCH_TRACE log's ``graph_execution`` artifacts, which torch writes only around
  ``torch._inductor.debug.record_and_log_graph_execution_order()``: the compile id of each Inductor graph
  call, in order. They give calls per compile id and nothing else (no seconds, no eager calls, no entry
  without an Inductor graph); :attr:`RuntimeInfo.not_recorded` says so.

Anything else (an upstream run, a log without those records) has no runtime info: ``None``.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from typing import Annotated, Any, Callable, Iterable

import msgspec
from msgspec import Meta, Struct, field

from magi_format.layout import RUNTIME_FILE
from magi_tui.model.analysis.frames import parse_compile_id
from magi_tui.model.sources.files import json_or_none
from magi_tui.model.sources.safejson import Int, JsonProblem, decode, read_bounded

#: runtime.json is read up to this many bytes (an entry is ~200 bytes: 50k entries)
MAX_RUNTIME_BYTES = 10 << 20
#: graph_execution artifacts read per run, at most
MAX_EXEC_FILES = 200

GRAPH_EXECUTION_FILE = "graph_execution.json"
_LOG_NOT_RECORDED = [
    "seconds per entry (torch's graph_execution records name the graph run, not how long it ran)",
    "eager calls (past the recompile limit, skipped frames): torch records nothing per call",
    "entries without an Inductor graph (another backend, an empty graph) and calls made outside "
    "torch._inductor.debug.record_and_log_graph_execution_order()",
]


class EntryCalls(Struct):
    compile_id: str
    calls: int | None            # None: the entry's code could not be counted
    seconds: float | None        # None: not measured (a log; an entry not counted)
    #: the first call's share of ``seconds``: what a backend does lazily at the first call (a compile, a
    #: warm-up, CUDA graph recording) lands there; None when not measured
    first_call_seconds: float | None = None

    @property
    def run_seconds(self) -> float | None:
        """The seconds of the calls after the first: run time with the lazy work left out."""
        if self.seconds is None or self.first_call_seconds is None:
            return None
        return max(0.0, self.seconds - self.first_call_seconds)

    def time_text(self, fmt: Callable[[float], str]) -> str:
        """``1.20s (first call 1.18s, then 20ms over 5 calls)``: which part was the first call's lazy work."""
        if self.seconds is None:
            return ""
        out = fmt(self.seconds)
        rest = self.run_seconds
        if rest is not None and self.first_call_seconds is not None and self.calls:
            more = self.calls - 1
            out += (f" (first call {fmt(self.first_call_seconds)}: lazy compile / warm-up"
                    + (f"; then {fmt(rest)} over {more} call(s))" if more else ")"))
        return out

    def as_json(self) -> dict[str, Any]:
        r = self.run_seconds
        return {"compile_id": self.compile_id, "calls": self.calls,
                "seconds": None if self.seconds is None else round(self.seconds, 6),
                "first_call_seconds": None if self.first_call_seconds is None else round(self.first_call_seconds, 6),
                "run_seconds": None if r is None else round(r, 6)}


class RuntimeInfo(Struct):
    source: str                                        # "tracer" | "graph_execution"
    entries: dict[str, list[EntryCalls]] = field(default_factory=dict)   # frame key -> its entries
    eager: dict[str, int] = field(default_factory=dict)                  # frame key -> eager calls
    eager_unattributed: int = 0
    lookups: dict[str, int] | None = None               # the tracer's cache lookups: hits, misses
    not_recorded: list[str] = field(default_factory=list)

    def frame_entries(self, key: str) -> Sequence[EntryCalls]:
        """A frame's entries (the empty tuple for a frame with none: one each of 100k frames added up)."""
        return self.entries.get(key, ())

    def eager_calls(self, key: str) -> int | None:
        """A frame's eager calls: 0 when counted and none, None when the source cannot tell (a log; a frame
        with no cache entry: torch never looks it up, so its calls are not seen)."""
        if self.source != "tracer" or (key not in self.entries and key not in self.eager):
            return None
        return self.eager.get(key, 0)

    def as_json(self) -> dict[str, Any]:
        return {"source": self.source, "eager_calls_unattributed": self.eager_unattributed,
                "cache_lookups": self.lookups, "not_recorded": list(self.not_recorded)}


def _num(v: Any, kind: type) -> Any:
    if kind is int:
        return v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**63 else None
    if isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v < 1e300 and v == v:
        return float(v)  # (an int over 1e300 would not convert: OverflowError)
    return None


class _Entry(Struct, omit_defaults=True):
    compile_id: str | None = None
    frame_key: str | None = None
    name: str | None = None
    file: str | None = None
    line: Int | None = None
    calls: Int | None = None
    seconds: float | None = None
    first_call_seconds: float | None = None


class RuntimeFile(Struct, omit_defaults=True):
    """``runtime.json`` (``tracer/runtime.py``'s snapshot): every field read here, each of its type."""

    version: Int | None = None
    source: str | None = None
    entries: Annotated[list[_Entry], Meta(max_length=1_000_000)] | None = None
    eager_calls: dict[str, Int] | None = None
    eager_calls_unattributed: Int | None = None
    cache_lookups: dict[str, Int] | None = None
    not_counted: Annotated[list[str], Meta(max_length=1000)] | None = None


def from_runtime_json(data: Any) -> RuntimeInfo | None:
    """``runtime.json``'s value -> :class:`RuntimeInfo`; None when it is not one (a hostile or cut file:
    values of the wrong type are dropped one by one, never raised)."""
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        return None
    info = RuntimeInfo("tracer")
    for e in data["entries"]:
        if not isinstance(e, dict):
            continue
        cid = e.get("compile_id")
        if not isinstance(cid, str) or (p := parse_compile_id(cid)) is None:
            continue
        key = fk if isinstance(fk := e.get("frame_key"), str) else p[0]
        info.entries.setdefault(key, []).append(EntryCalls(cid, _num(e.get("calls"), int),
                                                           _num(e.get("seconds"), float),
                                                           _num(e.get("first_call_seconds"), float)))
    eager = data.get("eager_calls")
    if isinstance(eager, dict):
        for k, v in eager.items():
            n = _num(v, int)
            if isinstance(k, str) and n is not None:
                info.eager[k] = n
    info.eager_unattributed = _num(data.get("eager_calls_unattributed"), int) or 0
    lk = data.get("cache_lookups")
    if isinstance(lk, dict):
        info.lookups = {k: _num(lk.get(k), int) or 0 for k in ("hits", "misses")}
    nc = data.get("not_counted")
    if isinstance(nc, list):
        info.not_recorded = [str(x)[:300] for x in nc[:10]]
    for lst in info.entries.values():
        lst.sort(key=lambda ec: parse_compile_id(ec.compile_id)[1])  # type: ignore[index]  # parsed above
    return info


def read_runtime_file(run_dir: os.PathLike[str] | str) -> RuntimeInfo | None:
    path = os.path.join(run_dir, RUNTIME_FILE)
    if not os.path.lexists(path):
        return None
    try:  # bounded (size, depth) and typed; a damaged or hostile file is no runtime info
        data = decode(read_bounded(path, MAX_RUNTIME_BYTES, os.fspath(run_dir)), RuntimeFile)
    except JsonProblem:
        return None
    return from_runtime_json(msgspec.to_builtins(data))


def from_graph_execution(payloads: Iterable[str | None]) -> RuntimeInfo | None:
    """TORCH_TRACE ``graph_execution`` payloads (``{"graph_execution_order": [{"compile_id": "0/0"}, …]}``)
    -> calls per compile id; None when none of them holds a call."""
    calls: Counter = Counter()
    for text in payloads:
        data = json_or_none(text)
        order = data.get("graph_execution_order") if isinstance(data, dict) else None
        if not isinstance(order, list):
            continue
        for item in order:
            cid = item.get("compile_id") if isinstance(item, dict) else None
            if isinstance(cid, str) and parse_compile_id(cid) is not None:
                calls[cid.strip("[]")] += 1
    if not calls:
        return None
    info = RuntimeInfo("graph_execution", not_recorded=list(_LOG_NOT_RECORDED))
    for cid, n in calls.items():
        p = parse_compile_id(cid)
        info.entries.setdefault(p[0], []).append(EntryCalls(cid, n, None))  # type: ignore[index]  # parsed above
    for lst in info.entries.values():
        lst.sort(key=lambda ec: parse_compile_id(ec.compile_id)[1])  # type: ignore[index]  # parsed above
    return info


def runtime_stamp(run_dir: os.PathLike[str] | str) -> tuple:
    """What changes when ``runtime.json`` is (re)written: part of the analysis' memo key."""
    try:
        st = os.stat(os.path.join(run_dir, RUNTIME_FILE))
        return (st.st_mtime_ns, st.st_size)
    except OSError:
        return (None,)


def runtime_info(run: Any, exec_events: list) -> RuntimeInfo | None:
    """The run's runtime info: its ``runtime.json``, else the ``graph_execution`` events' payloads
    (``exec_events``: the events carrying a ``graph_execution.json``, as the analysis' fold kept them)."""
    info = read_runtime_file(run.path) if run.has_event_folders else None
    if info is not None or not exec_events:
        return info
    payloads = [run.file_text(ev, GRAPH_EXECUTION_FILE, MAX_RUNTIME_BYTES) for ev in exec_events[:MAX_EXEC_FILES]
                if GRAPH_EXECUTION_FILE in (ev.files or ())]
    return from_graph_execution(payloads)


def entries_json(info: RuntimeInfo | None, key: str) -> list[dict[str, Any]]:
    return [e.as_json() for e in info.frame_entries(key)] if info is not None else []


__all__ = ["EntryCalls", "RuntimeInfo", "from_runtime_json", "from_graph_execution", "read_runtime_file",
           "runtime_info", "runtime_stamp", "entries_json"]
