"""The frames view (``w``): one row per compiled code object, as the triage analysis counts them;
sortable; Enter lists the frame's events, and Enter on one shows it in the run's tree."""

from __future__ import annotations

import pytest

from magi_tui.model.analysis.checks import analyse
from magi_tui.model.analysis.frames import short_frame
from magi_tui.ui.app import MagiApp
from magi_tui.ui.screens.frames import FramesScreen, FramesTable
from magi_tui.ui.screens.run import RunScreen
from magi_tui.ui.widgets.detail import EventDetail
from tests.support.paths import COLD, FIXTURES, TORCH_TRACE
from tests.support.pilot import loaded_run_screen, screen_text, wait_for

pytestmark = pytest.mark.usefixtures("fixtures_dir")
LOG = TORCH_TRACE / "graph_breaks_recompiles_failure.log"


@pytest.mark.usefixtures("torch_trace_dir")
async def test_frames_rows_sort_and_jump_to_an_event():
    app = MagiApp(LOG)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await loaded_run_screen(pilot)
        expected = analyse(screen.run).frames
        await pilot.press("w")
        await wait_for(pilot, lambda: isinstance(app.screen, FramesScreen) and app.screen.rows, what="frames")
        frames = app.screen
        table = frames.query_one(FramesTable)
        assert table.row_count == len(expected) > 1
        # sorted by compile time, slowest first; s moves to compiles
        shown = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        by_time = sorted(expected, key=lambda f: -(f.compile_s or -1.0))
        assert shown[0] == short_frame(by_time[0].frame)
        await pilot.press("s")
        counts = [int(str(table.get_row_at(i)[1])) for i in range(table.row_count)]
        assert counts == sorted(counts, reverse=True)
        most = max(expected, key=lambda f: f.compiles)
        assert f"{most.compiles}/{most.recompile_limit}" in screen_text(app)
        # Enter: the frame's events below; Enter on one: back on the run with it selected
        await pilot.press("enter")
        await wait_for(pilot, lambda: "events of" in screen_text(app) and frames._events, what="events")
        assert all(e.compile_id.split("/")[0] == most.key for e in frames._events)
        target = frames._events[0]
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is screen, what="back on the run")
        detail = screen.query_one(EventDetail)
        await wait_for(pilot, lambda: detail.current_event is not None, what="the event shown")
        span = detail.current_span
        assert detail.current_event is target or (span is not None and target in span.events)


async def test_frames_of_an_upstream_run_and_of_compiled_functions_only():
    app = MagiApp(COLD)
    async with app.run_test(size=(140, 30)) as pilot:
        await loaded_run_screen(pilot)
        await pilot.press("w")
        await wait_for(pilot, lambda: isinstance(app.screen, FramesScreen) and app.screen.rows, what="frames")
        assert "forward (magi_compile_transformer_example.py:95)" in screen_text(app)
        await pilot.press("enter")  # no compile ids upstream: the only frame owns every event
        await wait_for(pilot, lambda: len(app.screen._events) == 72, what="the run's events")
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RunScreen), what="back")
    app = MagiApp(FIXTURES / "recompile_explain")
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_for(pilot, lambda: app.screen is not None and hasattr(app.screen, "run"), what="a run")
        if not isinstance(app.screen, RunScreen):
            await pilot.press("enter")
        await loaded_run_screen(pilot)
        await pilot.press("w")
        await wait_for(pilot, lambda: isinstance(app.screen, FramesScreen) and len(app.screen.rows) == 4,
                       what="four frames from compiled_functions/")
        text = screen_text(app)
        assert "toy_with_break (recompile_variant.py:9)" in text and "3/8" in text


def test_resume_functions_stay_distinguishable_when_cut():
    names = ["torch_dynamo_resume_in_forward_at_149 (capture_demo.py:149)",
             "torch_dynamo_resume_in_helper_with_print_at_157 (capture_demo.py:157)"]
    shown = [short_frame(n)[:20] for n in names]  # what a narrow column keeps
    assert shown == ["↪ forward@149 (captu", "↪ helper_with_print@"] and len(set(shown)) == 2
