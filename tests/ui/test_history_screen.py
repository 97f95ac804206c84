"""The History screen (H): on an index of a CI-like history made from a real TORCH_TRACE log (a real graph
break copied into runs 5..8 of 12, tests/support/history_runs.py), it plots each metric's trend, lists the
break, says where it appeared and where it was gone, and opens those runs; without an index it says how to
make one."""

from __future__ import annotations

from pathlib import Path

import pytest

from magi_tui.history.locate import DEFAULT_NAME
from magi_tui.history.write import index_runs
from magi_tui.ui.app import MagiApp
from magi_tui.ui.screens.history import HistoryScreen
from magi_tui.ui.screens.run import RunScreen
from tests.support.history_runs import BREAK_ID, Plan, make_history, run_path
from tests.support.pilot import screen_text, wait_for

PLAN = Plan(12, break_from=5, break_until=9, labels=("ci",))


@pytest.fixture(scope="module")
def history_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("history")
    make_history(root, PLAN)
    index_runs([root], root / DEFAULT_NAME)
    return root


async def _history(pilot, app: MagiApp) -> HistoryScreen:
    await pilot.press("H")
    await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen) and app.screen.loaded)
    screen = app.screen
    assert isinstance(screen, HistoryScreen)
    return screen


async def test_history_plots_the_trend_and_finds_where_a_break_appeared_and_went(history_root, monkeypatch):
    monkeypatch.delenv("MAGI_TUI_INDEX", raising=False)
    app = MagiApp(history_root)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _history(pilot, app)
        assert screen.problem is None and screen.data is not None
        assert screen.data["runs"] == 12
        values = [r["value"] for r in screen.data["trends"]["compile_time"]]
        assert len(values) == 12 and values == sorted(values)  # compile time drifts up run after run
        assert [r["value"] for r in screen.data["trends"]["breaks"]] == [1 if PLAN.has_break(i) else 0
                                                                        for i in range(12)]
        assert screen.causes and screen.causes[0]["id"] == BREAK_ID
        await wait_for(pilot, lambda: BREAK_ID in screen.lifetimes)
        text = screen_text(app)
        assert "compile time (s)" in text and BREAK_ID in text
        assert f"appeared {run_path(history_root, PLAN, 5).name}" in text
        assert f"gone {run_path(history_root, PLAN, 9).name}" in text
        await pilot.press("m")
        assert screen.metric == "breaks" and "graph breaks" in screen_text(app)
        await pilot.press("enter")  # the run where it appeared
        await wait_for(pilot, lambda: isinstance(app.screen, RunScreen))
        assert app.screen.run.path == run_path(history_root, PLAN, 5)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen)
        await pilot.press("o")  # the run where it was gone
        await wait_for(pilot, lambda: isinstance(app.screen, RunScreen))
        assert app.screen.run.path == run_path(history_root, PLAN, 9)


async def test_history_without_an_index_says_how_to_make_one_and_i_makes_it(tmp_path, monkeypatch):
    monkeypatch.delenv("MAGI_TUI_INDEX", raising=False)
    make_history(tmp_path, Plan(2, labels=("ci",)))
    app = MagiApp(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _history(pilot, app)
        assert screen.data is None and screen.problem is not None
        assert "magi-tui index" in screen.problem and DEFAULT_NAME in screen.problem
        assert "magi-tui index" in screen_text(app)
        await pilot.press("i")  # index the runs here, into ROOT/.magi-index, then show them
        await wait_for(pilot, lambda: screen.data is not None, what="the index made and read")
        assert screen.problem is None and screen.data["runs"] == 2
        assert (tmp_path / DEFAULT_NAME / "_manifest").is_dir()
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, HistoryScreen))


@pytest.mark.usefixtures("fixtures_dir")
async def test_history_of_real_recorded_runs_one_without_a_start_time(tmp_path, monkeypatch):
    """The fixtures' magi_depyf runs (several programs; toy_explain_warm_cache is empty and says no start
    time): the screen plots what the runs say and lists their breaks (this crashed on the missing start)."""
    from tests.support.paths import FIXTURES

    index_runs([FIXTURES], tmp_path / "idx")
    monkeypatch.setenv("MAGI_TUI_INDEX", str(tmp_path / "idx"))
    app = MagiApp(FIXTURES)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _history(pilot, app)
        assert screen.problem is None and screen.data is not None
        assert any(r["started"] is None for r in screen.data["trends"]["compile_time"])
        assert screen.causes
        ident = screen.causes[0]["id"]
        await wait_for(pilot, lambda: ident in screen.lifetimes)
        assert screen.lifetimes[ident]["first_seen"] is not None
        assert "appeared " in screen_text(app)


async def test_history_from_a_run_is_that_programs(history_root, monkeypatch):
    """H on a run: the index beside its folder (ROOT/.magi-index, two folders up) and its program's runs."""
    monkeypatch.delenv("MAGI_TUI_INDEX", raising=False)
    monkeypatch.chdir(history_root)  # the run named as a user types it: relative
    app = MagiApp(run_path(history_root, PLAN, 3).relative_to(history_root))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.loaded)
        screen = await _history(pilot, app)
        assert screen.problem is None and screen.label == "ci" and screen.data is not None
        assert screen.data["runs"] == 12
        assert "12 run(s) of ci" in screen_text(app)
