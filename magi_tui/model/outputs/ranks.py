"""Rank vs rank: where the ranks of one job compiled differently (``magi-tui ranks PATH`` and the ranks view).

A job is one program's ranks under a root:

* **TORCH_TRACE logs**: the per-rank logs of one folder (``TORCH_TRACE=<dir>`` gives one
  ``dedicated_log_torch_trace_rank_<r>_<random>.log`` per rank; the rank is read from the records'
  metadata, else the file name: :func:`magi_tui.model.sources.torchtrace.log_rank`);
* **run dirs** that share a label and model index and carry different ranks
  (``model_<i>_<label>_rank_<r>``: torchrun starts one process, so one run dir, per rank).

When a rank has several runs (or logs) in a job, its newest one is the job's. Two views of one job:

* **aspects** — what tlparse's multi-rank report checks, each with the *groups of ranks that agree*:
  compile-id sequences, cache hit / miss patterns, collective operation sequences (Inductor's
  ``inductor_collective_schedule``), tensor metadata and runtime estimates (``inductor_runtime_and_tensor_meta``,
  written with ``torch._inductor.config.log_tlparse``), graph execution order (``graph_execution``, written
  under ``torch._inductor.debug.record_and_log_graph_execution_order()``). An aspect no rank recorded is
  ``not_recorded`` (our tracer's run dirs keep none of torch's artifacts, only events);
* **divergences** — each rank against the lowest rank (the reference), per compile id:

  * **compile ids present on some ranks only** (a rank that compiled a frame the others did not, or
    recompiled when they did not);
  * **different graphs for the same compile id** (the captured graph's hash, else its op count);
  * **different cache patterns** (hit / miss / bypass per compile id and cache);
  * **different recompile reasons** (for the same compile id, compile ids masked in the text).

Ranks that diverge (outside the reference's group of an aspect, or in a divergence) come first, in the text
and in the JSON (``divergent_ranks``). A job whose ranks agree on everything is ``consistent``.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from magi_tui.model.analysis.frames import parse_compile_id
from magi_tui.model.outputs.compare import Side, _GraphReader, _norm, side_facts
from magi_tui.model.outputs.compare.sides import SideFold, side_index
from magi_tui.model.run import RunModel
from magi_tui.model.sources.discovery import find_runs
from magi_tui.model.sources.torchtrace import metadata_rank, name_rank
from magi_tui.model.sources.torchtrace.reader import tlparse_compile_id

#: torch's records the aspects are read from (a log's reader keeps them: ``TraceLogReader.keep``)
COLLECTIVES = "artifact:inductor_collective_schedule"
RUNTIME_META = "artifact:inductor_runtime_and_tensor_meta"
EXEC_ORDER = "artifact:graph_execution"
RANK_RECORDS = frozenset({COLLECTIVES, RUNTIME_META, EXEC_ORDER})

#: aspect -> (title, what to do when no rank recorded it)
ASPECTS: dict[str, tuple[str, str]] = {
    "compile_ids": ("compile-id sequence", "no compile recorded"),
    "cache": ("cache hit/miss pattern", "no cache lookup recorded"),
    "collectives": ("collective operation sequence",
                    "no collective in an Inductor-compiled graph (inductor_collective_schedule)"),
    "tensor_meta": ("tensor metadata",
                    "set torch._inductor.config.log_tlparse = True (inductor_runtime_and_tensor_meta)"),
    "execution_order": ("graph execution order",
                        "run the program under torch._inductor.debug.record_and_log_graph_execution_order()"),
    "runtime_estimates": ("runtime estimates",
                          "set torch._inductor.config.log_tlparse = True (inductor_runtime_and_tensor_meta)"),
}


class RankRun(Struct):
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
    #: aspect -> what this rank has, one readable line per item (``None``: nothing recorded)
    aspects: dict[str, list[str] | None] = field(default_factory=dict)
    #: aspect -> what is compared (the lines, unless a finer or coarser key says more)
    keys: dict[str, Any] = field(default_factory=dict)

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
    _aspects(rr)
    return rr


def _short_op(op: Any) -> str:
    """``torch.ops._c10d_functional.all_reduce_.default`` -> ``all_reduce_``."""
    s = str(op)
    for head in ("torch.ops._c10d_functional.", "torch.ops.c10d_functional.", "torch.ops."):
        if s.startswith(head):
            s = s[len(head):]
            break
    return s[:-len(".default")] if s.endswith(".default") else s


def _tensor(out: Any) -> str:
    if not isinstance(out, dict):
        return "?"
    if out.get("dtype") is None and not out.get("shape"):
        return "no tensor"
    shape = out.get("shape")
    stride = out.get("stride")
    return (f"{out.get('dtype') or '?'}{list(shape) if isinstance(shape, list) else '[?]'}"
            + (f" stride {list(stride)}" if isinstance(stride, list) and stride else ""))


def _json(payload: str | None) -> Any:
    try:
        return json.loads(payload) if payload else None
    except ValueError:
        return None


def _aspects(rr: RankRun) -> None:
    """The aspects of one rank: from torch's records where the run is a log, else from its events."""
    run = rr.run
    a, k = rr.aspects, rr.keys
    log_ids = run.reader.compile_ids
    if isinstance(log_ids, dict):
        a["compile_ids"] = list(log_ids)  # tlparse's spelling, attempts included
    else:
        a["compile_ids"] = list(side_index(run).compile_ids) or None
    t = run.triage
    looks = sorted(((it.event.seq, it.event, state) for state, items in
                    (("hit", t.cache_hits), ("miss", t.cache_misses), ("bypass", t.cache_bypasses))
                    for it in items), key=lambda x: x[0])
    a["cache"] = [f"{ev.compile_id or '-'} {(ev.summary or {}).get('cache') or 'cache'} {state}"
                  for _, ev, state in looks] or None
    kept = run.reader.kept
    sched: list[tuple[str, list[str]]] = []
    meta: list[tuple[str, list[tuple[str, list[str]]]]] = []
    runtime: list[tuple[str, float]] = []
    order: list[str] | None = None
    for kind, md, payload in kept:
        cid = (tlparse_compile_id(md) or "[-]")[1:-1]
        body = _json(payload)
        if kind == COLLECTIVES and isinstance(body, list):
            sched.append((cid, [str(op) for op in body]))
        elif kind == RUNTIME_META and isinstance(body, dict) and isinstance(body.get("ops"), list):
            ops = [op for op in body["ops"] if isinstance(op, dict)]
            meta.append((cid, [(_short_op(op.get("name")), [_tensor(o) for o in op.get("outputs") or []
                                                       if isinstance(op.get("outputs"), list)]) for op in ops]))
            total = sum(float(op["estimated_runtime_ns"]) for op in ops
                        if isinstance(op.get("estimated_runtime_ns"), (int, float)))
            if math.isfinite(total):  # a hostile payload's Infinity / NaN is no estimate
                runtime.append((cid, total))
        elif kind == EXEC_ORDER and isinstance(body, dict) and isinstance(body.get("graph_execution_order"), list):
            order = [str(x.get("compile_id")) if isinstance(x, dict) else str(x)
                     for x in body["graph_execution_order"]]  # the last record is the whole run's
    if sched:
        a["collectives"] = [f"{cid}: " + ", ".join(_short_op(op) for op in ops) for cid, ops in sched]
        k["collectives"] = tuple(op for _, ops in sched for op in ops)  # what must line up at run time
    if meta:
        a["tensor_meta"] = [f"{cid}: " + "; ".join(f"{name} -> {', '.join(outs) or '-'}" for name, outs in ops)
                            for cid, ops in meta]
        k["tensor_meta"] = tuple(tuple((name, tuple(outs)) for name, outs in ops) for _, ops in meta)
    if runtime:
        a["runtime_estimates"] = [f"{cid}: {ns / 1e6:.3f} ms" for cid, ns in runtime]
        k["runtime_estimates"] = tuple(round(ns) for _, ns in runtime)
    if order is not None:
        a["execution_order"] = order


class Aspect(Struct):
    """One aspect of a job: the groups of ranks that agree on it (the reference's group first)."""

    name: str
    groups: list[tuple[list[int], list[str]]]   # (ranks, what they have)
    recorded: bool

    @property
    def status(self) -> str:
        return "not_recorded" if not self.recorded else ("agree" if len(self.groups) <= 1 else "differ")

    @property
    def odd_ranks(self) -> list[int]:
        return sorted(r for ranks, _ in self.groups[1:] for r in ranks)

    def message(self) -> str:
        title, hint = ASPECTS[self.name]
        if not self.recorded:
            return f"{title}: not recorded ({hint})"
        if len(self.groups) <= 1:
            return f"{title}: every rank agrees"
        return f"{title}: ranks disagree: " + " | ".join("rank(s) " + ", ".join(map(str, ranks)) for ranks, _ in self.groups)

    def as_json(self) -> dict[str, Any]:
        return {"aspect": self.name, "status": self.status,
                "groups": [{"ranks": ranks, "sequence": seq} for ranks, seq in self.groups],
                "message": self.message()}


def _group(job_ranks: list[RankRun], name: str) -> Aspect:
    recorded = any(r.aspects.get(name) is not None for r in job_ranks)
    by_key: dict[Any, tuple[list[int], list[str]]] = {}
    for r in job_ranks:
        lines = r.aspects.get(name) or []
        key = r.keys.get(name, tuple(lines))
        by_key.setdefault(key, ([], list(lines)))[0].append(r.rank)
    return Aspect(name, list(by_key.values()), recorded)  # insertion order: the reference's group first


class Divergence(Struct):
    kind: str          # compile_ids | graphs | cache | recompile_reasons
    compile_id: str
    frame: str
    ranks: list[int]   # the ranks that differ from the reference
    by_rank: dict[int, Any]
    message: str

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "compile_id": self.compile_id, "frame": self.frame, "ranks": self.ranks,
                "by_rank": {str(k): v for k, v in self.by_rank.items()}, "message": self.message}


class Job(Struct):
    label: str
    model_index: int | None
    ranks: list[RankRun]
    divergences: list[Divergence] = field(default_factory=list)
    #: runs under the root that were not the job's (older runs of a rank)
    superseded: list[str] = field(default_factory=list)
    aspects: list[Aspect] = field(default_factory=list)
    #: the folder of a job of logs (None for run dirs)
    folder: str | None = None
    #: the parallel topology its run folders name (MagiCompiler 2026: ``ws2``, ``ep6_cp2_dp1``), else None
    topology: str | None = None
    #: once per log whose file name and records disagree on its rank (the records' rank is used)
    rank_notes: list[str] = field(default_factory=list)
    _warmup: Any = None   # made when first asked (outputs/rank_warmup.py)

    @property
    def reference(self) -> RankRun:
        return self.ranks[0]

    @property
    def warmup(self) -> Any:
        """Which ranks compiled and which loaded from the cache, their compile seconds and the skew."""
        if self._warmup is None:
            from magi_tui.model.outputs.rank_warmup import warmup

            self._warmup = warmup(self.ranks)
        return self._warmup

    @property
    def divergent_ranks(self) -> list[int]:
        # ranks that warmed differently: the odd ones out are the warmup's (the cold among warm), not the
        # ranks outside the reference's group
        w = self.warmup
        by_warmup = w.differs
        out: set[int] = set(w.divergent) if by_warmup else set()
        for d in self.divergences:
            if not (by_warmup and d.kind == "cache"):
                out.update(d.ranks)
        for a in self.aspects:
            if not (by_warmup and a.name == "cache"):
                out.update(a.odd_ranks)
        return sorted(out)

    @property
    def diverged(self) -> bool:
        return bool(self.divergences) or any(a.status == "differ" for a in self.aspects)

    def as_json(self) -> dict[str, Any]:
        div = set(self.divergent_ranks)
        ordered = sorted(self.ranks, key=lambda r: (r.rank not in div, r.rank))
        kinds = Counter(d.kind for d in self.divergences)
        return {
            "label": self.label, "model_index": self.model_index, "topology": self.topology,
            "source": "torch_trace" if self.folder is not None else "run_dirs", "folder": self.folder,
            "status": "diverged" if self.diverged else "consistent",
            "reference_rank": self.reference.rank,
            "divergent_ranks": self.divergent_ranks,
            "summary": {k: kinds.get(k, 0) for k in ("compile_ids", "graphs", "cache", "recompile_reasons")},
            "ranks": [{"rank": r.rank, "run": str(r.run.path), "status": r.side.analysis.status,
                       "diverges": r.rank in div,
                       "compiles": len(r.compile_ids), "recompiles": len(r.side.analysis.recompiles),
                       "graph_breaks": r.side.analysis.graph_break_total, "cache": r.cache_counts,
                       "compile_s": r.side.analysis.compile_time.get("total_s")} for r in ordered],
            "aspects": [a.as_json() for a in self.aspects],
            "warmup": self.warmup.as_json(),
            "divergences": [d.as_json() for d in self.divergences],
            "superseded": self.superseded,
            "rank_notes": self.rank_notes,
        }


def _diverge(job: Job) -> None:
    job.aspects = [_group(job.ranks, name) for name in ASPECTS]
    ref = job.reference
    others = job.ranks[1:]
    # ids in order of first appearance over the ranks (a dict: a list's ``in`` made this quadratic in ids)
    all_ids = list(dict.fromkeys(cid for r in job.ranks for cid in r.compile_ids))

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
            by: dict[int, Any] = {r.rank: {"op_count": r.graphs[cid][0], "graph_hash": r.graphs[cid][1]}
                  for r in job.ranks if cid in r.graphs}
            job.divergences.append(Divergence(
                "graphs", cid, frame(cid), odd, by,
                f"compile {cid} ({frame(cid)}): rank(s) {', '.join(map(str, odd))} captured a different graph "
                f"than rank {ref.rank} ("
                + "; ".join(f"rank {k}: {v['op_count']} ops, {v['graph_hash'] or 'no hash'}" for k, v in by.items())
                + ")"))
    # cache patterns
    cache_ids = list(dict.fromkeys(cid for r in job.ranks for cid in r.cache))
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
    rids = list(dict.fromkeys(cid for r in job.ranks for cid in r.recompile_reasons))
    for cid in rids:
        r0 = ref.recompile_reasons.get(cid)
        odd = [r.rank for r in others if r.recompile_reasons.get(cid) != r0]
        if odd:
            by = {r.rank: list(r.recompile_reasons.get(cid, ())) for r in job.ranks}
            job.divergences.append(Divergence(
                "recompile_reasons", cid, frame(cid), odd, by,
                f"recompile {cid} ({frame(cid)}): "
                + "; ".join(f"rank {k}: {v[0] if v else 'no recompile'}" for k, v in by.items())))


def _merge_rank_folders(groups: dict[tuple, dict[int, list[RunModel]]]) -> None:
    """A launcher that gives each rank a trace folder of its own (``TORCH_TRACE=<dir>/rank_<r>``): folders
    whose logs carry one rank each, beside one another, are one job of their parent folder when their ranks
    differ (a folder whose logs carry different ranks is always a job)."""
    single: dict[str, list[tuple]] = {}
    for key, by_rank in groups.items():
        if key[0] == "log" and len(by_rank) == 1:
            single.setdefault(str(Path(key[1]).parent), []).append(key)
    for up, keys in single.items():
        target = ("log", up, None, None)
        if target in groups or len({r for k in keys for r in groups[k]}) < 2:
            continue
        merged: dict[int, list[RunModel]] = {}
        for k in keys:
            for r, runs in groups.pop(k).items():
                merged.setdefault(r, []).extend(runs)
        groups[target] = merged


def find_jobs(path: str | Path) -> tuple[list[Job], list[str]]:
    """Jobs (several ranks of one program) under ``path``, and the runs that belong to no job."""
    found = find_runs(path)
    # ranks of one job: the same model (index and tag) and, in MagiCompiler's 2026 folders, the same
    # topology (``…_rank_<r>_ws2``: a ws1 rerun of the model is another job). Each rank's newest run is the
    # job's (its run_* folder is the rank's own second, so one job's ranks may sit in two); older ones are
    # superseded
    groups: dict[tuple, dict[int, list[RunModel]]] = {}
    notes: dict[str, str] = {}  # log path -> where its name and records disagree
    loners: list[str] = []
    for f in found:
        n = f.name
        rank = n.rank
        is_log = f.path.is_file()
        if rank is None and is_log:  # opened before torch.distributed was: the rank is in later records only
            rank = metadata_rank(f.path, whole=True)
        if rank is None:
            loners.append(str(f.path))
            continue
        run = RunModel(f.path)
        if run.reader.keeps_records:  # a TORCH_TRACE log: keep torch's records the aspects read
            run.reader.keep = RANK_RECORDS
            key: tuple = ("log", str(f.path.parent), None, None)
            named = name_rank(f.path.name)
            if is_log and named is not None and named != rank:
                notes[str(f.path)] = (f"{f.path.name}: named rank {named}, its records say rank {rank} "
                                      "(the records' rank is used)")
        else:
            key = ("run", n.tag or f.path.name, n.model_index, n.topology)
        run.load(fold=SideFold())  # streamed: what the comparison of ranks reads, no event list
        groups.setdefault(key, {}).setdefault(rank, []).append(run)
    _merge_rank_folders(groups)
    reader = _GraphReader()
    jobs: list[Job] = []
    for (src, label, mi, topo), by_rank in sorted(groups.items(),
                                                  key=lambda kv: (kv[0][0], str(kv[0][1]), kv[0][2] or 0, kv[0][3] or "")):
        if len(by_rank) < 2:
            loners.extend(str(r.path) for runs in by_rank.values() for r in runs)
            continue
        ranks = []
        superseded: list[str] = []
        for rank in sorted(by_rank):
            runs = sorted(by_rank[rank], key=lambda r: (r.started or r.name_info.run_time or 0, str(r.path)))
            ranks.append(_rank_run(rank, runs[-1], reader))
            superseded.extend(str(r.path) for r in runs[:-1])
        folder = label if src == "log" else None
        job = Job(Path(label).name if folder else label, mi, ranks, superseded=superseded, folder=folder,
                  topology=topo, rank_notes=[notes[str(r.path)] for runs in by_rank.values() for r in runs
                                             if str(r.path) in notes])
        _diverge(job)
        jobs.append(job)
    return jobs, loners


def ranks_json(jobs: list[Job]) -> dict[str, Any]:
    return {"jobs": [j.as_json() for j in jobs],
            "diverged": any(j.diverged for j in jobs)}


def ranks_lines(jobs: list[Job]) -> list[tuple[str, str]]:
    """For people: ``(style, text)`` lines (head, warn, same, dim); divergent ranks first."""
    out: list[tuple[str, str]] = []
    for j in jobs:
        js = j.as_json()
        state = (f"DIVERGED: rank(s) {', '.join(map(str, j.divergent_ranks))} differ from rank {j.reference.rank}"
                 if j.diverged else f"consistent: every rank matches rank {j.reference.rank}")
        where = f"logs in {j.folder}" if j.folder is not None else f"model {j.model_index}" + (
            f", topology {j.topology}" if j.topology else "")
        out.append(("head", f"{j.label} ({where}) · {len(j.ranks)} ranks · {state}"))
        out.extend(("dim", f"  note: {n}") for n in j.rank_notes)
        agree = [ASPECTS[a.name][0] for a in j.aspects if a.status == "agree"]
        if agree:
            out.append(("same", "  agree: " + ", ".join(agree)))
        for a in j.aspects:
            if a.status != "differ":
                continue
            out.append(("warn", f"  ✗ {a.message()}"))
            for ranks, seq in a.groups:
                shown = "; ".join(seq[:4]) + (f"; … {len(seq) - 4} more" if len(seq) > 4 else "")
                out.append(("warn" if ranks is not a.groups[0][0] else "dim",
                            f"      {'rank(s) ' + ', '.join(map(str, ranks))}: {shown or 'nothing'}"))
        missing = [ASPECTS[a.name][0] for a in j.aspects if a.status == "not_recorded"]
        if missing:
            out.append(("dim", "  not recorded: " + ", ".join(missing)))
        for r in js["ranks"]:
            c = r["cache"]
            out.append(("warn" if r["diverges"] else "same",
                        f"  {'!' if r['diverges'] else ' '} rank {r['rank']}: {r['status']}, {r['compiles']} compile(s), "
                        f"{r['recompiles']} recompile(s), {r['graph_breaks']} break(s), cache "
                        f"{c['hits']}/{c['misses']}/{c['bypasses']}  {r['run']}"))
        if j.superseded:
            out.append(("dim", f"  older logs/runs of a rank (each rank's newest is compared): {', '.join(j.superseded)}"))
        out.extend(j.warmup.lines())
        for d in j.divergences:
            out.append(("warn", f"  {d.kind}: {d.message}"))
        out.append(("", ""))
    return out
