"""Calls per compiled entry in the app (issue 24 item 1): the frames view's calls / eager columns and
the entries line, and the compiled functions browser's calls per entry, on a run the tracer records."""

from __future__ import annotations

import pytest

from magi_format.text import fmt_seconds
from magi_tui.ui.app import MagiApp
from magi_tui.ui.frames_columns import COLUMNS
from magi_tui.ui.screens.compiled import CompiledFunctionsScreen
from magi_tui.ui.screens.frames import FramesScreen, FramesTable
from tests.support.pilot import loaded_run_screen, screen_text, wait_for

pytestmark = [pytest.mark.torch, pytest.mark.slow]


@pytest.fixture
def run_dir(calls_run):
    return calls_run  # tests/conftest.py: one traced run, shared with tests/model/test_runtime_model.py


async def test_frames_view_shows_calls_and_eager_calls_and_each_entry(run_dir):
    app = MagiApp(run_dir)
    async with app.run_test(size=(120, 30)) as pilot:
        await loaded_run_screen(pilot)
        await pilot.press("w")
        await wait_for(pilot, lambda: isinstance(app.screen, FramesScreen) and app.screen.rows, what="frames")
        table = app.screen.query_one(FramesTable)
        cells = dict(zip([c.key for c in COLUMNS], [str(c) for c in table.get_row_at(0)]))
        assert (cells["calls"], cells["eager_calls"]) == ("50", "5")  # calls served by its entries, eager calls
        row = app.screen.rows[0]
        assert row.first_call_s is not None and cells["first_call_s"] == fmt_seconds(row.first_call_s)
        # the first call of each entry (0/0's and 0/1's), as the entries' own records say
        assert row.first_call_s == pytest.approx(sum(e.first_call_seconds for e in row.entries))
        await pilot.press("enter")
        await wait_for(pilot, lambda: "entries 0/0 ×30" in screen_text(app), what="the entries line")
        assert "0/1 ×20" in screen_text(app) and "eager ×5" in screen_text(app)


async def test_compiled_functions_show_the_calls_each_entry_served(run_dir):
    app = MagiApp(run_dir)
    async with app.run_test(size=(120, 30)) as pilot:
        await loaded_run_screen(pilot)
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, CompiledFunctionsScreen)
                       and "call(s)" in screen_text(app), what="calls per entry")
        text = screen_text(app)
        assert "entry_0 (most recently used)  ×20 call(s)" in text and "compile 0/1" in text
        assert "entry_1  ×30 call(s)" in text


async def test_triage_panel_lists_the_silent_fallback_with_its_eager_calls(run_dir):
    app = MagiApp(run_dir)
    # tall: the sections above it (ran eagerly, recompiles with their guard diffs) fill 36 rows
    async with app.run_test(size=(120, 80)) as pilot:
        await loaded_run_screen(pilot)
        await pilot.press("T")
        await wait_for(pilot, lambda: "Silent fallbacks (1)" in screen_text(app), what="the fallbacks section")
        text = screen_text(app)
        assert "recompile_limit  5 eager call(s)" in text and "at f (prog.py:5)" in text
