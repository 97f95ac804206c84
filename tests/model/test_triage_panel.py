"""The triage panel shows the model's checks (the same list ``magi-tui triage`` prints), the graph-break
worklist and the recompiles explained; Enter on a finding jumps to its event (driven by keys)."""

from __future__ import annotations

import pytest

pytest.importorskip("textual")

from test_triage_frames import TRACE_LOGS, trace_run  # noqa: E402

from magi_tui.model import RunModel  # noqa: E402
from magi_tui.model.analysis.checks import analyse  # noqa: E402
from magi_tui.ui.app import MagiApp  # noqa: E402
from magi_tui.ui.widgets.triage_panel import TriagePanel  # noqa: E402
from tests.support.paths import FIXTURES
from tests.support.pilot import (  # noqa: E402
    loaded_run_screen,
    open_triage,
    screen_text,
    selected_event,
    triage_rows,
    wait_for,
)

needs_fixtures = pytest.mark.usefixtures("fixtures_dir")


@needs_fixtures
async def test_panel_shows_model_checks_worklist_and_recompiles():
    app = MagiApp(FIXTURES / "recompile_explain")
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await loaded_run_screen(pilot)
        await open_triage(pilot, screen)
        panel = screen.query_one(TriagePanel)
        want = analyse(RunModel(FIXTURES / "recompile_explain").load()).checks
        assert [c.message for c in panel.checks()] == [c.message for c in want]
        rows = triage_rows(panel)
        assert "Graph breaks (2)" in rows and "Recompiles (6)" in rows and "Frames (4)" in rows
        dtype = next(r for r in rows if "a arrived as torch.float64" in r)
        assert "expected torch.float32" in dtype and "actual torch.float64" in dtype
        # the changed token first, and each guard line cut around it (was: both cut before the difference)
        assert "changed: torch.float32 -> torch.float64" in dtype
        assert "- …" in dtype and "torch.float32, device=" in dtype and "torch.float64, device=" in dtype
        assert any(r.startswith("×3 ") and "recompile_variant.py:13" in r for r in rows)
        await wait_for(pilot, lambda: "6 recompile(s) in 4 frame(s)" in screen_text(app), what="the checks")


@pytest.mark.usefixtures("torch_trace_dir")
async def test_enter_on_a_graph_break_jumps_to_it(tmp_path):
    run_dir = trace_run(TRACE_LOGS / "graph_breaks_recompiles_failure.log", tmp_path / "run")
    first_gb = analyse(RunModel(run_dir).load()).worklist[0].events[0].index
    app = MagiApp(run_dir)
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await loaded_run_screen(pilot)
        await open_triage(pilot, screen)
        panel = screen.query_one(TriagePanel)
        ol = panel.query_one("#triage-list")
        idx = next(i for i, r in enumerate(triage_rows(panel)) if r.startswith("×3 GB0124"))
        ol.focus()
        ol.highlighted = idx
        await pilot.press("enter")
        await wait_for(pilot, lambda: selected_event(screen) is not None and selected_event(screen).index == first_gb,
                       what="the tree to select the graph break")
        rows = triage_rows(panel)
        assert any("1/4" in r and "expected torch.float32" in r for r in rows)   # recompiles, every reason
        assert any(r.startswith("Failures (1)") for r in rows) and any(r.startswith("Restarts (5)") for r in rows)
