"""Ranks that warmed differently: which ranks of a job compiled and which loaded from the cache, the compile
time of each, the skew between them, and what it risks (``magi-tui ranks`` and the ranks screen).

A rank that finds its graphs in its cache dir is done compiling in seconds; one that misses compiles for
minutes, and every other rank waits for it at the first collective. When that wait nears the collective
timeout, the job dies there. The odd ones out are the divergent ranks: the ranks that compiled when most
loaded (the cold among warm), or the reverse, never "whoever is not rank 0".

Why a compiling rank missed is said as for one run (:mod:`magi_tui.model.analysis.cache_terms`): its lookups
against a warm rank's; when the keys are the same, its cache dir did not hold them (the ranks' cache
dirs, when they differ, are named).
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct, field

#: torch's default collective timeout (torch 2.13 ``torch.distributed.constants.default_pg_timeout``: 30 min,
#: for every backend when the job passes none to ``init_process_group``)
DEFAULT_TIMEOUT_S = 30 * 60.0
#: a skew at least this share of the timeout is a warning
RISKY_SHARE = 0.25
REMEDY = ("a cache dir every rank shares (TORCHINDUCTOR_CACHE_DIR on shared storage), or warming every node "
          "the same way before the job; torch.distributed.config.compile_on_one_rank "
          "(TORCH_DISTRIBUTED_COMPILE_ON_ONE_RANK) where the torch has it")


class RankWarmup(Struct):
    rank: int
    state: str                    # compiled | loaded | mixed | none
    compile_s: float | None
    hits: int
    misses: int
    why: str | None = None        # why it missed, in the user's terms


class Warmup(Struct):
    ranks: list[RankWarmup]
    divergent: list[int] = field(default_factory=list)
    skew_s: float | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    timeout_from: str = "torch's default (30 min): the job's own timeout is not recorded here"

    @property
    def compiled(self) -> list[int]:
        return [r.rank for r in self.ranks if r.state in ("compiled", "mixed")]

    @property
    def loaded(self) -> list[int]:
        return [r.rank for r in self.ranks if r.state == "loaded"]

    @property
    def differs(self) -> bool:
        return bool(self.compiled and self.loaded)

    @property
    def risky(self) -> bool:
        return self.skew_s is not None and self.skew_s >= RISKY_SHARE * self.timeout_s

    def warning(self) -> str | None:
        if not self.risky or self.skew_s is None:
            return None
        return (f"⚠ skew {self.skew_s:.1f}s is {self.skew_s / self.timeout_s:.0%} of the collective timeout "
                f"({self.timeout_s:.0f}s, {self.timeout_from}): the warm ranks wait at their first collective "
                f"for rank(s) {', '.join(map(str, self.compiled))} to finish compiling, and past the timeout the "
                f"job is killed there. Removes it: {REMEDY}")

    def as_json(self) -> dict[str, Any]:
        return {"compiled": self.compiled, "loaded": self.loaded, "divergent": self.divergent,
                "skew_s": self.skew_s, "timeout_s": self.timeout_s, "timeout_from": self.timeout_from,
                "risky": self.risky, "warning": self.warning(),
                "ranks": [{"rank": r.rank, "state": r.state, "compile_s": r.compile_s, "hits": r.hits,
                           "misses": r.misses, "why": r.why} for r in self.ranks]}

    def lines(self) -> list[tuple[str, str]]:
        if not self.ranks:
            return []
        out: list[tuple[str, str]] = []
        head = ("warn", "  ✗ warmed differently: ") if self.differs else ("same", "  cache warmup: ")
        out.append((head[0], head[1] + (f"compiled: rank(s) {', '.join(map(str, self.compiled)) or '-'} · "
                                        f"loaded from cache: rank(s) {', '.join(map(str, self.loaded)) or '-'}")))
        for r in sorted(self.ranks, key=lambda r: (r.rank not in self.divergent, r.rank)):
            secs = f"{r.compile_s:.2f}s" if r.compile_s is not None else "? s"
            mark = "!" if r.rank in self.divergent else " "
            out.append(("warn" if mark == "!" else "dim",
                        f"    {mark} rank {r.rank}: {r.state}, compile {secs} ({r.hits} hit(s), {r.misses} miss(es))"
                        + (f" — {r.why}" if r.why else "")))
        if self.skew_s is not None:
            out.append(("dim", f"    skew {self.skew_s:.2f}s = {self.skew_s / self.timeout_s:.1%} of the collective "
                               f"timeout ({self.timeout_s:.0f}s, {self.timeout_from})"))
        w = self.warning()
        if w:
            out.append(("warn", "  " + w))
        return out


def _state(h: int, m: int) -> str:
    if m and h:
        return "mixed"
    return "compiled" if m else "loaded" if h else "none"


def warmup(ranks: list[Any], timeout_s: float | None = None) -> Warmup:
    """The warmup of a job's ranks (``RankRun``s: ``rank``, ``run``, ``side``); ``timeout_s``: the job's
    collective timeout when recorded."""
    rows = []
    for rr in ranks:
        t = rr.run.triage
        h, m = len(t.cache_hits), len(t.cache_misses)
        rows.append(RankWarmup(rr.rank, _state(h, m), rr.side.analysis.compile_time.get("total_s"), h, m))
    w = Warmup(rows)
    if timeout_s:
        w.timeout_s, w.timeout_from = timeout_s, "the job's"
    secs = [r.compile_s for r in rows if r.compile_s is not None]
    if len(secs) > 1:
        w.skew_s = round(max(secs) - min(secs), 3)
    if w.differs:
        compiled, loaded = w.compiled, w.loaded
        w.divergent = compiled if len(compiled) <= len(loaded) else loaded
        warm = next(rr for rr in ranks if rr.rank == loaded[0])
        for rr in ranks:
            row = next(r for r in rows if r.rank == rr.rank)
            if row.rank in compiled:
                row.why = _why(rr.run, warm.run, warm.rank)
    return w


def _why(cold: Any, warm: Any, warm_rank: int) -> str:
    """Why a compiling rank missed where a warm rank hit: its key's factors against the warm rank's, else
    its cache dir."""
    from magi_tui.model.analysis.cache_baseline import cache_dir_of
    from magi_tui.model.analysis.cache_explain import explain_misses, run_lookups
    from magi_tui.model.analysis.cache_terms import factors

    texts: list[str] = []
    for e in explain_misses(run_lookups(cold), run_lookups(warm)):
        if e.where == "baseline" and e.differs:
            for f in factors(e.differs, None, e.nearest.graph if e.nearest else None, e.miss.graph):
                if f.text not in texts:
                    texts.append(f.text)
    if texts:
        return f"against rank {warm_rank}: " + "; ".join(texts[:3])
    a, b = cache_dir_of(cold), cache_dir_of(warm)
    if a and b and a != b:
        return f"the same keys as rank {warm_rank}'s, in another cache dir ({a}; rank {warm_rank}: {b})"
    return f"the same keys as rank {warm_rank}'s: its cache dir did not hold them"
