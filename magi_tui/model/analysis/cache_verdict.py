"""Why this run missed the cache, on the run alone: ``triage --json``'s ``cache_miss`` and the triage lines.

The baseline is found by :mod:`.cache_baseline` (the last earlier run of the same program with the same
cache directory); each miss is explained against it exactly as ``magi-tui compare BASELINE THIS`` does
(:func:`.cache_explain.explain_misses`, the baseline's lookups and this run's earlier ones), and the
differing components are said in the user's terms (:mod:`.cache_terms`). The states:

* ``disabled``: torch's repro script records ``TORCHINDUCTOR_FORCE_DISABLE_CACHES`` (no lookup is logged);
* ``none``: no lookup recorded; ``bypassed``: every lookup bypassed (torch's reasons);
* ``warm``: no miss; ``missed``: a miss against the baseline, with the factors;
* ``cold``: misses and no earlier run of this program used this cache directory (a first run, another
  directory): no factor is named;
* ``recompiled``: misses explained only against this run's own earlier lookups (new inputs).
"""

from __future__ import annotations

import weakref
from typing import Any

from msgspec import Struct, field

from magi_tui.model.analysis.cache_baseline import Baseline, find_baseline, timeline_file
from magi_tui.model.analysis.cache_explain import (
    Lookup,
    MissExplained,
    explain_misses,
    run_lookups,
)
from magi_tui.model.analysis.cache_terms import Factor, factors, input_names
from magi_tui.model.run import RunModel

DISABLE_VAR = "TORCHINDUCTOR_FORCE_DISABLE_CACHES"
_MEMO: "weakref.WeakKeyDictionary[RunModel, CacheMiss]" = weakref.WeakKeyDictionary()


class Miss(Struct):
    """One missed lookup, what it was compared with and what changed."""

    explained: MissExplained
    factors: list[Factor] = field(default_factory=list)
    #: where in the user's code the graph changed (``prog.py:37``), when a graph factor could be placed
    place: str | None = None
    #: the graph's inputs by position as the factors named them ([]: by number)
    names: list[str] = field(default_factory=list)

    def line(self) -> str:
        m = self.explained.miss
        head = f"{m.cache} lookup of {m.compile_id or '?'} missed"
        if self.explained.nearest is None:
            return f"{head}: nothing earlier to compare with"
        against = "the baseline" if self.explained.where == "baseline" else "an earlier lookup in this run"
        if not self.factors:
            return f"{head}: the same key as {against}'s (the entry was not there: evicted or not stored)"
        first = self.factors[0].text + (f" ({self.place})" if self.place and self.factors[0].kind == "graph" else "")
        more = f" (+{len(self.factors) - 1} more)" if len(self.factors) > 1 else ""
        return f"{head} against {against}: {first}{more}"

    @property
    def factor_texts(self) -> list[str]:
        """What changed, in the user's words (the graph's with its place in their code)."""
        return [f.text + (f" ({self.place})" if self.place and f.kind == "graph" else "") for f in self.factors]

    def as_json(self) -> dict[str, Any]:
        e = self.explained
        return {**e.miss.as_ref("this"), "against": e.nearest.as_ref(e.where) if e.nearest else None,
                "factors": [f.as_json() | ({"place": self.place} if f.kind == "graph" else {}) for f in self.factors],
                "components": [d["component"] for d in e.differs]}


class CacheMiss(Struct):
    state: str
    text: str
    cache_dir: str | None
    baseline: Baseline | None
    misses: list[Miss] = field(default_factory=list)

    @property
    def factor_texts(self) -> list[str]:
        out: list[str] = []
        for m in self.misses:
            for f in m.factors:
                t = f.text + (f" ({m.place})" if m.place and f.kind == "graph" else "")
                if t not in out:
                    out.append(t)
        return out

    def miss_at(self, index: int) -> Miss | None:
        """The explained miss of the lookup event ``index`` (None: not explained: no key recorded)."""
        return next((m for m in self.misses if m.explained.miss.index == index), None)

    def against(self, m: Miss) -> str | None:
        """The run of the lookup ``m`` was compared with, as a user finds it (None: this run's own)."""
        b = self.baseline
        if m.explained.where != "baseline" or b is None or b.run is None:
            return None
        return shown(b)

    def as_json(self) -> dict[str, Any]:
        b = self.baseline
        return {"state": self.state, "text": self.text, "cache_dir": self.cache_dir,
                "baseline": b.as_json() if b is not None and b.run is not None else None,
                "searched": b.roots if b is not None else [],
                "factors": self.factor_texts,
                "misses": [m.as_json() for m in self.misses]}


def names_of(lookups: list[Lookup], compile_id: str | None) -> list[str]:
    """The graph's inputs as the user's code names them, from the AOT lookup of the same compile (its
    ``aot_config`` lists the inputs' sources); [] when none recorded it."""
    for lk in lookups:
        if lk.compile_id == compile_id and "aot_config" in lk.components:
            names = input_names(lk.components["aot_config"][1])
            if names:
                return names
    return []


def _miss(e: MissExplained, mine: list[Lookup], theirs: list[Lookup], run: RunModel) -> Miss:
    if e.nearest is None or not e.differs:
        return Miss(e)
    names = names_of(mine, e.miss.compile_id)
    if e.miss.cache == "fx_graph":    # a lookup's example inputs: only as many as the names where counted so
        n_inputs = sum(1 for c in e.miss.components if c.startswith("example_inputs["))
        if names and n_inputs != len(names):
            names = []
    fs = factors(e.differs, names, e.nearest.graph, e.miss.graph)
    place = None
    g = next((f for f in fs if f.kind == "graph" and f.new), None)
    if g is not None:
        place = op_place(run, e.miss.compile_id, (g.new or "").split(", ")[0])
    return Miss(e, fs, place, names)


def op_place(run: RunModel, compile_id: str | None, op: str) -> str | None:
    """``prog.py:37``: where the user's code calls ``op``, read off the graph Dynamo captured for the
    compile (its ``# File: …:37 in forward`` comments); None when not recorded."""
    from pathlib import PurePath

    from magi_tui.model.analysis.diff import read_side

    if not op or compile_id is None:
        return None
    whole = RunModel(run.path).load() if run.fold is not None else run
    for ev in whole.events:
        if ev.compile_id != compile_id or not ev.name.endswith("after_dynamo_capture"):
            continue
        for name, path, _problem in whole.files(ev):
            if path is None or "graph" not in name:
                continue
            lines, problem = read_side(path, whole.files_root, 20000)
            if problem:
                continue
            where = None
            for ln in lines:
                s = ln.strip()
                if s.startswith("# File: "):
                    where = s[len("# File: "):].split(" in ", 1)[0]
                elif where and (f".{op}(" in s or f" {op}(" in s or f"={op}(" in s):
                    file, _, line = where.rpartition(":")
                    return f"{PurePath(file).name}:{line}"
    return None


def cache_miss(run: RunModel) -> CacheMiss:
    """The verdict for one run (memoised per run)."""
    got = _MEMO.get(run)
    if got is not None:
        return got
    got = _verdict(run)
    _MEMO[run] = got
    return got


def _env(run: RunModel) -> dict[str, str | None]:
    from magi_tui.model.sources.cache_dir import compile_env

    file = timeline_file(run)
    return compile_env(file, None if run.is_torch_trace else run.path)


def shown(base: Baseline) -> str:
    """The baseline run as a user finds it: its path under the root searched."""
    from pathlib import Path

    assert base.run is not None
    p = base.run.path
    for root in base.roots:
        try:
            return str(p.relative_to(Path(root)))
        except ValueError:
            continue
    return str(p)


def run_shown(run: RunModel) -> str:
    """This run as a user finds it: its path under the root a baseline is searched in."""
    from magi_tui.model.analysis.cache_baseline import run_root

    try:
        return str(run.path.relative_to(run_root(run.path)))
    except ValueError:
        return str(run.path)


def _verdict(run: RunModel) -> CacheMiss:
    t = run.triage
    h, m, b = len(t.cache_hits), len(t.cache_misses), len(t.cache_bypasses)
    if not (h or m or b):
        env = _env(run)
        if env.get(DISABLE_VAR) not in (None, "", "0"):
            return CacheMiss("disabled", f"caches disabled ({DISABLE_VAR}={env[DISABLE_VAR]}): torch looked "
                                         "nothing up and compiled everything", env.get("TORCHINDUCTOR_CACHE_DIR"),
                             None)
        return CacheMiss("none", "no cache lookup recorded", None, None)
    if b and not (h or m):
        from collections import Counter

        rs = Counter((it.reason or "-").splitlines()[0] for it in t.cache_bypasses)
        why = "; ".join(f"{r} ×{n}" if n > 1 else r for r, n in rs.most_common(3))
        return CacheMiss("bypassed", f"cache bypassed (not consulted): {why}", None, None)
    if not m:
        return CacheMiss("warm", f"cache warm: {h} hit(s), no miss", None, None)
    mine = run_lookups(run)
    if not any(lk.state == "miss" for lk in mine):   # no key recorded with a miss: nothing to compare, nor to search for
        return CacheMiss("cold", "cache missed: the missed lookups' keys are not recorded here, so what changed "
                                 "cannot be told", None, None)
    base = find_baseline(run)
    if base.run is None:
        where = ", ".join(base.roots[:2])
        cold = (f"cache cold: no earlier run of this program used {base.cache_dir} (searched {where})"
                if base.cache_dir else "cache missed, with nothing to explain it against: which cache directory "
                                       "this run used is not recorded here")
        same = [e for e in explain_misses(mine) if e.nearest is not None and e.differs]
        misses = [_miss(e, mine, [], run) for e in same]
        return CacheMiss("cold", cold, base.cache_dir, base, misses)
    theirs = run_lookups(base.run)
    explained = explain_misses(mine, theirs)
    misses = [_miss(e, mine, theirs, run) for e in explained]
    against_base = [x for x in misses if x.explained.where == "baseline"]
    state = "missed" if against_base else "recompiled"
    named = [x for x in misses if x.factors]
    if named:
        x = named[0]
        f = x.factors[0]
        first = f.text + (f" ({x.place})" if x.place and f.kind == "graph" else "")
        more = len({ft for y in named for ft in (g.text for g in y.factors)}) - 1
        text = f"cache missed: {first}" + (f" (+{more} more)" if more > 0 else "") + \
            f" — against {shown(base)}"
    else:
        text = (f"cache missed: every key equals the baseline's ({shown(base)}): the entries were not "
                "there (evicted, or not stored)")
    return CacheMiss(state, text, base.cache_dir, base, misses)

