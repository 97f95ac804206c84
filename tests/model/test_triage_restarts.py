"""Issue #10 item 1: a Dynamo restart is Dynamo's control flow, not a failure. One restart, its failed
cascade folded under it, status ``recovered``, exit 0; a failure nothing recovered stays a failure, and a
compile cut short (lifecycles open at the end, or the tracer stopping) is ``incomplete``."""

from __future__ import annotations

import pytest

from magi_tui.cli import triage_exit_code
from magi_tui.model import RunModel
from magi_tui.model.analysis.checks import analyse
from magi_tui.model.outputs.report import triage_json, triage_text
from tests.support.paths import COLD, WARM
from tests.support.timeline import ev_line, lc, write_run


def test_cold_transformer_one_restart_recovered_exit_0(fx):
    run = RunModel(fx / COLD).load()
    a = analyse(run)
    assert a.status == "recovered"
    assert a.problems == []                       # not "5 failures"
    (restart,) = a.restarts
    assert restart.recovered and restart.reason == "TensorifyScalarRestartAnalysis"
    assert [m.event.index for m in restart.cascade.members] == [13, 14, 15, 16, 17]
    assert [m.event.lifecycle for m in restart.cascade.members[1:]] == [
        "pass_context", "compiler_manager_compile", "piecewise_compile", "magi_backend_call"]
    assert not [c for c in a.checks if c.level == "fail"]
    assert triage_exit_code([run]) == 0
    text = triage_text(run)
    assert "restarts: 1" in text and "4 enclosing failed event(s) folded" in text
    assert "first failure" not in text and "NOT recovered" not in text
    # every failed event is still known to the views (they mark each one recovered)
    assert len(run.triage.failures) == 5 and all(f.recovered for f in run.triage.failures)


def test_warm_transformer_restart_also_recovered(fx):
    run = RunModel(fx / WARM).load()
    a = analyse(run)
    assert a.status == "recovered" and len(a.restarts) == 1 and a.restarts[0].recovered
    assert triage_json(run)["first_failure"]["restart"] is True


def test_unrecovered_failure_stays_a_failure(tmp_path):
    run = RunModel(write_run(tmp_path / "r", [
        lc(0, "before", "magi_backend_call"),
        lc(1, "before", "compiler_compile", graph_index=0),
        lc(2, "failed", "compiler_compile", graph_index=0, exception_type="RuntimeError",
           exception_message="boom"),
        lc(3, "failed", "magi_backend_call", exception_type="RuntimeError", exception_message="boom"),
    ])).load()
    a = analyse(run)
    assert a.status == "failed"
    (c,) = a.problems                             # one failure, its enclosing lifecycle folded
    assert not c.recovered and [m.event.index for m in c.members] == [2, 3]
    assert a.restarts == []
    assert [ch.level for ch in a.checks][0] == "fail"
    assert triage_exit_code([run]) == 1
    j = triage_json(run)
    assert len(j["failures"]) == 1 and j["failures"][0]["cascade"][0]["index"] == 3
    assert j["first_failure"]["recovered"] is False


def test_restart_whose_retry_was_killed_is_incomplete(fx, tmp_path):
    """The cold run cut after the restart's cascade and the start of the retry: a killed compile."""
    lines = (fx / COLD / "timeline_events" / "timeline.jsonl").read_text(encoding="utf-8").splitlines(True)
    run = RunModel(write_run(tmp_path / "killed", lines[:22])).load()
    a = analyse(run)
    assert a.status == "incomplete"
    assert any("never closed" in w for w in a.incomplete_reasons)
    assert any(c.level == "fail" and "never closed" in c.message for c in a.checks)
    assert triage_exit_code([run]) == 1


def test_tracer_stopped_is_incomplete(tmp_path):
    run = RunModel(write_run(tmp_path / "r", [
        ev_line(0, "fullgraph_before_compile", lifecycle_name="compile", compile_id="0/0", frame="f"),
        ev_line(1, "fullgraph_after_compile", lifecycle_name="compile", compile_id="0/0", frame="f",
                duration_ms=5.0),
        ev_line(2, "fullgraph_tracer_stopped", reason="disk full", error="OSError: [Errno 28]"),
    ])).load()
    a = analyse(run)
    assert a.status == "incomplete"
    assert any("tracer stopped recording: disk full" in c.message for c in a.checks)
    assert triage_exit_code([run]) == 1
    assert triage_json(run)["tracer_stopped"][0]["reason"] == "disk full"


def test_restart_point_events_from_our_tracer_are_restarts(tmp_path):
    """Our tracer writes ``restart_analysis`` point events; the compile's ``after`` recovers them."""
    run = RunModel(write_run(tmp_path / "r", [
        ev_line(0, "fullgraph_before_compile", lifecycle_name="compile", compile_id="0/0", frame="f"),
        ev_line(1, "fullgraph_restart_analysis", compile_id="0/0", frame="f",
                restart_reason="Failed to trace builtin operator\n  Explanation: print", reason="x"),
        ev_line(2, "fullgraph_after_compile", lifecycle_name="compile", compile_id="0/0", frame="f",
                duration_ms=5.0),
        ev_line(3, "fullgraph_before_compile", lifecycle_name="compile", compile_id="1/0", frame="g"),
        ev_line(4, "fullgraph_restart_analysis", compile_id="1/0", frame="g", restart_reason="again"),
    ])).load()
    a = analyse(run)
    r0, r1 = a.restarts
    assert r0.recovered and r0.reason == "Failed to trace builtin operator"
    assert not r1.recovered                        # its compile never ended
    assert a.status == "incomplete"


@pytest.mark.parametrize("name", ["aot"])
def test_real_failure_fixture_is_failed(fx, name):
    from magi_tui.model.sources.discovery import find_runs

    (found,) = find_runs(fx / name)
    run = RunModel(found.path).load()
    a = analyse(run)
    assert a.status == "failed" and a.problems and not a.problems[0].recovered
    assert a.problems[0].head.exception_type == "ValueError"
    assert triage_exit_code([run]) == 1


def test_a_different_failure_right_after_a_restart_is_not_folded_into_it(tmp_path):
    """A restart propagates its own exception up the enclosing lifecycles; a failure with another
    exception that happens to follow it (nothing in between) is a failure of its own."""
    run = RunModel(write_run(tmp_path / "r", [
        lc(0, "before", "compile"), lc(1, "before", "compiler_compile"),
        lc(2, "failed", "compiler_compile", exception_type="TensorifyScalarRestartAnalysis"),
        lc(3, "failed", "compile", exception_type="ValueError", exception_message="bad shape"),
    ])).load()
    t = run.triage
    assert len(t.restarts) == 1 and len(t.problems) == 1
    assert t.problems[0].head.exception_type == "ValueError" and not t.problems[0].recovered
    assert run.status == "failed"
