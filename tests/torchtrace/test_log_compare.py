"""Comparing two TORCH_TRACE logs reads the pass graphs the logs hold, as it does a run dir's files: the
same program on a GPU with a cold cache (traced) and a warm one (tests/torchtrace/logs/cuda_2_11, torch
2.11 with CUDA). Before, every pass of a log read "? not read": the graphs were looked for inside the
log file's own path instead of the folder its reader writes them to, and the diff key was refused."""

from __future__ import annotations

import sys

from magi_tui.model import RunModel
from magi_tui.model.outputs.compare.comparison import compare_runs
from tests.support import slow
from tests.support.paths import ROOT

LOGS = ROOT / "tests" / "torchtrace" / "logs" / "cuda_2_11"
COLD, WARM = LOGS / "traced_cold_cache.log", LOGS / "plain_warm_cache.log"


def test_a_comparison_of_two_logs_reads_each_pass_graph():
    c = compare_runs(RunModel(COLD).load(), RunModel(WARM).load())
    both = [p for p in c.passes if p.a is not None and p.b is not None]
    assert len(both) >= 6 and {p.lifecycle for p in both} == {"pre_grad_passes", "post_grad_passes"}
    assert all(p.after_differs is False for p in both)  # read on both sides: the same program's graphs
    cold_changed = [p.a.changed_graph for p in both if p.lifecycle == "post_grad_passes"]
    assert cold_changed and all(x is not None for x in cold_changed)  # before vs after read too


def test_compare_command_on_two_logs_says_same_not_unread():
    out = slow.run([sys.executable, "-m", "magi_tui", "compare", str(COLD), str(WARM)], cwd=ROOT,
                   capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    passes = out.stdout.split("Passes and pieces", 1)[1]
    assert "= same    post_grad_passes · forward (prog.py:18) · compile 1" in passes
    assert "not read" not in passes
    assert "A 0 / 8 / 0 (cold)   B 8 / 0 / 0 (warm)" in out.stdout


async def test_the_compare_screen_diffs_a_pass_of_two_logs():
    from textual.app import App

    from magi_tui.ui.screens.compare import CompareScreen
    from magi_tui.ui.screens.diff import DiffScreen
    from tests.support.pilot import notes, wait_for

    app = App()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = CompareScreen(COLD, WARM)
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.loaded, what="the comparison")
        row = next(i for i, o in enumerate(screen.row_objects)
                   if getattr(o, "lifecycle", None) == "post_grad_passes" and o.both)
        from magi_tui.ui.screens.compare import CompareTable

        screen.query_one(CompareTable).highlighted = row
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen) and app.screen.diff is not None,
                       what="the pass's graph, A vs B")
        assert app.screen.diff.identical and not any("cannot" in n for n in notes(app))
