"""Rank vs rank: where the ranks of one job compiled differently (``magi-tui ranks PATH`` and the ranks view).

A job is the runs under a root that share a label and model index and carry different ranks
(``model_<i>_<label>_rank_<r>``: torchrun starts one process, so one run dir, per rank). When a rank
has several runs under the root, its newest one is the job's. Each rank is compared with the lowest
rank (the reference) on what must agree for collectives to line up and for a cache to be shared:

* **compile ids present on some ranks only** (a rank that compiled a frame the others did not, or
  recompiled when they did not);
* **different graphs for the same compile id** (the captured graph's hash, else its op count);
* **different cache patterns** (hit / miss / bypass per compile id and cache);
* **different recompile reasons** (for the same compile id, compile ids masked in the text).

Ranks that diverge come first, in the text and in the JSON (``divergent_ranks``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from magi_tui.model.compare import Side, _GraphReader, _norm, side_facts
from magi_tui.model.discovery import find_runs
from magi_tui.model.frames import parse_compile_id
from magi_tui.model.run import RunModel


@dataclass
class RankRun:
    rank: int
    run: RunModel
    side: Side
    #: compile id -> frame name
    compile_ids: dict[str, str] = field(default_factory=dict)
    #: compile id -> (op count, graph hash)
    graphs: dict[str, tuple[int | None, str | None]] = field(default_factory=dict)
    #: compile id -> sorted ((cache, state), count)
    cache: dict[str, tuple] = field(default_factory=dict)
    #: compile id -> recompile reasons (normalised)
    recompile_reasons: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def cache_counts(self) -> dict[str, int]:
        c = self.side.analysis.cache["counts"]
        return {"hits": c["hits"], "misses": c["misses"], "bypasses": c["bypasses"]}


def _rank_run(rank: int, run: RunModel, reader: _GraphReader) -> RankRun:
    side = side_facts(run, reader)
    rr = RankRun(rank, run, side)
    names = {f.key: f.name for f in side.frames}
    for fkey, comps in side.compiles.items():
        for fcid, cf in comps.items():
            cid = f"{fkey}/{fcid}"
            rr.compile_ids[cid] = names.get(fkey, "?")
            rr.graphs[cid] = (cf.op_count, cf.graph_hash)
    t = run.triage
    per: dict[str, Counter] = {}
    for state, items in (("hit", t.cache_hits), ("miss", t.cache_misses), ("bypass", t.cache_bypasses)):
        for it in items:
            p = parse_compile_id(it.event.compile_id)
            cid = f"{p[0]}/{p[1]}" if p else "-"
            cache = (it.event.summary or {}).get("cache") or "-"
            per.setdefault(cid, Counter())[(str(cache), state)] += 1
    rr.cache = {cid: tuple(sorted(c.items())) for cid, c in per.items()}
    for r in side.analysis.recompiles:
        p = parse_compile_id(r.compile_id)
        cid = f"{p[0]}/{p[1]}" if p else (r.compile_id or r.frame)
        texts = tuple(_norm(x.text) for x in r.reasons)
        rr.recompile_reasons[cid] = rr.recompile_reasons.get(cid, ()) + texts
    return rr


@dataclass
class Divergence:
    kind: str          # compile_ids | graphs | cache | recompile_reasons
    compile_id: str
    frame: str
    ranks: list[int]   # the ranks that differ from the reference
    by_rank: dict[int, Any]
    message: str

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "compile_id": self.compile_id, "frame": self.frame, "ranks": self.ranks,
                "by_rank": {str(k): v for k, v in self.by_rank.items()}, "message": self.message}


@dataclass
class Job:
    label: str
    model_index: int | None
    ranks: list[RankRun]
    divergences: list[Divergence] = field(default_factory=list)
    #: runs under the root that were not the job's (older runs of a rank)
    superseded: list[str] = field(default_factory=list)

    @property
    def reference(self) -> RankRun:
        return self.ranks[0]

    @property
    def divergent_ranks(self) -> list[int]:
        out: set[int] = set()
        for d in self.divergences:
            out.update(d.ranks)
        return sorted(out)

    def as_json(self) -> dict[str, Any]:
        div = set(self.divergent_ranks)
        ordered = sorted(self.ranks, key=lambda r: (r.rank not in div, r.rank))
        kinds = Counter(d.kind for d in self.divergences)
        return {
            "label": self.label, "model_index": self.model_index,
            "status": "diverged" if self.divergences else "consistent",
            "reference_rank": self.reference.rank,
            "divergent_ranks": self.divergent_ranks,
            "summary": {k: kinds.get(k, 0) for k in ("compile_ids", "graphs", "cache", "recompile_reasons")},
            "ranks": [{"rank": r.rank, "run": str(r.run.path), "status": r.side.analysis.status,
                       "diverges": r.rank in div,
                       "compiles": len(r.compile_ids), "recompiles": len(r.side.analysis.recompiles),
                       "graph_breaks": r.side.analysis.graph_break_total, "cache": r.cache_counts,
                       "compile_s": r.side.analysis.compile_time.get("total_s")} for r in ordered],
            "divergences": [d.as_json() for d in self.divergences],
            "superseded": self.superseded,
        }


def _diverge(job: Job) -> None:
    ref = job.reference
    others = job.ranks[1:]
    all_ids: list[str] = []
    for r in job.ranks:
        for cid in r.compile_ids:
            if cid not in all_ids:
                all_ids.append(cid)

    def frame(cid: str) -> str:
        for r in job.ranks:
            if cid in r.compile_ids:
                return r.compile_ids[cid]
        return "?"

    # compile ids on some ranks only
    for cid in all_ids:
        have = [r.rank for r in job.ranks if cid in r.compile_ids]
        if len(have) != len(job.ranks):
            missing = [r.rank for r in job.ranks if cid not in r.compile_ids]
            odd = missing if ref.rank in have else have
            job.divergences.append(Divergence(
                "compile_ids", cid, frame(cid), odd, {r.rank: cid in r.compile_ids for r in job.ranks},
                f"compile {cid} ({frame(cid)}) on rank(s) {', '.join(map(str, have))} only; "
                f"not on {', '.join(map(str, missing))}"))
    # graphs for the same compile id
    for cid in all_ids:
        if cid not in ref.graphs:
            continue
        ops0, h0 = ref.graphs[cid]
        odd = []
        for r in others:
            if cid not in r.graphs:
                continue
            ops, h = r.graphs[cid]
            if (h0 and h and h != h0) or (ops0 is not None and ops is not None and ops != ops0):
                odd.append(r.rank)
        if odd:
            by = {r.rank: {"op_count": r.graphs[cid][0], "graph_hash": r.graphs[cid][1]}
                  for r in job.ranks if cid in r.graphs}
            job.divergences.append(Divergence(
                "graphs", cid, frame(cid), odd, by,
                f"compile {cid} ({frame(cid)}): rank(s) {', '.join(map(str, odd))} captured a different graph "
                f"than rank {ref.rank} ("
                + "; ".join(f"rank {k}: {v['op_count']} ops, {v['graph_hash'] or 'no hash'}" for k, v in by.items())
                + ")"))
    # cache patterns
    cache_ids = []
    for r in job.ranks:
        for cid in r.cache:
            if cid not in cache_ids:
                cache_ids.append(cid)
    for cid in cache_ids:
        p0 = ref.cache.get(cid, ())
        odd = [r.rank for r in others if r.cache.get(cid, ()) != p0]
        if odd:
            def fmt(p: tuple) -> str:
                return ", ".join(f"{c} {s} ×{n}" for (c, s), n in p) or "no lookup"
            by = {r.rank: fmt(r.cache.get(cid, ())) for r in job.ranks}
            job.divergences.append(Divergence(
                "cache", cid, frame(cid), odd, by,
                f"compile {cid} ({frame(cid)}): cache differs: "
                + "; ".join(f"rank {k}: {v}" for k, v in by.items())))
    # recompile reasons
    rids = []
    for r in job.ranks:
        for cid in r.recompile_reasons:
            if cid not in rids:
                rids.append(cid)
    for cid in rids:
        r0 = ref.recompile_reasons.get(cid)
        odd = [r.rank for r in others if r.recompile_reasons.get(cid) != r0]
        if odd:
            by = {r.rank: list(r.recompile_reasons.get(cid, ())) for r in job.ranks}
            job.divergences.append(Divergence(
                "recompile_reasons", cid, frame(cid), odd, by,
                f"recompile {cid} ({frame(cid)}): "
                + "; ".join(f"rank {k}: {v[0] if v else 'no recompile'}" for k, v in by.items())))


def find_jobs(path: str | Path) -> tuple[list[Job], list[str]]:
    """Jobs (several ranks of one label) under ``path``, and the runs that belong to no job."""
    found = find_runs(path)
    groups: dict[tuple, dict[int, list[RunModel]]] = {}
    loners: list[str] = []
    for f in found:
        n = f.name
        if n.rank is None:
            loners.append(str(f.path))
            continue
        run = RunModel(f.path).load()
        groups.setdefault((n.tag or f.path.name, n.model_index), {}).setdefault(n.rank, []).append(run)
    reader = _GraphReader()
    jobs: list[Job] = []
    for (label, mi), by_rank in sorted(groups.items(), key=lambda kv: (str(kv[0][0]), kv[0][1] or 0)):
        if len(by_rank) < 2:
            loners.extend(str(r.path) for runs in by_rank.values() for r in runs)
            continue
        ranks = []
        superseded = []
        for rank in sorted(by_rank):
            runs = sorted(by_rank[rank], key=lambda r: (r.started or r.name_info.run_time or 0, str(r.path)))
            ranks.append(_rank_run(rank, runs[-1], reader))
            superseded.extend(str(r.path) for r in runs[:-1])
        job = Job(label, mi, ranks, superseded=superseded)
        _diverge(job)
        jobs.append(job)
    return jobs, loners


def ranks_json(jobs: list[Job]) -> dict[str, Any]:
    return {"jobs": [j.as_json() for j in jobs],
            "diverged": any(j.divergences for j in jobs)}


def ranks_lines(jobs: list[Job]) -> list[tuple[str, str]]:
    """For people: ``(style, text)`` lines (head, warn, same, dim); divergent ranks first."""
    out: list[tuple[str, str]] = []
    for j in jobs:
        js = j.as_json()
        state = (f"DIVERGED: rank(s) {', '.join(map(str, j.divergent_ranks))} differ from rank {j.reference.rank}"
                 if j.divergences else f"consistent: every rank matches rank {j.reference.rank}")
        out.append(("head", f"{j.label} (model {j.model_index}) · {len(j.ranks)} ranks · {state}"))
        for r in js["ranks"]:
            c = r["cache"]
            out.append(("warn" if r["diverges"] else "same",
                        f"  {'!' if r['diverges'] else ' '} rank {r['rank']}: {r['status']}, {r['compiles']} compile(s), "
                        f"{r['recompiles']} recompile(s), {r['graph_breaks']} break(s), cache "
                        f"{c['hits']}/{c['misses']}/{c['bypasses']}  {r['run']}"))
        for d in j.divergences:
            out.append(("warn", f"  {d.kind}: {d.message}"))
        out.append(("", ""))
    return out
