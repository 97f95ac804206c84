"""The triage findings as data, built once from the analysis: a list of :class:`Section` (title, count,
rows), each :class:`Row` made of plain-text :class:`Span` s with a *role* ('bad', 'warn', 'key',
'path', …) and a navigation target (the event Enter / f / n / p jump to). Pure Python, no Textual: the
triage panel maps roles to styles and rows to list options; a test can read what the panel lists
without starting the app.

The same walk builds the text report's lines (``report=True``: :func:`magi_tui.model.report.triage_text`
prints them) and the section list of ``triage --json`` (``sections``), so the panel, the text and the
JSON cannot disagree on which findings there are, in which order, how many.

Names from the run are made literal in the panel's rows and summary (:func:`magi_format.text.literal`):
a frame called ``[red]x`` is shown as written, never as markup. The report's lines hold the run's text
as it is; the CLI makes the whole report literal when it prints it (newlines in a name kept).

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
         "title", "bar", "info")


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
    """One kind of finding. ``rows`` are the panel's (one per finding, capped at ``cap``), ``lines``
    the text report's (a heading and a few lines per finding, capped at a few unless ``show_all``);
    ``panel`` is false for a section only the report has (the cache summary)."""

    id: str
    title: str
    count: int                      # items in the section (a cascade's folded members are extra rows)
    rows: list[Row] = field(default_factory=list)
    left: int = 0                   # items not built (over the cap)
    note: Row | None = None         # a closing note (shown after the rows)
    lines: list[list[Span]] = field(default_factory=list)
    panel: bool = True
    #: where ``triage --json`` holds this section's items (``cache.misses``); None: not a list there
    json: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "count": self.count, "json": self.json}


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
    def __init__(self, cap: int | None, expanded: Iterable[str], panel: bool, report: bool, show_all: bool) -> None:
        self.cap, self.expanded = cap, set(expanded)
        self.panel, self.report, self.show_all = panel, report, show_all
        self.out: list[Section] = []

    def section(self, sid: str, title: str, items: list, panel: bool = True,
                json: str | None = None) -> tuple[Section, list]:
        sec = Section(sid, title, len(items), panel=panel, json=json)
        self.out.append(sec)
        if not (self.panel and panel):
            return sec, []
        lim = None if title in self.expanded else self.cap
        if lim is not None and len(items) > lim:
            sec.left = len(items) - lim
            items = items[:lim]
        return sec, items

    def capped(self, items: list, n: int) -> tuple[list, int]:
        """The report's few rows of a list, and how many it leaves out (none with ``show_all``)."""
        if self.show_all or len(items) <= n:
            return items, 0
        return items[:n], len(items) - n


def _line(sec: Section, *parts: str | tuple[str, str]) -> None:
    """A report line of ``parts``: plain text, or ``(text, role)``."""
    sec.lines.append([Span(p) if isinstance(p, str) else Span(*p) for p in parts])


def _more(sec: Section, left: int, what: str = "more") -> None:
    if left:
        _line(sec, (f"    ... {left} {what} (--all)", "dim"))


def _one(text: str | None, limit: int = 160) -> str:
    """One line of at most ``limit`` characters (the report's cut; the run's text, not yet literal)."""
    s = " ".join(str(text or "").split())
    return s if len(s) <= limit else s[:limit - 1] + "…"


def _stage(f: Any) -> str:
    ev = f.event
    where = f"subgraph {ev.subgraph_index}" if ev.subgraph_index is not None else "full graph"
    return f"{ev.lifecycle or ev.frag} ({where})"


def frame_calls_text(f: Any) -> tuple[str, str]:
    """A frame's calls served by its compiled entries and its eager calls, ``-`` where nothing counted
    them (model/runtime.py)."""
    return ("-" if f.calls is None else str(f.calls), "-" if f.eager_calls is None else str(f.eager_calls))


def triage_sections(run: RunModel, a: Analysis, cap: int | None = None, expanded: Iterable[str] = (), *,
                    panel: bool = True, report: bool = False, show_all: bool = False) -> list[Section]:
    """The findings of the analysis, section by section, in the order the panel lists them and the
    report prints them. ``panel``: build the panel's rows (a section named by title in ``expanded`` whole,
    the others at most ``cap`` items); ``report``: build the report's lines (``show_all``: every row)."""
    b = _Builder(cap, expanded, panel, report, show_all)
    t = run.triage
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
    if a.ran_eagerly:
        sec, items = b.section("ran_eagerly", "Ran eagerly", a.ran_eagerly, json="ran_eagerly")
        if report:
            _line(sec, f"  ran eagerly: {len(a.ran_eagerly)} frame(s) not compiled (the program finished)")
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
    if a.recompiles:
        sec, items = b.section("recompiles", "Recompiles", a.recompiles, json="recompiles")
        if report:
            _recompiles_report(b, sec, a)
        for r in items:
            sec.rows.append(Row(_recompile(r), r.event, "rc"))
    if a.frames:
        sec, items = b.section("frames", "Frames", a.frames, json="frames")
        if report:
            _line(sec, f"  frames: {len(a.frames)}")
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
    if a.fallbacks:
        sec, items = b.section("fallbacks", "Silent fallbacks", a.fallbacks, json="fallbacks.items")
        if report:
            _line(sec, f"  silent fallbacks: {len(a.fallbacks)} (ran uncompiled or compiled worse, no error)")
            shown, left = b.capped(a.fallbacks, 8)
            for item in shown:
                _line(sec, f"    {_one(item.text(), 150)}")
            _more(sec, left)
        for fb in items:
            spans = [Span(literal(fb.kind, 30), "worst" if fb.calls else "key")]
            if fb.calls is not None:
                spans.append(Span(f"  {fb.calls} eager call(s)", "worst" if fb.calls else "dim"))
            spans.append(Span("  " + literal(fb.what, 160)))
            where = fb.frame or (f"compile {fb.compile_id}" if fb.compile_id else None)
            if where:
                spans.append(Span(f"\n    at {literal(where, 120)}", "path"))
            sec.rows.append(Row(spans, fb.event, "fallback"))
    if report:
        _cache_report(b, run, a)
    ct = a.compile_time
    ranked = [(p["phase"], p["seconds"]) for p in ct.get("phases", []) if p.get("seconds")]
    ranked += [(f"frame {name}", secs) for name, secs in sorted(
        (ct.get("per_frame") or {}).items(), key=lambda kv: -(kv[1] or 0)) if secs]
    ranked += [(f"piece {p['piece']} ({p.get('lifecycle', '')})", p["seconds"])
               for p in ct.get("per_piece", []) if p.get("seconds")]
    if ranked or (report and ct["phases"]):
        top = max((secs for _, secs in ranked), default=0.0)
        sec, items = b.section("compile_time", "Where compile time went", ranked, panel=bool(ranked))
        if report and ct["phases"]:
            _compile_time_report(b, sec, ct)
        for name, secs in items:
            sec.rows.append(Row([Span(f"{fmt_seconds(secs):>8} ", "strong"),
                                 Span("", "bar", secs / top if top else 0.0), Span(" " + literal(name, 100))],
                                inert=True))
        if ct.get("note") and sec.panel and b.panel:
            sec.note = Row([Span("  " + literal(ct["note"], 200), "dim")], inert=True)
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
                sec.rows.append(Row(spans, it.event, title))
    if run.open_spans:
        sec, items = b.section("open", "Never closed", run.open_spans, json="open")
        if report:
            _line(sec, f"  never closed: {len(run.open_spans)}")
            shown, left = b.capped(run.open_spans, 5)
            for sp in shown:
                _line(sec, f"    #{sp.first.index} {sp.first.name}")
            _more(sec, left)
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


# -- the text report's lines, section by section --------------------------------------------------
def _failures_report(b: _Builder, sec: Section, run: RunModel, a: Analysis) -> None:
    probs = a.problems
    ff = first_failure(a)
    ev = ff.head.event
    _line(sec, f"  first failure: #{ev.index} {ev.name}  ",
          ("[recovered]", "warn") if ff.recovered else ("[NOT recovered]", "alarm"))
    _line(sec, f"    stage:     {_stage(ff.head)}")
    src = a.failure_sources.get(id(ff))
    if src and src[0]:
        label = "raised at:" if src[2] == "raised" else "in frame: "
        _line(sec, f"    {label} ", (f"{src[0]}" + (f":{src[1]}" if src[1] is not None else ""), "path"))
    exc = ff.head.exception_type + (f": {ff.head.message}" if ff.head.message else "")
    _line(sec, "    exception: ", (_one(exc) or "-", "strong"))
    if len(ff.members) > 1:
        _line(sec, f"    cascade:   {len(ff.members) - 1} enclosing lifecycle(s) failed with it: "
                   + ", ".join(m.event.lifecycle or m.event.frag for m in ff.members[1:6]))
    if ff.recovered and ff.recovered_by is not None:
        _line(sec, f"    recovered by #{ff.recovered_by.index} {ff.recovered_by.name}")
    _line(sec, "    open:      ", (run.where(ff.head.event, ff.head.folder) or "(this event has no files)", "path"))
    more = [c for c in probs if c is not ff]
    if more:
        rec = sum(1 for c in more if c.recovered)
        _line(sec, f"  other failures: {len(more)} ({rec} recovered)")
        shown, left = b.capped(more, 5)
        for c in shown:
            h = c.head.event
            _line(sec, f"    #{h.index} {h.name}: {_one(c.reason)}" + ("" if not c.recovered else "  [recovered]"))
        _more(sec, left)


def _restarts_report(b: _Builder, sec: Section, run: RunModel, a: Analysis) -> None:
    _line(sec, f"  restarts: {len(a.restarts)} (Dynamo's control flow: it restarts analysis, then retries)")
    shown, left = b.capped(a.restarts, 5)
    for r in shown:
        ev = r.event
        fold = f"  ({len(r.cascade.members) - 1} enclosing failed event(s) folded)" if r.cascade and \
            len(r.cascade.members) > 1 else ""
        cid = f" [{ev.compile_id}]" if ev.compile_id else ""
        _line(sec, f"    #{ev.index} {ev.name}{cid}: {_one(r.reason, 120) or '-'}  "
                   f"[{'recovered' if r.recovered else 'NOT recovered'}]{fold}")
        where = run.where(r.cascade.head.event, r.cascade.head.folder) if r.cascade is not None else None
        if where:
            _line(sec, "      open: ", (where, "path"))
    _more(sec, left)


def _graph_breaks_report(b: _Builder, sec: Section, a: Analysis) -> None:
    show_all = b.show_all
    _line(sec, f"  graph breaks: {len(a.worklist)} site(s), {a.graph_break_total} break(s), most frequent first")
    shown, left = b.capped(a.worklist, 5)
    for gb in shown:
        head = " ".join(x for x in (f"×{gb.count}", gb.gb_id or "", _one(gb.reason, 100)) if x)
        _line(sec, f"    {head}")
        where = gb.where + (f" in {gb.function}" if gb.function else "")
        _line(sec, "      at ", (where, "path"), f":  {_one(gb.source_line, 100)}" if gb.source_line else "")
        if gb.in_user_code is False:
            cs = gb.call_site
            _line(sec, "      in a library" + (f"; your call: {cs[0]}:{cs[1]}" + (f" in {cs[2]}" if cs[2] else "")
                                               + (f":  {_one(cs[3], 100)}" if cs[3] else "") if cs else ""))
        if gb.explanation:
            _line(sec, (f"      why:  {_one(gb.explanation, 160 if not show_all else 4000)}", "dim"))
        for h in gb.hints[:3 if not show_all else None]:
            _line(sec, (f"      hint: {_one(h)}", "good"))
        if gb.compile_ids:
            ids, more_ids = b.capped(gb.compile_ids, 8)
            _line(sec, f"      compile ids: {', '.join(ids)}" + (f" … +{more_ids}" if more_ids else ""))
        if gb.resume_fns and not gb.events:
            _line(sec, f"      evidence: {len(gb.resume_fns)} resume function(s), e.g. {gb.resume_fns[0]}")
    _more(sec, left, "more site(s)")


def _recompiles_report(b: _Builder, sec: Section, a: Analysis) -> None:
    _line(sec, f"  recompiles: {len(a.recompiles)}")
    shown, left = b.capped(a.recompiles, 6)
    for r in shown:
        cid = f" {r.compile_id}" if r.compile_id else ""
        p = r.primary
        if p is not None:
            ea = ""
            if p.expected is not None:  # torch names only the compiled value of e.g. ``n == 3``
                ea = f"expected {p.expected}, actual {p.actual if p.actual is not None else 'not recorded'}"
            ea = f" — {ea}" if ea else ""
            refused = "  [refused: recompile limit reached, runs eagerly]" if r.refused else (
                "  [automatic dynamic: normal]" if r.automatic_dynamic else "")
            _line(sec, f"    {r.frame}{cid}: ", (_one(p.guard, 110), "warn"), f"{ea}{refused}")
            if p.suggestion:
                _line(sec, (f"      → {p.suggestion}", "good"))
            others = r.reasons[1:]
            if others:
                kinds = f" ({', '.join(r.kinds)})" if len(r.kinds) > 1 else ""
                _line(sec, f"      torch gave {len(r.reasons)} reasons (one per cache entry){kinds}:")
                o_shown, o_left = b.capped(others, 3)
                for o in o_shown:
                    _line(sec, f"        {o.entry_compile_id + ': ' if o.entry_compile_id else ''}{_one(o.text, 110)}")
                if o_left:
                    _line(sec, (f"        ... {o_left} more (--all)", "dim"))
        else:
            _line(sec, f"    {r.frame}{cid}: reason not recorded")
        d = r.guard_diff
        if d is not None and not d.empty:
            head = d.headline()
            _line(sec, f"      guards {d.older} → {d.newer}:", *((("  changed: ", ""), (head, "changed")) if head else ()))
            pairs, rm_left = b.capped(list(d.as_json()["changed_lines"]), 2)
            for c in pairs:  # a changed line cut around its change, so - and + differ in view
                _line(sec, (f"        - {_one(c['older'], 4000)}", "bad"))
                _line(sec, (f"        + {_one(c['newer'], 4000)}", "good"))
            changed_old = {x for x, _y, _c in d.changed}
            changed_new = {y for _x, y, _c in d.changed}
            rm, rm_l = b.capped([x for x in d.removed if x not in changed_old], 2)
            ad, ad_l = b.capped([x for x in d.added if x not in changed_new], 2)
            for x in rm:
                _line(sec, (f"        - {_one(x, 120)}", "bad"))
            for x in ad:
                _line(sec, (f"        + {_one(x, 120)}", "good"))
            if rm_left or rm_l or ad_l:
                _line(sec, (f"        ... {rm_left + rm_l + ad_l} more line(s) (--all)", "dim"))
        elif d is not None:
            _line(sec, f"      guards {d.older} → {d.newer}: no difference once addresses and generated "
                       "names are masked (guards.txt cuts each guard at 120 characters: the change may be past the cut)")
    _more(sec, left)


def _cache_report(b: _Builder, run: RunModel, a: Analysis) -> None:
    from magi_tui.model.cache_explain import run_misses_explained

    c = a.cache
    cc = c["counts"]
    if not (cc["hits"] or cc["misses"] or cc["bypasses"] or cc["skipped_stores"]):
        return
    sec, _items = b.section("cache", "Cache", [], panel=False)
    sec.count = cc["hits"] + cc["misses"] + cc["bypasses"] + cc["skipped_stores"]
    _line(sec, f"  cache: {c['state']} — {cc['hits']} hit(s), {cc['misses']} miss(es), "
               f"{cc['bypasses']} bypass(es), {cc['stores']} store(s), {cc['skipped_stores']} skipped store(s)")
    for state in ("miss", "bypass", "skipped_store"):
        rs = c["reasons"].get(state) or {}
        if rs:
            _line(sec, f"    {state} reasons: " + ", ".join(f"{_one(k, 60)} ×{v}" for k, v in list(rs.items())[:4]))
    explained, left = b.capped(run_misses_explained(run), 4)
    for m in explained:
        _line(sec, f"    {_one(m.line(), 150)}")
        for d in m.differs[:3]:
            _line(sec, f"      {_one(d['component'], 50)}: {_one(d['change'], 110)}")
    _more(sec, left, "more miss(es)")


def _compile_time_report(b: _Builder, sec: Section, ct: dict) -> None:
    total = ct["total_s"]
    _line(sec, "  compile time" + (f": {fmt_seconds(total)} in top-level lifecycles" if total else "")
               + " (phases are inclusive)")
    shown, left = b.capped(ct["phases"], 6)
    for ph in shown:
        n = f" ×{ph['count']}" if ph.get("count") else ""
        _line(sec, f"    {fmt_seconds(ph['seconds']):>8}  {ph['phase']}{n}")
    _more(sec, left)
    if ct.get("per_piece"):
        _line(sec, "    per piece: " + ", ".join(
            f"{p['piece']}: {fmt_seconds(p['seconds'])} ({p['lifecycle']})" for p in ct["per_piece"][:8]))


# -- the summary above the findings --------------------------------------------------------------------
#: each check level's mark, in the panel and the text report alike
CHECK_ICONS = {"ok": "✓", "warn": "⚠", "fail": "✗", "unknown": "?"}
CHECK_ROLES = {"ok": "good", "warn": "warn", "fail": "worst"}
STATUS_ROLES = {"failed": "worst", "incomplete": "worst", "recovered": "warn", "degraded": "key", "ok": "good",
                "empty": "warn"}


def first_failure(a: Analysis) -> Any:
    """The failure to look at first: the first not recovered, else the first (a cascade), else None."""
    return next((c for c in a.problems if not c.recovered), a.problems[0] if a.problems else None)


def triage_summary(run: RunModel, a: Analysis) -> list[Span]:
    """The panel's summary: status and counts (a fact the source cannot know is ``?``, never a zero), what
    an empty run means, the checks, and where to look first."""
    out = [Span("Status ", "strong"), Span(a.status.upper(), STATUS_ROLES.get(a.status, "info"))]
    cc = a.cache["counts"]
    nr = a.not_recorded

    def n(fact: str, value: object) -> str:
        return "?" if fact in nr else str(value)
    out.append(Span(f"   {len(run.events)} events · {len(a.problems)} failures · {n('restarts', len(a.restarts))} "
                    f"restarts · {n('recompiles', len(a.recompiles))} recompiles · "
                    f"{n('graph_breaks', a.graph_break_total)} breaks · "
                    + ("cache not recorded\n" if "cache" in nr else
                       f"cache {cc['hits']} hit / {cc['misses']} miss / {cc['bypasses']} bypass\n")))
    if a.empty_note:
        out.append(Span("  " + literal(a.empty_note) + "\n", "warn"))
        if a.log_tail:
            out.append(Span(f"  last lines of {literal(a.log_path or '', 80)}:\n", "dim"))
            out += [Span("    | " + literal(ln, 160) + "\n", "dim") for ln in a.log_tail[-6:]]
    for c in a.checks:
        out += [Span(f"  {CHECK_ICONS.get(c.level, '?')} ", CHECK_ROLES.get(c.level, "")),
                Span(literal(c.message, 300) + "\n")]
    ff = first_failure(a)
    if ff is not None:
        look = ff.head
        out += [Span("Look first: ", "strong"), Span(f"#{look.event.index} {literal(look.event.name, 60)}", "worst")]
        if look.exception_type:
            out.append(Span(f"  {literal(look.exception_type, 50)}"))
        # a run dir's event folder; a log's LOG:line (a log has no folders: it named one inside timeline_events/)
        where = look.folder if run.has_event_folders else run.where(look.event, look.folder)
        if where:
            out.append(Span(f"\n  {literal(where)}", "dim"))
        out.append(Span("   (f jumps there)", "dim"))
    elif a.worklist:
        gb = a.worklist[0]
        out += [Span("Look first: ", "strong"), Span(f"graph break ×{gb.count} at {literal(gb.where, 80)}", "warn")]
    return out
