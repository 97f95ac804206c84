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

from magi_tui.model.events import Event
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
from magi_tui.model.triage import Cascade, Restart

STATUSES = ("ok", "recovered", "failed", "incomplete", "empty")
LOG_NAMES = ("run.log", "stderr.log", "stderr.txt", "output.log")
MAX_FILE_READS = 1000        # graph_break.txt / metrics.json read per analysis, at most
MAX_TEXT = 64 * 1024


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

    @property
    def where(self) -> str:
        if not self.file:
            return "?"
        return f"{self.file}:{self.line}" if self.line is not None else self.file

    def as_json(self) -> dict[str, Any]:
        return {"gb_id": self.gb_id, "gb_type": self.gb_type, "reason": self.reason,
                "explanation": self.explanation, "hints": self.hints,
                "user_frame": {"file": self.file, "line": self.line, "function": self.function},
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

    @property
    def primary(self) -> Reason | None:
        return self.reasons[0] if self.reasons else None

    def as_json(self) -> dict[str, Any]:
        p = self.primary
        return {"frame": self.frame, "frame_key": self.frame_key, "compile_id": self.compile_id,
                "index": self.event.index if self.event else None,
                # torch's own words, one per cache entry that failed; none for an upstream run (the
                # guard diff's reading of the change is in reasons_parsed)
                "reasons": [] if self.event is None else
                [f"{r.entry_compile_id}: {r.text}" if r.entry_compile_id else r.text for r in self.reasons],
                "reasons_parsed": [r.as_json() for r in self.reasons],
                "guard": p.guard if p else None, "kind": p.kind if p else None,
                "expected": p.expected if p else None, "actual": p.actual if p else None,
                "suggestion": p.suggestion if p else None,
                "guard_diff": self.guard_diff.as_json() if self.guard_diff else None,
                "refused_by_limit": self.refused,
                "source": "timeline" if self.event is not None else "compiled_functions"}


@dataclass
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
    first_event: Event | None = None
    compile_ids: set = field(default_factory=set)
    any_ids: set = field(default_factory=set)
    asked: bool = False

    @property
    def recompiles(self) -> int:
        return max(0, self.compiles - 1)

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
                "limit_hit": self.limit_hit, "compiled_functions": self.cf_rel}


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


_GB_AT = re.compile(r"Graph break in user code at (.+):(\d+)")
_GB_URL = re.compile(r"/gb/(gb\d+)\.html", re.I)
_FILE_LINE = re.compile(r'^\s*File "([^"]+)", line (\d+), in (.+)$')


def parse_graph_break_text(text: str) -> dict[str, Any]:
    """What torch's graph-break report says: gb id, type, explanation, hints, user frame, source line."""
    out: dict[str, Any] = {}
    m = _GB_URL.search(text)
    if m:
        out["gb_id"] = m.group(1).upper()
    m = _GB_AT.search(text)
    if m:
        out["user_file"], out["user_line"] = m.group(1), int(m.group(2))
    lines = text.splitlines()
    for i, ln in enumerate(lines):
        st = ln.strip()
        if st.startswith("Graph Break Reason:"):
            r = st[len("Graph Break Reason:"):].strip()
            if r.endswith(":"):
                nxt = next((x.strip() for x in lines[i + 1:i + 4] if x.strip()), "")
                out.setdefault("gb_type", nxt)
                r = nxt or r
            out.setdefault("reason", r)
        elif st.startswith("Explanation:") and "explanation" not in out:
            out["explanation"] = st[len("Explanation:"):].strip()
        elif st.startswith("Hint:"):
            hints = out.setdefault("hints", [])
            h = st[len("Hint:"):].strip()
            if h not in hints:
                hints.append(h)
        elif st.startswith("Traceback (most recent call last)"):
            break
    # the user code traceback: the innermost frame and its source line
    tb_start = next((i for i, ln in enumerate(lines) if ln.startswith("User code traceback")), None)
    if tb_start is not None:
        last = None
        for j in range(tb_start + 1, len(lines)):
            fm = _FILE_LINE.match(lines[j])
            if fm:
                src = lines[j + 1].strip() if j + 1 < len(lines) and not _FILE_LINE.match(lines[j + 1]) else None
                last = (fm.group(1), int(fm.group(2)), fm.group(3).strip(), src or None)
            elif lines[j].strip() == "" and last is not None:
                break
        if last is not None:
            f, ln, fn, src = last
            if "user_file" not in out or (out.get("user_file") == f and out.get("user_line") == ln):
                out["user_file"], out["user_line"] = f, ln
            if out.get("user_file") == f and out.get("user_line") == ln:
                out["user_function"] = fn
                if src:
                    out["source_line"] = src
    return out


def _hints(v: Any) -> list[str]:
    if isinstance(v, list):
        return [str(x) for x in v if x not in (None, "")][:20]
    if isinstance(v, str) and v:
        return [v]
    return []


def run_status(run: RunModel) -> tuple[str, list[str]]:
    """``(status, why incomplete)``: the run's own rule (:meth:`RunModel.status_why`)."""
    return run.status_why()


def frame_events(run: RunModel, frame: FrameRow, n_frames: int, limit: int = 500) -> list[Event]:
    """A frame's events: those whose compile id names its frame; in a run recorded without compile ids
    (upstream), every event when it is the only frame; else its first event, if known."""
    out = []
    for e in run.events:
        p = parse_compile_id(e.compile_id)
        if p is not None and p[0] == frame.key:
            out.append(e)
            if len(out) >= limit:
                break
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
        self.any_ids: set[int] = set()
        self.compile_ids: set[int] = set()
        self.compile_s: float | None = None
        self.first_before: Event | None = None   # its first compile ``before`` (co_filename / line)
        self.first_closer: Event | None = None   # its first compile ``after`` / ``failed`` (metrics.json)


_NO_PARSE = object()


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
        self._cids: dict[str, Any] = {}

    def add(self, ev: Event) -> None:
        cid = ev.compile_id
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
            if len(self._cids) < 100_000:
                self._cids[cid] = p
        if p is None:
            return
        f = self.frames.get(p[0])
        if f is None:
            f = self.frames[p[0]] = _FrameFold(ev)
        name = (ev.summary or {}).get("frame")
        if name and not f.name:
            f.name = name
        f.any_ids.add(p[1])
        if ev.lifecycle == "compile":
            f.compile_ids.add(p[1])
            if ev.phase in ("after", "failed"):
                d = ev.duration_ms if ev.duration_ms is not None else (ev.span.duration_ms if ev.span else None)
                if d is not None:
                    f.compile_s = (f.compile_s or 0.0) + d / 1000.0
                if f.first_closer is None:
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
        self.frames: dict[str, FrameRow] = {}
        self.cid_frame: dict[str, str] = {}
        self.fold = timeline_fold(run)

    # frames ------------------------------------------------------------------------------------
    def _timeline_frames(self) -> None:
        run = self.run
        for fkey, f in self.fold.frames.items():
            row = self.frames[fkey] = FrameRow(frame="", key=fkey, name=f.name, first_event=f.first_event,
                                              compile_s=f.compile_s, compile_ids=set(f.compile_ids),
                                              any_ids=set(f.any_ids))
            if f.first_before is not None:  # once per frame: the attributes are re-read from the file
                row.asked = True
                a = event_attrs(run, f.first_before)
                row.file = _s(a.get("co_filename"))
                row.line = _int(a.get("co_firstlineno"))
        for row in self.frames.values():
            # compiles that ran (a ``compile`` lifecycle); a recompile or limit-hit event names the next
            # compile id even when that compile never happens (the frame fell back to eager)
            row.compiles = len(row.compile_ids) if row.compile_ids else len(row.any_ids)
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
            if not (a.get("gb_id") and a.get("user_file") and a.get("explanation")):
                text = _read_event_file(run, ev, "graph_break.txt", self.budget)
                if text:
                    info = parse_graph_break_text(text)
            gb_id = _s(a.get("gb_id")) or info.get("gb_id")
            uf = a.get("user_frame")
            file = _s(a.get("user_file")) or info.get("user_file")
            line = _int(a.get("user_line"))
            if line is None:
                line = info.get("user_line")
            if file is None and isinstance(uf, str) and ":" in uf:
                f0, _, l0 = uf.rpartition(":")
                file, line = f0, _int(l0)
            gb_type = _s(a.get("gb_type")) or info.get("gb_type")
            # the specific cause: torch's gb_type ("Unsupported Tensor.item() call ..."), else its reason
            reason = gb_type or _s(a.get("reason")) or info.get("reason") or item.reason or "graph break"
            key = (gb_id or _first_line(reason), file, line)
            be = entries.get(key)
            if be is None:
                be = entries[key] = BreakEntry(
                    gb_id, gb_type, _first_line(reason),
                    _s(a.get("explanation")) or info.get("explanation"),
                    _hints(a.get("hints")) or info.get("hints", []), file, line,
                    _s(a.get("user_function")) or info.get("user_function"),
                    _s(a.get("source_line")) or info.get("source_line"))
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
            if p is not None and name != "?":
                info.guard_diff, info.entries = self._diff_for(name, p[1], row.compiles if row else None)
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
        per_piece = [{"piece": k, "seconds": round(v[1], 6), "lifecycle": "+".join(v[2]), "count": v[3]}
                     for k, v in sorted(pieces.items())]
        return {"total_s": round(top, 6) if top_n else None, "phases": phases, "per_frame": frames,
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
            out.append(Check("fail", f"timeline.jsonl cannot be read: {run.error}"))
        if a.status == "empty":
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
        if a.recompiles:
            n_frames = len({r.frame_key or r.frame for r in a.recompiles})
            kinds = Counter(r.primary.kind for r in a.recompiles if r.primary)
            top = ", ".join(f"{k} ×{n}" for k, n in kinds.most_common(3))
            out.append(Check("warn", f"{len(a.recompiles)} recompile(s) in {n_frames} frame(s)"
                                     + (f" ({top})" if top else "") + " — expected none once warmed up",
                             a.recompiles[0].event))
        elif a.frames:
            out.append(Check("ok", "no recompiles"))
        many = [f for f in a.frames if f.compiles > 1]
        if many:
            f = max(many, key=lambda r: r.compiles)
            more = f" (and {len(many) - 1} more frame(s))" if len(many) > 1 else ""
            out.append(Check("warn", f"frame {f.frame} compiled {f.compiles}× — expected once per frame{more}",
                             f.first_event))
        elif a.frames:
            out.append(Check("ok", f"{len(a.frames)} frame(s), one compile each"))
        for f in a.frames:
            if f.limit_hit:
                out.append(Check("warn", f"frame {f.frame} hit the recompile limit ({f.recompile_limit}) and fell "
                                         "back to eager: later calls run uncompiled", f.limit_event))
            elif f.compiles >= f.recompile_limit:
                out.append(Check("warn", f"frame {f.frame} compiled {f.compiles}×, at the recompile limit "
                                         f"({f.recompile_limit})", f.first_event))
        if a.worklist:
            first = a.worklist[0]
            out.append(Check("warn", f"{len(a.worklist)} graph-break site(s), {a.graph_break_total} break(s); "
                                     f"most: {first.reason} at {first.where} ×{first.count}",
                             first.events[0] if first.events else None))
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
        if run.malformed:
            out.append(Check("warn", f"{len(run.malformed)} malformed line(s) in timeline.jsonl"))
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
        if status == "empty":
            a.empty_note = ("Nothing was recorded in timeline_events/. Either Dynamo failed before the backend "
                            "ran (the error is in the program's output, not here), or every compile was served "
                            "from a warm cache, so no hook fired.")
            a.log_path, a.log_tail = self._log_tail()
        a.checks = self._checks(a)
        return a
