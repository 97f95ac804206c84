"""The triage panel's keys: ``n`` / ``p`` stop once per failure cascade or restart (as the header and the
screen's ``n`` / ``p`` count them), and a long section shows its first rows with a "… N more" row that
shows the rest on Enter."""

from __future__ import annotations

import pytest

from magi_tui.model import RunModel
from magi_tui.ui.app import MagiApp
from magi_tui.ui.widgets.triage_panel import CAP, TriagePanel
from tests.support.paths import FIXTURES
from tests.support.pilot import loaded_run_screen, notes, open_triage, selected_event, triage_rows, wait_for
from tests.support.timeline import record_run

needs_fixtures = pytest.mark.usefixtures("fixtures_dir")


async def _open_triage(pilot, screen):
    await open_triage(pilot, screen)
    screen.query_one("#triage-list").focus()
    await pilot.pause()


@needs_fixtures
async def test_n_in_the_panel_stops_once_per_restart_cascade():
    # the cold transformer: one Dynamo restart, with the four lifecycles that failed with it folded under it
    run_dir = FIXTURES / "transformer" / "magi_depyf" / "run_20261122_111900" / "model_1_TwoLayerTransformer_rank_0"
    model = RunModel(run_dir).load()
    assert len(model.triage.failures) == 5 and len(model.triage.cascades) == 1
    head = model.triage.cascades[0].head.event.index
    app = MagiApp(run_dir)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await loaded_run_screen(pilot)
        await _open_triage(pilot, screen)
        for _ in range(3):  # it wraps on the one stop; it never walks the folded members
            await pilot.press("n")
            await wait_for(pilot, lambda: selected_event(screen) is not None, what="a selection")
            await pilot.pause()
            assert selected_event(screen).index == head
        assert any("restart 1/1" in n for n in notes(app))
        ol = screen.query_one("#triage-list")
        assert ol.highlighted is not None and f"#{head:04d}" in str(ol.get_option_at_index(ol.highlighted).prompt)


async def test_a_long_section_shows_the_rest_on_enter(tmp_path):
    n = CAP + 12
    run_dir = record_run(tmp_path / "many_breaks", [
        ("fullgraph_graph_break", {"scope": "fullgraph", "gb_id": "GB0059", "gb_type": "Failed to trace builtin",
                                   "reason": f"print at site {k}", "user_file": "model.py", "user_line": 100 + k,
                                   "user_frame": f"model.py:{100 + k}"})
        for k in range(n)])
    app = MagiApp(run_dir)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await loaded_run_screen(pilot)
        await _open_triage(pilot, screen)
        panel = screen.query_one(TriagePanel)
        rows = triage_rows(panel)
        assert f"Graph breaks ({n})" in rows
        assert sum(1 for r in rows if r.startswith("×1 ")) == CAP
        more = next(i for i, r in enumerate(rows) if r.startswith("… 12 more"))
        ol = panel.query_one("#triage-list")
        ol.highlighted = more
        await pilot.press("enter")
        await wait_for(pilot, lambda: sum(1 for r in triage_rows(panel) if r.startswith("×1 ")) == n,
                       what="every graph break row")
        assert not any(r.startswith("… ") for r in triage_rows(panel))
        assert any("model.py:111" in r for r in triage_rows(panel))


async def test_n_stops_at_each_restart_of_a_torch_trace_log_too():
    """A TORCH_TRACE log records Dynamo restarts as restart_analysis events, not failed cascades: n / p
    stop at each of them and at the failure (1 failure and 5 restarts in this log), in file order."""
    from tests.support.paths import TORCH_TRACE, require

    log = require(TORCH_TRACE / "graph_breaks_recompiles_failure.log")
    want = RunModel(log).load().triage.stops
    assert [w[1] for w in want].count("restart") == 5 and [w[1] for w in want].count("failure") == 1
    app = MagiApp(log)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await loaded_run_screen(pilot)
        await _open_triage(pilot, screen)
        seen = []
        for k in range(len(want)):
            await pilot.press("n")
            await wait_for(pilot, lambda: selected_event(screen) is not None
                           and selected_event(screen).index in (want[k][0].index,)
                           or getattr(getattr(selected_event(screen), "first", None), "index", None) == want[k][0].index,
                           what=f"stop {k + 1}")
            seen.append(notes(app)[-1])
        assert [s.split(":")[0] for s in seen] == [f"{w[1]} {i + 1}/{len(want)}" for i, w in enumerate(want)]


async def test_j_and_k_move_the_triage_list(tmp_path):
    run_dir = record_run(tmp_path / "breaks", [
        ("fullgraph_graph_break", {"scope": "fullgraph", "gb_id": "GB0059", "reason": f"print at site {k}",
                                   "user_file": "model.py", "user_line": 10 + k, "user_frame": f"model.py:{10 + k}"})
        for k in range(4)])
    app = MagiApp(run_dir)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await loaded_run_screen(pilot)
        await _open_triage(pilot, screen)
        ol = screen.query_one("#triage-list")
        await pilot.press("g")
        first = ol.highlighted
        await pilot.press("j")
        assert ol.highlighted is not None and ol.highlighted > first
        await pilot.press("k")
        assert ol.highlighted == first
        await pilot.press("G")
        assert ol.highlighted > first
