"""``magi-tui export-trace`` on our tracer's run dirs (issue #19 item 10): the ranks of a job (two real traced
processes) merged into one Chrome trace, one process per rank, each run's lifecycle spans as complete events
and its point events (graph breaks, recompiles, cache results) as instants."""

from __future__ import annotations

import json

from magi_tui.cli import main
from magi_tui.model.run import RunModel
from magi_tui.model.sources.discovery import find_runs
from tests.support.trace_events import check_trace


def test_run_dirs_of_two_ranks(two_ranks, tmp_path, capsys):
    out = tmp_path / "trace.json"
    assert main(["export-trace", str(two_ranks), "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    counts = check_trace(doc)
    procs = doc["otherData"]["magi_tui"]["processes"]
    assert [(p["pid"], p["rank"], p["source"]) for p in procs] == [(0, 0, "lifecycle_spans"), (1, 1, "lifecycle_spans")]
    for f in find_runs(two_ranks):
        run = RunModel(f.path).load()
        spans = {id(ev.span) for ev in run.events if ev.span is not None and ev.span.before is not None}
        points = sum(1 for ev in run.events if ev.span is None and ev.timestamp is not None)
        assert counts[(f.name.rank, "X")] == len(spans)  # every lifecycle once
        assert counts[(f.name.rank, "i")] == points
        xs = [e for e in doc["traceEvents"] if e["pid"] == f.name.rank and e["ph"] == "X"]
        compile_ = next(e for e in xs if e["name"] == "compile")
        assert compile_["args"]["compile_id"] == "0/0" and compile_["args"]["status"] == "ok"
        # the compile span lasts from its before_ to its after_ event
        span = next(ev.span for ev in run.events if ev.span is not None and ev.span.lifecycle == "compile")
        assert compile_["dur"] == round((span.end.timestamp - span.before.timestamp) * 1e6, 3)
    assert "2 process(es)" in capsys.readouterr().out
