"""The compare and ranks screens as a user drives them: mark two runs, c, read the comparison at
80×24, diff a pass's graph A vs B; R opens the ranks view with the divergent rank first."""

from __future__ import annotations

import pytest

from magi_tui.ui.app import MagiApp
from magi_tui.ui.screens.compare import CompareScreen, CompareTable
from magi_tui.ui.screens.diff import DiffScreen
from magi_tui.ui.screens.ranks import RanksScreen
from magi_tui.ui.screens.runs import RunsScreen, RunsTable
from tests.support.pilot import notes, screen_text, unsafe_on_screen, wait_for

pytestmark = [pytest.mark.torch, pytest.mark.slow]


async def _runs_screen(pilot, n: int) -> RunsScreen:
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, RunsScreen) and len(pilot.app.screen.rows) == n,
                   what=f"the runs list with {n} runs")
    return pilot.app.screen


async def _move_to(pilot, screen: RunsScreen, path) -> None:
    table = screen.query_one(RunsTable)
    table.move_cursor(row=table.get_row_index(str(path)))
    await pilot.pause()


async def test_mark_two_runs_and_compare_then_diff_a_pass(traced_pair):
    a, b = traced_pair
    app = MagiApp(a.parents[3])
    async with app.run_test(size=(80, 24)) as pilot:
        runs = await _runs_screen(pilot, 2)
        await _move_to(pilot, runs, a)
        await pilot.press("m")
        await _move_to(pilot, runs, b)
        await pilot.press("m")
        assert runs.marked == [str(a), str(b)]
        assert "[A]" in screen_text(app) and "[B]" in screen_text(app)
        assert runs.query_one("#runs-filter").value == ""      # m was a key, not filter text
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.loaded,
                       what="the compare screen")
        screen = app.screen
        text = screen_text(app)
        assert "compare" in text and "model_1_pair_rank_0" in text
        assert "Graph breaks" in text and "+ GB0059 pair.py:" in text
        assert "Recompiles" in text and "size mismatch" in text
        assert "Diff pass" in text and "? Help" in text.replace("?  Help", "? Help")
        assert not unsafe_on_screen(app)
        # ] jumps to the first pass whose graph differs; d opens A's graph against B's
        await pilot.press("right_square_bracket")
        obj = screen.current_object()
        assert obj is not None and obj.after_differs
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen) and app.screen.diff is not None,
                       what="the diff of the pass's graph")
        diff = app.screen
        assert diff.left.path == obj.a.after.path and diff.right.path == obj.b.after.path
        assert not diff.diff.identical
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen, what="back on the compare screen")
        # a row that is not a pass says what to select
        screen.query_one(CompareTable).highlighted = 0
        await pilot.press("d")
        assert any("Select a pass" in n for n in notes(app))
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen), what="back on the runs list")


async def test_ranks_view_shows_the_divergent_rank_first(two_ranks):
    app = MagiApp(two_ranks)
    async with app.run_test(size=(100, 30)) as pilot:
        await _runs_screen(pilot, 2)
        await pilot.press("R")
        await wait_for(pilot, lambda: isinstance(app.screen, RanksScreen) and app.screen.loaded,
                       what="the ranks view")
        text = screen_text(app)
        lines = [ln for ln in text.splitlines() if "rank 0:" in ln or "rank 1:" in ln]
        assert "DIVERGED: rank(s) 1 differ from rank 0" in text
        assert "rank 1:" in lines[0] and "rank 0:" in lines[1]
        assert "compile_ids: compile 0/1 (f) on rank(s) 1 only" in text
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen), what="back on the runs list")


@pytest.mark.usefixtures("fixtures_dir")
@pytest.mark.parametrize("no_color", [False, True])
async def test_compare_screen_on_upstream_runs_at_80x24(monkeypatch, no_color):
    """The shared cold / warm transformer runs (no compile ids), also under NO_COLOR; a pass row's diff opens."""
    from tests.support.paths import COLD, WARM

    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")
    app = MagiApp(COLD)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.screen is not None and type(app.screen).__name__ == "RunScreen")
        app.push_screen(CompareScreen(COLD, WARM))
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.loaded,
                       what="the compare screen")
        text = screen_text(app)
        assert "Traceback" not in text and "cannot compare" not in text
        assert "run_20261122_111900/model_1_TwoLayerTransformer_rank_0" in text   # same model dir: run ids shown
        assert "Cache (hits / misses / bypasses)" in text and not unsafe_on_screen(app)
        screen = app.screen
        i = next(k for k, o in enumerate(screen.row_objects) if getattr(o, "both", False))
        screen.query_one(CompareTable).highlighted = i
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen) and app.screen.diff is not None,
                       what="the pass's diff")
