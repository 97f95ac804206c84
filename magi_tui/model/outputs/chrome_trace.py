"""Chrome trace-event JSON of compiles (``magi-tui export-trace PATH -o trace.json``), for Perfetto UI and
chrome://tracing.

tlparse users look at torch's ``chromium_event`` records in Perfetto; this writes them for every run under a
path, merged into one file with **one process per rank** (``pid`` = the rank where each run has a rank of its
own, else runs are numbered in path order), so the ranks of a job line up on one time axis:

* a TORCH_TRACE log: torch's own ``chromium_event`` records (``dynamo_timed`` spans, ``ph`` B / E, and
  instants, ``ph`` i: cache hits and misses, …);
* a run dir of our tracer, a TORCH_COMPILE_DEBUG folder, or a log without chromium events: the run's
  lifecycle spans (``before_*`` → ``after_*`` / ``failed_*``) and its point events as instants.

Each B / E pair becomes one complete event (``ph`` X with ``dur``): an E closes the last B of its name on its
thread, so the file holds no B / E to balance. A span never closed (a compile cut short) ends at the last time
seen on its process, with ``args.unfinished`` true; an E with no B is dropped (counted). Spans of one thread
that overlap without nesting (Inductor's compile threads log with the main thread's tid) are moved to a lane
of their own (:func:`_lanes`), as Perfetto drops such a slice.
Times are µs on the wall clock the run recorded (torch's ``ts``; our events' ``timestamp``), so ranks on one
machine line up. Process and thread names are ``M`` events; ``otherData.magi_tui`` says where each process
came from. Pure Python: nothing here imports torch.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from magi_tui.model.run import RunModel
from magi_tui.model.sources.discovery import FoundRun, find_runs

CHROMIUM = "chromium_event"
SOURCES = ("auto", "chromium", "spans")


class Process(Struct):
    """One run as one process of the trace."""

    pid: int
    rank: int | None
    run: str
    source: str                     # chromium_event | lifecycle_spans | none
    program: int = 1                # which program (execution) it was, 1-based: the ranks of one job share one
    events: list[dict[str, Any]] = field(default_factory=list)
    dropped_ends: int = 0
    unfinished: int = 0
    is_log: bool = False

    def as_json(self) -> dict[str, Any]:
        return {"pid": self.pid, "rank": self.rank, "program": self.program, "run": self.run, "source": self.source,
                "events": len(self.events), "unfinished": self.unfinished, "dropped_ends": self.dropped_ends}


def _num(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _tid(x: Any) -> int:
    return x if isinstance(x, int) and not isinstance(x, bool) else 0


def _complete(proc: Process, raw: list[dict[str, Any]]) -> None:
    """torch's B / E / i events (in log order) -> X / i events of ``proc``."""
    stacks: dict[int, list[dict[str, Any]]] = {}
    last = max((t for t in (_num(e.get("ts")) for e in raw) if t is not None), default=0.0)

    def close(b: dict[str, Any], end: float, unfinished: bool) -> None:
        ev = {"name": b["name"], "cat": b["cat"], "ph": "X", "ts": round(b["ts"], 3),
              "dur": round(max(0.0, end - b["ts"]), 3), "pid": proc.pid, "tid": b["tid"], "args": b["args"]}
        if unfinished:
            ev["args"] = {**b["args"], "unfinished": True}
            proc.unfinished += 1
        proc.events.append(ev)

    for e in raw:
        ph, ts = e.get("ph"), _num(e.get("ts"))
        if ts is None or ph not in ("B", "E", "i", "I", "X"):
            continue
        tid = _tid(e.get("tid"))
        name = str(e.get("name", "?"))
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        cat = str(e.get("cat") or "torch")
        if ph == "B":
            stacks.setdefault(tid, []).append({"name": name, "cat": cat, "ts": ts, "tid": tid, "args": args})
        elif ph == "E":
            st = stacks.get(tid, [])
            i = next((k for k in range(len(st) - 1, -1, -1) if st[k]["name"] == name), None)
            if i is None:
                proc.dropped_ends += 1
                continue
            close(st.pop(i), ts, False)  # the spans opened after it stay open: Inductor's compile
            # threads log on tid 0 too, so spans of one tid may overlap (they get lanes: _lanes)
        elif ph == "X":
            dur = _num(e.get("dur"))
            proc.events.append({"name": name, "cat": cat, "ph": "X", "ts": round(ts, 3),
                                "dur": round(max(0.0, dur or 0.0), 3), "pid": proc.pid, "tid": tid, "args": args})
        else:
            s = e.get("s") if e.get("s") in ("g", "p", "t") else "t"
            proc.events.append({"name": name, "cat": cat, "ph": "i", "s": s, "ts": round(ts, 3),
                                "pid": proc.pid, "tid": tid, "args": args})
    for st in stacks.values():
        for b in st:
            close(b, last, True)


#: tid of lane k (> 0) of a thread: spans that overlap without nesting go to lanes of their own
LANE_TID = 1_000_000


def _lanes(proc: Process) -> None:
    """Perfetto nests the complete events of one thread by time and drops one that overlaps another
    without nesting. Such a span (torch's compile threads write with the main thread's tid) moves to the
    first lane of its thread where it nests: tid ``LANE_TID * k + tid``."""
    open_: dict[tuple[int, int], list[float]] = {}   # (tid, lane) -> ends of the spans open there
    spans = sorted((e for e in proc.events if e["ph"] == "X"), key=lambda e: (e["ts"], -e["dur"]))
    for e in spans:
        start, end, tid = e["ts"], e["ts"] + e["dur"], e["tid"]
        lane = 0
        while True:
            st = open_.setdefault((tid, lane), [])
            while st and st[-1] <= start:
                st.pop()
            if not st or end <= st[-1]:
                st.append(end)
                break
            lane += 1
        if lane:
            e["tid"] = LANE_TID * lane + tid


def _chromium_events(run: RunModel) -> list[dict[str, Any]]:
    out = []
    for _kind, md, payload in run.reader.kept:
        try:
            ev = json.loads(payload) if payload else None
        except ValueError:
            continue
        if isinstance(ev, dict):
            args = ev.get("args")
            if isinstance(args, dict) and "compile_id" not in args and md.get("frame_id") is not None:
                ev["args"] = {**args, "compile_id": f"{md.get('frame_id')}/{md.get('frame_compile_id')}"}
            out.append(ev)
    return out


def _span_events(proc: Process, run: RunModel) -> None:
    """Our run's lifecycle spans as X events, its point events as instants (µs from its timestamps)."""
    last = max((ev.timestamp for ev in run.events if ev.timestamp is not None), default=None)
    for ev in run.events:
        if ev.timestamp is None:
            continue
        ts = ev.timestamp * 1e6
        args: dict[str, Any] = {"index": ev.index}
        if ev.compile_id:
            args["compile_id"] = ev.compile_id
        span = ev.span
        if span is None:  # a point event
            proc.events.append({"name": ev.name, "cat": "magi", "ph": "i", "s": "t", "ts": round(ts, 3),
                                "pid": proc.pid, "tid": 0, "args": args})
            continue
        if span.before is not ev:
            continue  # the closing event: written with its span
        end = span.end.timestamp if span.end is not None and span.end.timestamp is not None else None
        args["status"] = span.status
        if end is None:
            end = last if last is not None else ev.timestamp
            args["unfinished"] = True
            proc.unfinished += 1
        proc.events.append({"name": span.lifecycle, "cat": "lifecycle", "ph": "X", "ts": round(ts, 3),
                            "dur": round(max(0.0, (end - ev.timestamp) * 1e6), 3), "pid": proc.pid, "tid": 0,
                            "args": args})


def _load(path: Path, source: str) -> RunModel:
    run = RunModel(path)
    if source != "spans" and run.reader.keeps_records:  # a log: keep torch's chromium events
        run.reader.keep = frozenset({CHROMIUM})
    return run.load()


def _job_key(f: FoundRun) -> tuple:
    """What the ranks of one job share (as ``magi-tui ranks`` groups them): a folder of per-rank logs, or the
    model (tag, index) and, in MagiCompiler's 2026 folders, the topology."""
    if os.path.isfile(f.path):  # a TORCH_TRACE log (a run dir, a debug folder: folders)
        return ("log", str(f.path.parent))
    n = f.name
    return ("run", n.tag or f.path.name, n.model_index, n.topology)


def programs(found: list[FoundRun]) -> list[int]:
    """The program (one execution: 1, 2, … in path order) of each run. Runs of one job key (:func:`_job_key`)
    with ranks of their own are one program; a rank seen again starts another (a rerun, in time order: a run
    joins the newest program of its key that lacks its rank); a run without a rank is a program of its own."""
    order = sorted(range(len(found)), key=lambda i: (found[i].name.run_time or 0.0, str(found[i].path)))
    group: list[int] = [-1] * len(found)  # a group id per run, made in time order
    ranks_of: list[set[int]] = []
    by_key: dict[tuple, list[int]] = {}
    for i in order:
        rank = found[i].name.rank
        gids = by_key.setdefault(_job_key(found[i]), []) if rank is not None else []
        g = next((g for g in reversed(gids) if rank not in ranks_of[g]), None)
        if g is None:
            g = len(ranks_of)
            ranks_of.append(set())
            gids.append(g)
        if rank is not None:
            ranks_of[g].add(rank)
        group[i] = g
    number: dict[int, int] = {}
    for g in group:  # numbered in path order
        number.setdefault(g, len(number) + 1)
    return [number[g] for g in group]


def build_trace(path: str | Path, source: str = "auto") -> tuple[dict[str, Any], list[Process]] | None:
    """The trace of every run under ``path`` (None: no run). ``source``: ``auto`` (a log's chromium events
    where it has them, else lifecycle spans), ``chromium`` (chromium events only), ``spans`` (lifecycle
    spans only)."""
    if source not in SOURCES:
        raise ValueError(f"source must be one of {', '.join(SOURCES)}")
    found = find_runs(path)
    if not found:
        return None
    ranks = [f.name.rank for f in found]
    program = programs(found)
    one_job = len(set(program)) == 1
    by_rank = one_job and all(r is not None for r in ranks) and len(set(ranks)) == len(ranks)
    procs: list[Process] = []
    for i, f in enumerate(found):
        run = _load(f.path, source)
        pid = f.name.rank if by_rank and f.name.rank is not None else i
        proc = Process(pid, f.name.rank, str(f.path), "none", program[i], is_log=run.reader.keeps_records)
        raw = _chromium_events(run) if source != "spans" else []
        if raw:
            proc.source = CHROMIUM
            _complete(proc, raw)
        elif source != "chromium":
            proc.source = "lifecycle_spans"
            _span_events(proc, run)
        _lanes(proc)
        proc.events.sort(key=lambda e: (e["ts"], -e.get("dur", 0)))
        procs.append(proc)
    procs.sort(key=lambda p: p.pid)  # rank order, whichever rank's run dir was named first
    meta: list[dict[str, Any]] = []
    size = Counter(program)
    names = Counter(Path(p.run).name for p in procs)
    for p in procs:
        # a rank of a job of several; else, under a root of unrelated runs, a program of its own (all "rank 0"
        # read as ranks of one job), or the one run
        if one_job or size[p.program] > 1:
            label = f"rank {p.rank}" if p.rank is not None else f"run {p.pid}"
        else:
            label = f"program {p.program}"
        rp = Path(p.run)
        # logs look alike, and so do the runs of one model traced again: their folder too
        where = f"{rp.parent.name}/{rp.name}" if p.is_log or names[rp.name] > 1 else rp.name
        meta.append({"name": "process_name", "ph": "M", "pid": p.pid, "tid": 0,
                     "args": {"name": f"{label} · {where}"}})
        meta.append({"name": "process_sort_index", "ph": "M", "pid": p.pid, "tid": 0, "args": {"sort_index": p.pid}})
        for tid in sorted({e["tid"] for e in p.events}):
            name = "compile" if p.source == CHROMIUM else "lifecycles"
            lane, base = divmod(tid, LANE_TID)
            meta.append({"name": "thread_name", "ph": "M", "pid": p.pid, "tid": tid,
                         "args": {"name": f"{name} (tid {base}, overlapping {lane})" if lane else name}})
    trace = {"traceEvents": meta + [e for p in procs for e in p.events], "displayTimeUnit": "ms",
             "otherData": {"magi_tui": {"processes": [p.as_json() for p in procs]}}}
    return trace, procs


def _finite(x: Any) -> Any:
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_finite(v) for v in x]
    return x


def trace_bytes(trace: dict[str, Any]) -> bytes:
    """The file's text: JSON, ASCII (every other character escaped); a non-finite number a log's args held
    (``NaN``, which no JSON parser accepts) is written ``null``."""
    try:
        text = json.dumps(trace, ensure_ascii=True, allow_nan=False, default=str)
    except ValueError:
        text = json.dumps(_finite(trace), ensure_ascii=True, allow_nan=False, default=str)
    return text.encode("ascii")
