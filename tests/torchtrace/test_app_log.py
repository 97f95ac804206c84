"""The app on a TORCH_TRACE log, driven as a user would (Pilot): it opens on the run screen with the
log's events, shows a graph break's message, diffs the post-grad graph pair, lists a per-rank folder,
and follows a log while it is written (``attach``)."""

from __future__ import annotations

import shutil

import pytest

from magi_tui.model import RunModel
from magi_tui.ui.app import MagiApp
from magi_tui.ui.screens.diff import DiffScreen
from magi_tui.ui.screens.run import RunScreen
from magi_tui.ui.screens.runs import RunsScreen
from tests.support.pilot import loaded_run_screen, run_screen, screen_text, tree_labels, wait_for
from tests.torchtrace.logkit import BREAKS_LOG, DYNAMIC_LOG, records

pytestmark = pytest.mark.usefixtures("torch_trace_dir")
SIZE = (140, 42)


async def test_app_opens_a_log_on_the_run_screen():
    app = MagiApp(BREAKS_LOG)
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded_run_screen(pilot)
        assert isinstance(screen, RunScreen) and screen.run.path == BREAKS_LOG
        assert len(screen.run.events) > 100
        assert BREAKS_LOG.name in screen_text(app)
        assert "graph_break" in tree_labels(screen)
        ev = next(e for e in screen.run.events if e.kind == "graph_break")
        screen.jump_to(ev)
        # the break's message, from the log's payload, in the file pane
        await wait_for(pilot, lambda: "Graph Break Reason" in screen_text(app), what="the graph break text")
        assert "Unsupported Tensor.item() call" in screen_text(app)


async def test_d_diffs_the_post_grad_graph_pair():
    app = MagiApp(BREAKS_LOG)
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded_run_screen(pilot)
        ev = next(e for e in screen.run.events
                  if e.name == "fullgraph_after_post_grad_passes" and e.span is not None
                  and e.span.before is not None and e.span.before.files)
        screen.jump_to(ev)
        await pilot.pause()
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen) and app.screen.diff is not None,
                       what="the diff")
        diff = app.screen
        assert "post_grad_graph.py" in diff.left_title and "post_grad_graph.py" in diff.right_title
        await wait_for(pilot, lambda: "post_grad_graph.py" in screen_text(app), what="diff titles on screen")
        await pilot.press("q")
        assert isinstance(app.screen, RunScreen)


async def test_a_folder_of_rank_logs_lists_them(tmp_path):
    shutil.copy(BREAKS_LOG, tmp_path / "dedicated_log_torch_trace_rank_0_a.log")
    shutil.copy(DYNAMIC_LOG, tmp_path / "dedicated_log_torch_trace_rank_1_b.log")
    app = MagiApp(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen) and len(app.screen.rows) == 2,
                       what="two runs listed")
        assert sorted(r["rank"] for r in app.screen.rows) == [0, 1]
        await pilot.press("enter")
        screen = await loaded_run_screen(pilot)
        assert screen.run.path.name.startswith("dedicated_log_torch_trace_rank_")


async def test_attach_follows_a_log_being_written(tmp_path):
    recs = records()
    log = tmp_path / "dedicated_log_torch_trace_live.log"
    app = MagiApp(tmp_path, live=True)
    async with app.run_test(size=SIZE) as pilot:
        log.write_bytes(b"".join(recs[:120]) + recs[120][:40])  # the last record half written
        await wait_for(pilot, lambda: run_screen(app) is not None and run_screen(app).loaded, timeout=15,
                       what="the live run screen")
        screen = run_screen(app)
        assert screen.live and screen.run.path == log
        first = len(screen.run.events)
        with open(log, "ab") as f:
            f.write(recs[120][40:] + b"".join(recs[121:]))
        want = len(RunModel(BREAKS_LOG).load().events)
        await wait_for(pilot, lambda: len(screen.run.events) == want, timeout=15, what="every event of the log")
        assert first < want
        assert [e.index for e in screen.run.events] == list(range(want))
        await wait_for(pilot, lambda: "failed" in tree_labels(screen).lower(), what="the failure in the tree")


async def test_mark_in_one_rank_log_and_diff_against_another(tmp_path):
    shutil.copy(BREAKS_LOG, tmp_path / "dedicated_log_torch_trace_rank_0_a.log")
    shutil.copy(BREAKS_LOG, tmp_path / "dedicated_log_torch_trace_rank_1_b.log")
    app = MagiApp(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen) and len(app.screen.rows) == 2,
                       what="two runs listed")
        await pilot.press("enter")
        first = await loaded_run_screen(pilot)
        graphs = [e for e in first.run.events if e.name == "fullgraph_after_dynamo_capture"]
        first.jump_to(graphs[0])
        await pilot.pause()
        await pilot.press("m")
        assert app.mark is not None and app.mark.ref.name == "captured_graph.py"
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen), what="the runs list")
        await pilot.press("down", "enter")
        second = await loaded_run_screen(pilot)
        assert second.run.path != first.run.path
        second.jump_to([e for e in second.run.events if e.name == "fullgraph_after_dynamo_capture"][1])
        await pilot.pause()
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen) and app.screen.diff is not None,
                       what="the diff across the two logs")
        d = app.screen
        assert not d.diff.identical and d.diff.hunks  # graph 0 of one rank against graph 1 of the other
        assert "captured_graph.py" in d.left_title and "captured_graph.py" in d.right_title
