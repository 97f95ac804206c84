"""The triage findings as data, built once from the analysis: a list of :class:`Section` (title, count,
rows), each :class:`Row` made of plain-text :class:`Span` s with a *role* ('bad', 'warn', 'key',
'path', …) and a navigation target (the event Enter / f / n / p jump to). Pure Python, no Textual: the
triage panel maps roles to styles and rows to list options; a test can read what the panel lists
without starting the app.

Names from the run are made literal here (:func:`magi_format.text.literal`): a frame called
``[red]x`` is shown as written, never as markup, whatever renders the spans.

A section builds at most ``cap`` rows (a recompile storm must not cost a row per recompile) unless it
is in ``expanded``; :attr:`Section.left` says how many items it left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from magi_format.text import fmt_seconds, literal
from magi_tui.model.checks import Analysis
from magi_tui.model.events import Event
from magi_tui.model.run import RunModel

#: every role a span may have; a renderer maps each to its own look (the panel: a Rich style)
ROLES = ("", "dim", "label", "warn", "bad", "strong", "key", "path", "good", "worst", "changed", "alarm",
         "title", "bar")


@dataclass(frozen=True)
class Span:
    text: str
    role: str = ""
    #: a ``bar`` span's fill (0…1); its text is empty: the renderer draws it
    value: float | None = None


@dataclass
class Row:
    """One finding: its spans (a ``\\n`` inside a span starts a continuation line), the event it jumps
    to (None: not a place) and the navigation family of that jump (``fail``, ``restart``, ``gb``, …:
    f / n / p find a failure's or restart's row by it)."""

    spans: list[Span]
    target: Event | None = None
    nav: str = ""
    #: shown, never chosen (a note, a ranked time); a row without a target is never chosen either
    inert: bool = False

    @property
    def text(self) -> str:
        return "".join(s.text for s in self.spans)


@dataclass
class Section:
    id: str
    title: str
    count: int                      # items in the section (a cascade's folded members are extra rows)
    rows: list[Row] = field(default_factory=list)
    left: int = 0                   # items not built (over the cap)
    note: Row | None = None         # a closing note (shown after the rows)


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


class _Builder:
    def __init__(self, cap: int | None, expanded: Iterable[str]) -> None:
        self.cap, self.expanded = cap, set(expanded)
        self.out: list[Section] = []

    def section(self, sid: str, title: str, items: list) -> tuple[Section, list]:
        sec = Section(sid, title, len(items))
        self.out.append(sec)
        lim = None if title in self.expanded else self.cap
        if lim is not None and len(items) > lim:
            sec.left = len(items) - lim
            items = items[:lim]
        return sec, items


def triage_sections(run: RunModel, a: Analysis, cap: int | None = None,
                    expanded: Iterable[str] = ()) -> list[Section]:
    """The findings of the analysis, section by section, in the order the panel lists them. A section
    named (by title) in ``expanded`` is built whole; the others build at most ``cap`` items."""
    b = _Builder(cap, expanded)
    t = run.triage
    if a.problems:
        sec, items = b.section("failures", "Failures", a.problems)
        for c in items:
            spans = failure_spans(c.head)
            src = a.failure_sources.get(id(c))
            if src and src[0]:
                spans.append(Span(("\n    raised at " if src[2] == "raised" else "\n    in frame ")
                                  + literal(f"{src[0]}:{src[1]}", 140), "path"))
            sec.rows.append(Row(spans, c.head.event, "fail"))
            sec.rows += [folded_row(m) for m in c.members[1:]]
    if a.restarts:
        sec, items = b.section("restarts", "Restarts", a.restarts)
        for r in items:
            spans = [Span(f"#{r.event.index:04d} ", "dim"), Span(literal(r.event.name, 60), "label"),
                     Span("  recovered" if r.recovered else "  NOT recovered", "warn" if r.recovered else "bad")]
            if r.reason:
                spans.append(Span("  " + literal(r.reason, 160), "dim"))
            sec.rows.append(Row(spans, r.event, "fail" if r.cascade is not None else "restart"))
            if r.cascade is not None:
                sec.rows += [folded_row(m) for m in r.cascade.members[1:]]
    if a.ran_eagerly:
        sec, items = b.section("ran_eagerly", "Ran eagerly", a.ran_eagerly)
        for e in items:
            spans = [Span(literal(e.frame, 80), "strong")]
            if e.compile_id:
                spans.append(Span(f" {literal(e.compile_id, 20)}", "dim"))
            spans += [Span(f"  {e.cause.replace('_', ' ')}: ", "key"), Span(literal(e.reason, 160))]
            if e.where:
                spans.append(Span(f"\n    at {literal(e.where, 140)}", "path"))
            sec.rows.append(Row(spans, e.event, "eager"))
    if a.worklist:
        sec, items = b.section("graph_breaks", "Graph breaks", a.worklist)
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
    if a.recompiles:
        sec, items = b.section("recompiles", "Recompiles", a.recompiles)
        for r in items:
            sec.rows.append(Row(_recompile(r), r.event, "rc"))
    if a.frames:
        sec, items = b.section("frames", "Frames", a.frames)
        for f in items:
            spans = [Span(f"{f.compiles:>3}× ", "key" if f.compiles > 1 else "dim"), Span(literal(f.frame, 100)),
                     Span(f"  breaks {f.graph_breaks} · cache {f.cache_hits}/{f.cache_misses}/{f.cache_bypasses}"
                          f" · {fmt_seconds(f.compile_s)} · limit {f.recompile_limit}", "dim")]
            if f.limit_hit:
                spans.append(Span("  LIMIT HIT → eager", "worst"))
            sec.rows.append(Row(spans, f.limit_event or f.first_event, "frame"))
    if a.fallbacks:
        sec, items = b.section("fallbacks", "Silent fallbacks", a.fallbacks)
        for fb in items:
            spans = [Span(literal(fb.kind, 30), "worst" if fb.calls else "key")]
            if fb.calls is not None:
                spans.append(Span(f"  {fb.calls} eager call(s)", "worst" if fb.calls else "dim"))
            spans.append(Span("  " + literal(fb.what, 160)))
            where = fb.frame or (f"compile {fb.compile_id}" if fb.compile_id else None)
            if where:
                spans.append(Span(f"\n    at {literal(where, 120)}", "path"))
            sec.rows.append(Row(spans, fb.event, "fallback"))
    ct = a.compile_time
    ranked = [(p["phase"], p["seconds"]) for p in ct.get("phases", []) if p.get("seconds")]
    ranked += [(f"frame {name}", secs) for name, secs in sorted(
        (ct.get("per_frame") or {}).items(), key=lambda kv: -(kv[1] or 0)) if secs]
    ranked += [(f"piece {p['piece']} ({p.get('lifecycle', '')})", p["seconds"])
               for p in ct.get("per_piece", []) if p.get("seconds")]
    if ranked:
        top = max(secs for _, secs in ranked)
        sec, items = b.section("compile_time", "Where compile time went", ranked)
        for name, secs in items:
            sec.rows.append(Row([Span(f"{fmt_seconds(secs):>8} ", "strong"),
                                 Span("", "bar", secs / top if top else 0.0), Span(" " + literal(name, 100))],
                                inert=True))
        if ct.get("note"):
            sec.note = Row([Span("  " + literal(ct["note"], 200), "dim")], inert=True)
    lists = (("cache_bypasses", "Cache bypasses", t.cache_bypasses), ("cache_misses", "Cache misses", t.cache_misses),
             ("cache_skipped_stores", "Skipped cache stores", t.cache_skipped_stores),
             ("recompile_limit_hits", "Recompile limit hit", t.recompile_limit_hits),
             ("tracer_stopped", "Tracer stopped", t.tracer_stopped))
    for sid, title, found in lists:
        if found:
            sec, items = b.section(sid, title, found)
            for it in items:
                spans = [Span(f"#{it.event.index:04d} ", "dim"), Span(literal(it.event.short_name, 50))]
                if it.reason:
                    spans.append(Span("  " + literal(it.reason, 160), "warn"))
                sec.rows.append(Row(spans, it.event, title))
    if run.open_spans:
        sec, items = b.section("open", "Never closed", run.open_spans)
        for s in items:
            sec.rows.append(Row([Span(f"#{s.first.index:04d} ", "dim"), Span(literal(s.first.name, 80)),
                                 Span("  … open", "path")], s.first, "open"))
    return b.out


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
