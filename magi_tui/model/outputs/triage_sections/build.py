"""The one walk over the analysis: the sections in order (:data:`SECTIONS`, one function each), each with the
panel's rows (built here) and the text report's lines (:mod:`.report_lines`). A new kind of finding is one
function added to :data:`SECTIONS` at its place."""

from __future__ import annotations

import heapq
from typing import Any, Callable, Iterable

from magi_format.text import fmt_seconds, literal
from magi_tui.model.analysis.checks import Analysis
from magi_tui.model.analysis.checks.tallies import frame_seconds
from magi_tui.model.outputs.triage_sections.data import (
    Row,
    Section,
    Span,
    _Builder,
    _line,
    _more,
    _one,
    frame_calls_text,
)
from magi_tui.model.outputs.triage_sections.report_lines import (
    _cache_report,
    _compile_time_report,
    _failures_report,
    _graph_breaks_report,
    _recompiles_report,
    _restarts_report,
)
from magi_tui.model.run import RunModel


def folded_row(f: Any) -> Row:
    ev = f.event
    return Row([Span("    ↳ ", "dim"), Span(f"#{ev.index:04d} ", "dim"),
                Span(literal(ev.name, 60), "warn" if f.recovered else "bad"),
                Span("  folded: failed with it" + ("  (recovered)" if f.recovered else "  NOT recovered"),
                     "dim" if f.recovered else "worst")], ev, "fail")


def failure_spans(f: Any) -> list[Span]:
    ev = f.event
    out = [Span(f"#{ev.index:04d} ", "dim"), Span(literal(ev.name, 60), "warn" if f.recovered else "worst"),
           # what matters most stands out without colour too (NO_COLOR): bold / reverse, never dim
           Span("  recovered" if f.recovered else "  NOT recovered", "warn" if f.recovered else "alarm")]
    if f.exception_type:
        out.append(Span("  " + literal(f.exception_type, 60), "strong"))
    if f.message:
        out.append(Span(": " + literal(" ".join(f.message.split()), 160)))
    return out



def _program_end(b: _Builder, o: Any, report: bool) -> None:
    """How the program ended, when it did not end well: the exception that reached it (where it came from,
    the user's line, the last lines of its traceback) or Ctrl-C; first, as the first thing to read."""
    e = o.exception
    sec, items = b.section("program_end", "How the program ended", [o], json="outcome")
    origin = {"compile": "torch.compile raised it while compiling",
              "compiled_code": "raised while compiled code ran" if e is None or not e.in_graph else
              "raised inside the compiled graph at run time",
              "program": "the program's own code raised it (outside compiled code)"}
    head = "interrupted (Ctrl-C)" if o.interrupted else f"{e.type}" if e is not None else ""
    exit_text = f"  exit code {o.exit_code}" if o.exit_code is not None else ""
    tail = [ln for ln in (e.traceback.splitlines() if e is not None else []) if ln.strip()][-8:]
    where = None
    if e is not None and (e.call_file or e.file):
        where = f"{e.call_file}:{e.call_line}" if e.call_file else f"{e.file}:{e.line}"
    bisect = (f"magi-tui bisect -- python {o.script or 'your_script.py'}"
              if e is not None and e.origin in ("compile", "compiled_code") else None)
    if report:
        _line(sec, ("  program: ", "strong"), (head, "worst"), exit_text)
        if e is not None:
            _line(sec, f"    {origin.get(e.origin, e.origin)}" + (f" (compile {e.compile_id})" if e.compile_id else ""))
            if e.message:
                _line(sec, f"    {_one(e.message, 300)}")
            if where:
                _line(sec, "    at ", (where, "path"))
            for ln in tail[-4:]:
                _line(sec, (f"    | {_one(ln, 160)}", "dim"))
            if bisect:
                _line(sec, "    → find the layer at fault: ", (bisect, "key"))
    for _ in items:
        spans = [Span(literal(head, 80), "alarm"), Span(exit_text, "dim")]
        if e is not None:
            spans.append(Span(f"\n    {origin.get(e.origin, e.origin)}"
                              + (f" (compile {literal(e.compile_id, 20)})" if e.compile_id else "")))
            if e.message:
                spans.append(Span(f"\n    {literal(' '.join(e.message.split()), 300)}", "strong"))
            if where:
                spans.append(Span(f"\n    at {literal(where, 160)}", "path"))
            spans += [Span(f"\n    | {literal(ln, 160)}", "dim") for ln in tail]
            if bisect:
                spans.append(Span(f"\n    → find the layer at fault: {literal(bisect, 200)}", "good"))
        sec.rows.append(Row(spans, None, "fail"))


#: a frame's place in the compile-time ranking when no panel row is made of it (only the count is used)
_UNRANKED = ("", 0.0)


def _program_ended(b: _Builder, run: RunModel, a: Analysis, report: bool) -> None:
    """How the program ended, when it did not end well (:func:`_program_end`), first."""
    o = a.outcome
    if o is not None and (o.exception is not None or o.interrupted):
        _program_end(b, o, report)


def _failures(b: _Builder, run: RunModel, a: Analysis, report: bool) -> None:
    """Failures: every failed cascade, its head first and the members it folded under it."""
    if a.problems:
        sec, items = b.section("failures", "Failures", a.problems, json="failures")
        if report:
            _failures_report(b, sec, run, a)
        for c in items:
            spans = failure_spans(c.head)
            src = a.failure_sources.get(id(c))
            if src and src[0]:
                spans.append(Span(("\n    raised at " if src[2] == "raised" else "\n    in frame ")
                                  + literal(f"{src[0]}:{src[1]}", 140), "path"))
            sec.rows.append(Row(spans, c.head.event, "fail"))
            sec.rows += [folded_row(m) for m in c.members[1:]]


def _restarts(b: _Builder, run: RunModel, a: Analysis, report: bool) -> None:
    """Dynamo's restarts, recovered or not (a restart's cascade folded under it)."""
    if a.restarts:
        sec, items = b.section("restarts", "Restarts", a.restarts, json="restarts")
        if report:
            _restarts_report(b, sec, run, a)
        for r in items:
            spans = [Span(f"#{r.event.index:04d} ", "dim"), Span(literal(r.event.name, 60), "label"),
                     Span("  recovered" if r.recovered else "  NOT recovered", "warn" if r.recovered else "bad")]
            if r.reason:
                spans.append(Span("  " + literal(r.reason, 160), "dim"))
            sec.rows.append(Row(spans, r.event, "fail" if r.cascade is not None else "restart"))
            if r.cascade is not None:
                sec.rows += [folded_row(m) for m in r.cascade.members[1:]]


def _ran_eagerly(b: _Builder, run: RunModel, a: Analysis, report: bool) -> None:
    """Frames that ran uncompiled (an unsupported graph break, the recompile limit)."""
    o = a.outcome
    if a.ran_eagerly:
        sec, items = b.section("ran_eagerly", "Ran eagerly", a.ran_eagerly, json="ran_eagerly")
        if report:
            o_ok = o is not None and o.exception is None and not o.interrupted and o.exit_code in (0, None)
            _line(sec, f"  ran eagerly: {len(a.ran_eagerly)} frame(s) not compiled"
                  + (" (the program finished)" if o_ok else ""))
            shown, left = b.capped(a.ran_eagerly, 5)
            for e in shown:
                cid = f" [{e.compile_id}]" if e.compile_id else ""
                _line(sec, f"    {_one(e.frame, 100)}{cid}: {e.cause.replace('_', ' ')}: {_one(e.reason, 120)}")
                if e.where:
                    _line(sec, "      at ", (e.where, "path"))
            _more(sec, left)
        for e in items:
            spans = [Span(literal(e.frame, 80), "strong")]
            if e.compile_id:
                spans.append(Span(f" {literal(e.compile_id, 20)}", "dim"))
            spans += [Span(f"  {e.cause.replace('_', ' ')}: ", "key"), Span(literal(e.reason, 160))]
            if e.where:
                spans.append(Span(f"\n    at {literal(e.where, 140)}", "path"))
            sec.rows.append(Row(spans, e.event, "eager"))


def _graph_breaks(b: _Builder, run: RunModel, a: Analysis, report: bool) -> None:
    """The graph-break worklist: each site once, torch's reason, hints and the user's line."""
    if a.worklist:
        sec, items = b.section("graph_breaks", "Graph breaks", a.worklist, json="graph_breaks")
        if report:
            _graph_breaks_report(b, sec, a)
        for gb in items:
            spans = [Span(f"×{gb.count} ", "key")]
            if gb.gb_id:
                spans.append(Span(literal(gb.gb_id, 20) + " ", "dim"))
            spans.append(Span(literal(gb.reason, 120)))
            spans.append(Span(f"\n    at {literal(gb.where, 120)}"
                              + (f" in {literal(gb.function, 60)}" if gb.function else ""), "path"))
            if gb.source_line:
                spans.append(Span(f"\n    {literal(gb.source_line, 120)}", "dim"))
            if gb.in_user_code is False:
                spans.append(Span("\n    in a library", "strong"))
                if gb.call_site:
                    f, ln, fn, _src = gb.call_site
                    spans.append(Span(f" · your call: {literal(f, 100)}:{ln}"
                                      + (f" in {literal(fn, 60)}" if fn else ""), "path"))
            if gb.explanation:
                spans.append(Span(f"\n    why: {literal(gb.explanation, 200)}", "dim"))
            spans += [Span(f"\n    hint: {literal(h, 200)}", "good") for h in gb.hints[:3]]
            if gb.compile_ids:
                spans.append(Span(f"\n    compile ids: {literal(', '.join(gb.compile_ids[:10]), 120)}", "dim"))
            elif gb.resume_fns:
                spans.append(Span(f"\n    evidence: {literal(gb.resume_fns[0], 160)}", "dim"))
            sec.rows.append(Row(spans, gb.events[0] if gb.events else None, "gb"))


def _recompiles(b: _Builder, run: RunModel, a: Analysis, report: bool) -> None:
    """Recompiles, each with torch's reason and the guard that failed."""
    if a.recompiles:
        sec, items = b.section("recompiles", "Recompiles", a.recompiles, json="recompiles")
        if report:
            _recompiles_report(b, sec, a)
        for r in items:
            sec.rows.append(Row(_recompile(r), r.event, "rc"))


def _frames(b: _Builder, run: RunModel, a: Analysis, report: bool) -> None:
    """The compiled frames: compiles, breaks, cache, time and the recompile limit."""
    if a.frames:
        sec, items = b.section("frames", "Frames", a.frames, json="frames")
        if report:
            n_ca = sum(1 for f in a.frames if f.compiled_autograd)
            _line(sec, f"  frames: {len(a.frames) - n_ca}" + (f" and {n_ca} compiled-autograd graph(s)" if n_ca else ""))
            _line(sec, (f"    {'COMPILES':>8} {'BREAKS':>6} {'CACHE h/m/b':>11} {'TIME':>8} {'LIMIT':>5} "
                        f"{'CALLS':>7} {'EAGER':>5}  FRAME", "title"))
            shown, left = b.capped(a.frames, 8)
            for f in shown:
                cache = f"{f.cache_hits}/{f.cache_misses}/{f.cache_bypasses}"
                lim = f"{f.recompile_limit}" + ("!" if f.limit_hit else "")
                calls, eager = frame_calls_text(f)
                _line(sec, f"    {f.compiles:>8} {f.graph_breaks:>6} {cache:>11} {fmt_seconds(f.compile_s):>8} "
                           f"{lim:>5} {calls:>7} {eager:>5}  {_one(f.frame, 100)}")
            _more(sec, left)
        for f in items:
            spans = [Span(f"{f.compiles:>3}× ", "key" if f.compiles > 1 else "dim"), Span(literal(f.frame, 100)),
                     Span(f"  breaks {f.graph_breaks} · cache {f.cache_hits}/{f.cache_misses}/{f.cache_bypasses}"
                          f" · {fmt_seconds(f.compile_s)} · limit {f.recompile_limit}", "dim")]
            if f.limit_hit:
                spans.append(Span("  LIMIT HIT → eager", "worst"))
            sec.rows.append(Row(spans, f.limit_event or f.first_event, "frame"))


def _fallbacks(b: _Builder, run: RunModel, a: Analysis, report: bool) -> None:
    """Silent fallbacks: what ran uncompiled or compiled worse with no error."""
    if a.fallbacks:
        sec, items = b.section("fallbacks", "Silent fallbacks", a.fallbacks, json="fallbacks.items")
        if report:
            b.listed(sec, f"  silent fallbacks: {len(a.fallbacks)} (ran uncompiled or compiled worse, no error)",
                     a.fallbacks, 8, lambda item: f"    {_one(item.text(), 150)}")
        for fb in items:
            spans = [Span(literal(fb.kind, 30), "worst" if fb.calls else "key")]
            if fb.calls is not None:
                spans.append(Span(f"  {fb.calls} eager call(s)", "worst" if fb.calls else "dim"))
            spans.append(Span("  " + literal(fb.what, 160)))
            where = fb.frame or (f"compile {fb.compile_id}" if fb.compile_id else None)
            if where:
                spans.append(Span(f"\n    at {literal(where, 120)}", "path"))
            sec.rows.append(Row(spans, fb.event, "fallback"))


COMPILE_TIME_TITLE = "Where compile time went"


def _frames_ranked(per_frame: dict[str, float], shown: int | None) -> list[tuple[str, float]]:
    """The frames by compile time, slowest first, as ``("frame NAME", seconds)``: only the ``shown`` slowest
    named (a panel section shows that many), the rest counted (:data:`_UNRANKED`), so 100k frames are not
    100k strings made and sorted (nor 100k pairs listed) for the 50 on screen. ``shown`` None: every frame
    (the section expanded)."""
    n_timed = sum(1 for secs in per_frame.values() if secs)
    timed = ((name, secs) for name, secs in per_frame.items() if secs)
    if shown is None or n_timed <= shown:
        top = sorted(timed, key=lambda kv: -kv[1])
    else:
        top = heapq.nlargest(shown, timed, key=lambda kv: kv[1])  # the order sorted() gives, ties too
    return [(f"frame {name}", secs) for name, secs in top] + [_UNRANKED] * (n_timed - len(top))


def _compile_time(b: _Builder, run: RunModel, a: Analysis, report: bool) -> None:
    """Where compile time went (the cache's report lines first, in the text report)."""
    if report:
        _cache_report(b, run, a)
    ct = a.compile_time
    ranked = [(p["phase"], p["seconds"]) for p in ct.get("phases", []) if p.get("seconds")]
    per_frame = frame_seconds(a.frames_found, by_key=False)[0]
    if b.panel:
        ranked += _frames_ranked(per_frame, None if COMPILE_TIME_TITLE in b.expanded else b.cap)
    else:  # only counted (the text and the JSON): no 100k "frame …" strings made and sorted for a number
        ranked += [_UNRANKED] * sum(1 for secs in per_frame.values() if secs)
    ranked += [(f"piece {p['piece']} ({p.get('lifecycle', '')})", p["seconds"])
               for p in ct.get("per_piece", []) if p.get("seconds")]
    if ranked or (report and ct["phases"]):
        top = max((secs for _, secs in ranked), default=0.0)
        sec, items = b.section("compile_time", COMPILE_TIME_TITLE, ranked, panel=bool(ranked))
        if report and ct["phases"]:
            _compile_time_report(b, sec, ct)
        for name, secs in items:
            sec.rows.append(Row([Span(f"{fmt_seconds(secs):>8} ", "strong"),
                                 Span("", "bar", secs / top if top else 0.0), Span(" " + literal(name, 100))],
                                inert=True))
        if ct.get("note") and sec.panel and b.panel:
            sec.note = Row([Span("  " + literal(ct["note"], 200), "dim")], inert=True)


def _finding_lists(b: _Builder, run: RunModel, a: Analysis, report: bool) -> None:
    """Why the cache missed, then the lists of single findings: cache bypasses, misses (each with its factor), skipped stores, recompile-limit hits, the tracer stopping."""
    t = run.triage
    why = _cache_why(b, run)
    lists = (("cache_bypasses", "Cache bypasses", t.cache_bypasses, "cache.bypasses"),
             ("cache_misses", "Cache misses", t.cache_misses, "cache.misses"),
             ("cache_skipped_stores", "Skipped cache stores", t.cache_skipped_stores, "cache.skipped_stores"),
             ("recompile_limit_hits", "Recompile limit hit", t.recompile_limit_hits, "recompile_limit_hits"),
             ("tracer_stopped", "Tracer stopped", t.tracer_stopped, "tracer_stopped"))
    for sid, title, found, where in lists:
        if found:
            sec, items = b.section(sid, title, found, json=where)
            for it in items:
                spans = [Span(f"#{it.event.index:04d} ", "dim"), Span(literal(it.event.short_name, 50))]
                if it.reason:
                    spans.append(Span("  " + literal(it.reason, 160), "warn"))
                factor = why.get(it.event.index) if sid == "cache_misses" else None
                if factor:
                    spans.append(Span("\n    because " + literal(factor, 160), "key"))
                sec.rows.append(Row(spans, it.event, title))


def _open_spans(b: _Builder, run: RunModel, a: Analysis, report: bool) -> None:
    """Lifecycles never closed (a cut-short run)."""
    if run.open_spans:
        sec, items = b.section("open", "Never closed", run.open_spans, json="open")
        if report:
            b.listed(sec, f"  never closed: {len(run.open_spans)}", run.open_spans, 5,
                     lambda sp: f"    #{sp.first.index} {sp.first.name}")
        for s in items:
            sec.rows.append(Row([Span(f"#{s.first.index:04d} ", "dim"), Span(literal(s.first.name, 80)),
                                 Span("  … open", "path")], s.first, "open"))


#: the sections in the order the panel lists them and the report prints them: one function each, that adds
#: its section to the builder when the analysis has something for it
SECTIONS: tuple[Callable[[_Builder, RunModel, Analysis, bool], None], ...] = (
    _program_ended, _failures, _restarts, _ran_eagerly, _graph_breaks, _recompiles, _frames, _fallbacks,
    _compile_time, _finding_lists, _open_spans,
)


def triage_sections(run: RunModel, a: Analysis, cap: int | None = None, expanded: Iterable[str] = (), *,
                    panel: bool = True, report: bool = False, show_all: bool = False) -> list[Section]:
    """The findings of the analysis, section by section, in the order the panel lists them and the
    report prints them. ``panel``: build the panel's rows (a section named by title in ``expanded`` whole,
    the others at most ``cap`` items); ``report``: build the report's lines (``show_all``: every row)."""
    b = _Builder(cap, expanded, panel, report, show_all)
    for section in SECTIONS:
        section(b, run, a, report)
    return b.out


def _cache_why(b: Any, run: RunModel) -> dict[int, str]:
    """The "Why the cache missed" section (the run alone: :mod:`magi_tui.model.analysis.cache_verdict`), and
    each missed lookup's first factor by event index (the miss rows carry it)."""
    t = run.triage
    if not (t.cache_misses or not (t.cache_hits or t.cache_bypasses)) or not run.event_count:
        return {}
    from magi_tui.model.analysis.cache_verdict import cache_miss

    v = cache_miss(run)
    if v.state in ("none", "warm"):
        return {}
    sec, items = b.section("cache_why", "Why the cache missed" if t.cache_misses else "Cache", [v])
    if items:
        role = {"missed": "warn", "disabled": "warn"}.get(v.state, "dim")
        first = v.misses[0].explained.miss.index if v.misses else None
        target = next((it.event for it in t.cache_misses if it.event.index == first), None)
        sec.rows.append(Row([Span(literal(v.text, 200), role)], target, "cache_why", inert=target is None))
        for text in v.factor_texts[1:6]:
            sec.rows.append(Row([Span("  also: " + literal(text, 160), "dim")], inert=True))
    if b.report:
        sec.lines.append([Span("  " + literal(v.text, 200))])
        for text in v.factor_texts[1:]:
            sec.lines.append([Span("    also: " + literal(text, 160))])
    out: dict[int, str] = {}
    for m in v.misses:
        if m.factors:
            f = m.factors[0]
            out[m.explained.miss.index] = f.text + (f" ({m.place})" if m.place and f.kind == "graph" else "")
    return out


def _recompile(r: Any) -> list[Span]:
    spans = [Span(literal(r.frame, 80), "strong")]
    if r.compile_id:
        spans.append(Span(f" {literal(r.compile_id, 20)}", "dim"))
    p = r.primary
    if p is not None:
        spans.append(Span("  " + literal(p.guard, 120), "warn"))
        if p.expected is not None:
            spans.append(Span(f"  expected {literal(p.expected, 40)}"))
            spans.append(Span(f"  actual {literal(p.actual, 40)}" if p.actual is not None else "  actual not recorded"))
        if r.automatic_dynamic:
            spans.append(Span("  automatic dynamic: normal", "dim"))
        if p.suggestion:
            spans.append(Span(f"\n    → {literal(p.suggestion, 200)}", "good"))
        if len(r.reasons) > 1:
            spans.append(Span(f"\n    +{len(r.reasons) - 1} more reason(s) ({literal(', '.join(r.kinds), 80)}): "
                              + literal("; ".join(x.text for x in r.reasons[1:4]), 200), "dim"))
    else:
        spans.append(Span("  reason not recorded", "dim"))
    d = r.guard_diff
    if d is not None and not d.empty:
        head = d.headline()
        if head:  # the changed tokens first; reverse so they stand out without colour too
            spans += [Span("\n    changed: ", "dim"), Span(literal(head, 160), "changed")]
        lines = d.as_json()["changed_lines"][:2]
        for c in lines:
            spans += [Span(f"\n    - {literal(c['older'], 140)}", "bad"), Span(f"\n    + {literal(c['newer'], 140)}", "good")]
        if not lines:
            spans += [Span(f"\n    - {literal(x, 140)}", "bad") for x in d.removed[:2]]
            spans += [Span(f"\n    + {literal(x, 140)}", "good") for x in d.added[:2]]
    elif d is not None:
        spans.append(Span("\n    guards: no difference past the noise (cut at 120 chars)", "dim"))
    return spans


