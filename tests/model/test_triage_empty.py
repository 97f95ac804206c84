"""Issue #10 item 6: a run with nothing recorded is ``empty``, says what that means (a failure before the
backend ran, or a warm cache), shows the tail of a run.log / captured stderr beside it, and never shows a
green check."""

from __future__ import annotations

import shutil

from magi_tui.cli import triage_exit_code
from magi_tui.model import RunModel
from magi_tui.model.analysis.checks import analyse
from magi_tui.model.outputs.report import triage_json, triage_text
from magi_tui.model.sources.discovery import find_runs

DYNAMO_FAILURE = "dynamo_failure/magi_depyf/run_20261122_112215/model_1_Breaks_rank_0"


def test_dynamo_failure_is_empty_not_green(fx):
    run = RunModel(fx / DYNAMO_FAILURE).load()
    a = analyse(run)
    assert a.status == "empty"
    assert a.checks and all(c.level != "ok" for c in a.checks)
    assert "Dynamo failed before the backend ran" in a.checks[0].message
    text = triage_text(run)
    assert "✓" not in text and "no failed events" not in text
    assert "warm cache" in text
    assert triage_exit_code([run]) == 0
    j = triage_json(run)
    assert j["status"] == "empty" and "before the backend" in j["empty"]["note"]


def test_run_log_beside_the_run_is_shown(fx, tmp_path):
    """The fixtures keep the program's output in magi_depyf/run.log, beside the cache roots."""
    root = tmp_path / "work"
    shutil.copytree(fx / "dynamo_failure", root / "dynamo_failure")
    log = root / "run.log"
    log.write_text("".join(f"line {i}\n" for i in range(40)) + "torch._dynamo.exc.Unsupported: boom\n")
    (found,) = find_runs(root / "dynamo_failure")
    run = RunModel(found.path).load()
    a = analyse(run)
    assert a.log_path == str(log)
    assert a.log_tail[-1] == "torch._dynamo.exc.Unsupported: boom" and len(a.log_tail) <= 12
    text = triage_text(run)
    assert f"last lines of {log}" in text and "| torch._dynamo.exc.Unsupported: boom" in text
    assert triage_json(run)["empty"]["log_tail"][-1] == "torch._dynamo.exc.Unsupported: boom"


def test_real_fixture_run_log_found(fx):
    a = analyse(RunModel(fx / DYNAMO_FAILURE).load())
    assert a.log_path == str(fx / "run.log") and a.log_tail == (fx / "run.log").read_text().splitlines()[-12:]


def test_warm_cache_empty_timeline_points_at_compiled_functions(fx):
    run = RunModel(fx / "toy_explain_warm_cache").load()
    a = analyse(run)
    assert a.status == "empty" and all(c.level != "ok" for c in a.checks)
    assert "compiled_functions/ shows 3 compiled frame(s)" in a.checks[0].message
