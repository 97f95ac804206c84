"""Rows and reports for the headless commands (``magi-tui runs`` / ``magi-tui triage``).

Pure functions from a loaded :class:`RunModel` to JSON-able dicts and short human text. Strings from
the run are passed through as data; the CLI prints them with control characters made visible.
"""

from __future__ import annotations

import time
from typing import Any

from magi_format.text import fmt_seconds as fmt_duration  # noqa: F401  (the one duration format; the CLI's)
from magi_tui.model.analysis.cache_explain import run_misses_explained
from magi_tui.model.analysis.checks import analyse, export_issue_json, run_status
from magi_tui.model.analysis.checks.tallies import compile_time_json
from magi_tui.model.analysis.fallbacks import fallbacks_json
from magi_tui.model.analysis.worklist import annotate_triage
from magi_tui.model.json_stream import Lazy, materialize
from magi_tui.model.outputs.triage_sections import CHECK_ICONS, frame_calls_text, triage_sections  # noqa: F401  (frame_calls_text: kept here)
from magi_tui.model.run import RunModel
from magi_tui.model.triage import Cascade, Failure, Restart


def fmt_time(ts: float | None) -> str:
    if ts is None:
        return "-"
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
    except (OverflowError, OSError, ValueError):  # a timestamp no clock can show
        return "-"


def run_label(run: RunModel) -> str:
    """``model_1 TwoLayerTransformer``; ``model_1 TinyBlock · ws2`` when the folder names a topology
    (MagiCompiler 2026: ``…_rank_<r>_<topology>``), else the folder's name."""
    n = run.name_info
    if n.model_index is not None:
        return f"model_{n.model_index}" + (f" {n.tag}" if n.tag else "") + (f" · {n.topology}" if n.topology else "")
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
        "topology": n.topology,
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


def triage_json(run: RunModel) -> dict[str, Any]:
    """The headless contract (docs/HEADLESS.md) as one value. Lists are never capped here."""
    return materialize(triage_document(run))


def triage_document(run: RunModel) -> dict[str, Any]:
    """:func:`triage_json` with every list that grows with the run (frames, failures, breaks, ...) a
    :class:`~magi_tui.model.json_stream.Lazy`: its items are made while ``json_stream.write_json``
    writes it, so a log of 100k frames is never held as 100k dicts (nor its text as one string)."""
    t = run.triage
    a = analyse(run)
    first = next((c for c in t.cascades if not c.fallback), None)  # a frame that ran eagerly is no failure
    log_backed = not run.has_event_folders  # no event folders: "line" says where to look

    def located(item: dict[str, Any]) -> dict[str, Any]:
        if log_backed:
            item["folder"] = None
        return item

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
                    # the user's frames; the compiled-autograd graphs apart (torch's compiled_autograd.captures)
                    "frames": sum(1 for f in a.frames if not f.compiled_autograd),
                    "compiled_autograd_graphs": sum(1 for f in a.frames if f.compiled_autograd),
                    "ran_eagerly": len(a.ran_eagerly),
                    "cache_state": a.cache["state"]},
        "checks": [c.as_json() for c in a.checks],
        # how the program ended (the tracer's session record), or why that is not known here
        "outcome": a.outcome.as_json() if a.outcome is not None else
        {"recorded": False, "why": a.outcome_unknown},
        "compiled_nothing": a.compiled_nothing.as_json() if a.compiled_nothing is not None else None,
        "fix_proven": [p.as_json() for p in a.fix_proofs],
        # the findings' sections as the panel lists them: title, count, where their items are here
        "sections": [s.as_json() for s in triage_sections(run, a, panel=False)],
        "not_recorded": sorted(a.not_recorded),
        "companion_log": a.companion_log,
        "first_failure": located(cascade_json(first)) if first is not None else None,
        "failures": Lazy(located(_with_source(cascade_json(c), a.failure_sources.get(id(c)))) for c in a.problems),
        "ran_eagerly": Lazy(e.as_json() for e in a.ran_eagerly),
        "restarts": Lazy(located(restart_json(r)) for r in a.restarts),
        "graph_breaks": Lazy(b.as_json() for b in a.worklist),
        "recompiles": Lazy(r.as_json() for r in a.recompiles),
        "frames": Lazy(f.as_json() for f in a.frames),
        "cache": {**a.cache, "misses_explained": Lazy(m.as_json() for m in run_misses_explained(run))},
        # why this run missed, against the last earlier run of the program with its cache dir (docs/HEADLESS.md)
        "cache_miss": _cache_miss_json(run),
        "compile_time": compile_time_json(a),
        "runtime": a.runtime.as_json() if a.runtime is not None else None,
        "fallbacks": fallbacks_json(a.fallbacks),
        "recompile_limit_hits": Lazy(i.as_json() for i in t.recompile_limit_hits),
        "tracer_stopped": Lazy(i.as_json() for i in t.tracer_stopped),
        "export_issues": Lazy(export_issue_json(run, i.event) for i in t.export_issues),
        "incomplete_reasons": a.incomplete_reasons,
        "open": Lazy({"index": s.first.index, "name": s.first.name} for s in run.open_spans),
        "empty": None if a.status != "empty" else
        {"note": a.empty_note, "log": a.log_path, "log_tail": a.log_tail},
        "has_compiled_functions": run.has_compiled_functions,
        "error": run.error,
    }
    return annotate_triage(out, a)


def _cache_miss_json(run: RunModel) -> dict[str, Any]:
    from magi_tui.model.analysis.cache_verdict import cache_miss

    return cache_miss(run).as_json()


def _with_source(j: dict[str, Any], src: tuple | None) -> dict[str, Any]:
    """A failure's JSON with where it was raised in the user's code (``source``: file, line; null unknown)."""
    j["source"] = None if not src or not src[0] else {"file": src[0], "line": src[1], "what": src[2]}
    return j


def triage_text(run: RunModel, show_all: bool = False) -> str:
    """The report for people: status, the checks, then where to look and why: the findings' sections
    (:func:`~magi_tui.model.outputs.triage_sections.triage_sections`, the panel's), each as a few lines (lists
    capped at a few rows unless ``show_all``)."""
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
        lines.append(f"    {CHECK_ICONS.get(c.level, '?')} {c.message}")
    for sec in triage_sections(run, a, panel=False, report=True, show_all=show_all):
        lines += ["".join(sp.text for sp in line) for line in sec.lines]
    for m in [m for m in run.malformed if m.line_no > 0][:3]:
        lines.append(f"  malformed line {m.line_no}: {m.reason}")
    return "\n".join(lines)
