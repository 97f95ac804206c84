"""The text report's lines of each section (``magi-tui triage``): a heading and a few lines per finding,
lists capped at a few rows unless ``--all``."""

from __future__ import annotations

from magi_format.text import fmt_seconds
from magi_tui.model.analysis.checks import Analysis
from magi_tui.model.outputs.triage_sections.data import Section, _Builder, _line, _more, _one, _stage, first_failure
from magi_tui.model.run import RunModel


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
    from magi_tui.model.analysis.cache_explain import run_misses_explained

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


