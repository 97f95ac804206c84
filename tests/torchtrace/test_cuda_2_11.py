"""One program recorded on a GPU under another torch (2.11, CUDA, an H200) by our tracer and by
``TORCH_TRACE`` at once (tests/torchtrace/logs/cuda_2_11): both sources give the same answer, and the
tracer's run dir holds the calls per compiled entry the program made (3 steps through 3 compiled blocks:
3 calls of the first entry, 6 of the dynamic one that followed)."""

from __future__ import annotations

import json
import sys

from tests.support import slow
from tests.support.paths import ROOT

HERE = ROOT / "tests" / "torchtrace" / "logs" / "cuda_2_11"
RUN = HERE / "runs" / "magi_depyf" / "run_20261124_205439" / "model_1_prog_rank_0"
LOG = HERE / "traced_cold_cache.log"


def _triage(path) -> tuple[int, dict]:
    out = slow.run([sys.executable, "-m", "magi_tui", "triage", "--json", str(path)], cwd=ROOT,
                   capture_output=True, text=True, timeout=120)
    assert "Traceback" not in out.stderr, out.stderr
    return out.returncode, json.loads(out.stdout)


def test_the_tracer_and_torch_trace_agree_on_a_cuda_compile_of_torch_2_11():
    (rc_run, run), (rc_log, log) = _triage(RUN), _triage(LOG)
    assert rc_run == rc_log == 0  # degraded: a frame ran eagerly, nothing failed
    assert run["status"] == log["status"] == "degraded"
    keys = ("failures", "unrecovered", "restarts", "recompiles", "graph_breaks", "frames", "ran_eagerly",
            "cache_state")
    assert {k: run["summary"][k] for k in keys} == {k: log["summary"][k] for k in keys} == {
        "failures": 0, "unrecovered": 0, "restarts": 0, "recompiles": 1, "graph_breaks": 1, "frames": 4,
        "ran_eagerly": 1, "cache_state": "cold"}
    for tj in (run, log):
        (rc,) = tj["recompiles"]
        assert rc["automatic_dynamic"] and rc["reasons"] == [
            "1/0: tensor 'x' size mismatch at index 1. expected 16, actual 32"]
        (eager,) = tj["ran_eagerly"]
        assert (eager["cause"], eager["reason"], eager["line"]) == ("unsupported", "graph break in loop", 35)
        assert [b["gb_id"] for b in tj["graph_breaks"]] == ["GB0059"]
        assert tj["cache"]["counts"]["misses"] == 8
    assert [f["frame"] for f in run["frames"]] == [f["frame"] for f in log["frames"]]


def test_calls_per_compiled_entry_from_a_cuda_run():
    _rc, run = _triage(RUN)
    calls = {e["compile_id"]: e["calls"] for f in run["frames"] for e in f.get("entries") or []}
    assert calls == {"1/0": 3, "1/1": 6, "2/0": 1, "3/0": 3}


async def test_the_tree_says_ran_eagerly_where_the_triage_does_not_count_a_failure():
    """The compile of the frame Dynamo skipped failed with Unsupported; the frame then ran eagerly and the
    program went on. The tree and the detail pane say "ran eagerly", as the triage does (no failures),
    not a red FAILED; a real failure keeps its FAILED (the shared fixture's backend crash)."""
    from magi_tui.ui.app import MagiApp
    from tests.support.pilot import loaded_run_screen, screen_text, tree_labels

    app = MagiApp(RUN)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await loaded_run_screen(pilot)
        labels = tree_labels(screen)
        assert "↷ ran eagerly Unsupported" in labels and "↷ 1 ran eagerly" in labels
        assert "FAILED" not in labels and "failed" not in labels.replace("failed_compile", "")
        await pilot.press("f")  # the first stop: that compile, its detail on screen
        await pilot.pause(0.3)
        text = screen_text(app)
        assert "fullgraph_failed_compile  ↷ ran eagerly" in text and "FAILED" not in text


async def test_a_real_failure_keeps_its_failed_mark():
    from magi_tui.ui.app import MagiApp
    from tests.support.paths import TORCH_TRACE, require
    from tests.support.pilot import loaded_run_screen, tree_labels

    log = require(TORCH_TRACE / "graph_breaks_recompiles_failure.log")
    async with MagiApp(log).run_test(size=(100, 30)) as pilot:
        screen = await loaded_run_screen(pilot)
        await pilot.press("f")
        await pilot.pause(0.3)
        labels = tree_labels(screen)
        assert "✗ FAILED BackendCompilerFailed" in labels and "✗ 1 failed" in labels and "ran eagerly" not in labels
