"""Run vs run: what changed between two compiles (``magi-tui compare A B`` and the compare screen).

Built on the triage analysis (:func:`magi_tui.model.checks.analyse`) of each side; nothing here
re-derives what it already says. A and B may come from different processes, models or machines, so
nothing is matched by position in the file nor by torch's frame id (which counts code objects in the
order one process met them):

* **frames** are aligned by code object: name + file name + first line where known (then name alone
  when that is unique on both sides, then by order of appearance among frames of that name);
* **compiles** of an aligned frame by torch's frame compile id (``0/1`` → the frame's compile 1), with
  the Dynamo graph's op count and a hash of its captured graph (addresses and generated names masked)
  where recorded;
* **graph breaks** by graph-break id (else torch's reason) and user file name:line;
* **recompiles** by frame and the guard that failed (compile ids masked), as a multiset;
* **failures** by lifecycle, exception type and the first line of the message;
* **passes and pieces** (lifecycles with a graph after them: a custom FX pass, ``graph_split``, a
  piece's ``compiler_compile``) by aligned frame, frame compile id, subgraph / piece index, lifecycle
  name and occurrence: whether the graph after it differs between A and B, and whether the pass
  changed its graph on each side.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, Iterable

from magi_format.layout import event_folder_rel as fmt_event_folder_rel
from magi_tui.model.cache_explain import explain_misses, run_lookups
from magi_tui.model.checks import Analysis, BreakEntry, FrameRow, RecompileInfo, analyse, event_attrs
from magi_tui.model.diff import read_side
from magi_tui.model.events import Event
from magi_tui.model.frames import parse_compile_id
from magi_tui.model.guards import normalise_guard_line
from magi_tui.model.report import cascade_json
from magi_tui.model.run import RunModel
from magi_tui.model.triage import Cascade
from magi_tui.model.worklist import worklist_delta

MAX_GRAPH_READS = 2000       # graph files read per comparison, at most (the rest: not compared)
GRAPH_MAX_LINES = 50_000
_SKIP_LIFECYCLES = frozenset({"compile", "dynamo_capture"})


# -- small helpers ----------------------------------------------------------------------------------
def _base(file: str | None) -> str | None:
    return PurePath(file).name if file else None


def _delta(a: float | int | None, b: float | int | None, digits: int = 6) -> float | int | None:
    if a is None or b is None:
        return None
    d = b - a
    return round(d, digits) if isinstance(d, float) else d


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or a <= 0:
        return None
    return round((b - a) / a, 4)


def _first_line(text: Any) -> str:
    for ln in str(text or "").splitlines():
        if ln.strip():
            return ln.strip()
    return ""


def _norm(text: str) -> str:
    return normalise_guard_line(text)


def _graph_name(ev: Event) -> str | None:
    """The graph file an event carries (as the run screen picks it: ``<phase>_…graph…`` first)."""
    names = [n for n in (ev.files or ()) if isinstance(n, str) and n != "attributes.json"]
    for pred in (lambda n: ev.phase is not None and n.startswith(f"{ev.phase}_") and "graph" in n,
                 lambda n: "graph" in n):
        for n in names:
            if pred(n):
                return n
    return None


class GraphRef:
    """One graph file of a run (what the diff screen opens: ``path`` and ``title``).

    The file is located (checked to be a regular file inside the run) only when ``path`` is first
    asked for: a run with 100k events has tens of thousands of pass graphs, and a comparison reads a
    bounded number of them."""

    __slots__ = ("run", "event", "name", "_found")

    def __init__(self, run: RunModel, event: Event, name: str) -> None:
        self.run = run
        self.event = event
        self.name = name
        self._found: tuple[Any, str | None] | None = None

    def _locate(self) -> tuple[Any, str | None]:
        if self._found is None:
            self._found = (None, "not listed")
            for fname, path, problem in self.run.files(self.event):
                if fname == self.name:
                    self._found = (path, problem)
                    break
        return self._found

    @property
    def path(self):
        """The file (a regular file inside the run), else None (see ``problem``)."""
        return self._locate()[0]

    @property
    def problem(self) -> str | None:
        return self._locate()[1]

    @property
    def rel(self) -> str:
        """Where the file is, relative to the run dir (not checked)."""
        return f"{fmt_event_folder_rel(self.event.index, self.event.name, self.event.subgraph)}/{self.name}"

    @property
    def title(self) -> str:
        return f"{self.event.index:04d} {self.event.name} · {self.name}"

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"index": self.event.index, "event": self.event.name, "file": self.name,
                               "rel": self.rel}
        if self._found is not None:  # read for the comparison: whether it could be
            out["problem"] = self._found[1]
        return out


def graph_ref(run: RunModel, ev: Event) -> GraphRef | None:
    name = _graph_name(ev)
    return None if name is None else GraphRef(run, ev, name)


class _GraphReader:
    """Normalised graph text (addresses and generated names masked), read once per file, bounded."""

    def __init__(self) -> None:
        self.budget = MAX_GRAPH_READS
        self._cache: dict[str, tuple[str, ...] | None] = {}

    def lines(self, ref: GraphRef | None) -> tuple[str, ...] | None:
        if ref is None:
            return None
        key = f"{ref.run.path}\0{ref.rel}"
        if key in self._cache:
            return self._cache[key]
        if self.budget <= 0:
            return None
        self.budget -= 1
        if ref.path is None:
            self._cache[key] = None
            return None
        lines, problem = read_side(ref.path, ref.run.path, GRAPH_MAX_LINES)
        # comments (``# File: /home/…/model.py:12 in forward``) name paths of one machine: not the graph
        out = None if problem else tuple(_norm(ln) for ln in lines if not ln.lstrip().startswith("#"))
        self._cache[key] = out
        return out

    def digest(self, ref: GraphRef | None) -> str | None:
        lines = self.lines(ref)
        if lines is None:
            return None
        return hashlib.sha1("\n".join(lines).encode("utf-8", "surrogatepass")).hexdigest()[:12]


# -- one side ----------------------------------------------------------------------------------------
@dataclass
class CompileFacts:
    """One compile of a frame: its id, the Dynamo graph's op count and hash, its time and status."""

    compile_id: str
    frame_compile_id: int
    op_count: int | None = None
    graph_hash: str | None = None
    graph_hash_source: str | None = None   # "recorded" (an attribute) or "captured_graph" (computed)
    compile_s: float | None = None
    status: str | None = None                # ok | failed | None (never closed)

    def as_json(self) -> dict[str, Any]:
        return {"compile_id": self.compile_id, "op_count": self.op_count, "graph_hash": self.graph_hash,
                "compile_s": None if self.compile_s is None else round(self.compile_s, 6),
                "status": self.status}


@dataclass
class PassFacts:
    key: tuple
    lifecycle: str
    subgraph_index: int | None
    graph_index: int | None
    compile_id: str | None
    before: GraphRef | None
    after: GraphRef | None
    changed_graph: bool | None = None      # the pass changed its graph (before vs after) on this side


@dataclass
class Side:
    """What one run says, indexed for comparison."""

    run: RunModel
    analysis: Analysis
    frames: list[FrameRow]
    #: frame key -> frame compile id -> facts
    compiles: dict[str, dict[int, CompileFacts]] = field(default_factory=dict)
    #: frame key -> passes in order
    passes: dict[str | None, list[PassFacts]] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return str(self.run.path)


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def side_facts(run: RunModel, reader: _GraphReader | None = None) -> Side:
    """Index one run: its analysis, compiles per frame (op count, graph hash) and its passes."""
    reader = reader or _GraphReader()
    a = analyse(run)
    side = Side(run, a, list(a.frames))
    occurrences: Counter = Counter()
    for ev in run.events:
        p = parse_compile_id(ev.compile_id)
        fkey = p[0] if p else None
        if p is not None and fkey is not None and (ev.lifecycle == "compile" or ev.frag == "dynamo_capture"):
            cf = side.compiles.setdefault(fkey, {}).get(p[1])
            if cf is None:
                cf = side.compiles[fkey][p[1]] = CompileFacts(f"{fkey}/{p[1]}", p[1])
            if ev.lifecycle == "compile" and ev.phase in ("after", "failed"):
                attrs = event_attrs(run, ev)
                n = _int(attrs.get("graph_op_count"))
                if n is not None and (cf.op_count is None or n > 0):
                    cf.op_count = n
                h = attrs.get("graph_hash")
                if isinstance(h, str) and h:
                    cf.graph_hash, cf.graph_hash_source = h, "recorded"
                d = ev.duration_ms if ev.duration_ms is not None else (ev.span.duration_ms if ev.span else None)
                if d is not None:
                    cf.compile_s = (cf.compile_s or 0.0) + d / 1000.0
                cf.status = "ok" if ev.phase == "after" and cf.status != "failed" else "failed"
            elif ev.frag == "dynamo_capture" and ev.phase == "after" and cf.graph_hash_source != "recorded":
                h = reader.digest(GraphRef(run, ev, "captured_graph.py") if "captured_graph.py" in (ev.files or ())
                                  else graph_ref(run, ev))
                if h is not None:
                    cf.graph_hash, cf.graph_hash_source = h, "captured_graph"
            continue
        span = ev.span
        if ev.phase != "after" or span is None or span.before is None or span.end is not ev:
            continue
        lc = span.lifecycle
        if lc in _SKIP_LIFECYCLES:
            continue
        after = graph_ref(run, ev)
        if after is None:
            continue
        before = graph_ref(run, span.before)
        gi = ev.graph_index if ev.graph_index is not None else span.before.graph_index
        base = (fkey, p[1] if p else None, ev.subgraph_index, gi, lc)
        occurrences[base] += 1
        pf = PassFacts(base + (occurrences[base],), lc, ev.subgraph_index, gi, ev.compile_id, before, after)
        side.passes.setdefault(fkey, []).append(pf)
    return side


# -- aligning frames ---------------------------------------------------------------------------------
def align_frames(a: list[FrameRow], b: list[FrameRow]) -> list[tuple[FrameRow | None, FrameRow | None]]:
    """Pairs of frames, one per code object: by name + file name + line, then by name when that is
    unique among the frames left on both sides, then by order of appearance among same-named frames."""
    left = list(a)
    right = list(b)
    pairs: list[tuple[FrameRow | None, FrameRow | None]] = []

    def take(keyf) -> None:
        idx: dict[tuple, list[FrameRow]] = {}
        for r in right:
            k = keyf(r)
            if k is not None:
                idx.setdefault(k, []).append(r)
        for fa in list(left):
            k = keyf(fa)
            if k is None or not idx.get(k):
                continue
            fb = idx[k].pop(0)
            pairs.append((fa, fb))
            left.remove(fa)
            right.remove(fb)

    take(lambda r: (r.name, _base(r.file), r.line) if r.file and r.line is not None else None)
    names_a = Counter(r.name for r in left)
    names_b = Counter(r.name for r in right)
    take(lambda r: (r.name,) if names_a[r.name] == 1 and names_b[r.name] == 1 else None)
    take(lambda r: (r.name,))
    pairs.extend((fa, None) for fa in left)
    pairs.extend((None, fb) for fb in right)
    order = {id(r): i for i, r in enumerate(a)}
    order_b = {id(r): i for i, r in enumerate(b)}
    pairs.sort(key=lambda p: (order.get(id(p[0]), 10**6), order_b.get(id(p[1]), 10**6)))
    return pairs


# -- the comparison ----------------------------------------------------------------------------------
@dataclass
class PassCompare:
    """One pass or piece present on both sides (or on one only)."""

    frame: str
    lifecycle: str
    subgraph_index: int | None
    graph_index: int | None
    frame_compile_id: int | None
    occurrence: int
    a: PassFacts | None
    b: PassFacts | None
    after_differs: bool | None = None      # the graph after the pass, A vs B
    before_differs: bool | None = None     # the graph it was given, A vs B (False + after_differs: the pass did it)

    @property
    def both(self) -> bool:
        return self.a is not None and self.b is not None

    @property
    def where(self) -> str:
        parts = [self.frame] if self.frame else []
        if self.frame_compile_id is not None:
            parts.append(f"compile {self.frame_compile_id}")
        if self.subgraph_index is not None:
            parts.append(f"subgraph {self.subgraph_index}")
        elif self.graph_index is not None:
            parts.append(f"piece {self.graph_index}")
        return " · ".join(parts)

    def as_json(self) -> dict[str, Any]:
        def side(p: PassFacts | None) -> dict[str, Any] | None:
            if p is None:
                return None
            return {"compile_id": p.compile_id, "changed_graph": p.changed_graph,
                    "before": p.before.as_json() if p.before else None,
                    "after": p.after.as_json() if p.after else None}
        return {"frame": self.frame, "lifecycle": self.lifecycle, "subgraph_index": self.subgraph_index,
                "graph_index": self.graph_index, "frame_compile_id": self.frame_compile_id,
                "occurrence": self.occurrence,
                "status": "both" if self.both else ("only_a" if self.a is not None else "only_b"),
                "after_differs": self.after_differs, "before_differs": self.before_differs,
                "a": side(self.a), "b": side(self.b)}


@dataclass
class FrameCompare:
    frame: str
    name: str
    file: str | None
    line: int | None
    a: FrameRow | None
    b: FrameRow | None
    compiles_a: list[CompileFacts]
    compiles_b: list[CompileFacts]

    @property
    def status(self) -> str:
        return "both" if self.a is not None and self.b is not None else ("only_a" if self.a is not None else "only_b")

    def _v(self, attr: str) -> tuple:
        a = getattr(self.a, attr) if self.a is not None else None
        b = getattr(self.b, attr) if self.b is not None else None
        return a, b

    @property
    def graphs_differ(self) -> bool | None:
        """Any aligned compile whose Dynamo graph differs (hash, else op count); None: nothing to tell."""
        told = None
        by_b = {c.frame_compile_id: c for c in self.compiles_b}
        for ca in self.compiles_a:
            cb = by_b.get(ca.frame_compile_id)
            if cb is None:
                continue
            same = _same_graph(ca, cb)
            if same is False:
                return True
            if same is True:
                told = False
        return told

    def as_json(self) -> dict[str, Any]:
        def pair(attr: str, digits: int | None = None) -> dict[str, Any]:
            a, b = self._v(attr)
            if digits is not None:
                a = None if a is None else round(a, digits)
                b = None if b is None else round(b, digits)
            return {"a": a, "b": b, "delta": _delta(a, b)}

        def cache(r: FrameRow | None) -> dict[str, int] | None:
            return None if r is None else {"hits": r.cache_hits, "misses": r.cache_misses,
                                           "bypasses": r.cache_bypasses}

        by_b = {c.frame_compile_id: c for c in self.compiles_b}
        ids = sorted({c.frame_compile_id for c in self.compiles_a} | set(by_b))
        by_a = {c.frame_compile_id: c for c in self.compiles_a}
        return {
            "frame": self.frame, "name": self.name, "file": self.file, "line": self.line, "status": self.status,
            "key": {"a": self.a.key if self.a else None, "b": self.b.key if self.b else None},
            "compiles": pair("compiles"), "recompiles": pair("recompiles"), "graph_breaks": pair("graph_breaks"),
            "compile_s": pair("compile_s", 6),
            "limit_hit": {"a": self.a.limit_hit if self.a else None, "b": self.b.limit_hit if self.b else None},
            "cache": {"a": cache(self.a), "b": cache(self.b)},
            "op_counts": {"a": [c.op_count for c in self.compiles_a], "b": [c.op_count for c in self.compiles_b]},
            "graphs_differ": self.graphs_differ,
            "compile_ids": [{"frame_compile_id": i,
                             "a": by_a[i].as_json() if i in by_a else None,
                             "b": by_b[i].as_json() if i in by_b else None,
                             "same_graph": _same_graph(by_a.get(i), by_b.get(i))} for i in ids],
        }


def _same_graph(a: CompileFacts | None, b: CompileFacts | None) -> bool | None:
    if a is None or b is None:
        return None
    if a.graph_hash and b.graph_hash and a.graph_hash_source == b.graph_hash_source:
        return a.graph_hash == b.graph_hash
    if a.op_count is not None and b.op_count is not None:
        return a.op_count == b.op_count
    return None


def break_key(b: BreakEntry) -> tuple:
    return (b.gb_id or _first_line(b.reason), _base(b.file), b.line)


def recompile_key(r: RecompileInfo, frame_name: str) -> tuple:
    p = r.primary
    what = _norm(p.text) if p is not None else ""
    if p is not None and p.guard:
        what = _norm(p.guard)
    return (frame_name, p.kind if p else None, what)


def failure_key(c: Cascade) -> tuple:
    ev = c.head.event
    return (ev.lifecycle or ev.frag, c.head.exception_type, _norm(_first_line(c.head.message)))


@dataclass
class Comparison:
    a: Side
    b: Side
    frames: list[FrameCompare]
    breaks_added: list[BreakEntry]
    breaks_removed: list[BreakEntry]
    breaks_unchanged: list[tuple[BreakEntry, BreakEntry]]
    recompiles_added: list[RecompileInfo]
    recompiles_removed: list[RecompileInfo]
    failures_new: list[Cascade]
    failures_fixed: list[Cascade]
    passes: list[PassCompare]

    # -- summary helpers ---------------------------------------------------------------------------
    @property
    def compile_s(self) -> tuple[float | None, float | None]:
        return self.a.analysis.compile_time.get("total_s"), self.b.analysis.compile_time.get("total_s")

    @property
    def limit_hit(self) -> tuple[list[str], list[str]]:
        return ([f.frame for f in self.a.frames if f.limit_hit], [f.frame for f in self.b.frames if f.limit_hit])

    @property
    def cache_explained(self) -> list:
        """B's cache misses, each against its nearest lookup in A or earlier in B (model/cache_explain.py)."""
        got = getattr(self, "_cache_explained", None)
        if got is None:
            got = self._cache_explained = explain_misses(run_lookups(self.b.run), run_lookups(self.a.run))
        return got

    @property
    def changed(self) -> bool:
        """Anything a reviewer should look at (time alone is not a change)."""
        return bool(self.breaks_added or self.breaks_removed or self.recompiles_added or self.recompiles_removed
                    or self.failures_new or self.failures_fixed
                    or any(f.status != "both" or f.graphs_differ for f in self.frames)
                    or any(p.after_differs for p in self.passes))

    def as_json(self) -> dict[str, Any]:
        aa, ab = self.a.analysis, self.b.analysis
        ta, tb = self.compile_s
        phases: dict[str, dict[str, Any]] = {}
        for key, an in (("a", aa), ("b", ab)):
            for ph in an.compile_time.get("phases", []):
                row = phases.setdefault(ph["phase"], {"phase": ph["phase"], "a": None, "b": None,
                                                      "source": ph.get("source")})
                row[key] = ph["seconds"]
        for row in phases.values():
            row["delta"] = _delta(row["a"], row["b"])
        lim_a, lim_b = self.limit_hit
        ca, cb = aa.cache["counts"], ab.cache["counts"]
        return {
            "a": str(self.a.run.path), "b": str(self.b.run.path),
            "status": {"a": aa.status, "b": ab.status},
            "changed": self.changed,
            "summary": {
                "graph_breaks": {"a": aa.graph_break_total, "b": ab.graph_break_total,
                                 "added": len(self.breaks_added), "removed": len(self.breaks_removed)},
                "recompiles": {"a": len(aa.recompiles), "b": len(ab.recompiles),
                               "added": len(self.recompiles_added), "removed": len(self.recompiles_removed)},
                "failures": {"a": len(aa.problems), "b": len(ab.problems), "new": len(self.failures_new),
                             "fixed": len(self.failures_fixed)},
                "frames": {"a": len(aa.frames), "b": len(ab.frames),
                           "only_a": sum(1 for f in self.frames if f.status == "only_a"),
                           "only_b": sum(1 for f in self.frames if f.status == "only_b"),
                           "graphs_differ": sum(1 for f in self.frames if f.graphs_differ)},
                "passes": {"both": sum(1 for p in self.passes if p.both),
                           "after_differs": sum(1 for p in self.passes if p.after_differs),
                           # past the read budget (MAX_GRAPH_READS files) or a graph that could not be read
                           "not_compared": sum(1 for p in self.passes if p.both and p.after_differs is None)},
            },
            "graph_breaks": {
                "added": [b.as_json() for b in self.breaks_added],
                "removed": [b.as_json() for b in self.breaks_removed],
                "unchanged": [dict(ea.as_json(), count_a=ea.count, count_b=eb.count)
                              for ea, eb in self.breaks_unchanged],
            },
            "recompiles": {"a": [r.as_json() for r in aa.recompiles], "b": [r.as_json() for r in ab.recompiles],
                           "added": [r.as_json() for r in self.recompiles_added],
                           "removed": [r.as_json() for r in self.recompiles_removed]},
            "worklist": worklist_delta(aa, ab),
            "recompile_limit_hit": {"a": lim_a, "b": lim_b, "added": [f for f in lim_b if f not in lim_a],
                                    "removed": [f for f in lim_a if f not in lim_b]},
            "failures": {"new": [cascade_json(c) for c in self.failures_new],
                         "fixed": [cascade_json(c) for c in self.failures_fixed],
                         "a_unrecovered": sum(1 for c in aa.problems if not c.recovered),
                         "b_unrecovered": sum(1 for c in ab.problems if not c.recovered)},
            "cache": {"a": dict(ca, state=aa.cache["state"]), "b": dict(cb, state=ab.cache["state"]),
                      "delta": {k: cb[k] - ca[k] for k in ("hits", "misses", "bypasses")},
                      "misses_explained": [m.as_json() for m in self.cache_explained]},
            "compile_s": {"a": ta, "b": tb, "delta": _delta(ta, tb), "ratio": _ratio(ta, tb),
                          "phases": sorted(phases.values(), key=lambda r: -max(r["a"] or 0, r["b"] or 0))},
            "frames": [f.as_json() for f in self.frames],
            "passes": [p.as_json() for p in self.passes],
        }


def _multiset_diff(a: Iterable, b: Iterable, key) -> tuple[list, list]:
    """Items of ``b`` beyond ``a``'s count of their key (added), and of ``a`` beyond ``b``'s (removed)."""
    a, b = list(a), list(b)
    ca = Counter(key(x) for x in a)
    cb = Counter(key(x) for x in b)
    added, removed = [], []
    seen: Counter = Counter()
    for x in b:
        k = key(x)
        seen[k] += 1
        if seen[k] > ca[k]:
            added.append(x)
    seen = Counter()
    for x in a:
        k = key(x)
        seen[k] += 1
        if seen[k] > cb[k]:
            removed.append(x)
    return added, removed


def compare_runs(run_a: RunModel, run_b: RunModel) -> Comparison:
    reader = _GraphReader()
    a, b = side_facts(run_a, reader), side_facts(run_b, reader)
    aa, ab = a.analysis, b.analysis

    # frames
    frames: list[FrameCompare] = []
    name_of: dict[tuple[str, str], str] = {}   # (side, frame key) -> aligned frame label
    for fa, fb in align_frames(a.frames, b.frames):
        ref: FrameRow = fa or fb  # type: ignore[assignment]  # align_frames never pairs None with None
        label = ref.frame
        if fa is not None and fb is not None and fa.frame != fb.frame:
            label = fa.frame if fa.file else fb.frame
        frames.append(FrameCompare(label, ref.name, (fa.file if fa and fa.file else (fb.file if fb else None)),
                                   (fa.line if fa and fa.line is not None else (fb.line if fb else None)), fa, fb,
                                   sorted(a.compiles.get(fa.key, {}).values(), key=lambda c: c.frame_compile_id)
                                   if fa else [],
                                   sorted(b.compiles.get(fb.key, {}).values(), key=lambda c: c.frame_compile_id)
                                   if fb else []))
        if fa is not None:
            name_of[("a", fa.key)] = label
        if fb is not None:
            name_of[("b", fb.key)] = label

    # graph breaks
    idx_a = {break_key(e): e for e in aa.worklist}
    idx_b = {break_key(e): e for e in ab.worklist}
    added = [e for k, e in idx_b.items() if k not in idx_a]
    removed = [e for k, e in idx_a.items() if k not in idx_b]
    unchanged = [(idx_a[k], e) for k, e in idx_b.items() if k in idx_a]

    # recompiles
    def rkey(side: str):
        def key(r: RecompileInfo) -> tuple:
            return recompile_key(r, name_of.get((side, r.frame_key or ""), r.frame))
        return key
    ka, kb = rkey("a"), rkey("b")
    r_added, r_removed = _recompile_diff(aa.recompiles, ab.recompiles, ka, kb)

    # failures
    f_new, f_fixed = _failure_diff(aa.problems, ab.problems)

    passes = _compare_passes(a, b, name_of, reader)
    return Comparison(a, b, frames, added, removed, unchanged, r_added, r_removed, f_new, f_fixed, passes)


def _recompile_diff(ra: list[RecompileInfo], rb: list[RecompileInfo], ka, kb) -> tuple[list, list]:
    tagged_a = [(ka(r), r) for r in ra]
    tagged_b = [(kb(r), r) for r in rb]
    added, removed = _multiset_diff(tagged_a, tagged_b, lambda t: t[0])
    return [r for _k, r in added], [r for _k, r in removed]


def _failure_diff(pa: list[Cascade], pb: list[Cascade]) -> tuple[list[Cascade], list[Cascade]]:
    """New: failures of B that A did not have (an unrecovered one counts apart from a recovered one);
    fixed: failures of A that B no longer has."""
    def key(c: Cascade) -> tuple:
        return failure_key(c) + (c.recovered,)
    return _multiset_diff(pa, pb, key)


def _compare_passes(a: Side, b: Side, name_of: dict, reader: _GraphReader) -> list[PassCompare]:
    def index(side: Side, tag: str) -> dict[tuple, PassFacts]:
        out: dict[tuple, PassFacts] = {}
        for fkey, plist in side.passes.items():
            frame = name_of.get((tag, fkey), "" if fkey is None else f"frame {fkey}")
            for pf in plist:
                _fkey, fcid, sgi, gi, lc, occ = pf.key
                out[(frame, fcid, sgi, gi, lc, occ)] = pf
        return out

    ia, ib = index(a, "a"), index(b, "b")
    keys = list(ia) + [k for k in ib if k not in ia]
    out: list[PassCompare] = []
    for k in keys:
        pa, pb = ia.get(k), ib.get(k)
        frame, fcid, sgi, gi, lc, occ = k
        out.append(PassCompare(frame, lc, sgi, gi, fcid, occ, pa, pb))
    # the graphs after each pass, A against B, first; then whether each pass changed its graph. A run
    # with tens of thousands of passes is compared as far as the read budget goes (None past it).
    for pc in out:
        if pc.a is not None and pc.b is not None:
            la, lb = reader.lines(pc.a.after), reader.lines(pc.b.after)
            if la is not None and lb is not None:
                pc.after_differs = la != lb
    for pc in out:
        if pc.after_differs is not None and pc.a is not None and pc.b is not None:  # set only for both
            la, lb = reader.lines(pc.a.before), reader.lines(pc.b.before)
            if la is not None and lb is not None:
                pc.before_differs = _strip_header(la) != _strip_header(lb)
    for pc in out:
        for p in (pc.a, pc.b):
            if p is not None and p.before is not None and p.after is not None:
                la, lb = reader.lines(p.before), reader.lines(p.after)
                if la is not None and lb is not None:
                    p.changed_graph = _strip_header(la) != _strip_header(lb)
    return out


def _strip_header(lines: tuple[str, ...]) -> tuple[str, ...]:
    """A graph dump without the writer's import header (before/after files of one pass carry the same)."""
    return tuple(ln for ln in lines if ln.strip() and not ln.startswith(("from __future__", "import torch")))


# -- loading -----------------------------------------------------------------------------------------
def one_run(path) -> tuple[RunModel | None, str | None]:
    """The single run under ``path`` (a run dir or a root holding exactly one), else a reason."""
    from pathlib import Path

    from magi_tui.model.discovery import find_runs

    p = Path(path)
    if not p.exists():
        return None, f"no such file or directory: {p}"
    found = find_runs(p)
    if not found:
        return None, f"no run under {p} (a run is a directory with timeline_events/ or compiled_functions/)"
    if len(found) > 1:
        names = ", ".join(str(f.path) for f in found[:4]) + (" …" if len(found) > 4 else "")
        return None, f"{p} holds {len(found)} runs; name one of them: {names}"
    run = RunModel(found[0].path).load()
    if run.error:
        return None, f"{run.reader.path}: {run.error}"
    return run, None


# -- text ----------------------------------------------------------------------------------------------
def _fmt_s(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}s"


def _fmt_d(v: float | int | None, unit: str = "") -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:+.3f}{unit}"
    return f"{v:+d}{unit}"


def _break_line(e: BreakEntry, count: str) -> str:
    gid = e.gb_id or "-"
    where = f"{_base(e.file)}:{e.line}" if e.file else "?"
    fn = f" in {e.function}" if e.function else ""
    return f"{gid} {where}{fn} ×{count}: {e.reason}"


def compare_lines(c: Comparison, show_all: bool = False) -> list[tuple[str, str]]:
    """The comparison for people, as ``(style, text)`` lines (styles: head, add, del, same, warn, dim)."""
    return [(style, text) for style, text, _obj in compare_rows(c, show_all)]


class _Rows(list):
    """``(style, text, object)`` rows; ``append((style, text))`` carries no object."""

    def append(self, row) -> None:
        super().append(tuple(row) if len(row) == 3 else (row[0], row[1], None))


def compare_rows(c: Comparison, show_all: bool = False, cap: int | None = None) -> list[tuple[str, str, Any]]:
    """The comparison for people: ``(style, text, object)`` rows, the object being what the row is
    about (a :class:`PassCompare` for a pass row: the compare screen diffs its graphs). The CLI prints
    the text; the compare screen styles it."""
    cap = None if show_all else (cap or 8)
    out = _Rows()
    aa, ab = c.a.analysis, c.b.analysis
    js = c.as_json()

    def capped(items: list) -> tuple[list, int]:
        if cap is None or len(items) <= cap:
            return items, 0
        return items[:cap], len(items) - cap

    out.append(("head", f"A  {c.a.run.path}  [{aa.status}]"))
    out.append(("head", f"B  {c.b.run.path}  [{ab.status}]"))
    s = js["summary"]
    out.append(("dim", f"graph breaks {s['graph_breaks']['a']} → {s['graph_breaks']['b']} "
                       f"(+{s['graph_breaks']['added']} −{s['graph_breaks']['removed']} sites) · "
                       f"recompiles {s['recompiles']['a']} → {s['recompiles']['b']} · "
                       f"failures {s['failures']['a']} → {s['failures']['b']} · "
                       f"compile {_fmt_s(js['compile_s']['a'])} → {_fmt_s(js['compile_s']['b'])}"))
    w = js["worklist"]
    out.append(("dim", f"worklist: {len(w['resolved'])} resolved · {len(w['new'])} new · "
                       f"{len(w['unchanged'])} unchanged (ids as triage --json gives them)"))
    for style, sign, key in (("del", "resolved", "resolved"), ("add", "new", "new")):
        items, more = capped(w[key])
        for e in items:
            out.append((style, f"  {sign}: {e['id']} ×{e['count_a'] if key == 'resolved' else e['count_b']}"))
        if more:
            out.append(("dim", f"    ... {more} more {key} (--all)"))
    out.append(("", ""))

    out.append(("head", "Graph breaks"))
    items, more = capped(c.breaks_added)
    for e in items:
        out.append(("add", "  + " + _break_line(e, str(e.count))))
    if more:
        out.append(("dim", f"    ... {more} more added (--all)"))
    items, more = capped(c.breaks_removed)
    for e in items:
        out.append(("del", "  − " + _break_line(e, str(e.count))))
    if more:
        out.append(("dim", f"    ... {more} more removed (--all)"))
    items, more = capped(c.breaks_unchanged)
    for ea, eb in items:
        out.append(("same", "  = " + _break_line(eb, f"{ea.count}→{eb.count}")))
    if more:
        out.append(("dim", f"    ... {more} more unchanged (--all)"))
    if not (c.breaks_added or c.breaks_removed or c.breaks_unchanged):
        out.append(("dim", "  none on either side"))

    out.append(("head", "Recompiles"))
    for style, sign, lst in (("add", "+", c.recompiles_added), ("del", "−", c.recompiles_removed)):
        items, more = capped(lst)
        for r in items:
            p = r.primary
            why = p.text if p is not None else "(no reason recorded)"
            out.append((style, f"  {sign} {r.frame} {r.compile_id or ''}: {_first_line(why)}".replace("  :", ":")))
        if more:
            out.append(("dim", f"    ... {more} more (--all)"))
    lim_a, lim_b = c.limit_hit
    for f in lim_b:
        out.append(("add" if f not in lim_a else "warn", f"  {'+' if f not in lim_a else '='} {f} hit the recompile limit"))
    for f in lim_a:
        if f not in lim_b:
            out.append(("del", f"  − {f} hit the recompile limit"))
    if not (c.recompiles_added or c.recompiles_removed or lim_a or lim_b):
        out.append(("dim", f"  no change ({len(aa.recompiles)} on each side)" if aa.recompiles else
                    "  none on either side"))

    out.append(("head", "Failures"))
    for style, word, cases in (("add", "new", c.failures_new), ("del", "fixed", c.failures_fixed)):
        for cas in cases[: cap or len(cases)]:
            ev = cas.head.event
            rec = " (recovered)" if cas.recovered else ""
            out.append((style, f"  {word}: {ev.lifecycle or ev.frag}: {cas.reason or '-'}{rec}"))
    if not (c.failures_new or c.failures_fixed):
        out.append(("dim", f"  no change ({len(aa.problems)} / {len(ab.problems)})"))

    ca, cb = js["cache"]["a"], js["cache"]["b"]
    out.append(("head", "Cache (hits / misses / bypasses)"))
    out.append(("same", f"  A {ca['hits']} / {ca['misses']} / {ca['bypasses']} ({ca['state']})   "
                        f"B {cb['hits']} / {cb['misses']} / {cb['bypasses']} ({cb['state']})"))
    explained, more = capped(c.cache_explained)
    for m in explained:
        out.append(("changed" if m.differs else "dim", "  B " + m.line()))
        for d in m.differs[:4]:
            out.append(("dim", f"      {d['component'][:60]}: A {d['change']} B"))
    if more:
        out.append(("dim", f"  ... {more} more miss(es) (--all)"))

    out.append(("head", "Compile time"))
    ct = js["compile_s"]
    out.append(("same", f"  total  A {_fmt_s(ct['a'])}  B {_fmt_s(ct['b'])}  {_fmt_d(ct['delta'], 's')}"
                        + (f" ({ct['ratio']:+.0%})" if ct["ratio"] is not None else "")))
    phases, more = capped(ct["phases"])
    for ph in phases:
        out.append(("dim", f"  {ph['phase'][:38]:38} A {_fmt_s(ph['a'])}  B {_fmt_s(ph['b'])}  {_fmt_d(ph['delta'], 's')}"))

    out.append(("head", "Frames (compiles · compile s · ops per compile)"))
    frames, more = capped(c.frames)
    for f in frames:
        j = f.as_json()
        if f.status == "only_a":
            style, sign = "del", "−"
        elif f.status == "only_b":
            style, sign = "add", "+"
        else:
            style, sign = ("warn", "~") if f.graphs_differ or j["compiles"]["delta"] else ("same", "=")
        ops_a = ",".join("?" if x is None else str(x) for x in j["op_counts"]["a"]) or "-"
        ops_b = ",".join("?" if x is None else str(x) for x in j["op_counts"]["b"]) or "-"
        out.append((style, f"  {sign} {f.frame}", f))
        out.append(("dim", f"      compiles {j['compiles']['a'] if f.a else '-'}→{j['compiles']['b'] if f.b else '-'}"
                           f"  s {_fmt_s(j['compile_s']['a'])}→{_fmt_s(j['compile_s']['b'])}"
                           f"  ops {ops_a}→{ops_b}" + ("  graph differs" if f.graphs_differ else "")))
    if more:
        out.append(("dim", f"    ... {more} more frame(s) (--all)"))

    out.append(("head", "Passes and pieces (graph after, A vs B)"))
    # what changed first: passes whose graph differs, then the same, then those not compared
    both = sorted((p for p in c.passes if p.both), key=lambda p: {True: 0, False: 1, None: 2}[p.after_differs])
    items, more = capped(both)
    for p in items:
        mark = {True: ("warn", "≠ differs"), False: ("same", "= same"), None: ("dim", "? not read")}[p.after_differs]
        by = []
        for tag, side in (("A", p.a), ("B", p.b)):
            if side is not None and side.changed_graph is not None:
                by.append(f"{tag} {'changed' if side.changed_graph else 'kept'}")
        if p.after_differs and p.before_differs is False:
            by.append("same input: the pass made the difference")
        elif p.after_differs and p.before_differs:
            by.append("its input differs too")
        out.append((mark[0], f"  {mark[1]:9} {p.lifecycle}" + (f" · {p.where}" if p.where else "")
                    + (f"  ({', '.join(by)})" if by else ""), p))
    if more:
        out.append(("dim", f"    ... {more} more (--all)"))
    one = [p for p in c.passes if not p.both]
    if one:
        out.append(("dim", f"  {len(one)} pass(es) on one side only: "
                           + ", ".join(f"{p.lifecycle} ({'A' if p.a else 'B'})" for p in one[:4])
                           + (" …" if len(one) > 4 else "")))
    if not c.passes:
        out.append(("dim", "  no pass or piece recorded a graph"))
    return list(out)


def compare_text(c: Comparison, show_all: bool = False) -> str:
    return "\n".join(t for _s, t in compare_lines(c, show_all))
