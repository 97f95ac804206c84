"""The fix view as a user drives it: after ``magi-tui fix``, F on the runs list shows the table (best first)
at 80×24; Enter opens the change's run, c compares it with the baseline."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from magi_tui.ui.app import MagiApp
from magi_tui.ui.screens.compare import CompareScreen
from magi_tui.ui.screens.fix import FixScreen, FixTable
from magi_tui.ui.screens.run import RunScreen
from magi_tui.ui.screens.runs import RunsScreen
from tests.support import ahead, slow
from tests.support.paths import ROOT
from tests.support.pilot import screen_text, wait_for

pytest.importorskip("torch")
pytestmark = [pytest.mark.torch, pytest.mark.slow]
PROGRAMS = Path(__file__).resolve().parent / "programs"


@pytest.fixture(scope="module")
def fixed_root(tmp_path_factory) -> Path:
    return ahead.early_result("fixed_root", tmp_path_factory)


@ahead.early("fixed_root")
def _fix(root: Path) -> Path:
    """``magi-tui fix`` of print_break.py into ``root`` (started early: tests/support/ahead.py)"""
    r = slow.run([sys.executable, "-m", "magi_tui", "fix", "-o", str(root), "--", "python",
                  str(PROGRAMS / "print_break.py")], cwd=ROOT, capture_output=True, text=True,
                 env=dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1"), timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    # the text table: the baseline, then the change with breaks before → after, outputs, kept
    lines = r.stdout.splitlines()
    assert lines[0].startswith("baseline: 1 graph break(s), 0 recompile(s), compile ")
    row = next(ln for ln in lines if ln.startswith("best: let Dynamo move print()"))
    assert row.split()[-5:-3] == ["1→0", "0→0"] and row.endswith("equal    yes")
    assert "  config: torch._dynamo.config.reorderable_logging_functions.add(print)" in lines
    assert any(ln.startswith("  patch (proven: its own run, graph breaks 1→0") for ln in lines)
    return root


async def test_fix_view_shows_the_proven_change_and_opens_its_runs(fixed_root):
    app = MagiApp(fixed_root)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen) and len(app.screen.rows) == 4,
                       what="the runs list: the baseline twice, the change, the patched copy")
        await pilot.press("F")
        await wait_for(pilot, lambda: isinstance(app.screen, FixScreen) and app.screen.loaded, what="the fix view")
        text = screen_text(app)
        assert "baseline: 1 graph break(s), 0 recompile(s)" in text
        assert "best: let Dynamo move print()" in text and "1→0" in text and "equal" in text
        screen = app.screen
        table = screen.query_one(FixTable)
        row = next(i for i, c in enumerate(screen.row_objects) if c is not None)
        table.highlighted = row
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, RunScreen), what="the change's run")
        assert str(app.screen.run.path) == screen.row_objects[row]["run"]
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, FixScreen), what="back on the fix view")
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.loaded,
                       what="baseline vs the change")
        assert "GB0059" in screen_text(app)  # the break the change removed
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, FixScreen), what="back on the fix view")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen), what="back on the runs list")
