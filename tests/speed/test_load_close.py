"""Closing a run while its thread worker is still reading it: the reads still arriving are dropped, never
applied to the closed screen's widgets (no NoMatches / MountError)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from magi_tui.ui.app import MagiApp
from magi_tui.ui.screens.run import RunScreen

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from synth import write_synthetic_run  # noqa: E402


async def test_pop_the_run_screen_while_it_loads(tmp_path):
    run = tmp_path / "magi_depyf" / "run_20261122_111900" / "model_1_X_rank_0"
    write_synthetic_run(run, 60_000, with_files=0)
    app = MagiApp(run)
    async with app.run_test(size=(100, 30)):
        screen = None
        for _ in range(2000):  # plain sleeps: the pilot's pauses wait for the load to finish
            if isinstance(app.screen, RunScreen) and app.screen.run.events:
                screen = app.screen
                break
            await asyncio.sleep(0.005)
        assert screen is not None
        assert not screen.loaded  # still loading
        app.pop_screen()
        for _ in range(400):
            await asyncio.sleep(0.01)
            if screen not in app.screen_stack:
                break
        await asyncio.sleep(1.5)  # the worker's remaining reads arrive and are dropped
        assert not screen.loaded
    assert app._exception is None
