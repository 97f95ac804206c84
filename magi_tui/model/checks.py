"""One analysis of a run, shared by ``magi-tui triage`` and the triage panel: status, restarts,
failures, the graph-break worklist, recompiles explained, frames, cache, compile time, and the
checks (``ok`` / ``warn`` / ``fail`` sentences) a compiler engineer makes first.

Evidence comes from the timeline (our tracer's events carry compile ids, frames, reasons) and, when
the timeline has none of a kind (upstream runs), from ``compiled_functions/``: recompiles from cache
entries, graph breaks from resume functions, guard differences between consecutive entries.

:func:`analyse` is memoised per run on what it has read, so a live view may call it often.
"""

from __future__ import annotations

import json
import os
import re
import stat
import weakref
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from magi_format.names import AFTER_BUILD_GUARDS, SHAPE_SYMBOL
from magi_format.torchtext import graph_break_report, is_library
from magi_tui.model.events import Event
from magi_tui.model.fallbacks import MAX_HINTS, PERF_HINT_NAME, fallbacks
from magi_tui.model.files import FileProblem, open_regular
from magi_tui.model.frames import CfFrame, CfIndex, CodeId, analyse_compiled_functions, parse_compile_id
from magi_tui.model.guards import (
    DEFAULT_RECOMPILE_LIMIT,
    GuardDiff,
    Reason,
    diff_guards,
    parse_reason,
    read_guards,
    reason_from_diff,
)
from magi_tui.model.run import RunModel
from magi_tui.model.runtime import GRAPH_EXECUTION_FILE, runtime_info, runtime_stamp
from magi_tui.model.triage import Cascade, Restart

STATUSES = ("ok", "recovered", "degraded", "failed", "incomplete", "empty")
LOG_NAMES = ("run.log", "stderr.log", "stderr.txt", "output.log")
MAX_FILE_READS = 1000        # graph_break.txt / metrics.json read per analysis, at most
MAX_TEXT = 64 * 1024
MAX_SYMBOLS = 20_000         # shape_symbol events kept for explaining recompiles, at most
#: the guard kinds torch's automatic dynamic shapes answer by making the value dynamic
AUTO_DYNAMIC_KINDS = ("size", "stride", "scalar", "float", "shape_range")
_SYMBOL_SOURCE = re.compile(r"^(?P<src>.+?)\.size\(\)\[(?P<dim>\d+)\]$")


# -- result types -----------------------------------------------------------------------------------
@dataclass
class Check:
    level: str      # ok | warn | fail
    message: str
    event: Event | None = None   # where to jump, when there is one place

    def __post_init__(self) -> None:
        self.message = " ".join(str(self.message).split())  # one line, whatever the run's text held

    def as_json(self) -> dict[str, Any]:
        return {"level": self.level, "message": self.message}


@dataclass
class BreakEntry:
    """One graph-break site of the worklist (deduplicated by gb id / reason and user file:line)."""

    gb_id: str | None
    gb_type: str | None
    reason: str
    explanation: str | None
    hints: list[str]
    file: str | None
    line: int | None
    function: str | None
    source_line: str | None
    count: int = 0
    compile_ids: list[str] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    resume_fns: list[str] = field(default_factory=list)   # upstream evidence (compiled_functions/)
    #: the break is in the user's own code (not in an installed library such as transformers); None: unknown
    in_user_code: bool | None = None
    #: (file, line, function, source line) of the user's own innermost frame: where to act when the break
    #: is inside a library (the break frame itself when it is the user's)
    call_site: tuple | None = None

    @property
    def where(self) -> str:
        if not self.file:
            return "?"
        return f"{self.file}:{self.line}" if self.line is not None else self.file

    def as_json(self) -> dict[str, Any]:
        return {"gb_id": self.gb_id, "gb_type": self.gb_type, "reason": self.reason,
                "explanation": self.explanation, "hints": self.hints,
                "user_frame": {"file": self.file, "line": self.line, "function": self.function},
                "in_user_code": self.in_user_code,
                "call_site": None if self.call_site is None else dict(
                    zip(("file", "line", "function", "source_line"), self.call_site)),
                "source_line": self.source_line, "count": self.count, "compile_ids": self.compile_ids,
                "frames": self.frames, "index": self.events[0].index if self.events else None,
                "event_indices": [e.index for e in self.events[:100]],
                "resume_fns": self.resume_fns, "source": "timeline" if self.events else "compiled_functions"}


@dataclass
class RecompileInfo:
    frame: str
    frame_key: str | None
    compile_id: str | None
    reasons: list[Reason]
    guard_diff: GuardDiff | None = None
    event: Event | None = None
    entries: tuple[str, str] | None = None    # (older, newer) cache entry folders compared
    #: torch refused this recompile: the frame had reached its recompile limit (it runs eagerly)
    refused: bool = False
    #: ``TORCH_COMPILE_DYNAMIC_SOURCES`` entries of what this compile made dynamic (its shape symbols'
    #: sources, ``L['kwargs']['input_ids']:1``): torch's automatic dynamic shapes at work when non-empty
    dynamic_sources: list[str] = field(default_factory=list)

    @property
    def primary(self) -> Reason | None:
        return self.reasons[0] if self.reasons else None

    @property
    def kinds(self) -> list[str]:
        """Every kind of guard that failed, one per cache entry torch tried, in torch's order, once each."""
        return list(dict.fromkeys(r.kind for r in self.reasons))

    @property
    def automatic_dynamic(self) -> bool:
        """Torch's normal first step to dynamic shapes: a size (or int) changed and this compile made it
        dynamic, so the next new value runs without compiling. Not something to fix."""
        return bool(self.dynamic_sources) and bool(self.reasons) and all(
            r.kind in AUTO_DYNAMIC_KINDS for r in self.reasons) and not self.refused

    def as_json(self) -> dict[str, Any]:
        p = self.primary
        return {"frame": self.frame, "frame_key": self.frame_key, "compile_id": self.compile_id,
                "index": self.event.index if self.event else None,
                # torch's own words, one per cache entry that failed; none for an upstream run (the
                # guard diff's reading of the change is in reasons_parsed)
                "reasons": [] if self.event is None else
                [f"{r.entry_compile_id}: {r.text}" if r.entry_compile_id else r.text for r in self.reasons],
                "reasons_parsed": [r.as_json() for r in self.reasons],
                "guard": p.guard if p else None, "kind": p.kind if p else None, "kinds": self.kinds,
                "automatic_dynamic": self.automatic_dynamic, "dynamic_sources": self.dynamic_sources,
                "expected": p.expected if p else None, "actual": p.actual if p else None,
                "suggestion": p.suggestion if p else None,
                "guard_diff": self.guard_diff.as_json() if self.guard_diff else None,
                "refused_by_limit": self.refused,
                "source": "timeline" if self.event is not None else "compiled_functions"}


@dataclass
class EagerFrame:
    """A frame that ran eagerly (uncompiled) while the program went on: Dynamo skipped it after a graph
    break it could not resume from (``cause: unsupported``), or it reached the recompile limit
    (``cause: recompile_limit``). One finding, whatever the cause: the results are the same, the frame is
    just not compiled."""

    frame: str
    frame_key: str | None
    compile_id: str | None
    cause: str
    reason: str
    file: str | None = None
    line: int | None = None
    event: Event | None = None

    @property
    def where(self) -> str | None:
        return None if not self.file else (f"{self.file}:{self.line}" if self.line is not None else self.file)

    def as_json(self) -> dict[str, Any]:
        return {"frame": self.frame, "frame_key": self.frame_key, "compile_id": self.compile_id,
                "cause": self.cause, "reason": self.reason, "file": self.file, "line": self.line,
                "index": self.event.index if self.event else None}


_ANOTHER_BREAK = "*** While handling this graph break, another graph break occurred: ***"


def fallback_reason(message: str) -> str:
    """Why Dynamo gave up on a frame: the last graph break of an ``Unsupported`` message (torch chains
    "While handling this graph break, another graph break occurred"), its type line."""
    tail = message.rsplit(_ANOTHER_BREAK, 1)[-1]
    return _first_line(tail) or _first_line(message) or "unsupported"


def failure_source(run: RunModel, ev: Event) -> tuple[str | None, int | None, str | None]:
    """Where a failure happened in the user's code, as tlparse's "Failure Source" says it: torch's
    ``fail_user_frame_filename`` / ``_lineno`` (``raised``: the line Dynamo was tracing), from the event's
    ``fail_user_frame`` or its metrics.json; when torch recorded none (a backend crash), the frame being
    compiled (``frame``: its ``co_filename`` / ``co_firstlineno``)."""
    a = event_attrs(run, ev)
    uf = _s(a.get("fail_user_frame"))
    if uf and ":" in uf:
        f, _, ln = uf.rpartition(":")
        if _int(ln) is not None:
            return f, _int(ln), "raised"
    m = None
    if "metrics.json" in (ev.files or ()):
        text = _read_event_file(run, ev, "metrics.json", [1])
        try:
            m = json.loads(text) if text else None
        except ValueError:
            m = None
    if isinstance(m, dict):
        if _s(m.get("fail_user_frame_filename")):
            return str(m["fail_user_frame_filename"]), _int(m.get("fail_user_frame_lineno")), "raised"
        if _s(m.get("co_filename")):
            return str(m["co_filename"]), _int(m.get("co_firstlineno")), "frame"
    if _s(a.get("co_filename")):
        return str(a["co_filename"]), _int(a.get("co_firstlineno")), "frame"
    return None, None, None


@dataclass(slots=True)
class FrameRow:
    frame: str
    key: str
    name: str
    file: str | None = None
    line: int | None = None
    compiles: int = 0
    graph_breaks: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    cache_bypasses: int = 0
    bypass_reasons: Counter = field(default_factory=Counter)
    compile_s: float | None = None
    recompile_limit: int = DEFAULT_RECOMPILE_LIMIT
    limit_recorded: bool = False
    limit_hit: bool = False
    limit_event: Event | None = None
    cf_rel: str | None = None
    entries: list = field(default_factory=list)      # runtime: [EntryCalls] (model/runtime.py)
    eager_calls: int | None = None                   # runtime: None when nothing counted them
    first_event: Event | None = None
    asked: bool = False

    @property
    def recompiles(self) -> int:
        return max(0, self.compiles - 1)

    @property
    def calls(self) -> int | None:
        """Calls its compiled entries served (model/runtime.py), None when nothing counted them."""
        counted = [e.calls for e in self.entries if e.calls is not None]
        return sum(counted) if counted else None

    @property
    def never_hits_cache(self) -> bool:
        return self.cache_bypasses > 0 and self.cache_hits == 0 and self.cache_misses == 0

    def as_json(self) -> dict[str, Any]:
        return {"frame": self.frame, "key": self.key, "name": self.name, "file": self.file, "line": self.line,
                "compiles": self.compiles, "recompiles": self.recompiles, "graph_breaks": self.graph_breaks,
                "cache": {"hits": self.cache_hits, "misses": self.cache_misses, "bypasses": self.cache_bypasses,
                          "bypass_reasons": dict(self.bypass_reasons)},
                "never_hits_cache": self.never_hits_cache,
                "compile_s": None if self.compile_s is None else round(self.compile_s, 6),
                "recompile_limit": self.recompile_limit, "recompile_limit_recorded": self.limit_recorded,
                "limit_hit": self.limit_hit, "compiled_functions": self.cf_rel,
                "entries": [e.as_json() for e in self.entries], "eager_calls": self.eager_calls}


@dataclass
class Analysis:
    status: str
    restarts: list[Restart]
    problems: list[Cascade]
    worklist: list[BreakEntry]
    recompiles: list[RecompileInfo]
    frames: list[FrameRow]
    cache: dict[str, Any]
    compile_time: dict[str, Any]
    checks: list[Check]
    empty_note: str | None = None
    log_tail: list[str] | None = None
    log_path: str | None = None
    incomplete_reasons: list[str] = field(default_factory=list)
    graph_break_total: int = 0
    recompile_total: int = 0
    #: frames that ran eagerly (status ``degraded``)
    ran_eagerly: list[EagerFrame] = field(default_factory=list)
    #: id(cascade) -> (file, line) where each failure was raised in the user's code
    failure_sources: dict[int, tuple] = field(default_factory=dict)
    #: facts the run's source cannot know (see :func:`not_recorded`)
    not_recorded: frozenset = frozenset()
    #: a TORCH_TRACE log of the same process that records them (a debug dir's ``tlparse/`` log)
    companion_log: str | None = None
    runtime: Any = None          # model/runtime.RuntimeInfo: calls per compiled entry, eager calls
    fallbacks: list = field(default_factory=list)   # model/fallbacks.Fallback: every silent fallback

    @property
    def exit_failed(self) -> bool:
        return self.status in ("failed", "incomplete")


# -- helpers ----------------------------------------------------------------------------------------
def event_attrs(run: RunModel, ev: Event) -> dict[str, Any]:
    """An event's attributes, ``{}`` when they cannot be read back or are not a map."""
    try:
        a = run.attributes(ev)
    except Exception:
        a = {}
    return a if isinstance(a, dict) else {}


def _read_event_file(run: RunModel, ev: Event, name: str, budget: list[int]) -> str | None:
    """The text of one of the event's files; each try spends one of ``budget`` (found or not: looking
    costs as much as reading, and a run can list 100k files that are not there)."""
    if budget[0] <= 0 or name not in (ev.files or ()):
        return None
    budget[0] -= 1
    return run.file_text(ev, name, MAX_TEXT)


#: what each of torch.export's issues means, in a sentence's words
EXPORT_ISSUE_WORDS = {"data_dependent": "data-dependent expression assumed from real tensors",
                      "data_dependent_error": "data-dependent guard export could not decide",
                      "guard_added": "guard export added on an input's shape",
                      "missing_fake_kernel": "custom op without a fake kernel",
                      "mismatched_fake_kernel": "custom op whose fake kernel disagrees with the real one"}


def export_issue_json(run: RunModel, ev: Event) -> dict[str, Any]:
    a = event_attrs(run, ev)
    return {"index": ev.index, "issue": a.get("issue"), "expr": a.get("expr"), "result": a.get("result"),
            "op": a.get("op"), "reason": a.get("reason"), "locals": a.get("locals"),
            "user_frame": a.get("user_frame"), "user_function": a.get("user_function"),
            "source_line": a.get("source_line")}


def export_issues_check(run: RunModel, items: list) -> Check:
    """torch.export's issues as one finding: how many of each, and where the first one is."""
    counts = Counter(i.reason for i in items)
    first = export_issue_json(run, items[0].event)
    what = first["expr"] or first["op"] or ""
    if first["result"] is not None:
        what += f" (assumed {first['result']})"
    where = f" at {first['user_frame']}" if first["user_frame"] else ""
    src = f": {first['source_line']}" if first["source_line"] else ""
    kinds = ", ".join(f"{EXPORT_ISSUE_WORDS.get(k, k)} ×{n}" for k, n in counts.most_common())
    return Check("warn", f"{len(items)} torch.export issue(s): {kinds}; first: {what}{where}{src}", items[0].event)


def _first_line(text: str | None) -> str:
    for ln in str(text or "").splitlines():
        if ln.strip():
            return ln.strip()
    return ""


def _s(v: Any) -> str | None:
    return None if v is None or v == "" else str(v)


def _int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.strip().lstrip("-").isdigit():
        return int(v)
    return None


def _see(a: "Analysis") -> str:
    """Where the facts a source cannot know are: its companion TORCH_TRACE log, when there is one."""
    if a.companion_log:
        return f" (a TORCH_COMPILE_DEBUG folder does not; the TORCH_TRACE log of the same run does: {a.companion_log})"
    return " (a TORCH_COMPILE_DEBUG folder does not; run with TORCH_TRACE or the tracer to see them)"


def _hints(v: Any) -> list[str]:
    if isinstance(v, list):
        return [str(x) for x in v if x not in (None, "")][:20]
    if isinstance(v, str) and v:
        return [v]
    return []


def not_recorded(run: RunModel) -> frozenset[str]:
    """The facts this run's source cannot know (``graph_breaks``, ``recompiles``, ``restarts``, ``cache``):
    a TORCH_COMPILE_DEBUG folder holds Inductor's files, not Dynamo's decisions. Shown as "not recorded
    here", never as a green zero."""
    from magi_tui.model.debugdir.reader import DebugDirReader

    if isinstance(run.reader, DebugDirReader):
        from magi_tui.model.debugdir import NOT_RECORDED
        return NOT_RECORDED
    return frozenset()


def run_status(run: RunModel) -> tuple[str, list[str]]:
    """``(status, why incomplete)``: the run's own rule (:meth:`RunModel.status_why`)."""
    return run.status_why()


#: run -> (its event count and first event when indexed, frame key -> its events in file order)
_FRAME_EVENTS: "weakref.WeakKeyDictionary[RunModel, tuple[tuple, dict[str, list[Event]]]]" = \
    weakref.WeakKeyDictionary()


def _events_by_frame(run: RunModel) -> dict[str, list[Event]]:
    """The run's events by the frame their compile id names, made once per read of the run (the frames
    screen asks at each move of its cursor; each distinct compile id is parsed once)."""
    events = run.events
    stamp = (len(events), events[0] if events else None)
    got = _FRAME_EVENTS.get(run)
    if got is not None and got[0][0] == stamp[0] and got[0][1] is stamp[1]:
        return got[1]
    index: dict[str, list[Event]] = {}
    parsed: dict[str | None, Any] = {}
    for e in events:
        cid = e.compile_id
        p = parsed.get(cid, _NO_PARSE)
        if p is _NO_PARSE:
            p = parsed[cid] = parse_compile_id(cid)
        if p is not None:
            index.setdefault(p[0], []).append(e)
    _FRAME_EVENTS[run] = (stamp, index)
    return index


def frame_events(run: RunModel, frame: FrameRow, n_frames: int, limit: int = 500) -> list[Event]:
    """A frame's events: those whose compile id names its frame; in a run recorded without compile ids
    (upstream), every event when it is the only frame; else its first event, if known."""
    out = _events_by_frame(run).get(frame.key, [])[:limit]
    if out:
        return out
    if n_frames == 1 and not any(e.compile_id for e in run.events[:1000]):
        return list(run.events[:limit])
    return [frame.first_event] if frame.first_event is not None else []


# -- what the analysis reads from every event ------------------------------------------------------
class _FrameFold:
    """One frame key's events (compile ids ``<frame>/<n>``), as :meth:`_Analyser._timeline_frames` reads
    them."""

    __slots__ = ("first_event", "name", "any_ids", "compile_ids", "compile_s", "first_before", "first_closer")

    def __init__(self, first: Event) -> None:
        self.first_event = first
        self.name = ""
        # the frame's compile indices (``<frame>/<n>``) seen, and those of a ``compile`` lifecycle: one int
        # while there is one (most frames of a big run compile once; an empty set is 216 bytes), a set after
        self.any_ids: int | set[int] | None = None
        self.compile_ids: int | set[int] | None = None
        self.compile_s: float | None = None
        self.first_before: Event | None = None   # its first compile ``before`` (co_filename / line)
        self.first_closer: Event | None = None   # its first compile ``after`` / ``failed`` (metrics.json)


_NO_PARSE = object()


def _with_id(ids: int | set[int] | None, i: int) -> int | set[int]:
    """``ids`` (:class:`_FrameFold`'s compact set) with ``i`` in it."""
    if ids is None or ids == i:
        return i
    if type(ids) is set:
        ids.add(i)
        return ids
    return {ids, i}


def _n_ids(ids: int | set[int] | None) -> int:
    return 0 if ids is None else len(ids) if type(ids) is set else 1


class TimelineFold:
    """What the analysis needs from every event, folded in one event at a time, in file order: whether
    compile ids were recorded, each frame's events (:class:`_FrameFold`) and the compile time sums (per
    lifecycle, per piece, top level). The analysis folds ``run.events`` through it; a headless load that
    keeps no event list (``RunModel.load(fold=TimelineFold())``) feeds it as it reads, so both give the
    same answer from one implementation. Files (metrics.json, attributes read back) are read by the
    analysis, not here."""

    def __init__(self) -> None:
        self.has_cids = False
        self.frames: dict[str, _FrameFold] = {}
        self.spans: dict[str, list] = {}          # lifecycle -> [seconds, count]
        self.pieces: dict[int, list] = {}         # piece -> [depth, seconds, [lifecycles], count]
        self.top = 0.0
        self.top_n = 0
        self.metrics_events: list[Event] = []     # compile ends with a duration and a metrics.json
        #: compile id -> its ``shape_symbol`` events (the sizes / ints that compile treated as dynamic)
        self.symbols: dict[str, list[Event]] = {}
        self._n_symbols = 0
        #: compile id -> its ``after_build_guards`` event (guards.txt): recompile guard diffs from a log
        self.guards: dict[str, Event] = {}
        self.exec_events: list[Event] = []        # torch's graph_execution records (calls per compile id)
        self.hint_events: list[Event] = []        # Inductor's performance hints (the tracer's perf_hint)
        self._cids: dict[str, Any] = {}

    def add(self, ev: Event) -> None:
        if ev.files and GRAPH_EXECUTION_FILE in ev.files:
            self.exec_events.append(ev)
        elif ev.name == PERF_HINT_NAME and len(self.hint_events) < MAX_HINTS:
            self.hint_events.append(ev)
        cid = ev.compile_id
        if cid and ev.name.endswith(AFTER_BUILD_GUARDS) and len(self.guards) < MAX_SYMBOLS:
            self.guards.setdefault(cid, ev)
        if ev.frag == SHAPE_SYMBOL and cid and self._n_symbols < MAX_SYMBOLS:
            self._n_symbols += 1
            self.symbols.setdefault(cid, []).append(ev)
        if cid is not None:
            if cid:
                self.has_cids = True
            self._frame(ev, cid)
        phase = ev.phase
        if phase != "after" and phase != "failed":
            return
        lifecycle = ev.lifecycle
        if lifecycle is None:
            return
        span = ev.span
        d = ev.duration_ms
        if d is None:
            d = span.duration_ms if span else None
            if d is None:
                return
        sec = d / 1000.0
        acc = self.spans.get(lifecycle)
        if acc is None:
            acc = self.spans[lifecycle] = [0.0, 0]
        acc[0] += sec
        acc[1] += 1
        piece = ev.subgraph_index
        if piece is None:
            piece = ev.graph_index
        if span is not None:
            depth = span.depth
            if piece is not None:
                cur = self.pieces.get(piece)
                if cur is None or depth < cur[0]:  # the outermost lifecycles of the piece (siblings add up)
                    self.pieces[piece] = [depth, sec, [lifecycle], 1]
                elif depth == cur[0]:
                    cur[1] += sec
                    cur[3] += 1
                    if lifecycle not in cur[2]:
                        cur[2].append(lifecycle)
            if depth == 0:
                self.top += sec
                self.top_n += 1
        if lifecycle == "compile" and "metrics.json" in (ev.files or ()):
            self.metrics_events.append(ev)

    def _frame(self, ev: Event, cid: str) -> None:
        p = self._cids.get(cid, _NO_PARSE)
        if p is _NO_PARSE:
            p = parse_compile_id(cid)
            if len(self._cids) >= 4096:  # a compile's events come together: the recent ids are the ones
                self._cids.clear()       # asked again (100k kept were ~180 bytes a frame of a big log)
            self._cids[cid] = p
        if p is None:
            return
        f = self.frames.get(p[0])
        if f is None:
            f = self.frames[p[0]] = _FrameFold(ev)
        name = (ev.summary or {}).get("frame")
        if name and not f.name:
            f.name = name
        f.any_ids = _with_id(f.any_ids, p[1])
        closing = ev.phase in ("after", "failed")
        span = ev.span
        top = span is not None and span.depth == 0
        if closing and (top or (span is None and ev.lifecycle == "compile")):
            # a frame's compile time is every top-level lifecycle of its compile ids: Dynamo's ``compile``
            # and the backend work done after Dynamo returned (a piecewise backend compiles its pieces at
            # the first call), so the frames' times add up to the total
            d = ev.duration_ms if ev.duration_ms is not None else (span.duration_ms if span else None)
            if d is not None:
                f.compile_s = (f.compile_s or 0.0) + d / 1000.0
        if ev.lifecycle == "compile":
            f.compile_ids = _with_id(f.compile_ids, p[1])
            if closing and f.first_closer is None:
                f.first_closer = ev
            elif ev.phase == "before" and f.first_before is None:
                f.first_before = ev


def timeline_fold(run: RunModel) -> TimelineFold:
    """The run's fold: the one its headless load fed, else one over its events."""
    fold = getattr(run, "fold", None)
    if fold is not None:
        return fold
    fold = TimelineFold()
    add = fold.add
    for ev in run.events:
        add(ev)
    return fold


# -- the analysis -----------------------------------------------------------------------------------
_MEMO: "weakref.WeakKeyDictionary[RunModel, tuple[tuple, Analysis]]" = weakref.WeakKeyDictionary()
_CF_MEMO: "weakref.WeakKeyDictionary[RunModel, tuple[tuple, CfIndex]]" = weakref.WeakKeyDictionary()


def _cf_stamp(run: RunModel) -> tuple:
    try:
        st = os.stat(run.path / "compiled_functions")
        return (st.st_mtime_ns, st.st_ino)
    except OSError:
        return (None,)


def compiled_index(run: RunModel) -> CfIndex:
    stamp = _cf_stamp(run)
    got = _CF_MEMO.get(run)
    if got is not None and got[0] == stamp:
        return got[1]
    idx = analyse_compiled_functions(run.path) if stamp != (None,) else CfIndex()
    _CF_MEMO[run] = (stamp, idx)
    return idx


def analyse(run: RunModel) -> Analysis:
    """The run's analysis (memoised on the events read so far and ``compiled_functions/``)."""
    stamp = (run.event_count, len(run.malformed), run.partial_line, run.error, _cf_stamp(run),
             runtime_stamp(run.path),
             len(run.triage.failures) and sum(1 for f in run.triage.failures if f.recovered))
    got = _MEMO.get(run)
    if got is not None and got[0] == stamp:
        return got[1]
    a = _Analyser(run).build()
    _MEMO[run] = (stamp, a)
    return a


class _Analyser:
    def __init__(self, run: RunModel) -> None:
        self.run = run
        self.t = run.triage
        self.cf = compiled_index(run)
        self.budget = [MAX_FILE_READS]
        #: (compile end event, its metrics.json) of the compiles that left no guarded code
        self.unguarded: list[tuple[Event, dict]] = []
        #: (compile end event, its metrics.json) of the compiles whose metrics carry a cudagraph skip reason
        self.cudagraph_skips: list[tuple[Event, dict]] = []
        self.frames: dict[str, FrameRow] = {}
        self.cid_frame: dict[str, str] = {}
        self.fold = timeline_fold(run)

    # frames ------------------------------------------------------------------------------------
    def _timeline_frames(self) -> None:
        run = self.run
        for fkey, f in self.fold.frames.items():
            # compiles that ran (a ``compile`` lifecycle); a recompile or limit-hit event names the next
            # compile id even when that compile never happens (the frame fell back to eager)
            row = self.frames[fkey] = FrameRow(frame="", key=fkey, name=f.name, first_event=f.first_event,
                                              compile_s=f.compile_s,
                                              compiles=_n_ids(f.compile_ids) or _n_ids(f.any_ids))
            if f.first_before is not None:  # once per frame: the attributes are re-read from the file
                row.asked = True
                a = event_attrs(run, f.first_before)
                row.file = _s(a.get("co_filename"))
                row.line = _int(a.get("co_firstlineno"))
        for row in self.frames.values():
            if not row.name:
                row.name = "?"
        # where the code object is: from metrics.json of its first compile when no attribute said
        for row in self.frames.values():
            ev = self.fold.frames[row.key].first_closer
            if row.file is None and ev is not None:
                text = _read_event_file(run, ev, "metrics.json", self.budget)
                if text:
                    try:
                        m = json.loads(text)
                    except ValueError:
                        m = {}
                    if isinstance(m, dict):
                        row.file = _s(m.get("co_filename"))
                        row.line = _int(m.get("co_firstlineno"))
        for row in self.frames.values():
            code = CodeId(row.name, row.file, row.line)
            row.frame = code.label
            same = self.cf.by_name(row.name)
            if len(same) == 1:
                row.cf_rel = same[0].rel

    def _cf_frames(self) -> None:
        for f in self.cf.frames:
            if f.compiles == 0:
                continue
            key = "cf:" + f.rel
            row = FrameRow(frame=f.code.label, key=key, name=f.code.name, file=f.code.file, line=f.code.line,
                           compiles=f.compiles, cf_rel=f.rel)
            self.frames[key] = row

    # graph breaks ------------------------------------------------------------------------------
    def _worklist(self) -> list[BreakEntry]:
        run = self.run
        entries: dict[tuple, BreakEntry] = {}
        for item in self.t.graph_breaks:
            ev = item.event
            a = event_attrs(run, ev)
            info: dict[str, Any] = {}
            hints = _hints(a.get("hints"))
            attr_file = _s(a.get("user_file"))
            if not (a.get("gb_id") and attr_file and a.get("explanation") and hints) or (
                    attr_file and is_library(attr_file)):
                # torch's own report is the whole truth (runs recorded before hints were kept whole, a
                # break inside a library whose caller is wanted): one grammar, magi_format.torchtext
                text = _read_event_file(run, ev, "graph_break.txt", self.budget)
                if text:
                    info = graph_break_report(text)
            gb_id = _s(a.get("gb_id")) or info.get("gb_id")
            uf = a.get("user_frame")
            file = attr_file or info.get("break_file")
            line = _int(a.get("user_line"))
            if line is None:
                line = info.get("break_line")
            if file is None and isinstance(uf, str) and ":" in uf:
                f0, _, l0 = uf.rpartition(":")
                file, line = f0, _int(l0)
            gb_type = _s(a.get("gb_type")) or info.get("gb_type")
            # the specific cause: torch's gb_type ("Unsupported Tensor.item() call ..."), else its reason
            reason = gb_type or _s(a.get("reason")) or info.get("reason") or item.reason or "graph break"
            key = (gb_id or _first_line(reason), file, line)
            be = entries.get(key)
            if be is None:
                expl = info.get("explanation") or _s(a.get("explanation"))
                be = entries[key] = BreakEntry(
                    gb_id, gb_type, _first_line(reason), expl, info.get("hints") or hints, file, line,
                    _s(a.get("user_function")) or info.get("break_function"),
                    _s(a.get("source_line")) or info.get("break_source"))
                if file is not None:
                    be.in_user_code = not is_library(file)
                    if be.in_user_code:
                        be.call_site = (file, line, be.function, be.source_line)
                    elif info.get("user_file") and not is_library(info["user_file"]):
                        be.call_site = (info["user_file"], info.get("user_line"), info.get("user_function"),
                                        info.get("source_line"))
            be.count += 1
            if ev.compile_id and ev.compile_id not in be.compile_ids:
                be.compile_ids.append(ev.compile_id)
            fr = self.frames.get((parse_compile_id(ev.compile_id) or ("",))[0])
            if fr is not None:
                fr.graph_breaks += 1
                if fr.frame not in be.frames:
                    be.frames.append(fr.frame)
            if len(be.events) < 1000:
                be.events.append(ev)
        if not entries:  # upstream runs: the resume functions are the evidence
            for bs in self.cf.breaks:
                be = BreakEntry(None, None, "graph break (a resume function continues after it)", None, [],
                                bs.file, bs.line, bs.function, None, count=bs.count, resume_fns=bs.resume_fns)
                entries[(bs.file, bs.line, bs.function)] = be
                for rel in bs.parents:
                    row = self.frames.get("cf:" + rel)
                    if row is not None:
                        row.graph_breaks += bs.count
                        be.frames.append(row.frame)
        out = list(entries.values())
        out.sort(key=lambda b: (-b.count, b.file or "", b.line or 0))
        return out

    # recompiles --------------------------------------------------------------------------------
    def _diff_for(self, name: str, compile_index: int, total: int | None) -> tuple[GuardDiff | None, tuple | None]:
        """Guards of compile ``compile_index`` (0-based per frame) vs the one before, when the frame's
        cache entries can be matched (one folder of that name; entries newest first)."""
        same = [f for f in self.cf.by_name(name) if f.compiles]
        if len(same) != 1 or compile_index < 1:
            return None, None
        cf = same[0]
        n = cf.compiles
        if total is not None and total != n:
            return None, None  # entries missing (evicted, failed compiles): no safe match
        newer_i, older_i = n - 1 - compile_index, n - compile_index
        if newer_i < 0 or older_i >= n:
            return None, None
        return self._diff_entries(cf, older_i, newer_i)

    def _diff_compiles(self, older_cid: str, newer_cid: str) -> tuple[GuardDiff | None, tuple | None]:
        """The guards ``after_build_guards`` recorded for two compile ids, compared (logs and our runs)."""
        g = self.fold.guards
        a_ev, b_ev = g.get(older_cid), g.get(newer_cid)
        if a_ev is None or b_ev is None:
            return None, None
        a = _read_event_file(self.run, a_ev, "guards.txt", self.budget)
        b = _read_event_file(self.run, b_ev, "guards.txt", self.budget)
        if a is None or b is None:
            return None, None
        names = (f"compile {older_cid}", f"compile {newer_cid}")
        return diff_guards(a.splitlines(), b.splitlines(), names[0] + " guards", names[1] + " guards"), names

    def _diff_entries(self, cf: CfFrame, older_i: int, newer_i: int):
        ent = {e.index: e for e in cf.entries}
        older, newer = ent.get(older_i), ent.get(newer_i)
        if older is None or newer is None:
            return None, None
        base = self.run.path
        a, b = read_guards(older.guards, base), read_guards(newer.guards, base)
        names = (f"{cf.rel}/entry_{older_i}", f"{cf.rel}/entry_{newer_i}")
        if a is None or b is None:
            return None, names
        return diff_guards(a, b, names[0] + "/guards.txt", names[1] + "/guards.txt"), names

    def _recompiles(self) -> list[RecompileInfo]:
        run = self.run
        out: list[RecompileInfo] = []
        for item in self.t.recompiles:
            ev = item.event
            a = event_attrs(run, ev)
            raw = a.get("reasons")
            reasons = [str(r) for r in raw] if isinstance(raw, list) else []
            if not reasons:
                r0 = _s(a.get("reason")) or item.reason
                if r0:
                    reasons = [r0]
            parsed = [parse_reason(r) for r in reasons]
            p = parse_compile_id(ev.compile_id)
            row = self.frames.get(p[0]) if p else None
            name = (row.name if row else None) or _s(a.get("frame")) or "?"
            lim = _int(a.get("recompile_limit"))
            if row is not None and lim is not None:
                row.recompile_limit, row.limit_recorded = lim, True
            info = RecompileInfo(row.frame if row else name, row.key if row else None, ev.compile_id, parsed,
                                 event=ev)
            if ev.compile_id and parsed:
                info.dynamic_sources = self._dynamic_sources(ev.compile_id)
                pr = parsed[0]
                if info.dynamic_sources and pr.kind in AUTO_DYNAMIC_KINDS and not (
                        pr.subject or "").startswith("___stack"):
                    # everything torch made dynamic together: one entry alone can be specialised back by
                    # another input of the same length (input_ids and attention_mask)
                    env = ",".join(info.dynamic_sources)
                    pr.suggestion = ((pr.suggestion or "").split(" To compile it dynamic")[0].rstrip(".")
                                     + f". Torch's automatic dynamic shapes made {len(info.dynamic_sources)} "
                                     "source(s) dynamic in this recompile, so new sizes run without compiling "
                                     f'(the normal path); to start dynamic: TORCH_COMPILE_DYNAMIC_SOURCES="{env}"')
            if p is not None and name != "?":
                info.guard_diff, info.entries = self._diff_for(name, p[1], row.compiles if row else None)
            if info.guard_diff is None and parsed and parsed[0].entry_compile_id and ev.compile_id:
                # no compiled_functions/ (a TORCH_TRACE log): the guards each compile built, the failed
                # entry's against the new compile's
                info.guard_diff, _names = self._diff_compiles(parsed[0].entry_compile_id, ev.compile_id)
            if p is not None:
                pr = info.primary
                d = info.guard_diff
                if pr is not None and pr.actual is None and pr.expected is not None and d is not None:
                    # torch names the expected value only (``n == 3``): the newer entry's guard has the actual
                    act = next((b for x, b in d.changes if x == pr.expected), None)
                    if act is not None:
                        pr.actual = act
            out.append(info)
        if not out:
            for f in self.cf.frames:
                for k in range(1, f.compiles):
                    # entry_<n-1> is the first compile: recompile k compares entry_{n-k} with entry_{n-1-k}
                    d, names = self._diff_entries(f, f.compiles - k, f.compiles - 1 - k)
                    reasons = []
                    if d is not None:
                        r = reason_from_diff(d)
                        if r is not None:
                            reasons.append(r)
                    out.append(RecompileInfo(f.code.label, "cf:" + f.rel, None, reasons, d, None, names))
        return out

    def _dynamic_sources(self, compile_id: str) -> list[str]:
        """``TORCH_COMPILE_DYNAMIC_SOURCES`` entries for the backed symbols compile ``compile_id`` created."""
        out: list[str] = []
        for sev in self.fold.symbols.get(compile_id, ())[:200]:
            a = event_attrs(self.run, sev)
            src = _s(a.get("source"))
            if not src or a.get("unbacked"):
                continue
            m = _SYMBOL_SOURCE.match(src)
            entry = f"{m.group('src')}:{m.group('dim')}" if m else (src if "(" not in src else None)
            if entry and "," not in entry and entry not in out:
                out.append(entry)
        return sorted(out)

    def _limits(self) -> None:
        run = self.run
        for item in self.t.recompile_limit_hits:
            ev = item.event
            a = event_attrs(run, ev)
            p = parse_compile_id(ev.compile_id)
            row = self.frames.get(p[0]) if p else None
            if row is None:
                fname = _s(a.get("frame"))
                row = next((r for r in self.frames.values() if fname and r.name == fname), None)
            for rc in self._recompile_list:
                if rc.event is not None and ev.compile_id and rc.compile_id == ev.compile_id \
                        and rc.event.session == ev.session:
                    rc.refused = True
            if row is not None:
                row.limit_hit = True
                row.limit_event = ev
                lim = _int(a.get("recompile_limit"))
                if lim is not None:
                    row.recompile_limit, row.limit_recorded = lim, True

    # cache -------------------------------------------------------------------------------------
    def _cache(self) -> dict[str, Any]:
        t = self.t
        reasons: dict[str, Counter] = {k: Counter() for k in ("hit", "miss", "bypass", "skipped_store")}
        for state, items in (("hit", t.cache_hits), ("miss", t.cache_misses), ("bypass", t.cache_bypasses),
                             ("skipped_store", t.cache_skipped_stores)):
            for it in items:
                reasons[state][_first_line(it.reason) or "-"] += 1
                if state in ("hit", "miss", "bypass"):
                    row = self.frames.get((parse_compile_id(it.event.compile_id) or ("",))[0])
                    if row is not None:
                        if state == "hit":
                            row.cache_hits += 1
                        elif state == "miss":
                            row.cache_misses += 1
                        else:
                            row.cache_bypasses += 1
                            row.bypass_reasons[_first_line(it.reason) or "-"] += 1
        by_cache: dict[str, Counter] = {}
        for state, items in (("hit", t.cache_hits), ("miss", t.cache_misses), ("bypass", t.cache_bypasses)):
            for it in items:
                c = (it.event.summary or {}).get("cache") or (
                    "magi" if it.event.lifecycle == "compiler_manager_load" else "-")
                by_cache.setdefault(c, Counter())[state] += 1
        h, m, b = len(t.cache_hits), len(t.cache_misses), len(t.cache_bypasses)
        if not (h or m or b):
            state = "none"
        elif b and not (h or m):
            state = "bypassed"
        elif h and not m:
            state = "warm"
        elif m and not h:
            state = "cold"
        else:
            state = "mixed"
        return {
            "state": state,
            "counts": {"hits": h, "misses": m, "bypasses": b, "stores": len(t.cache_stores),
                       "skipped_stores": len(t.cache_skipped_stores)},
            "reasons": {k: dict(v.most_common()) for k, v in reasons.items()},
            "by_cache": {k: dict(v) for k, v in by_cache.items()},
            "hits": [i.as_json() for i in t.cache_hits],
            "misses": [i.as_json() for i in t.cache_misses],
            "bypasses": [i.as_json() for i in t.cache_bypasses],
            "stores": [i.as_json() for i in t.cache_stores],
            "skipped_stores": [i.as_json() for i in t.cache_skipped_stores],
        }

    # compile time ------------------------------------------------------------------------------
    def _compile_time(self) -> dict[str, Any]:
        run = self.run
        fold = self.fold
        spans, pieces, top, top_n = fold.spans, fold.pieces, fold.top, fold.top_n
        metrics = {"Dynamo tracing (frame minus backend)": 0.0, "backend compile (AOT + Inductor)": 0.0,
                   "Inductor compile": 0.0, "Inductor codegen": 0.0}
        seen_metrics = False
        for ev in fold.metrics_events:
            text = _read_event_file(run, ev, "metrics.json", self.budget)
            try:
                m = json.loads(text) if text else None
            except ValueError:
                m = None
            if isinstance(m, dict):
                seen_metrics = True
                if m.get("has_guarded_code") is False:  # for the silent fallbacks: read once, here
                    self.unguarded.append((ev, m))
                if m.get("cudagraph_skip_reason"):
                    self.cudagraph_skips.append((ev, m))
                ent = m.get("entire_frame_compile_time_s")
                be = m.get("backend_compile_time_s")
                num = (int, float)
                if isinstance(ent, num) and not isinstance(ent, bool):
                    metrics["Dynamo tracing (frame minus backend)"] += ent - (be if isinstance(be, num) else 0)
                if isinstance(be, num) and not isinstance(be, bool):
                    metrics["backend compile (AOT + Inductor)"] += be
                for k, label in (("inductor_compile_time_s", "Inductor compile"),
                                 ("code_gen_time_s", "Inductor codegen")):
                    v = m.get(k)
                    if isinstance(v, num) and not isinstance(v, bool):
                        metrics[label] += v
        phases = [{"phase": name, "seconds": round(v[0], 6), "count": v[1], "source": "spans"}
                  for name, v in spans.items()]
        if seen_metrics:
            phases += [{"phase": k, "seconds": round(v, 6), "count": None, "source": "metrics"}
                       for k, v in metrics.items() if v > 0]
        phases.sort(key=lambda p: -p["seconds"])
        frames = {r.frame: round(r.compile_s, 6) for r in self.frames.values() if r.compile_s is not None}
        # top-level time no frame owns (no compile id): so the frames and it add up to the total
        unattributed = round(max(0.0, top - sum(frames.values())), 6) if top_n and frames else None
        per_piece = [{"piece": k, "seconds": round(v[1], 6), "lifecycle": "+".join(v[2]), "count": v[3]}
                     for k, v in sorted(pieces.items())]
        return {"total_s": round(top, 6) if top_n else None, "phases": phases, "per_frame": frames,
                "unattributed_s": unattributed,
                "per_piece": per_piece,
                "note": "lifecycles nest (a pass runs inside its backend call): phase seconds are inclusive "
                        "and do not add up to the total"}

    # status ------------------------------------------------------------------------------------
    def _status(self) -> tuple[str, list[str]]:
        return run_status(self.run)

    def _log_tail(self) -> tuple[str | None, list[str] | None]:
        """A run.log / captured stderr beside the run (the run dir, or up to the cache root's parent)."""
        p = self.run.path
        dirs = [p, p / "timeline_events"]
        cur = p
        for _ in range(4):
            cur = cur.parent
            dirs.append(cur)
            if (cur / "magi_depyf").is_dir() or cur == cur.parent:
                dirs.append(cur.parent)
                break
        for d in dirs:
            for name in LOG_NAMES:
                f = d / name
                try:
                    if not stat.S_ISREG(os.lstat(f).st_mode):  # not a link (it could lead anywhere), FIFO, dir
                        continue
                    fd, st = open_regular(f)
                except (OSError, ValueError, FileProblem):
                    continue
                try:
                    size = st.st_size
                    data = os.pread(fd, 4096, max(0, size - 4096)).decode("utf-8", errors="replace")
                except OSError:
                    continue
                finally:
                    os.close(fd)
                lines = [ln for ln in data.splitlines() if ln.strip()]
                if size > 4096 and lines:
                    lines = lines[1:]
                return str(f), lines[-12:]
        return None, None

    # checks ------------------------------------------------------------------------------------
    def _checks(self, a: Analysis) -> list[Check]:
        run, t = self.run, self.t
        out: list[Check] = []
        if run.error:
            out.append(Check("fail", f"{run.source_name} cannot be read: {run.error}"))
        if a.status == "empty" and a.not_recorded:
            out.append(Check("warn", "nothing in this TORCH_COMPILE_DEBUG folder: every graph came from a warm "
                                     "cache (a cache hit writes no debug files) or nothing was compiled"))
        elif a.status == "empty":
            cf_n = sum(1 for f in self.cf.frames if f.compiles)
            extra = (f"; compiled_functions/ shows {cf_n} compiled frame(s), so the compile ran without "
                     "reaching the recorded hooks (a warm cache)" if cf_n else
                     "; no compiled_functions/ either")
            out.append(Check("warn", "nothing recorded: Dynamo failed before the backend ran, or every compile "
                                     "was served from a warm cache" + extra))
        problems = t.problems
        unrec = [c for c in problems if not c.recovered]
        if unrec:
            h = unrec[0].head
            out.append(Check("fail", f"{len(unrec)} failure(s) not recovered; first: #{h.event.index} "
                                     f"{h.event.lifecycle or h.event.frag}: {unrec[0].reason or '-'}", h.event))
        elif problems:
            out.append(Check("ok", f"{len(problems)} failure(s), all recovered (retried)", problems[0].head.event))
        elif run.event_count:
            out.append(Check("ok", "no failures"))
        if t.restarts:
            bad = [r for r in t.restarts if not r.recovered]
            folded = sum(len(r.cascade.members) - 1 for r in t.restarts if r.cascade is not None)
            fold = f" ({folded} enclosing failed event(s) folded under them)" if folded else ""
            if bad:
                out.append(Check("fail", f"{len(bad)} of {len(t.restarts)} Dynamo restart(s) never recovered{fold}",
                                 bad[0].event))
            else:
                out.append(Check("ok", f"{len(t.restarts)} Dynamo restart(s), all recovered: Dynamo's control "
                                       f"flow, not failures{fold}", t.restarts[0].event))
        for why in a.incomplete_reasons:
            ev = t.tracer_stopped[0].event if "tracer" in why and t.tracer_stopped else (
                run.open_spans[0].first if run.open_spans and "never closed" in why else None)
            out.append(Check("fail" if a.status == "incomplete" else "warn", why, ev))
        auto = [r for r in a.recompiles if r.automatic_dynamic]
        other = [r for r in a.recompiles if not r.automatic_dynamic]
        if auto:
            env = ",".join(dict.fromkeys(s for r in auto for s in r.dynamic_sources))
            out.append(Check("ok", f"{len(auto)} recompile(s) were torch's automatic dynamic shapes (a size changed "
                                   "once and is dynamic from then on: the normal path); to compile dynamic from the "
                                   f'start: TORCH_COMPILE_DYNAMIC_SOURCES="{env}"', auto[0].event))
        if other:
            n_frames = len({r.frame_key or r.frame for r in other})
            kinds = Counter(k for r in other for k in r.kinds)  # every cache entry's reason, not the first only
            top = ", ".join(f"{k} ×{n}" for k, n in kinds.most_common(4))
            out.append(Check("warn", f"{len(other)} recompile(s) in {n_frames} frame(s)"
                                     + (f" ({top})" if top else "") + " — expected none once warmed up",
                             other[0].event))
        elif "recompiles" in a.not_recorded:
            pass  # one "not recorded here" line below
        elif a.frames and not auto:
            out.append(Check("ok", "no recompiles"))
        auto_only = {r.frame_key for r in auto} - {r.frame_key for r in other}
        many = [f for f in a.frames if f.compiles > 1 and not (f.key in auto_only and f.compiles == 2)]
        if many:
            f = max(many, key=lambda r: r.compiles)
            more = f" (and {len(many) - 1} more frame(s))" if len(many) > 1 else ""
            out.append(Check("warn", f"frame {f.frame} compiled {f.compiles}× — expected once per frame{more}",
                             f.first_event))
        elif a.frames:
            plus = " (and one automatic-dynamic recompile)" if auto_only else ""
            out.append(Check("ok", f"{len(a.frames)} frame(s), one compile each{plus}"))
        if a.ran_eagerly:
            first = a.ran_eagerly[0]
            where = f" at {first.where}" if first.where else ""
            causes = Counter(e.cause.replace("_", " ") for e in a.ran_eagerly)
            out.append(Check("warn", f"{len(a.ran_eagerly)} frame(s) ran eagerly ("
                                     + ", ".join(f"{k} ×{n}" for k, n in causes.items())
                                     + f"); first: {first.frame}{where}: {first.reason}. The program finished; "
                                     "these frames were not compiled", first.event))
        for f in a.frames:
            if f.limit_hit:
                continue
            elif f.compiles >= f.recompile_limit:
                out.append(Check("warn", f"frame {f.frame} compiled {f.compiles}×, at the recompile limit "
                                         f"({f.recompile_limit})", f.first_event))
        if a.worklist:
            first = a.worklist[0]
            out.append(Check("warn", f"{len(a.worklist)} graph-break site(s), {a.graph_break_total} break(s); "
                                     f"most: {first.reason} at {first.where} ×{first.count}",
                             first.events[0] if first.events else None))
        elif "graph_breaks" in a.not_recorded:
            pass
        elif run.event_count or self.cf.frames:
            out.append(Check("ok", "no graph breaks"))
        c = a.cache["counts"]
        h, m, b = c["hits"], c["misses"], c["bypasses"]
        first_miss = t.cache_misses[0].event if t.cache_misses else None
        if h and m:
            out.append(Check("warn", f"cache: {h} hit(s) but {m} miss(es) — a warm run expects no misses", first_miss))
        elif h:
            out.append(Check("ok", f"cache warm: {h} hit(s), no misses"))
        elif m:
            out.append(Check("ok", f"cache cold: {m} miss(es), no hits (a first run)", first_miss))
        if b:
            rs = ", ".join(f"{r} ×{n}" for r, n in Counter(a.cache["reasons"]["bypass"]).most_common(3))
            out.append(Check("warn", f"cache bypassed {b}× (not consulted, neither hit nor miss): {rs}",
                             t.cache_bypasses[0].event))
        for f in a.frames:
            if f.never_hits_cache:
                rs = ", ".join(r for r, _ in f.bypass_reasons.most_common(2))
                out.append(Check("warn", f"frame {f.frame} can never hit the cache: every lookup bypassed it ({rs})",
                                 f.first_event))
        if t.cache_skipped_stores:
            rs = ", ".join(f"{r} ×{n}" for r, n in Counter(a.cache["reasons"]["skipped_store"]).most_common(3))
            out.append(Check("warn", f"{len(t.cache_skipped_stores)} cache store(s) skipped: {rs}",
                             t.cache_skipped_stores[0].event))
        if t.export_issues:
            out.append(export_issues_check(run, t.export_issues))
        if run.malformed:
            out.append(Check("warn", f"{len(run.malformed)} malformed line(s) in {run.source_name}"))
        if a.not_recorded:
            what = ", ".join(x.replace("_", " ") for x in ("graph_breaks", "recompiles", "restarts", "cache")
                             if x in a.not_recorded)
            out.append(Check("unknown", f"{what}: not recorded here" + _see(a)))
        if a.status == "empty":  # nothing recorded is never a green check
            out = [c for c in out if c.level != "ok"]
        return out

    def build(self) -> Analysis:
        run = self.run
        has_cids = self.fold.has_cids
        if has_cids:
            self._timeline_frames()
        else:
            self._cf_frames()
        worklist = self._worklist()
        recompiles = self._recompile_list = self._recompiles()
        self._limits()
        cache = self._cache()
        status, why = self._status()
        frames = sorted(self.frames.values(), key=lambda r: -r.compiles)  # stable: discovery order on ties
        compile_time = self._compile_time()
        if not has_cids and len(frames) == 1 and run.event_count:
            # an upstream run (no compile ids) that compiled one frame: all it recorded is that frame's
            only = frames[0]
            c = cache["counts"]
            only.cache_hits, only.cache_misses, only.cache_bypasses = c["hits"], c["misses"], c["bypasses"]
            only.bypass_reasons.update(cache["reasons"]["bypass"])
            only.compile_s = compile_time["total_s"]
            if only.compile_s is not None:
                compile_time["per_frame"] = {only.frame: only.compile_s}
        a = Analysis(status, list(self.t.restarts), self.t.problems, worklist, recompiles, frames, cache,
                     compile_time, [], incomplete_reasons=why,
                     graph_break_total=sum(b.count for b in worklist), recompile_total=len(recompiles))
        a.runtime = runtime_info(run, self.fold.exec_events)
        if a.runtime is not None:
            for row in frames:
                row.entries = a.runtime.frame_entries(row.key)
                row.eager_calls = a.runtime.eager_calls(row.key)
        a.fallbacks = fallbacks(run, a, self.unguarded, self.fold.hint_events, self.cudagraph_skips)
        a.not_recorded = not_recorded(run)
        if a.not_recorded:
            from magi_tui.model.debugdir import trace_log_of

            log = trace_log_of(run.path)
            a.companion_log = str(log) if log is not None else None
        if status == "empty" and a.not_recorded:
            a.empty_note = ("Nothing in this TORCH_COMPILE_DEBUG folder: torch writes a model folder per graph "
                            "Inductor compiles, and a graph served from a warm cache (FX graph / AOT autograd "
                            "cache hit) is not compiled, so it writes none. Set TORCHINDUCTOR_FORCE_DISABLE_"
                            "CACHES=1 to see every graph, or read the TORCH_TRACE log of the same run.")
        elif status == "empty":
            where = "timeline_events/" if self.run.source_name == "timeline.jsonl" else self.run.source_name
            a.empty_note = (f"Nothing was recorded in {where}. Either Dynamo failed before the backend "
                            "ran (the error is in the program's output, not here), or every compile was served "
                            "from a warm cache, so no hook fired.")
            a.log_path, a.log_tail = self._log_tail()
        a.ran_eagerly = self._ran_eagerly(worklist)
        for c in self.t.problems[:200]:  # the compile's failed event carries it (a cascade's outer member)
            for m in c.members[:16]:
                src = failure_source(run, m.event)
                if src[0]:
                    a.failure_sources[id(c)] = src
                    break
        a.checks = self._checks(a)
        return a

    def _ran_eagerly(self, worklist: list[BreakEntry]) -> list[EagerFrame]:
        out: list[EagerFrame] = []
        for c in self.t.fallbacks:
            ev = c.head.event
            p = parse_compile_id(ev.compile_id)
            row = self.frames.get(p[0]) if p else None
            file, line, _what = failure_source(self.run, ev)
            if file is None or _what == "frame":  # where it broke: the graph break of that compile
                be = next((b for b in worklist if ev.compile_id in b.compile_ids), None)
                if be is not None:
                    file, line = be.file, be.line
            out.append(EagerFrame(row.frame if row else (_s((ev.summary or {}).get("frame")) or "?"),
                                  row.key if row else None, ev.compile_id, "unsupported",
                                  fallback_reason(c.head.message), file, line, ev))
        for row in self.frames.values():
            if row.limit_hit:
                out.append(EagerFrame(row.frame, row.key, row.limit_event.compile_id if row.limit_event else None,
                                      "recompile_limit", f"reached the recompile limit ({row.recompile_limit}): "
                                      "later calls with new guards run uncompiled", row.file, row.line,
                                      row.limit_event))
        return out
