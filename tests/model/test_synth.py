"""The benchmark generator (benchmarks/synth.py) writes runs the model reads like real ones."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from synth import synthetic_lines, write_synthetic_run  # noqa: E402

from magi_tui.model import RunModel  # noqa: E402
from magi_tui.model.sources.layout import event_files  # noqa: E402


def test_synthetic_run_reads_like_a_real_one(tmp_path):
    run_dir = write_synthetic_run(tmp_path / "model_1_Synthetic_rank_0", 3000, with_files=50)
    run = RunModel(run_dir).load()
    assert len(run.events) == 3000 and run.malformed == []
    t = run.triage
    assert t.failures and all(f.recovered for f in t.failures)
    assert t.restarts and t.cache_hits and t.cache_misses and t.cache_stores
    assert {e.scope for e in run.events} >= {"fullgraph", "subgraph_0", "subgraph_1"}
    assert run.status in ("recovered", "incomplete")
    # the files of the first events exist where the layout says
    with_files = [e for e in run.events if e.files][:20]
    for ev in with_files:
        assert all(p is not None for _, p, _ in event_files(run.path, ev)), ev


def test_synthetic_lines_are_deterministic_and_exact():
    a, _ = synthetic_lines(500, seed=3)
    b, _ = synthetic_lines(500, seed=3)
    assert a == b and len(a) == 500


def test_fail_last_gives_a_failed_run(tmp_path):
    run = RunModel(write_synthetic_run(tmp_path / "r", 400, fail_last=True, with_files=0)).load()
    assert len(run.events) == 400 and [e.index for e in run.events] == list(range(400))
    assert run.status == "failed"
    f = run.triage.unrecovered[-1]  # (a restart cut short by the end may be unrecovered too)
    assert (f.event.index, f.event.name, f.exception_type) == (399, "fullgraph_failed_aot_compile", "ValueError")
    assert run.span_of(f.event).before.index == 0
