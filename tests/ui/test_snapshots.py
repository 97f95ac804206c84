"""SVG snapshots of the main screens at 100x30 and 80x24 (update with --snapshot-update).

Only screens without absolute paths are snapshotted, so the SVGs are the same wherever the
repository and ../shared are checked out.
"""

from __future__ import annotations

import pytest

from magi_tui.ui.app import MagiApp
from magi_tui.ui.screens.diff import DiffScreen
from magi_tui.ui.screens.run import RunScreen
from tests.support.paths import COLD

pytestmark = pytest.mark.usefixtures("fixtures_dir")

SIZES = [(100, 30), (80, 24)]


async def _loaded(pilot) -> RunScreen:
    for _ in range(200):
        screen = pilot.app.screen
        if isinstance(screen, RunScreen) and screen.loaded:
            await pilot.pause()
            return screen
        await pilot.pause(0.05)
    raise AssertionError("run did not load")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_run_screen_with_triage(snap_compare, size):
    async def run_before(pilot):
        await _loaded(pilot)

    assert snap_compare(MagiApp(COLD), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_run_screen_first_failure_detail(snap_compare, size):
    async def run_before(pilot):
        await _loaded(pilot)
        await pilot.press("f")
        await pilot.pause()

    assert snap_compare(MagiApp(COLD), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_diff_screen_graph_split(snap_compare, size):
    async def run_before(pilot):
        screen = await _loaded(pilot)
        screen.jump_to(next(e for e in screen.run.events if e.name == "fullgraph_after_graph_split"))
        await pilot.pause()
        await pilot.press("d")
        for _ in range(200):
            if isinstance(pilot.app.screen, DiffScreen) and pilot.app.screen.diff is not None:
                break
            await pilot.pause(0.05)
        await pilot.press("right_square_bracket")
        await pilot.pause()

    assert snap_compare(MagiApp(COLD), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_timeline(snap_compare, size):
    async def run_before(pilot):
        await _loaded(pilot)
        await pilot.press("t")
        await pilot.pause()

    assert snap_compare(MagiApp(COLD), terminal_size=size, run_before=run_before)
