"""Rows and reports for the headless commands (``magi-tui runs`` / ``magi-tui triage``).

Pure functions from a loaded :class:`RunModel` to JSON-able dicts and short human text. Strings from
the run are passed through as data; the CLI prints them with control characters made visible.
"""

from __future__ import annotations

import time
from typing import Any

from magi_tui.model.run import RunModel
from magi_tui.model.triage import Failure


def fmt_time(ts: float | None) -> str:
    if ts is None:
        return "-"
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
    except (OverflowError, OSError, ValueError):  # a timestamp no clock can show
        return "-"


def fmt_duration(seconds: float | None) -> str:
    if seconds is None or seconds != seconds or seconds in (float("inf"), float("-inf")):
        return "-"
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    if seconds < 60:
        return f"{seconds:.1f}s"
    m, s = divmod(int(seconds), 60)
    return f"{m}m{s:02d}s"


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
        "events": len(run.events),
        "failures": len(run.triage.failures),
        "unrecovered_failures": len(run.triage.unrecovered),
        "status": run.status,
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
        "exception_type": f.exception_type,
        "message": f.message,
        "recovered": f.recovered,
        "recovered_by": None if f.recovered_by is None else
        {"index": f.recovered_by.index, "name": f.recovered_by.name},
        "folder": f.folder,
        "line": ev.line_no,
    }


def triage_json(run: RunModel) -> dict[str, Any]:
    t = run.triage
    return {
        "run": str(run.path),
        "status": run.status,
        "events": len(run.events),
        "malformed_lines": len(run.malformed),
        "malformed": [{"line": m.line_no, "reason": m.reason} for m in run.malformed[:50]],
        "partial_last_line": run.partial_line,
        "first_failure": failure_json(t.first_failure) if t.first_failure else None,
        "failures": [failure_json(f) for f in t.failures],
        "restarts": [i.as_json() for i in t.restarts],
        "recompiles": [i.as_json() for i in t.recompiles],
        "graph_breaks": [i.as_json() for i in t.graph_breaks],
        "cache": {
            "hits": [i.as_json() for i in t.cache_hits],
            "misses": [i.as_json() for i in t.cache_misses],
            "stores": [i.as_json() for i in t.cache_stores],
            "skipped_stores": [i.as_json() for i in t.cache_skipped_stores],
        },
        "open": [{"index": s.first.index, "name": s.first.name} for s in run.open_spans],
        "has_compiled_functions": run.has_compiled_functions,
        "error": run.error,
    }


def _stage(f: Failure) -> str:
    ev = f.event
    where = f"subgraph {ev.subgraph_index}" if ev.subgraph_index is not None else "full graph"
    return f"{ev.lifecycle or ev.frag} ({where})"


def triage_text(run: RunModel) -> str:
    """A short report: what happened, where it failed first, where to look."""
    t = run.triage
    lines = [f"{run.path}", f"  status: {run.status}   events: {len(run.events)}"
             + (f"   malformed lines: {len(run.malformed)}" if run.malformed else "")
             + ("   (last line incomplete)" if run.partial_line else "")]
    if run.error:
        lines.append(f"  timeline_events/timeline.jsonl cannot be read: {run.error}")
    elif not run.has_timeline:
        lines.append("  no timeline.jsonl (nothing was recorded: warm cache, or a failure before the backend)")
    ff = t.first_failure
    if ff is not None:
        ev = ff.event
        state = "recovered" if ff.recovered else "NOT recovered"
        lines.append(f"  first failure: #{ev.index} {ev.name}  [{state}]")
        lines.append(f"    stage:     {_stage(ff)}")
        exc = ff.exception_type + (f": {ff.message}" if ff.message else "")
        lines.append(f"    exception: {exc or '-'}")
        if ff.recovered and ff.recovered_by is not None:
            lines.append(f"    recovered by #{ff.recovered_by.index} {ff.recovered_by.name}")
        lines.append(f"    open:      {run.path / ff.folder if ff.folder else '(this event has no files)'}")
        more = [f for f in t.failures if f is not ff]
        if more:
            rec = sum(1 for f in more if f.recovered)
            lines.append(f"  other failures: {len(more)} ({rec} recovered)")
            for f in t.unrecovered[:5]:
                if f is not ff:
                    lines.append(f"    #{f.event.index} {f.event.name}: {f.exception_type} {f.message}".rstrip())
    else:
        lines.append("  no failed events")
    for title, items in (("restarts", t.restarts), ("recompiles", t.recompiles),
                         ("graph breaks", t.graph_breaks), ("cache misses", t.cache_misses),
                         ("skipped cache stores", t.cache_skipped_stores)):
        if items:
            lines.append(f"  {title}: {len(items)}")
            for i in items[:5]:
                lines.append(f"    #{i.event.index} {i.event.name}" + (f": {i.reason}" if i.reason else ""))
            if len(items) > 5:
                lines.append(f"    ... {len(items) - 5} more")
    if t.cache_hits:
        lines.append(f"  cache hits: {len(t.cache_hits)}")
    if run.open_spans:
        lines.append(f"  never closed: {len(run.open_spans)}")
        for s in run.open_spans[:5]:
            lines.append(f"    #{s.first.index} {s.first.name}")
    for m in [m for m in run.malformed if m.line_no > 0][:3]:
        lines.append(f"  malformed line {m.line_no}: {m.reason}")
    return "\n".join(lines)
