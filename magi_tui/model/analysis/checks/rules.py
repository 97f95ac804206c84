"""The checks as a list of rules with stable ids: the one registry (:data:`RULES`) that the triage
report, the panel, ``triage --fail-on``, ``check --fail-on`` and a policy's ``[checks] fail_on`` name.

Each rule turns the analysis into zero or more :class:`Check` sentences (``ok`` / ``warn`` / ``fail`` /
``unknown``), in the registry's order, which is the order the report and the panel show them. A rule
*holds* for a run when it gave no ``warn`` / ``fail`` / ``unknown`` check. The ids are a contract
(docs/HEADLESS.md, *Rule ids*): renamed or removed on purpose only.

The older ``--fail-on`` kinds (``recovered``, ``recompile``, ``graph-break``, ``fallback``) stay: they are
conditions on the analysis, not rules, and :data:`FAIL_ON_KINDS` keeps them beside the rules.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Iterable

from msgspec import Struct

from magi_tui.model.analysis.checks.evidence import _see, export_issue_json
from magi_tui.model.analysis.checks.gather import Gatherer
from magi_tui.model.analysis.checks.graph_size import GraphSizes, LargestGraph
from magi_tui.model.analysis.checks.results import Analysis, Check
from magi_tui.model.analysis.frames import CfIndex
from magi_tui.model.run import RunModel
from magi_tui.model.triage import Triage

#: torch.export's issues, what each means in a sentence's words
EXPORT_ISSUE_WORDS = {"data_dependent": "data-dependent expression assumed from real tensors",
                      "data_dependent_error": "data-dependent guard export could not decide",
                      "guard_added": "guard export added on an input's shape",
                      "missing_fake_kernel": "custom op without a fake kernel",
                      "mismatched_fake_kernel": "custom op whose fake kernel disagrees with the real one"}


class Ctx(Struct, frozen=True):
    """What a rule reads: the run, its triage, the analysis (checks not yet made) and the frames of
    ``compiled_functions/`` (:class:`~magi_tui.model.analysis.frames.CfIndex`)."""

    run: RunModel
    a: Analysis
    cf: CfIndex

    @property
    def t(self) -> Triage:
        return self.run.triage

    def evidence(self, gatherer: type[Gatherer]) -> Any:
        """What ``gatherer`` (registered with :func:`~magi_tui.model.analysis.checks.gather.gatherer`) found."""
        return self.a.evidence.get(gatherer.__name__)


class Rule(Struct, frozen=True):
    id: str
    what: str           # one line: what it checks (``check --list-rules``, docs/HEADLESS.md)
    make: Callable[[Ctx], Iterable[Check]]
    #: its checks are all ``ok`` (information): it can never fail, so ``--fail-on`` refuses it
    informs_only: bool = False


_RULES: list[Rule] = []


def rule(rule_id: str, what: str, informs_only: bool = False
         ) -> Callable[[Callable[[Ctx], Iterable[Check]]], Callable[[Ctx], Iterable[Check]]]:
    def add(fn: Callable[[Ctx], Iterable[Check]]) -> Callable[[Ctx], Iterable[Check]]:
        assert all(r.id != rule_id for r in _RULES), rule_id
        _RULES.append(Rule(rule_id, what, fn, informs_only))
        return fn
    return add


# -- the rules, in the order they are shown ----------------------------------------------------------
@rule("source-unreadable", "the run's timeline (or log) can be read")
def _unreadable(c: Ctx) -> Iterable[Check]:
    run = c.run
    if run.error:
        yield Check("fail", f"{run.source_name} cannot be read: {run.error}")


@rule("compiled-nothing", "some compile captured a graph with an op (else the model ran entirely as Python)")
def _compiled_nothing(c: Ctx) -> Iterable[Check]:
    cn = c.a.compiled_nothing
    if cn is None:
        return
    frames = ", ".join(cn.frames[:4]) + (f" and {len(cn.frames) - 4} more" if len(cn.frames) > 4 else "")
    gave = "; ".join(cn.gave_up) if cn.gave_up else "no graph break or restart says why"
    todo = f" → {cn.advice}." if cn.advice else ""
    # the verdict and what to do first: the panel's summary is cut at half its height
    yield Check("warn", f"silent fallback: the model compiled nothing, everything ran eagerly{todo} Every graph "
                        f"Dynamo made in {len(cn.frames)} frame(s) ({frames}) had no op; it gave up at: {gave}",
                cn.event)


def _program_line(path: str | None, line: int | None) -> str:
    return f"{path}:{line}" if path and line is not None else (path or "")


@rule("program-end", "the program ended normally: no Ctrl-C, no exception of torch.compile's or of a compiled "
      "entry reached it, exit code 0 (recorded by our tracer; not recorded in a TORCH_TRACE log)")
def _program_end(c: Ctx) -> Iterable[Check]:
    a = c.a
    o = a.outcome
    if o is None:
        return  # not recorded here: said last, by the rule not-recorded
    code = f" and exited {o.exit_code}" if o.exit_code is not None else ""
    e = o.exception
    if o.interrupted:
        during = ""
        if e is not None and e.origin == "compile":
            during = " while torch.compile was compiling"
        elif e is not None and e.origin == "compiled_code":
            during = f" while compiled code ran ({e.compile_id})"
        yield Check("fail", f"the program was interrupted (Ctrl-C){during}: the run did not finish, so what is "
                            "below is only what was recorded before it")
        return
    if e is not None:
        msg = next((ln.strip() for ln in e.message.splitlines() if ln.strip()), "")
        msg = f": {msg}" if msg else ""
        where = _program_line(e.file, e.line)
        if e.origin == "compile":
            yield Check("fail", f"torch.compile raised {e.short_type} into the program{code}{msg}"
                                + (f" (at {where})" if where else ""))
        elif e.origin == "compiled_code":
            what = "the compiled graph" if e.in_graph else "code called from a compiled frame"
            call = _program_line(e.call_file, e.call_line)
            script = o.script or "your_script.py"
            yield Check("fail", f"{what} of compile {e.compile_id} raised {e.short_type} at run time{msg}"
                                + (f" (called at {call})" if call else "")
                                + f"; find the layer at fault: magi-tui bisect -- python {script}"
                                + (f"; the program exited {o.exit_code}" if o.exit_code is not None else ""))
        else:
            yield Check("warn", f"the program raised {e.short_type} outside compiled code{code}{msg}"
                                + (f" (at {where})" if where else ""))
    elif o.exit_code not in (0, None):
        yield Check("warn", f"the program exited with code {o.exit_code} (no exception reached it)")
    elif o.exit_code == 0:
        yield Check("ok", "the program exited 0")
    else:
        yield Check("ok", "the traced block ended without an exception (the program's exit code is not known "
                          "inside explain_compilation)")


@rule("nothing-recorded", "something was recorded (else Dynamo failed before the backend ran, or a warm cache)")
def _nothing_recorded(c: Ctx) -> Iterable[Check]:
    a = c.a
    if a.status == "empty" and a.not_recorded:
        yield Check("warn", "nothing in this TORCH_COMPILE_DEBUG folder: every graph came from a warm "
                            "cache (a cache hit writes no debug files) or nothing was compiled")
    elif a.status == "empty":
        cf_n = sum(1 for f in c.cf.frames if f.compiles)
        extra = (f"; compiled_functions/ shows {cf_n} compiled frame(s), so the compile ran without "
                 "reaching the recorded hooks (a warm cache)" if cf_n else
                 "; no compiled_functions/ either")
        yield Check("warn", "nothing recorded: Dynamo failed before the backend ran, or every compile "
                            "was served from a warm cache" + extra)


@rule("failures", "every failure was recovered (retried)")
def _failures(c: Ctx) -> Iterable[Check]:
    problems = c.t.problems
    unrec = [x for x in problems if not x.recovered]
    raised = [f for f in c.a.frames if f.limit_raised]
    for f in raised:
        yield Check("fail", f"frame {f.frame} hit its recompile limit ({f.recompile_limit}) and torch raised "
                            "FailOnRecompileLimitHit into the program (fail_on_recompile_limit_hit or "
                            "fullgraph=True: a hard failure, not an eager fallback)", f.limit_event)
    o = c.a.outcome
    if unrec:
        h = unrec[0].head
        yield Check("fail", f"{len(unrec)} failure(s) not recovered; first: #{h.event.index} "
                            f"{h.event.lifecycle or h.event.frag}: {unrec[0].reason or '-'}", h.event)
    elif problems:
        yield Check("ok", f"{len(problems)} failure(s), all recovered (retried)", problems[0].head.event)
    elif c.run.event_count and not raised and not (o is not None and o.torch_failed):
        yield Check("ok", "no failures")


@rule("restarts", "every Dynamo restart recovered")
def _restarts(c: Ctx) -> Iterable[Check]:
    t = c.t
    if t.restarts:
        bad = [r for r in t.restarts if not r.recovered]
        folded = sum(len(r.cascade.members) - 1 for r in t.restarts if r.cascade is not None)
        fold = f" ({folded} enclosing failed event(s) folded under them)" if folded else ""
        if bad:
            yield Check("fail", f"{len(bad)} of {len(t.restarts)} Dynamo restart(s) never recovered{fold}",
                        bad[0].event)
        else:
            yield Check("ok", f"{len(t.restarts)} Dynamo restart(s), all recovered: Dynamo's control "
                              f"flow, not failures{fold}", t.restarts[0].event)


@rule("incomplete", "the compile was not cut short (lifecycles left open, the tracer stopped, a cut last line)")
def _incomplete(c: Ctx) -> Iterable[Check]:
    a, t, run = c.a, c.t, c.run
    for why in a.incomplete_reasons:
        ev = t.tracer_stopped[0].event if "tracer" in why and t.tracer_stopped else (
            run.open_spans[0].first if run.open_spans and "never closed" in why else None)
        yield Check("fail" if a.status == "incomplete" else "warn", why, ev)


@rule("tracer-drops", "our tracer recorded every record it met (a hook that could not handle one drops that record, "
      "counted in the run's session.json, and goes on)")
def _tracer_drops(c: Ctx) -> Iterable[Check]:
    info = c.run.tracer_info
    if info is None or not info.dropped_records:
        return
    first = info.drop_errors[0] if info.drop_errors else None
    what = (f"; first: {first.where}: {first.error}" + (f" (a {first.record} record)" if first.record else "")
            if first is not None else "")
    yield Check("warn", f"the tracer dropped {info.dropped_records} record(s) it could not handle{what}; the rest "
                        "of the run is recorded (a TORCH_TRACE log of the same run has them)")


@rule("compile-worker", "Inductor's compile worker stayed alive (torch 2.14+ records its sidecar's death, with the "
      "tail of its output)")
def _compile_worker(c: Ctx) -> Iterable[Check]:
    died = c.t.workers_died
    if died:
        a = c.run.attributes(died[0].event)
        who = f"pid {a.get('pid')}, returncode {a.get('returncode')}" if a.get("pid") is not None else "sidecar"
        yield Check("fail", f"Inductor's compile worker died {len(died)}× ({who}); its output ended: "
                            f"{died[0].reason or '(nothing)'}", died[0].event)


def _auto_other(a: Analysis) -> tuple[list, list]:
    """Recompiles that are torch's automatic dynamic shapes, and the others (another function through a
    shared wrapper aside: :func:`_shared_wrapper`)."""
    return ([r for r in a.recompiles if r.automatic_dynamic],
            [r for r in a.recompiles if not r.automatic_dynamic and not _through_wrapper(r)])


def _through_wrapper(r: Any) -> bool:
    """Another function came through the frame (a decorator's wrapper several functions share): a compile
    of its own, not a recompile of the same code once warmed up."""
    return bool(r.functions_changed) and not r.refused


@rule("automatic-dynamic", "recompiles that were torch's automatic dynamic shapes (the normal path; never a warning)",
      informs_only=True)
def _automatic_dynamic(c: Ctx) -> Iterable[Check]:
    auto, _other = _auto_other(c.a)
    if auto:
        env = ",".join(dict.fromkeys(s for r in auto for s in r.dynamic_sources))
        what = ", ".join(dict.fromkeys(r.primary.kind for r in auto if r.primary is not None))
        start = f'; to compile dynamic from the start: TORCH_COMPILE_DYNAMIC_SOURCES="{env}"' if env else ""
        yield Check("ok", f"{len(auto)} recompile(s) were torch's automatic dynamic shapes (a {what} changed "
                          f"once and is dynamic from then on: the normal path){start}", auto[0].event)


@rule("shared-wrapper", "recompiles that were another function through one wrapper frame several functions "
      "share (each compiles its own entry; never a warning)", informs_only=True)
def _shared_wrapper(c: Ctx) -> Iterable[Check]:
    shared = [r for r in c.a.recompiles if not r.automatic_dynamic and _through_wrapper(r)]
    if shared:
        frames = ", ".join(dict.fromkeys(r.frame for r in shared))
        yield Check("ok", f"{len(shared)} recompile(s) were another function through one wrapper frame "
                          f"({frames}): each function compiles its own entry of it (expected), and all of "
                          "them count against that frame's one recompile limit", shared[0].event)


@rule("recompiles", "no recompile once warmed up (automatic dynamic shapes and other functions through a "
      "shared wrapper aside)")
def _recompiles(c: Ctx) -> Iterable[Check]:
    a = c.a
    auto, other = _auto_other(a)
    if other:
        n_frames = len({r.frame_key or r.frame for r in other})
        kinds = Counter(k for r in other for k in r.kinds)  # every cache entry's reason, not the first only
        top = ", ".join(f"{k} ×{n}" for k, n in kinds.most_common(4))
        yield Check("warn", f"{len(other)} recompile(s) in {n_frames} frame(s)"
                            + (f" ({top})" if top else "") + " — expected none once warmed up",
                    other[0].event)
    elif "recompiles" in a.not_recorded:
        pass  # one "not recorded here" line below
    elif a.frames and not a.recompiles:
        yield Check("ok", "no recompiles")


@rule("compiles-per-frame", "each frame compiled once (one automatic-dynamic recompile allowed, and one "
      "compile per other function through a shared wrapper)")
def _compiles_per_frame(c: Ctx) -> Iterable[Check]:
    a = c.a
    auto, other = _auto_other(a)
    bad = {r.frame_key for r in other}
    auto_keys = {r.frame_key for r in auto}
    shared = Counter(r.frame_key for r in a.recompiles if not r.automatic_dynamic and _through_wrapper(r))
    # the compiles a frame may have: one, one automatic-dynamic recompile, one per other function
    many = [f for f in a.frames if f.compiles > 1 and (
        f.key in bad or f.compiles > 1 + (f.key in auto_keys) + shared[f.key])]
    if many:
        f = max(many, key=lambda r: r.compiles)
        more = f" (and {len(many) - 1} more frame(s))" if len(many) > 1 else ""
        yield Check("warn", f"frame {f.frame} compiled {f.compiles}× — expected once per frame{more}",
                    f.first_event)
    elif a.frames and a.compiled_nothing is None:  # one compile each of nothing is no good news
        extra = ["one automatic-dynamic recompile"] if auto_keys - bad else []
        if shared:
            extra.append(f"{sum(shared.values())} other function(s) through a shared wrapper")
        plus = f" (and {', and '.join(extra)})" if extra else ""
        n_ca = sum(1 for f in a.frames if f.compiled_autograd)
        ca = f" and {n_ca} compiled-autograd graph(s)" if n_ca else ""
        yield Check("ok", f"{len(a.frames) - n_ca} frame(s){ca}, one compile each{plus}")


@rule("ran-eagerly", "no frame ran eagerly (uncompiled after an unsupported graph break or the recompile limit)")
def _ran_eagerly(c: Ctx) -> Iterable[Check]:
    a = c.a
    if a.ran_eagerly:
        first = a.ran_eagerly[0]
        where = f" at {first.where}" if first.where else ""
        causes = Counter(e.cause.replace("_", " ") for e in a.ran_eagerly)
        yield Check("warn", f"{len(a.ran_eagerly)} frame(s) ran eagerly ("
                            + ", ".join(f"{k} ×{n}" for k, n in causes.items())
                            + f"); first: {first.frame}{where}: {first.reason}. {_finished(c.a)}these frames "
                            "were not compiled", first.event)


def _finished(a: Analysis) -> str:
    """"The program finished; " only when its end was recorded and it ended well."""
    o = a.outcome
    return "The program finished; " if o is not None and o.exception is None and o.exit_code in (0, None) \
        and not o.interrupted else ""


@rule("recompile-limit", "no frame (that did not hit it) compiled as often as its recompile limit")
def _recompile_limit(c: Ctx) -> Iterable[Check]:
    for f in c.a.frames:
        if f.limit_hit:
            continue
        elif f.compiles >= f.recompile_limit:
            yield Check("warn", f"frame {f.frame} compiled {f.compiles}×, at the recompile limit "
                                f"({f.recompile_limit})", f.first_event)


@rule("graph-breaks", "no graph break")
def _graph_breaks(c: Ctx) -> Iterable[Check]:
    a = c.a
    if a.worklist:
        first = a.worklist[0]
        yield Check("warn", f"{len(a.worklist)} graph-break site(s), {a.graph_break_total} break(s); "
                            f"most: {first.reason} at {first.where} ×{first.count}",
                    first.events[0] if first.events else None)
    elif "graph_breaks" in a.not_recorded:
        pass
    elif c.run.event_count or c.cf.frames:
        yield Check("ok", "no graph breaks")


#: key components a recompile changes by itself (the same graph traced for new inputs): a miss that differs only
#: in them is the recompile's, said by the recompile rules, not a cache problem
_RECOMPILE_COMPONENTS = ("example_inputs", "gm", "aot_config", "shape_env", "fx_kwargs", "inputs_to_check")


@rule("fix-proven", "what magi-tui fix proved for this program (information: its kept changes, in its words)",
      informs_only=True)
def _fix_proven(c: Ctx) -> Iterable[Check]:
    for p in c.a.fix_proofs[:3]:
        yield Check("ok", f"magi-tui fix proved: {p.change} ({p.why}){' — its best change' if p.best else ''}; "
                          f"{p.fix_json}")


@rule("cache-misses", "no graph missed the cache because something in its key changed since the last run of "
                      "this program with the same cache directory (or earlier in this run)")
def _cache_misses(c: Ctx) -> Iterable[Check]:
    counts = c.a.cache["counts"]
    h, m = counts["hits"], counts["misses"]
    first_miss = c.t.cache_misses[0].event if c.t.cache_misses else None
    if m:
        # the baseline is found by itself (model/analysis/cache_baseline.py): the last earlier run of this
        # program that used the same cache directory; no such run: cold, never "missed because of X"
        from magi_tui.model.analysis.cache_verdict import cache_miss  # here: only a run with a miss reads keys

        v = cache_miss(c.run)
        if v.state == "missed" and v.factor_texts:
            yield Check("warn", v.text + f"; {h} hit(s), {m} miss(es) in all", first_miss)
            return
        changed = [x.factors for x in v.misses if x.explained.where == "same_run" and x.explained.same_graph
                   and any(not d["component"].startswith(_RECOMPILE_COMPONENTS) for d in x.explained.differs)]
        if changed:
            names = "; ".join(list(dict.fromkeys(f.text for fs in changed for f in fs
                                                 if f.kind not in ("graph", "input")))[:3])
            yield Check("warn", f"cache: {len(changed)} miss(es) of a graph looked up before in this run under "
                                f"another key ({names}); {h} hit(s), {m} miss(es) in all", first_miss)
        else:
            yield Check("ok", f"{v.text}; {h} hit(s), {m} miss(es)", first_miss)
    elif h:
        yield Check("ok", f"cache warm: {h} hit(s), no misses")
    elif not counts["bypasses"] and c.run.event_count:
        from magi_tui.model.analysis.cache_verdict import cache_miss

        v = cache_miss(c.run)
        if v.state == "disabled":
            yield Check("ok", v.text)


@rule("cache-bypassed", "the cache was never bypassed (not consulted: neither hit nor miss)")
def _cache_bypassed(c: Ctx) -> Iterable[Check]:
    a = c.a
    b = a.cache["counts"]["bypasses"]
    if b:
        rs = ", ".join(f"{r} ×{n}" for r, n in Counter(a.cache["reasons"]["bypass"]).most_common(3))
        yield Check("warn", f"cache bypassed {b}× (not consulted, neither hit nor miss): {rs}",
                    c.t.cache_bypasses[0].event)


@rule("cache-never-hits", "no frame whose every cache lookup bypassed the cache")
def _cache_never_hits(c: Ctx) -> Iterable[Check]:
    for f in c.a.frames:
        if f.never_hits_cache:
            rs = ", ".join(r for r, _ in f.bypass_reasons.most_common(2))
            yield Check("warn", f"frame {f.frame} can never hit the cache: every lookup bypassed it ({rs})",
                        f.first_event)


@rule("cache-skipped-stores", "no cache store was skipped")
def _cache_skipped_stores(c: Ctx) -> Iterable[Check]:
    t, a = c.t, c.a
    if t.cache_skipped_stores:
        rs = ", ".join(f"{r} ×{n}" for r, n in Counter(a.cache["reasons"]["skipped_store"]).most_common(3))
        yield Check("warn", f"{len(t.cache_skipped_stores)} cache store(s) skipped: {rs}",
                    t.cache_skipped_stores[0].event)


@rule("export-issues", "torch.export raised no issue (data-dependent guesses, missing fake kernels, …)")
def _export_issues(c: Ctx) -> Iterable[Check]:
    if c.t.export_issues:
        yield export_issues_check(c.run, c.t.export_issues)


@rule("malformed-lines", "every line of the timeline (or log) could be read")
def _malformed(c: Ctx) -> Iterable[Check]:
    run = c.run
    if run.malformed:
        yield Check("warn", f"{len(run.malformed)} malformed line(s) in {run.source_name}")


#: a captured graph above this many ops (torch's graph_op_count) is named by ``big-graph``
BIG_GRAPH_OPS = 5000


@rule("big-graph", f"no compile captured a graph of more than {BIG_GRAPH_OPS:,} ops (torch's graph_op_count)")
def _big_graph(c: Ctx) -> Iterable[Check]:
    g: LargestGraph | None = c.evidence(GraphSizes)
    if g is None or g.ops <= BIG_GRAPH_OPS:
        return
    among = f" (the first {g.compiles_read:,} compiles read)" if g.more else ""
    yield Check("warn", f"compile {g.compile_id or '?'} captured a graph of {g.ops:,} ops, more than {BIG_GRAPH_OPS:,}"
                        f"{among}: a graph's compile time and memory grow with its size", g.event)


@rule("not-recorded", "the source records graph breaks, recompiles, restarts, the cache (a TORCH_COMPILE_DEBUG "
                      "folder does not) and how the program ended (only our tracer's runs do)")
def _not_recorded(c: Ctx) -> Iterable[Check]:
    a = c.a
    if a.not_recorded:
        what = ", ".join(x.replace("_", " ") for x in ("graph_breaks", "recompiles", "restarts", "cache")
                         if x in a.not_recorded)
        yield Check("unknown", f"{what}: not recorded here" + _see(a))
    if a.outcome is None and a.outcome_unknown and c.run.event_count:
        yield Check("unknown", f"how the program ended: not recorded here ({a.outcome_unknown})")
    info = c.run.tracer_info
    if info is not None and info.not_recorded:
        on = f"torch {info.torch}" if info.torch else "this torch"
        yield Check("unknown", f"not recorded here: {on} gave the tracer no hook for " + "; ".join(info.not_recorded[:4])
                    + (f" and {len(info.not_recorded) - 4} more" if len(info.not_recorded) > 4 else ""))


#: every rule, in the order its checks are shown: the one registry of rule ids
RULES: tuple[Rule, ...] = tuple(_RULES)
RULE_IDS: tuple[str, ...] = tuple(r.id for r in RULES)


def run_rules(run: RunModel, a: Analysis, cf: CfIndex) -> list[Check]:
    """The checks of the analysis, rule by rule, each tagged with its rule's id."""
    ctx = Ctx(run, a, cf)
    out: list[Check] = []
    for r in RULES:
        for check in r.make(ctx):
            check.rule = r.id
            out.append(check)
    if a.status == "empty":  # nothing recorded is never a green check
        out = [x for x in out if x.level != "ok"]
    return out


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


# -- naming rules from --fail-on and a policy ----------------------------------------------------------
#: the older ``--fail-on`` kinds: conditions on the analysis (docs/HEADLESS.md), kept working
FAIL_ON_KINDS: dict[str, tuple[str, Callable[[Analysis], bool]]] = {
    "recovered": ("a run whose status is recovered (it restarted or retried)", lambda a: a.status == "recovered"),
    "recompile": ("any recompile", lambda a: bool(a.recompiles)),
    "graph-break": ("any graph break", lambda a: bool(a.worklist)),
    "fallback": ("any frame that ran eagerly", lambda a: bool(a.ran_eagerly)),
}


class UnknownRule(ValueError):
    """A name that is neither a rule id nor a ``--fail-on`` kind (exit 2)."""


def parse_fail_on(value: str | Iterable[str] | None, what: str = "--fail-on") -> tuple[str, ...]:
    """The rule ids and kinds named (comma-separated, or a list), in order, once each; an unknown name
    raises :class:`UnknownRule` with one line that lists the known ones."""
    items = value.split(",") if isinstance(value, str) else list(value or ())
    names = list(dict.fromkeys(str(w).strip() for w in items if str(w).strip()))
    bad = [n for n in names if n not in RULE_IDS and n not in FAIL_ON_KINDS]
    if bad:
        ids = [r.id for r in RULES if not r.informs_only]
        raise UnknownRule(f"{what}: unknown {', '.join(bad)} (rule ids: {', '.join(ids)}; "
                          f"kinds: {', '.join(FAIL_ON_KINDS)}; magi-tui check --list-rules)")
    info = [r.id for r in RULES if r.informs_only and r.id in names]
    if info:
        raise UnknownRule(f"{what}: {', '.join(info)} only informs (its checks are ok): it can never fail; "
                          "the kind recompile fails on any recompile")
    return tuple(names)


def failing(a: Analysis, names: Iterable[str]) -> list[tuple[str, str]]:
    """``[(name, why)]``: the named rules that do not hold for this analysis (each warn / fail /
    unknown check of theirs) and the named kinds whose condition holds."""
    out: list[tuple[str, str]] = []
    for n in names:
        if n in FAIL_ON_KINDS:
            what, holds = FAIL_ON_KINDS[n]
            if holds(a):
                out.append((n, what))
            continue
        out += [(n, c.message) for c in a.checks if c.rule == n and c.level != "ok"]
    return out
