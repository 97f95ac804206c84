"""One run -> its rows of the index (:mod:`magi_tui.history.schema`), from the analysis ``triage --json``
reads (``checks.analyse``), never a second reading of the events: the run's status, compile time and
counts are triage's ``summary`` and ``compile_time``; break and recompile ids are the worklist's
(``worklist.break_id`` / ``recompile_id``); frames are triage's ``frames``; a compile is ``metrics``'s
(``metrics.CompileInfoFold``, folded in the same streamed pass). A run that cannot be read is one ``runs``
row with status ``error`` and torch's or the reader's message; nothing else about it is guessed."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from magi_tui.model.analysis.checks import TimelineFold, analyse
from magi_tui.model.analysis.metrics import CompileInfoFold
from magi_tui.model.events import Event
from magi_tui.model.run import RunModel

Rows = dict[str, list[dict[str, Any]]]


class HistoryFold(TimelineFold):
    """The analysis' fold, ``metrics``'s per-compile fold and the run's ``torch_version`` record, in the one
    streamed pass a run is read with (as ``compare.sides.SideFold`` pairs the analysis with a side)."""

    def __init__(self) -> None:
        super().__init__()
        self.compiles = CompileInfoFold()
        self.torch_version_event: Event | None = None

    def bind(self, run: RunModel) -> None:
        super().bind(run)
        self.compiles.bind(run)

    def add(self, ev: Event) -> None:
        super().add(ev)
        self.compiles.add(ev)
        if self.torch_version_event is None and ev.name.endswith("torch_version"):
            self.torch_version_event = ev  # a log's torch_version artifact: its payload says which torch


def run_size(path: Path) -> tuple[int, int]:
    """(bytes, newest mtime in ns) of a run: a log file's own, or every file under a run dir (symlinks not
    followed): what ``index`` remembers to tell a run that grew from one it has read."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return 0, 0
    if not os.path.isdir(path):
        return st.st_size, st.st_mtime_ns
    size, newest = 0, st.st_mtime_ns
    stack = [str(path)]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for e in it:
                    try:
                        if e.is_dir(follow_symlinks=False):
                            stack.append(e.path)
                        elif e.is_file(follow_symlinks=False):
                            s = e.stat(follow_symlinks=False)
                            size += s.st_size
                            newest = max(newest, s.st_mtime_ns)
                    except OSError:
                        continue
        except OSError:
            continue
    return size, newest


def _torch_version(run: RunModel, fold: HistoryFold) -> str | None:
    info = run.tracer_info
    if info is not None and info.torch:
        return info.torch
    ev = fold.torch_version_event
    if ev is None:
        return None
    import json

    for name, _path, _why in run.files(ev):
        text = run.file_text(ev, name, 4096)
        if text:
            try:
                v = json.loads(text).get("pytorch_version")
            except (ValueError, AttributeError):
                return None
            return v if isinstance(v, str) else None
    return None


def _program(run: RunModel) -> str:
    """What program the run is of: the traced script, MagiCompiler's model tag, else the folder that holds
    the run (a TORCH_TRACE directory's name for its logs)."""
    out = run.outcome
    if out is not None and out.script:
        return Path(out.script).name
    if run.name_info.tag:
        return run.name_info.tag
    return run.path.parent.name


def _first_line(text: str | None) -> str | None:
    if not text:
        return None
    return " ".join(text.strip().splitlines()[0].split()) if text.strip() else None


def _cache_name(ev: Event) -> str:
    """The cache a lookup is of, as ``triage --json``'s ``cache.by_cache`` names it (checks/tallies.py)."""
    return (ev.summary or {}).get("cache") or ("magi" if ev.lifecycle == "compiler_manager_load" else "-")


def error_rows(path: Path, message: str, source: str = "?") -> Rows:
    """The rows of a run that could not be read: its ``runs`` row, status ``error``, with the message."""
    return {"runs": [{"path": str(path), "source": source, "program": path.parent.name, "label": path.name,
                      "status": "error", "error": message}]}


def collect(path: Path) -> Rows:
    """The rows of the run at ``path`` (``run_key``, ``batch`` and ``started`` are added by ``write``; the
    ``runs`` row's ``started`` is an epoch float here, or None)."""
    from magi_tui.model.analysis.cache_explain import run_misses_explained
    from magi_tui.model.analysis.worklist import break_id, frames_by_key, recompile_id
    from magi_tui.model.outputs.report import run_label

    try:
        run = RunModel(path)
        fold = HistoryFold()
        run.load(fold=fold)
    except Exception as exc:  # a reader's surprise is this run's status, never the index's end
        return error_rows(path, f"{type(exc).__name__}: {exc}")
    source = "torch_trace" if run.is_torch_trace else run.source_name
    if run.error:
        bad = error_rows(path, run.error, source)
        bad["runs"][0]["label"] = run_label(run)
        return bad
    a = analyse(run)
    t = run.triage
    n = run.name_info
    hits, misses = len(t.cache_hits), len(t.cache_misses)
    outcome = a.outcome
    breaks_known = "graph_breaks" not in a.not_recorded
    recompiles_known = "recompiles" not in a.not_recorded
    started = run.started if run.started is not None else n.run_time
    runs_row = {
        "path": str(path), "source": source, "program": _program(run), "label": run_label(run),
        "job": n.run_id, "rank": n.rank, "topology": n.topology, "torch_version": _torch_version(run, fold),
        "status": a.status, "error": None, "duration_s": run.duration_s,
        "compile_time_s": a.compile_time.get("total_s"),
        "exit_code": outcome.exit_code if outcome is not None else None,
        "events": run.event_count,
        # None: the source cannot know (triage's not_recorded), never a zero
        "graph_breaks": a.graph_break_total if breaks_known else None,
        "graph_break_sites": len(a.worklist) if breaks_known else None,
        "recompiles": len(a.recompiles) if recompiles_known else None,
        "frames": sum(1 for f in a.frames if not f.compiled_autograd),
        "ran_eagerly": len(a.ran_eagerly),
        "failures": len(a.problems), "unrecovered": sum(1 for c in a.problems if not c.recovered),
        "cache_hits": hits, "cache_misses": misses,
        "cache_hit_rate": hits / (hits + misses) if hits + misses else None,
        "_started": started,
    }
    frames = frames_by_key(a)
    rows: Rows = {"runs": [runs_row]}
    rows["breaks"] = [{"id": break_id(b), "gb_id": b.gb_id, "gb_type": b.gb_type, "file": b.file, "line": b.line,
                       "function": b.function, "count": b.count, "reason": _first_line(b.reason)}
                      for b in a.worklist]
    rows["recompiles"] = [{"id": recompile_id(r, frames), "kind": r.primary.kind if r.primary else None,
                           "frame": r.frame, "compile_id": r.compile_id, "automatic_dynamic": r.automatic_dynamic,
                           "reason": _first_line(r.primary.text) if r.primary else None}
                          for r in a.recompiles]
    rows["checks"] = [{"rule": c.rule, "level": c.level, "message": c.message} for c in a.checks]
    rows["frames"] = [{"frame": f.frame, "key": f.key, "name": f.name, "file": f.file, "line": f.line, "compiles": f.compiles,
                       "recompiles": f.recompiles, "graph_breaks": f.graph_breaks, "calls": f.calls,
                       "eager_calls": f.eager_calls, "compile_s": f.compile_s} for f in a.frames]
    differs: dict[int | None, str] = {}
    for m in run_misses_explained(run) if misses else ():
        j = m.as_json()
        differs[j.get("index")] = ", ".join(str(d.get("component")) for d in j.get("differs") or [])
    rows["cache"] = [{"cache": _cache_name(it.event), "result": result, "reason": _first_line(it.reason),
                      "compile_id": it.event.compile_id,
                      "differs": differs.get(it.event.index) if result == "miss" else None}
                     for result, items in (("hit", t.cache_hits), ("miss", t.cache_misses),
                                           ("bypass", t.cache_bypasses)) for it in items]
    rows["compiles"] = [{"compile_id": c.compile_id, "frame": c.frame, "status": c.status, "compile_s": c.total_s,
                         "dynamo_s": c.dynamo_s, "backend_s": c.backend_s, "graph_ops": c.graph_op_count,
                         "guards": c.guard_count} for c in fold.compiles.result()]
    return rows
