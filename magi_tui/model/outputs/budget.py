"""A CI gate on compile budgets: ``magi-tui check PATH [--policy FILE] [--baseline RUN] [--junit FILE]``.

The policy is TOML; its ``[budget]`` table names the budgets (a key left out is a budget not checked)::

    [budget]
    max_graph_breaks = 0                    # graph breaks (every break, not sites)
    allowed_graph_breaks = ["GB0059"]       # when given, a break with any other id breaks the budget
    max_recompiles_per_frame = 1
    max_compile_seconds = 120.0             # total compile time of a run
    min_cache_hit_rate = 0.9                # hits / (hits + misses + bypasses)
    allow_unrecovered_failures = false
    allow_recompile_limit_hit = false
    allow_incomplete = false                # a compile cut short (killed, lifecycles left open, tracer stopped)
    allow_nothing_recorded = false          # no event and no compiled_functions/: Dynamo failed before the backend
    max_compile_time_increase = 0.25        # with --baseline: the fraction compile time may grow
    allow_new_break_ids = false             # with --baseline: a worklist id (GB0170@model.py:42) it lacks
    allow_new_recompile_ids = false         # with --baseline: a recompile cause id (size:x:0@model.py:40) it lacks

A ``[checks]`` table names the triage rules (docs/HEADLESS.md, *Rule ids*) that break the gate when they do
not hold, as ``check --fail-on`` does::

    [checks]
    fail_on = ["recompiles", "graph-breaks"]  # rule ids, or the kinds recovered / recompile / graph-break / fallback

With no policy file, ``allow_unrecovered_failures``, ``allow_recompile_limit_hit``, ``allow_incomplete``
and ``allow_nothing_recorded`` are checked (all false). With a baseline run, four more budgets compare against it: no new graph break, no more
recompiles, no new failure, compile time up by at most ``max_compile_time_increase`` (default 0.25).

Every budget gives one :class:`Result` (one JUnit test case); a broken one has one line that names the
frame, the graph-break id and the user's line where there is one.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path, PurePath
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from msgspec import Struct, field

from magi_format.text import u_escaped
from magi_tui.model.analysis.checks import (
    FAIL_ON_KINDS,
    Analysis,
    BreakEntry,
    UnknownRule,
    analyse,
    failing,
    parse_fail_on,
)
from magi_tui.model.outputs.compare import Comparison, compare_runs
from magi_tui.model.run import RunModel

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    try:
        import tomli as tomllib
    except ModuleNotFoundError:
        tomllib = None

DEFAULT_MAX_COMPILE_TIME_INCREASE = 0.25

#: key -> (python types accepted, what it is)
BUDGET_KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "max_graph_breaks": ((int,), "a whole number"),
    "allowed_graph_breaks": ((list,), "a list of graph-break ids"),
    "max_recompiles_per_frame": ((int,), "a whole number"),
    "max_compile_seconds": ((int, float), "a number of seconds"),
    "min_cache_hit_rate": ((int, float), "a fraction between 0 and 1"),
    "allow_unrecovered_failures": ((bool,), "true or false"),
    "allow_recompile_limit_hit": ((bool,), "true or false"),
    "allow_incomplete": ((bool,), "true or false"),
    "allow_nothing_recorded": ((bool,), "true or false"),
    "max_compile_time_increase": ((int, float), "a fraction (0.25 = 25%)"),
    "allow_new_break_ids": ((bool,), "true or false"),
    "allow_new_recompile_ids": ((bool,), "true or false"),
}
DEFAULT_POLICY: dict[str, Any] = {"allow_unrecovered_failures": False, "allow_recompile_limit_hit": False,
                                  "allow_incomplete": False, "allow_nothing_recorded": False}


class PolicyError(ValueError):
    """The policy cannot be used (exit 2)."""


class Policy(Struct):
    budget: dict[str, Any]
    source: str | None = None
    #: rule ids (and ``--fail-on`` kinds) that break the gate when they do not hold: ``[checks] fail_on``
    fail_on: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {"file": self.source, "budget": dict(self.budget), "fail_on": list(self.fail_on)}

    def with_fail_on(self, names: tuple[str, ...]) -> "Policy":
        """This policy with ``--fail-on``'s names added (once each, the policy's first)."""
        return Policy(self.budget, self.source, tuple(dict.fromkeys(self.fail_on + tuple(names))))


def parse_policy(text: str, source: str | None = None) -> Policy:
    if tomllib is None:  # pragma: no cover
        raise PolicyError("a policy file needs Python 3.11 (tomllib) or the tomli package")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PolicyError(f"{source or 'policy'}: not valid TOML: {exc}") from None
    table = data.get("budget")
    checks = data.get("checks")
    if table is None and checks is None:
        raise PolicyError(f"{source or 'policy'}: no [budget] table (keys: {', '.join(BUDGET_KEYS)}) "
                          "and no [checks] table (fail_on = [rule ids])")
    table = {} if table is None else table
    if not isinstance(table, dict):
        raise PolicyError(f"{source or 'policy'}: budget must be a table")
    fail_on = _policy_fail_on(checks, source or "policy")
    budget: dict[str, Any] = {}
    for k, v in table.items():
        if k not in BUDGET_KEYS:
            raise PolicyError(f"{source or 'policy'}: unknown budget key {k!r} (known: {', '.join(BUDGET_KEYS)})")
        types, what = BUDGET_KEYS[k]
        ok = isinstance(v, types) and not (isinstance(v, bool) and bool not in types)
        if ok and k == "allowed_graph_breaks":
            ok = all(isinstance(x, str) for x in v)
            v = [x.upper() for x in v] if ok else v
        if ok and k in ("min_cache_hit_rate",):
            ok = 0 <= v <= 1
        if ok and isinstance(v, (int, float)) and not isinstance(v, bool) and (v < 0 or not math.isfinite(v)):
            ok = False  # nan never compares, inf never breaks: a budget that can never fail is refused
        if not ok:
            raise PolicyError(f"{source or 'policy'}: budget.{k} must be {what}, not {v!r}")
        budget[k] = v
    return Policy(budget, source, fail_on)


def _policy_fail_on(checks: Any, source: str) -> tuple[str, ...]:
    """``[checks] fail_on``: a list of rule ids (or kinds); anything else is a bad policy (exit 2)."""
    if checks is None:
        return ()
    if not isinstance(checks, dict):
        raise PolicyError(f"{source}: checks must be a table")
    bad = [k for k in checks if k != "fail_on"]
    if bad:
        raise PolicyError(f"{source}: unknown checks key {bad[0]!r} (known: fail_on)")
    names = checks.get("fail_on", [])
    if not isinstance(names, list) or not all(isinstance(x, str) for x in names):
        raise PolicyError(f"{source}: checks.fail_on must be a list of rule ids, not {names!r}")
    try:
        return parse_fail_on(names, f"{source}: checks.fail_on")
    except UnknownRule as exc:
        raise PolicyError(str(exc)) from None


def load_policy(path: str | Path | None) -> Policy:
    if path is None:
        return Policy(dict(DEFAULT_POLICY), None)
    from magi_tui.model.sources.files import FileProblem, read_settings

    p = Path(path)
    try:
        raw = read_settings(p)  # a FIFO or a device is refused, never waited on
    except FileProblem as exc:
        raise PolicyError(f"policy: {str(exc).removesuffix(': not shown')}") from None
    return parse_policy(raw.decode("utf-8", errors="replace"), str(p))


# -- results ------------------------------------------------------------------------------------------
class Result(Struct):
    name: str
    limit: Any
    actual: Any = None
    ok: bool = True
    skipped: str | None = None          # why the budget could not be measured (not a failure)
    line: str = ""                       # the one line for a broken budget
    details: list[str] = field(default_factory=list)
    rule: str | None = None              # a triage rule's id (``fail_on.<id>``), else None

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "rule": self.rule, "limit": self.limit, "actual": self.actual, "ok": self.ok,
                "skipped": self.skipped, "message": self.line or None, "details": self.details}


class CheckReport(Struct):
    runs: list[RunModel]
    policy: Policy
    results: list[Result]
    baseline: list[RunModel] = field(default_factory=list)

    @property
    def broken(self) -> list[Result]:
        return [r for r in self.results if not r.ok]

    @property
    def exit_code(self) -> int:
        return 1 if self.broken else 0

    def as_json(self) -> dict[str, Any]:
        return {"result": "fail" if self.broken else "pass", "exit_code": self.exit_code,
                "runs": [str(r.path) for r in self.runs],
                "baseline": [str(r.path) for r in self.baseline] or None,
                "policy": self.policy.as_json(),
                "budgets": [r.as_json() for r in self.results],
                "broken": [r.line for r in self.broken],
                # every run's triage checks with their rule ids: the names --fail-on and [checks] take
                "checks": [{"run": str(run.path), **c.as_json()} for run in self.runs for c in analyse(run).checks]}

    def text(self) -> str:
        lines = []
        for r in self.broken:
            lines.append(f"✗ {r.line}")
        for r in self.results:
            if r.ok:
                if r.skipped:
                    lines.append(f"- {r.name}: not measured ({r.skipped})")
                elif isinstance(r.limit, bool):
                    lines.append(f"✓ {r.name}: {_fmt(r.actual)} ({'allowed' if r.limit else 'none allowed'})")
                else:
                    lines.append(f"✓ {r.name}: {_fmt(r.actual)} (limit {_fmt(r.limit)})")
        n = len(self.broken)
        lines.append(f"{'FAIL' if n else 'PASS'}: {n} of {len(self.results)} budget(s) broken"
                     f" in {len(self.runs)} run(s)" + (" against the baseline" if self.baseline else ""))
        return "\n".join(lines)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.3g}"
    if isinstance(v, list):
        return "[" + ", ".join(map(str, v)) + "]"
    return str(v)


def _where(b: BreakEntry) -> str:
    where = f"{PurePath(b.file).name}:{b.line}" if b.file else "?"
    fn = f" in {b.function}" if b.function else ""
    frame = f" (frame {b.frames[0]})" if b.frames else ""
    return f"{b.gb_id or 'graph break'} at {where}{fn}{frame}: {b.reason}"


def _run_tag(run: RunModel, many: bool) -> str:
    return f" [{run.path.name}]" if many else ""


# -- the budgets ---------------------------------------------------------------------------------------
def _check_run_budgets(policy: Policy, runs: list[RunModel]) -> list[Result]:
    b = policy.budget
    many = len(runs) > 1
    an: list[tuple[RunModel, Analysis]] = [(r, analyse(r)) for r in runs]
    out: list[Result] = []

    if "max_graph_breaks" in b:
        lim = b["max_graph_breaks"]
        res = Result("max_graph_breaks", lim, 0)
        for run, a in an:
            res.actual = max(res.actual, a.graph_break_total)
            if a.graph_break_total > lim and res.ok:
                first = a.worklist[0]
                more = f"; {len(a.worklist) - 1} more site(s)" if len(a.worklist) > 1 else ""
                res.ok = False
                res.line = (f"max_graph_breaks: {a.graph_break_total} graph break(s), budget {lim}{_run_tag(run, many)}; "
                            f"first: {_where(first)} ×{first.count}{more}")
            res.details += [f"{_where(e)} ×{e.count}" for e in a.worklist]
        out.append(res)

    if "allowed_graph_breaks" in b:
        allowed = set(b["allowed_graph_breaks"])
        res = Result("allowed_graph_breaks", sorted(allowed), [])
        for run, a in an:
            bad = [e for e in a.worklist if (e.gb_id or "").upper() not in allowed]
            res.actual = sorted(set(res.actual) | {e.gb_id or "(no id)" for e in bad})
            if bad and res.ok:
                more = f"; and {len(bad) - 1} more site(s)" if len(bad) > 1 else ""
                res.ok = False
                res.line = (f"allowed_graph_breaks: {_where(bad[0])} ×{bad[0].count} is not allowed "
                            f"(allowed: {', '.join(sorted(allowed)) or 'none'}){_run_tag(run, many)}{more}")
            res.details += [f"{_where(e)} ×{e.count}" for e in bad]
        out.append(res)

    if "max_recompiles_per_frame" in b:
        lim = b["max_recompiles_per_frame"]
        res = Result("max_recompiles_per_frame", lim, 0)
        for run, a in an:
            for f in a.frames:
                res.actual = max(res.actual, f.recompiles)
            over = sorted((f for f in a.frames if f.recompiles > lim), key=lambda f: -f.recompiles)
            if over and res.ok:
                f = over[0]
                why0 = next((r.primary for r in a.recompiles if (r.frame_key or r.frame) == (f.key or f.frame)
                             and r.primary is not None), None)
                reason = f"; first reason: {why0.text.splitlines()[0]}" if why0 else ""
                more = f"; and {len(over) - 1} more frame(s)" if len(over) > 1 else ""
                res.ok = False
                res.line = (f"max_recompiles_per_frame: frame {f.frame} recompiled {f.recompiles}×, "
                            f"budget {lim}{_run_tag(run, many)}{reason}{more}")
            res.details += [f"{f.frame}: {f.recompiles} recompile(s)" for f in over]
        out.append(res)

    if "max_compile_seconds" in b:
        lim = b["max_compile_seconds"]
        res = Result("max_compile_seconds", lim, None)
        for run, a in an:
            t = a.compile_time.get("total_s")
            if t is None:
                continue
            res.actual = round(max(res.actual or 0.0, t), 6)
            if t > lim and res.ok:
                slow = max(a.frames, key=lambda f: f.compile_s or 0.0, default=None)
                sf = f"; slowest frame {slow.frame} {slow.compile_s:.2f}s" if slow and slow.compile_s else ""
                res.ok = False
                res.line = f"max_compile_seconds: compiling took {t:.2f}s, budget {lim}s{_run_tag(run, many)}{sf}"
        if res.actual is None:
            res.skipped = "no compile time recorded"
        out.append(res)

    if "min_cache_hit_rate" in b:
        lim = b["min_cache_hit_rate"]
        res = Result("min_cache_hit_rate", lim, None)
        for run, a in an:
            c = a.cache["counts"]
            n = c["hits"] + c["misses"] + c["bypasses"]
            if not n:
                continue
            rate = c["hits"] / n
            res.actual = round(rate if res.actual is None else min(res.actual, rate), 4)
            if rate < lim and res.ok:
                first_miss = (a.cache.get("misses") or a.cache.get("bypasses") or [{}])[0]
                why = f"; first miss: #{first_miss.get('index')} {first_miss.get('reason') or ''}".rstrip() \
                    if first_miss else ""
                res.ok = False
                res.line = (f"min_cache_hit_rate: {rate:.0%} of {n} cache lookup(s) hit ({c['hits']} hit, "
                            f"{c['misses']} miss, {c['bypasses']} bypass), budget {lim:.0%}{_run_tag(run, many)}{why}")
        if res.actual is None:
            res.skipped = "no cache lookup recorded"
        out.append(res)

    if "allow_unrecovered_failures" in b:
        allow = b["allow_unrecovered_failures"]
        res = Result("allow_unrecovered_failures", allow, 0)
        for run, a in an:
            unrec = [c for c in a.problems if not c.recovered] + [r for r in a.restarts if not r.recovered]
            o = a.outcome
            crashed = o is not None and o.torch_failed  # raised into the program: a failure nothing recovered
            res.actual += len(unrec) + crashed
            if crashed and not allow and res.ok:
                e = o.exception
                res.ok = False
                res.line = (f"allow_unrecovered_failures: {o.headline()}{_run_tag(run, many)}: "
                            + " ".join(e.message.split())[:200] + (f" (compile {e.compile_id})" if e.compile_id else ""))
            if unrec and not allow and res.ok:
                h = unrec[0]
                ev = h.head.event if hasattr(h, "head") else h.event
                frame = (ev.summary or {}).get("frame")
                res.ok = False
                res.line = (f"allow_unrecovered_failures: {len(unrec)} failure(s) not recovered{_run_tag(run, many)}; "
                            f"first: #{ev.index} {ev.lifecycle or ev.frag}"
                            + (f" in frame {frame}" if frame else "")
                            + (f" ({ev.compile_id})" if ev.compile_id else "") + f": {h.reason or '-'}")
        out.append(res)

    if "allow_recompile_limit_hit" in b:
        allow = b["allow_recompile_limit_hit"]
        res = Result("allow_recompile_limit_hit", allow, 0)
        for run, a in an:
            hit = [f for f in a.frames if f.limit_hit]
            res.actual += len(hit)
            if hit and not allow and res.ok:
                f = hit[0]
                res.ok = False
                res.line = (f"allow_recompile_limit_hit: frame {f.frame} hit the recompile limit "
                            f"({f.recompile_limit}) and "
                            + ("torch raised FailOnRecompileLimitHit into the program" if f.limit_raised else
                               "runs eagerly from then on") + _run_tag(run, many)
                            + (f"; and {len(hit) - 1} more frame(s)" if len(hit) > 1 else ""))
        out.append(res)

    if "allow_incomplete" in b:
        allow = b["allow_incomplete"]
        res = Result("allow_incomplete", allow, 0)
        for run, a in an:
            if a.status in ("incomplete", "interrupted"):
                res.actual += 1
                if not allow and res.ok:
                    res.ok = False
                    why = "; ".join(a.incomplete_reasons) or (
                        "interrupted (Ctrl-C)" if a.status == "interrupted" else "cut short")
                    res.line = f"allow_incomplete: the compile was cut short{_run_tag(run, many)}: {why}"
        out.append(res)

    if "allow_nothing_recorded" in b:
        allow = b["allow_nothing_recorded"]
        res = Result("allow_nothing_recorded", allow, 0)
        for run, a in an:
            if a.status == "empty" and not run.has_compiled_functions:  # a warm cache still has compiled_functions/
                res.actual += 1
                if not allow and res.ok:
                    res.ok = False
                    res.line = (f"allow_nothing_recorded: nothing was recorded and nothing compiled"
                                f"{_run_tag(run, many)}: Dynamo failed before the backend ran, or the program "
                                "never reached torch.compile")
        out.append(res)
    return out


def _check_baseline(policy: Policy, pairs: list[tuple[RunModel, RunModel]]) -> list[Result]:
    """Regressions of each run against its baseline run."""
    inc = policy.budget.get("max_compile_time_increase", DEFAULT_MAX_COMPILE_TIME_INCREASE)
    many = len(pairs) > 1
    comps: list[tuple[RunModel, Comparison]] = [(run, compare_runs(base, run)) for base, run in pairs]
    gb = Result("baseline.no_new_graph_breaks", 0, 0)
    rc = Result("baseline.no_more_recompiles", "baseline", None)
    fl = Result("baseline.no_new_failures", 0, 0)
    ct = Result("baseline.max_compile_time_increase", inc, None)
    for run, c in comps:
        tag = _run_tag(run, many)
        gb.actual += len(c.breaks_added)
        if c.breaks_added and gb.ok:
            e = c.breaks_added[0]
            gb.ok = False
            more = f"; and {len(c.breaks_added) - 1} more new site(s)" if len(c.breaks_added) > 1 else ""
            gb.line = f"baseline.no_new_graph_breaks: new {_where(e)} ×{e.count}{tag}{more}"
        gb.details += [f"{_where(e)} ×{e.count}" for e in c.breaks_added]

        na, nb = len(c.a.analysis.recompiles), len(c.b.analysis.recompiles)
        rc.limit = na if not many else "baseline"
        rc.actual = nb if rc.actual is None else max(rc.actual, nb)
        worse = [f for f in c.frames if (f.b.recompiles if f.b else 0) > (f.a.recompiles if f.a else 0)]
        if (nb > na or worse) and rc.ok:
            rc.ok = False
            first = next((r for r in c.recompiles_added), None)
            fr = worse[0] if worse else None
            what = (f"frame {fr.frame} {fr.a.recompiles if fr.a else 0}→{fr.b.recompiles if fr.b else 0}"
                    if fr else "")
            why = f"; first new: {first.frame} {first.compile_id or ''}: {first.primary.text.splitlines()[0]}" \
                if first is not None and first.primary is not None else ""
            rc.line = f"baseline.no_more_recompiles: {na}→{nb} recompile(s){tag}" + (f", {what}" if what else "") + why
        rc.details += [f"{r.frame} {r.compile_id or ''}: {r.primary.text if r.primary else '-'}"
                       for r in c.recompiles_added]

        fl.actual += len(c.failures_new)
        if c.failures_new and fl.ok:
            h = c.failures_new[0]
            ev = h.head.event
            fl.ok = False
            frame = (ev.summary or {}).get("frame")
            fl.line = (f"baseline.no_new_failures: new failure #{ev.index} {ev.lifecycle or ev.frag}"
                       + (f" in frame {frame}" if frame else "")
                       + (f" ({ev.compile_id})" if ev.compile_id else "") + f": {h.reason or '-'}"
                       + (" (recovered)" if h.recovered else "") + tag)

        ta, tb = c.compile_s
        if ta is not None and tb is not None and ta > 0:
            frac = (tb - ta) / ta
            ct.actual = round(frac if ct.actual is None else max(ct.actual, frac), 4)
            if frac > inc and ct.ok:
                slow = max((f for f in c.frames), default=None,
                           key=lambda f: ((f.b.compile_s or 0) if f.b else 0) - ((f.a.compile_s or 0) if f.a else 0))
                sf = ""
                if slow is not None and slow.b is not None:
                    sa = (slow.a.compile_s or 0) if slow.a else 0
                    sf = f"; most: frame {slow.frame} {sa:.2f}s→{slow.b.compile_s or 0:.2f}s"
                ct.ok = False
                ct.line = (f"baseline.max_compile_time_increase: compile time {ta:.2f}s→{tb:.2f}s "
                           f"(+{frac:.0%}), budget +{inc:.0%}{tag}{sf}")
    if ct.actual is None:
        ct.skipped = "no compile time recorded on both sides"
    return [gb, rc, fl, ct]


def _check_new_ids(policy: Policy, pairs: list[tuple[RunModel, RunModel]], many: bool) -> list[Result]:
    """``allow_new_break_ids`` / ``allow_new_recompile_ids`` = false: no worklist id (docs/HEADLESS.md) that
    the baseline run lacks; skipped without ``--baseline``."""
    from magi_tui.model.analysis.worklist import worklist_delta

    out = []
    for key, kind in (("allow_new_break_ids", "graph_break"), ("allow_new_recompile_ids", "recompile")):
        if key not in policy.budget:
            continue
        res = Result(key, policy.budget[key], [])
        out.append(res)
        if not pairs:
            res.skipped = "needs --baseline (the ids are compared with the baseline run's)"
            continue
        if policy.budget[key]:
            continue  # allowed: nothing to check
        for base, run in pairs:
            new = [e for e in worklist_delta(analyse(base), analyse(run))["new"] if e["kind"] == kind]
            res.actual = sorted(set(res.actual) | {e["id"] for e in new})
            if new and res.ok:
                more = f"; and {len(new) - 1} more" if len(new) > 1 else ""
                res.ok = False
                res.line = f"{key}: new {new[0]['id']} ×{new[0]['count_b']} ({new[0]['message']}){_run_tag(run, many)}{more}"
            res.details += [f"{e['id']} ×{e['count_b']}: {e['message']}" for e in new]
    return out


def _check_fail_on(policy: Policy, runs: list[RunModel]) -> list[Result]:
    """One result per name in ``fail_on``: broken when a named rule does not hold (a warn / fail / unknown
    check) or a named kind's condition holds, in any run."""
    many = len(runs) > 1
    out = []
    for name in policy.fail_on:
        res = Result(f"fail_on.{name}", False, 0, rule=None if name in FAIL_ON_KINDS else name)
        for run in runs:
            found = failing(analyse(run), (name,))
            res.actual += len(found)
            res.details += [why for _n, why in found]
            if found and res.ok:
                res.ok = False
                more = f"; and {len(found) - 1} more" if len(found) > 1 else ""
                res.line = f"fail_on.{name}: {found[0][1]}{_run_tag(run, many)}{more}"
        out.append(res)
    return out


def rules_table() -> list[dict[str, str]]:
    """Every name ``--fail-on`` and ``[checks] fail_on`` take: the rules, then the kinds."""
    from magi_tui.model.analysis.checks import RULES

    return ([{"id": r.id, "kind": "information" if r.informs_only else "rule", "what": r.what} for r in RULES]
            + [{"id": k, "kind": "condition", "what": what} for k, (what, _f) in FAIL_ON_KINDS.items()])


def pair_with_baseline(runs: list[RunModel], base: list[RunModel]) -> tuple[list[tuple[RunModel, RunModel]], str | None]:
    """``[(baseline run, run)]``: one to one, else by label, model index and rank."""
    if len(runs) == 1 and len(base) == 1:
        return [(base[0], runs[0])], None

    def key(r: RunModel) -> tuple:
        n = r.name_info
        return (n.tag, n.model_index, n.rank)
    by: dict[tuple, RunModel] = {}
    for r in base:
        by.setdefault(key(r), r)
    pairs = []
    for r in runs:
        b = by.get(key(r))
        if b is None:
            return [], f"no baseline run for {r.path} (runs are paired by label, model index and rank)"
        pairs.append((b, r))
    return pairs, None


def check(runs: list[RunModel], policy: Policy, baseline: list[RunModel] | None = None) -> CheckReport:
    results = _check_run_budgets(policy, runs)
    base = list(baseline or [])
    pairs: list[tuple[RunModel, RunModel]] = []
    if base:
        pairs, problem = pair_with_baseline(runs, base)
        if problem:
            raise PolicyError(problem)
        results += _check_baseline(policy, pairs)
    results += _check_new_ids(policy, pairs, len(runs) > 1)
    results += _check_fail_on(policy, runs)
    for r in results:  # one line per broken budget, whatever the run's text held (a message with newlines)
        r.line = " ".join(r.line.split())
        r.details = [" ".join(d.split()) for d in r.details]
    return CheckReport(runs, policy, results, base)


# -- JUnit ---------------------------------------------------------------------------------------------
def junit_xml(report: CheckReport, suite: str = "magi-tui check") -> str:
    """JUnit XML: one ``<testcase>`` per budget (``failure`` when broken, ``skipped`` when not measured)."""
    n = len(report.results)
    fails = len(report.broken)
    skipped = sum(1 for r in report.results if r.ok and r.skipped)
    runs = ", ".join(str(r.path) for r in report.runs)
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<testsuites name={quoteattr(suite)} tests="{n}" failures="{fails}" errors="0" skipped="{skipped}">',
             f'  <testsuite name={quoteattr(suite)} tests="{n}" failures="{fails}" errors="0" skipped="{skipped}">',
             '    <properties>',
             f'      <property name="runs" value={quoteattr(_xml_safe(runs))}/>',
             f'      <property name="policy" value={quoteattr(_xml_safe(report.policy.source or "(default)"))}/>']
    if report.baseline:
        lines.append(f'      <property name="baseline" value='
                     f'{quoteattr(_xml_safe(", ".join(str(r.path) for r in report.baseline)))}/>')
    lines.append('    </properties>')
    for r in report.results:
        head = f'    <testcase classname="magi-tui.budget" name={quoteattr(r.name)}'
        if r.ok and not r.skipped:
            lines.append(head + ' time="0"/>')
            continue
        lines.append(head + ' time="0">')
        if not r.ok:
            body = "\n".join([r.line, *r.details])
            lines.append(f'      <failure message={quoteattr(_xml_safe(r.line))} type="budget">'
                         f'{escape(_xml_safe(body))}</failure>')
        else:
            lines.append(f'      <skipped message={quoteattr(_xml_safe(r.skipped or ""))}/>')
        lines.append('    </testcase>')
    lines += ['  </testsuite>', '</testsuites>', '']
    return "\n".join(lines)


def _xml_safe(s: str) -> str:
    """What XML 1.0 cannot hold (most controls, lone surrogates, U+FFFE/U+FFFF) and what a terminal or a CI
    page would obey (C1 controls, DEL, bidi overrides) written as ``\\uXXXX``, as the text and JSON do."""
    s = u_escaped(str(s))
    return s.replace("\ufffe", "\\ufffe").replace("\uffff", "\\uffff")