"""The comparison of two runs (:func:`compare_runs`): frames, compiles, graph breaks, recompiles,
failures, cache and passes matched as the package's docstring says, and :func:`one_run` to load a side."""

from __future__ import annotations

import os
from collections import Counter
from typing import Any, Callable, Hashable, Iterable

from msgspec import Struct

from magi_tui.model.analysis.cache_explain import explain_misses, run_lookups
from magi_tui.model.analysis.checks import BreakEntry, FrameRow, RecompileInfo
from magi_tui.model.analysis.worklist import worklist_delta
from magi_tui.model.outputs.compare.graphs import _base, _delta, _first_line, _GraphReader, _norm, _ratio
from magi_tui.model.outputs.compare.sides import CompileFacts, PassFacts, Side, SideFold, align_frames, side_facts
from magi_tui.model.outputs.report import cascade_json
from magi_tui.model.run import RunModel
from magi_tui.model.triage import Cascade


# -- the comparison ----------------------------------------------------------------------------------
class PassCompare(Struct):
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


class FrameCompare(Struct):
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


class Comparison(Struct):
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
    _cache_explained: list | None = None  # made when first asked

    # -- summary helpers ---------------------------------------------------------------------------
    @property
    def compile_s(self) -> tuple[float | None, float | None]:
        return self.a.analysis.compile_time.get("total_s"), self.b.analysis.compile_time.get("total_s")

    @property
    def limit_hit(self) -> tuple[list[str], list[str]]:
        return ([f.frame for f in self.a.frames if f.limit_hit], [f.frame for f in self.b.frames if f.limit_hit])

    @property
    def cache_explained(self) -> list:
        """B's cache misses, each against its nearest lookup in A or earlier in B (model/analysis/cache_explain.py)."""
        got = self._cache_explained
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


def _multiset_diff(a: Iterable, b: Iterable, key: Callable[[Any], Hashable]) -> tuple[list, list]:
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
    def rkey(side: str) -> Callable[[RecompileInfo], tuple]:
        def key(r: RecompileInfo) -> tuple:
            return recompile_key(r, name_of.get((side, r.frame_key or ""), r.frame))
        return key
    ka, kb = rkey("a"), rkey("b")
    r_added, r_removed = _recompile_diff(aa.recompiles, ab.recompiles, ka, kb)

    # failures
    f_new, f_fixed = _failure_diff(aa.problems, ab.problems)

    passes = _compare_passes(a, b, name_of, reader)
    return Comparison(a, b, frames, added, removed, unchanged, r_added, r_removed, f_new, f_fixed, passes)


def _recompile_diff(ra: list[RecompileInfo], rb: list[RecompileInfo], ka: Callable[[RecompileInfo], tuple],
                    kb: Callable[[RecompileInfo], tuple]) -> tuple[list, list]:
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
def one_run(path: str | os.PathLike[str], *, stream: bool = False) -> tuple[RunModel | None, str | None]:
    """The single run under ``path`` (a run dir or a root holding exactly one), else a reason. ``stream``:
    read for a comparison only (:class:`~magi_tui.model.outputs.compare.sides.SideFold`: no event list kept)."""
    from pathlib import Path

    from magi_tui.model.sources.discovery import find_runs

    p = Path(path)
    if not p.exists():
        return None, f"no such file or directory: {p}"
    found = find_runs(p)
    if not found:
        return None, f"no run under {p} (a run is a directory with timeline_events/ or compiled_functions/)"
    if len(found) > 1:
        names = ", ".join(str(f.path) for f in found[:4]) + (" …" if len(found) > 4 else "")
        return None, f"{p} holds {len(found)} runs; name one of them: {names}"
    run = RunModel(found[0].path).load(fold=SideFold() if stream else None)
    if run.error:
        return None, f"{run.reader.path}: {run.error}"
    return run, None

