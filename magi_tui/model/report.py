"""Rows and reports for the headless commands (``magi-tui runs`` / ``magi-tui triage``).

Pure functions from a loaded :class:`RunModel` to JSON-able dicts and short human text. Strings from
the run are passed through as data; the CLI prints them with control characters made visible.
"""

from __future__ import annotations

import time
from typing import Any

from magi_format.text import fmt_seconds as fmt_duration  # the one duration format
from magi_tui.model.cache_explain import run_misses_explained
from magi_tui.model.checks import analyse, export_issue_json, run_status
from magi_tui.model.fallbacks import fallbacks_json
from magi_tui.model.run import RunModel
from magi_tui.model.triage import Cascade, Failure, Restart
from magi_tui.model.worklist import annotate_triage


def fmt_time(ts: float | None) -> str:
    if ts is None:
        return "-"
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
    except (OverflowError, OSError, ValueError):  # a timestamp no clock can show
        return "-"


def run_label(run: RunModel) -> str:
    n = run.name_info
    if n.model_index is not None:
        return f"model_{n.model_index}" + (f" {n.tag}" if n.tag else "")
    return run.path.name


def run_row(run: RunModel) -> dict[str, Any]:
    n = run.name_info
    started = run.started if run.started is not None else n.run_time
    return {
        "path": str(run.path),
        "run_id": n.run_id,
        "label": run_label(run),
        "tag": n.tag,
        "model_index": n.model_index,
        "rank": n.rank,
        "events": run.event_count,
        "failures": len(run.triage.problems),
        "unrecovered_failures": sum(1 for c in run.triage.problems if not c.recovered),
        "restarts": len(run.triage.restarts),
        "status": run_status(run)[0],
        "started": started,
        "started_text": fmt_time(started),
        "duration_s": run.duration_s,
        "malformed_lines": len(run.malformed),
        "has_compiled_functions": run.has_compiled_functions,
        "error": run.error,
    }


def failure_json(f: Failure) -> dict[str, Any]:
    ev = f.event
    return {
        "index": ev.index,
        "name": ev.name,
        "scope": "subgraph" if ev.subgraph_index is not None else "fullgraph",
        "subgraph_index": ev.subgraph_index,
        "lifecycle": ev.lifecycle,
        "compile_id": ev.compile_id,
        "exception_type": f.exception_type,
        "message": f.message,
        "recovered": f.recovered,
        "recovered_by": None if f.recovered_by is None else
        {"index": f.recovered_by.index, "name": f.recovered_by.name},
        "folder": f.folder,
        "line": ev.line_no,
    }


def cascade_json(c: Cascade) -> dict[str, Any]:
    """A failure with the enclosing lifecycles that failed because of it folded under it."""
    out = failure_json(c.head)
    rb = c.recovered_by
    out.update(recovered=c.recovered, restart=c.restart, reason=c.reason,
               recovered_by=None if rb is None else {"index": rb.index, "name": rb.name},
               cascade=[{"index": m.event.index, "name": m.event.name, "lifecycle": m.event.lifecycle,
                         "recovered": m.recovered} for m in c.members[1:]])
    return out


def restart_json(r: Restart) -> dict[str, Any]:
    ev = r.event
    return {"index": ev.index, "name": ev.name, "reason": r.reason, "recovered": r.recovered,
            "compile_id": ev.compile_id, "frame": (ev.summary or {}).get("frame"),
            "folder": r.cascade.head.folder if r.cascade is not None else None,
            "cascade": [{"index": m.event.index, "name": m.event.name, "lifecycle": m.event.lifecycle}
                        for m in r.cascade.members[1:]] if r.cascade is not None else []}


def frame_calls_text(f: Any) -> tuple[str, str]:
    """A frame's calls served by its compiled entries and its eager calls, ``-`` where nothing counted
    them (model/runtime.py)."""
    return ("-" if f.calls is None else str(f.calls), "-" if f.eager_calls is None else str(f.eager_calls))


def triage_json(run: RunModel) -> dict[str, Any]:
    """The headless contract (docs/HEADLESS.md). Lists are never capped here."""
    t = run.triage
    a = analyse(run)
    first = next((c for c in t.cascades if not c.fallback), None)  # a frame that ran eagerly is no failure
    out: dict[str, Any] = {
        "run": str(run.path),
        "status": a.status,
        "events": run.event_count,
        "malformed_lines": len(run.malformed),
        "malformed": [{"line": m.line_no, "reason": m.reason} for m in run.malformed[:50]],
        "partial_last_line": run.partial_line,
        "summary": {"failures": len(a.problems), "unrecovered": sum(1 for c in a.problems if not c.recovered),
                    "failed_events": len(t.failures), "restarts": len(a.restarts),
                    # null: the source cannot know (not_recorded), never a zero
                    "recompiles": None if "recompiles" in a.not_recorded else len(a.recompiles),
                    "graph_breaks": None if "graph_breaks" in a.not_recorded else a.graph_break_total,
                    "graph_break_sites": None if "graph_breaks" in a.not_recorded else len(a.worklist),
                    "frames": len(a.frames),
                    "ran_eagerly": len(a.ran_eagerly),
                    "cache_state": a.cache["state"]},
        "checks": [c.as_json() for c in a.checks],
        "not_recorded": sorted(a.not_recorded),
        "companion_log": a.companion_log,
        "first_failure": cascade_json(first) if first is not None else None,
        "failures": [_with_source(cascade_json(c), a.failure_sources.get(id(c))) for c in a.problems],
        "ran_eagerly": [e.as_json() for e in a.ran_eagerly],
        "restarts": [restart_json(r) for r in a.restarts],
        "graph_breaks": [b.as_json() for b in a.worklist],
        "recompiles": [r.as_json() for r in a.recompiles],
        "frames": [f.as_json() for f in a.frames],
        "cache": {**a.cache, "misses_explained": [m.as_json() for m in run_misses_explained(run)]},
        "compile_time": a.compile_time,
        "runtime": a.runtime.as_json() if a.runtime is not None else None,
        "fallbacks": fallbacks_json(a.fallbacks),
        "recompile_limit_hits": [i.as_json() for i in t.recompile_limit_hits],
        "tracer_stopped": [i.as_json() for i in t.tracer_stopped],
        "export_issues": [export_issue_json(run, i.event) for i in t.export_issues],
        "incomplete_reasons": a.incomplete_reasons,
        "open": [{"index": s.first.index, "name": s.first.name} for s in run.open_spans],
        "empty": None if a.status != "empty" else
        {"note": a.empty_note, "log": a.log_path, "log_tail": a.log_tail},
        "has_compiled_functions": run.has_compiled_functions,
        "error": run.error,
    }
    if not run.has_event_folders:  # a log-backed run has no event folders: "line" says where to look
        for item in ([out["first_failure"]] if out["first_failure"] else []) + out["failures"] + out["restarts"]:
            item["folder"] = None
    return annotate_triage(out, a)


def _with_source(j: dict[str, Any], src: tuple | None) -> dict[str, Any]:
    """A failure's JSON with where it was raised in the user's code (``source``: file, line; null unknown)."""
    j["source"] = None if not src or not src[0] else {"file": src[0], "line": src[1], "what": src[2]}
    return j


def _stage(f: Failure) -> str:
    ev = f.event
    where = f"subgraph {ev.subgraph_index}" if ev.subgraph_index is not None else "full graph"
    return f"{ev.lifecycle or ev.frag} ({where})"


_ICON = {"ok": "✓", "warn": "⚠", "fail": "✗", "unknown": "?"}


def _cap(items: list, show_all: bool, n: int) -> tuple[list, int]:
    if show_all or len(items) <= n:
        return items, 0
    return items[:n], len(items) - n


def _one(text: str | None, limit: int = 160) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= limit else s[:limit - 1] + "…"


def triage_text(run: RunModel, show_all: bool = False) -> str:
    """The report for people: status, the checks, then where to look and why (lists capped at a few
    rows unless ``show_all``)."""
    a = analyse(run)
    lines = [f"{run.path}", f"  status: {a.status}   events: {run.event_count}"
             + (f"   malformed lines: {len(run.malformed)}" if run.malformed else "")
             + ("   (last line incomplete)" if run.partial_line else "")]
    if run.error:
        where = "timeline_events/timeline.jsonl" if run.source_name == "timeline.jsonl" else run.source_name
        lines.append(f"  {where} cannot be read: {run.error}")
    if a.status == "empty":
        lines.append(f"  {a.empty_note}")
        if a.log_tail:
            lines.append(f"  last lines of {a.log_path}:")
            lines += [f"    | {ln}" for ln in a.log_tail]
        elif a.companion_log:
            lines.append(f"  the TORCH_TRACE log of the same run: {a.companion_log}")
        elif not run.error and not a.not_recorded:
            lines.append("  (no run.log or captured stderr beside the run: rerun the program to see its error)")
    lines.append("  checks:")
    for c in a.checks:
        lines.append(f"    {_ICON.get(c.level, '?')} {c.message}")
    # failures, one per cascade
    probs = a.problems
    if probs:
        ff = next((c for c in probs if not c.recovered), probs[0])
        ev = ff.head.event
        state = "recovered" if ff.recovered else "NOT recovered"
        lines.append(f"  first failure: #{ev.index} {ev.name}  [{state}]")
        lines.append(f"    stage:     {_stage(ff.head)}")
        src = a.failure_sources.get(id(ff))
        if src and src[0]:
            label = "raised at:" if src[2] == "raised" else "in frame: "
            lines.append(f"    {label} {src[0]}" + (f":{src[1]}" if src[1] is not None else ""))
        exc = ff.head.exception_type + (f": {ff.head.message}" if ff.head.message else "")
        lines.append(f"    exception: {_one(exc) or '-'}")
        if len(ff.members) > 1:
            lines.append(f"    cascade:   {len(ff.members) - 1} enclosing lifecycle(s) failed with it: "
                         + ", ".join(m.event.lifecycle or m.event.frag for m in ff.members[1:6]))
        if ff.recovered and ff.recovered_by is not None:
            lines.append(f"    recovered by #{ff.recovered_by.index} {ff.recovered_by.name}")
        lines.append(f"    open:      {run.where(ff.head.event, ff.head.folder) or '(this event has no files)'}")
        more = [c for c in probs if c is not ff]
        if more:
            rec = sum(1 for c in more if c.recovered)
            lines.append(f"  other failures: {len(more)} ({rec} recovered)")
            shown, left = _cap(more, show_all, 5)
            for c in shown:
                h = c.head.event
                lines.append(f"    #{h.index} {h.name}: {_one(c.reason)}" + ("" if not c.recovered else "  [recovered]"))
            if left:
                lines.append(f"    ... {left} more (--all)")
    if a.restarts:
        lines.append(f"  restarts: {len(a.restarts)} (Dynamo's control flow: it restarts analysis, then retries)")
        shown, left = _cap(a.restarts, show_all, 5)
        for r in shown:
            ev = r.event
            fold = f"  ({len(r.cascade.members) - 1} enclosing failed event(s) folded)" if r.cascade and \
                len(r.cascade.members) > 1 else ""
            cid = f" [{ev.compile_id}]" if ev.compile_id else ""
            lines.append(f"    #{ev.index} {ev.name}{cid}: {_one(r.reason, 120) or '-'}  "
                         f"[{'recovered' if r.recovered else 'NOT recovered'}]{fold}")
            if r.cascade is not None and run.where(r.cascade.head.event, r.cascade.head.folder):
                lines.append(f"      open: {run.where(r.cascade.head.event, r.cascade.head.folder)}")
        if left:
            lines.append(f"    ... {left} more (--all)")
    if a.ran_eagerly:
        lines.append(f"  ran eagerly: {len(a.ran_eagerly)} frame(s) not compiled (the program finished)")
        shown, left = _cap(a.ran_eagerly, show_all, 5)
        for e in shown:
            cid = f" [{e.compile_id}]" if e.compile_id else ""
            lines.append(f"    {_one(e.frame, 100)}{cid}: {e.cause.replace('_', ' ')}: {_one(e.reason, 120)}")
            if e.where:
                lines.append(f"      at {e.where}")
        if left:
            lines.append(f"    ... {left} more (--all)")
    if a.worklist:
        lines.append(f"  graph breaks: {len(a.worklist)} site(s), {a.graph_break_total} break(s), most frequent first")
        shown, left = _cap(a.worklist, show_all, 5)
        for b in shown:
            head = " ".join(x for x in (f"×{b.count}", b.gb_id or "", _one(b.reason, 100)) if x)
            lines.append(f"    {head}")
            where = b.where + (f" in {b.function}" if b.function else "")
            lines.append(f"      at {where}" + (f":  {_one(b.source_line, 100)}" if b.source_line else ""))
            if b.in_user_code is False:
                cs = b.call_site
                lines.append("      in a library" + (f"; your call: {cs[0]}:{cs[1]}" + (f" in {cs[2]}" if cs[2] else "")
                                                     + (f":  {_one(cs[3], 100)}" if cs[3] else "") if cs else ""))
            if b.explanation:
                lines.append(f"      why:  {_one(b.explanation, 160 if not show_all else 4000)}")
            for h in b.hints[:3 if not show_all else None]:
                lines.append(f"      hint: {_one(h)}")
            if b.compile_ids:
                ids, more_ids = _cap(b.compile_ids, show_all, 8)
                lines.append(f"      compile ids: {', '.join(ids)}" + (f" … +{more_ids}" if more_ids else ""))
            if b.resume_fns and not b.events:
                lines.append(f"      evidence: {len(b.resume_fns)} resume function(s), e.g. {b.resume_fns[0]}")
        if left:
            lines.append(f"    ... {left} more site(s) (--all)")
    if a.recompiles:
        lines.append(f"  recompiles: {len(a.recompiles)}")
        shown, left = _cap(a.recompiles, show_all, 6)
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
                lines.append(f"    {r.frame}{cid}: {_one(p.guard, 110)}{ea}{refused}")
                if p.suggestion:
                    lines.append(f"      → {p.suggestion}")
                others = r.reasons[1:]
                if others:
                    kinds = f" ({', '.join(r.kinds)})" if len(r.kinds) > 1 else ""
                    lines.append(f"      torch gave {len(r.reasons)} reasons (one per cache entry){kinds}:")
                    o_shown, o_left = _cap(others, show_all, 3)
                    for o in o_shown:
                        lines.append(f"        {o.entry_compile_id + ': ' if o.entry_compile_id else ''}{_one(o.text, 110)}")
                    if o_left:
                        lines.append(f"        ... {o_left} more (--all)")
            else:
                lines.append(f"    {r.frame}{cid}: reason not recorded")
            d = r.guard_diff
            if d is not None and not d.empty:
                head = d.headline()
                lines.append(f"      guards {d.older} → {d.newer}:" + (f"  changed: {head}" if head else ""))
                pairs, rm_left = _cap(list(d.as_json()["changed_lines"]), show_all, 2)
                for c in pairs:  # a changed line cut around its change, so - and + differ in view
                    lines += [f"        - {_one(c['older'], 4000)}", f"        + {_one(c['newer'], 4000)}"]
                changed_old = {x for x, _y, _c in d.changed}
                changed_new = {y for _x, y, _c in d.changed}
                rm, rm_l = _cap([x for x in d.removed if x not in changed_old], show_all, 2)
                ad, ad_l = _cap([x for x in d.added if x not in changed_new], show_all, 2)
                lines += [f"        - {_one(x, 120)}" for x in rm] + [f"        + {_one(x, 120)}" for x in ad]
                if rm_left or rm_l or ad_l:
                    lines.append(f"        ... {rm_left + rm_l + ad_l} more line(s) (--all)")
            elif d is not None:
                lines.append(f"      guards {d.older} → {d.newer}: no difference once addresses and generated "
                             "names are masked (guards.txt cuts each guard at 120 characters: the change may be past the cut)")
        if left:
            lines.append(f"    ... {left} more (--all)")
    if a.frames:
        lines.append(f"  frames: {len(a.frames)}")
        lines.append(f"    {'COMPILES':>8} {'BREAKS':>6} {'CACHE h/m/b':>11} {'TIME':>8} {'LIMIT':>5} "
                     f"{'CALLS':>7} {'EAGER':>5}  FRAME")
        shown, left = _cap(a.frames, show_all, 8)
        for f in shown:
            cache = f"{f.cache_hits}/{f.cache_misses}/{f.cache_bypasses}"
            lim = f"{f.recompile_limit}" + ("!" if f.limit_hit else "")
            calls, eager = frame_calls_text(f)
            lines.append(f"    {f.compiles:>8} {f.graph_breaks:>6} {cache:>11} {fmt_duration(f.compile_s):>8} "
                         f"{lim:>5} {calls:>7} {eager:>5}  {_one(f.frame, 100)}")
        if left:
            lines.append(f"    ... {left} more (--all)")
    fb = a.fallbacks
    if fb:
        lines.append(f"  silent fallbacks: {len(fb)} (ran uncompiled or compiled worse, no error)")
        shown, left = _cap(fb, show_all, 8)
        for item in shown:
            lines.append(f"    {_one(item.text(), 150)}")
        if left:
            lines.append(f"    ... {left} more (--all)")
    cache_use = a.cache
    cc = cache_use["counts"]
    if cc["hits"] or cc["misses"] or cc["bypasses"] or cc["skipped_stores"]:
        lines.append(f"  cache: {cache_use['state']} — {cc['hits']} hit(s), {cc['misses']} miss(es), "
                     f"{cc['bypasses']} bypass(es), {cc['stores']} store(s), {cc['skipped_stores']} skipped store(s)")
        for state in ("miss", "bypass", "skipped_store"):
            rs = cache_use["reasons"].get(state) or {}
            if rs:
                lines.append(f"    {state} reasons: " + ", ".join(f"{_one(k, 60)} ×{v}" for k, v in list(rs.items())[:4]))
        explained, left = _cap(run_misses_explained(run), show_all, 4)
        for m in explained:
            lines.append(f"    {_one(m.line(), 150)}")
            for d in m.differs[:3]:
                lines.append(f"      {_one(d['component'], 50)}: {_one(d['change'], 110)}")
        if left:
            lines.append(f"    ... {left} more miss(es) (--all)")
    ct = a.compile_time
    if ct["phases"]:
        total = ct["total_s"]
        lines.append("  compile time" + (f": {fmt_duration(total)} in top-level lifecycles" if total else "")
                     + " (phases are inclusive)")
        shown, left = _cap(ct["phases"], show_all, 6)
        for ph in shown:
            n = f" ×{ph['count']}" if ph.get("count") else ""
            lines.append(f"    {fmt_duration(ph['seconds']):>8}  {ph['phase']}{n}")
        if left:
            lines.append(f"    ... {left} more (--all)")
        if ct.get("per_piece"):
            lines.append("    per piece: " + ", ".join(
                f"{p['piece']}: {fmt_duration(p['seconds'])} ({p['lifecycle']})" for p in ct["per_piece"][:8]))
    if run.open_spans:
        lines.append(f"  never closed: {len(run.open_spans)}")
        shown, left = _cap(run.open_spans, show_all, 5)
        for s in shown:
            lines.append(f"    #{s.first.index} {s.first.name}")
        if left:
            lines.append(f"    ... {left} more (--all)")
    for m in [m for m in run.malformed if m.line_no > 0][:3]:
        lines.append(f"  malformed line {m.line_no}: {m.reason}")
    return "\n".join(lines)
