"""The explorer on the real fixtures, driven by keys as a user would (Pilot)."""

from __future__ import annotations

from pathlib import Path

import pytest

from magi_tui.ui.app import MagiApp
from magi_tui.ui.screens.diff import DiffScreen
from magi_tui.ui.screens.run import RunScreen
from magi_tui.ui.screens.runs import RunsScreen
from magi_tui.ui.widgets.detail import EventDetail
from magi_tui.ui.widgets.triage_panel import TriagePanel
from tests.support.paths import COLD, TRANSFORMER, WARM
from tests.support.pilot import find_event, loaded_run_screen, notes, screen_text, selected_event, wait_for
from tests.support.timeline import record_run

pytestmark = pytest.mark.usefixtures("fixtures_dir")


async def test_f_selects_first_failure_on_cold_transformer():
    app = MagiApp(COLD)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await loaded_run_screen(pilot)
        await pilot.press("f")
        ev = selected_event(screen)
        assert ev.index == 13 and ev.name == "fullgraph_failed_compiler_compile"
        # the detail pane shows that event and its failed graph
        assert screen.query_one("#detail").current_event is ev
        await wait_for(pilot, lambda: "TensorifyScalarRestartAnalysis" in screen_text(app))


async def test_triage_lists_restart_cascade_as_recovered():
    app = MagiApp(COLD)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await loaded_run_screen(pilot)
        # shown by default because the run has failures
        assert screen.query_one("#right").current == "triage"
        panel = screen.query_one(TriagePanel)
        ol = panel.query_one("#triage-list")
        rows = [str(ol.get_option_at_index(i).prompt) for i in range(ol.option_count)]
        failures = [r for r in rows if "failed_" in r and "recovered" in r]
        assert len([r for r in rows if "NOT recovered" in r]) == 0
        for idx in (13, 14, 15, 16, 17):
            assert any(f"#{idx:04d}" in r for r in failures), idx
        assert any(r.startswith("Restarts") for r in rows)
        await wait_for(pilot, lambda: "RECOVERED" in screen_text(app))
        text = screen_text(app)
        # issue #10: one restart (its cascade folded under it), not five failures
        assert "RECOVERED" in text and "1 Dynamo restart(s), all" in text and "5 failure" not in text
        # n steps through failures and restarts, one per cascade: this run has one (a restart)
        await pilot.press("n")
        assert selected_event(screen).index == 13
        await pilot.press("n")
        assert selected_event(screen).index == 13
        assert any("restart 1/1: #13" in n for n in notes(app))


async def test_d_on_after_pass_event_diffs_against_its_before():
    app = MagiApp(COLD)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await loaded_run_screen(pilot)
        ev = find_event(screen, "subgraph_0_after_postcleanuppass")
        screen.jump_to(ev)
        await pilot.pause()
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen) and app.screen.diff is not None)
        diff_screen = app.screen
        assert "before_postcleanuppass_graph.txt" in diff_screen.left_title
        assert "after_lifecycle_graph.txt" in diff_screen.right_title
        assert f"{ev.index:04d}" in diff_screen.right_title
        await wait_for(pilot, lambda: "before_postcleanuppass_graph.txt" in screen_text(app))
        text = screen_text(app)
        assert "before_postcleanuppass_graph.txt" in text
        await pilot.press("q")
        assert isinstance(app.screen, RunScreen)


async def test_mark_and_diff_across_cold_and_warm_runs():
    app = MagiApp(TRANSFORMER)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.rows)
        runs = app.screen
        assert len(runs.rows) == 2
        await pilot.press("enter")  # newest first: the warm run
        screen = await loaded_run_screen(pilot)
        assert screen.run.path == WARM
        screen.jump_to(find_event(screen, "fullgraph_after_graph_split"))
        await pilot.pause()
        await pilot.press("m")
        assert app.mark is not None and app.mark.run_path == WARM
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)
        await pilot.press("down", "enter")
        screen = await loaded_run_screen(pilot)
        assert screen.run.path == COLD
        screen.jump_to(find_event(screen, "fullgraph_after_graph_split"))
        await pilot.pause()
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen) and app.screen.diff is not None)
        d = app.screen
        assert d.left.path.is_relative_to(WARM.resolve())  # the mark, from the other run
        assert d.right.path.is_relative_to(COLD.resolve())
        assert d.left_title.startswith("run_20261122_112002/") and d.right_title.startswith("run_20261122_111900/")


def _write_run(root: Path, attrs: dict) -> Path:
    return record_run(root / "weird", [
        ("fullgraph_before_compile", {"scope": "fullgraph", "lifecycle_name": "compile"}),
        ("fullgraph_failed_compile", {"scope": "fullgraph", "lifecycle_name": "compile", **attrs}),
    ])


async def test_markup_and_ansi_in_messages_render_literally(tmp_path):
    run = _write_run(tmp_path, {"exception_type": "Boom[bold]", "exception_message": "x [bold]y[/] \x1b[31mred op [/foo]"})
    app = MagiApp(run)
    async with app.run_test(size=(160, 40)) as pilot:
        await loaded_run_screen(pilot)
        await pilot.press("f")
        await wait_for(pilot, lambda: "Boom[bold]" in screen_text(app))
        text = screen_text(app)
        assert "Boom[bold]" in text
        assert "[bold]y[/]" in text
        assert "\\x1b[31mred" in text
        assert "op [/foo]" in text
        assert "\x1b" not in text


async def test_every_event_kind_has_a_mark_in_the_tree(tmp_path):
    """Each kind the model gives an event (cache hit / miss / bypass, recompile, break, ...) is shown with
    its mark and reason; a new kind never crashes the tree."""
    from magi_tui.ui.labels import MARKS

    run = record_run(tmp_path / "kinds", [
        ("fullgraph_before_compile", {"scope": "fullgraph", "lifecycle_name": "compile"}),
        ("fullgraph_cache_bypass", {"scope": "fullgraph", "cache": "fx_graph", "reason": "No shape env"}),
        ("fullgraph_cache_miss", {"scope": "fullgraph", "cache": "fx_graph", "reason": "full_miss"}),
        ("fullgraph_cache_hit", {"scope": "fullgraph", "cache": "fx_graph", "reason": "cache hit"}),
        ("fullgraph_recompile", {"scope": "fullgraph", "reason": "size mismatch", "frame": "f"}),
        ("fullgraph_graph_break", {"scope": "fullgraph", "reason": "print", "gb_id": "GB0059"}),
        ("fullgraph_after_compile", {"scope": "fullgraph", "lifecycle_name": "compile", "duration_ms": 3.0}),
    ])
    app = MagiApp(run)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await loaded_run_screen(pilot)
        kinds = {e.kind for e in screen.run.events} - {""}
        assert {"cache_bypass", "cache_miss", "cache_hit", "recompile", "graph_break"} <= kinds
        assert kinds <= set(MARKS), kinds - set(MARKS)
        await pilot.press("l", "l")  # open the compile's group
        await wait_for(pilot, lambda: "◌ cache bypass No shape env" in screen_text(app), what="the bypass row")
        text = screen_text(app)
        assert "○ cache miss full_miss" in text and "⟳ recompile size mismatch" in text


async def test_header_counts_a_restart_as_a_restart_not_as_failures():
    app = MagiApp(COLD)
    async with app.run_test(size=(120, 30)) as pilot:
        await loaded_run_screen(pilot)
        title = screen_text(app).splitlines()[0]
        assert "recovered" in title and "1 restart(s)" in title
        assert "failure" not in title and "failed" not in title  # 5 failed events, but all one restart


async def test_graph_break_rows_name_torchs_id_and_shape_rows_their_symbol(tmp_path):
    run = record_run(tmp_path / "gb", [
        ("fullgraph_graph_break", {"scope": "fullgraph", "gb_id": "GB0059",
                                   "gb_type": "Failed to trace builtin operator",
                                   "reason": "Encountered graph break when attempting to trace CALL"}),
        ("fullgraph_shape_guard", {"scope": "fullgraph", "expr": "s77 > 2"}),
    ])
    app = MagiApp(run)
    async with app.run_test(size=(140, 30)) as pilot:
        await loaded_run_screen(pilot)
        await wait_for(pilot, lambda: "graph break GB0059 Failed to trace" in screen_text(app), what="gb row")
        assert "Encountered graph break" not in screen_text(app).split("▕")[0]
        assert "shape_guard s77 > 2" in screen_text(app)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_after_f_the_failures_exception_is_on_screen_at_every_size(tmp_path, size):
    """Issue 10 item 13: a failed event shows its exception type and message first, even at 80x24,
    where the detail pane has room for three attribute rows."""
    run = record_run(tmp_path / "fail", [
        ("fullgraph_before_compile", {"scope": "fullgraph", "lifecycle_name": "compile", "runtime_shape": None,
                                      "graph_index": 0}),
        ("fullgraph_failed_compile", {"scope": "fullgraph", "lifecycle_name": "compile", "runtime_shape": None,
                                      "graph_index": 0, "compile_id": "0/0",
                                      "exception_type": "BackendCompilerFailed",
                                      "exception_message": "backend='picky' raised:\nUnsupportedOp: aten.sin"}),
    ])
    app = MagiApp(run)
    async with app.run_test(size=size) as pilot:
        screen = await loaded_run_screen(pilot)
        await pilot.press("f")
        await wait_for(pilot, lambda: screen.query_one(EventDetail).current_event is not None, what="detail")
        await wait_for(pilot, lambda: "UnsupportedOp: aten.sin" in screen_text(app), what="the message")
        detail_text = screen_text(app)
        assert "exception_type" in detail_text and "BackendCompilerFailed" in detail_text
        assert "\\x0a" not in detail_text  # the message keeps its lines


async def test_triage_panel_ranks_where_compile_time_went():
    from magi_tui.model.analysis.checks import analyse
    from magi_tui.ui.labels import BAR_WIDTH, time_bar

    app = MagiApp(COLD)
    async with app.run_test(size=(120, 60)) as pilot:
        screen = await loaded_run_screen(pilot)
        ol = screen.query_one(TriagePanel).query_one("#triage-list")
        await wait_for(pilot, lambda: ol.option_count > 0, what="the triage list")
        rows = [str(ol.get_option_at_index(i).prompt) for i in range(ol.option_count)]
        start = next(i for i, r in enumerate(rows) if r.startswith("Where compile time went"))
        phases = analyse(screen.run).compile_time["phases"]
        top = rows[start + 1]
        assert phases[0]["phase"] in top and time_bar(1.0) in top  # the slowest first, a full bar
        assert len(time_bar(0.37)) == BAR_WIDTH and time_bar(0.0).strip() == ""


async def test_the_run_screens_keys_are_back_after_the_diff_and_help():
    """The covered run screen's footer is not rebuilt while a screen is on top of it (that cost a third of
    d's CPU); when it is back on top its keys are the same as before, and they still follow the focus."""
    from magi_tui.ui.widgets.footer import MagiFooter

    def footer_keys(screen) -> list[str]:
        return [f"{k.key_display} {k.description}" for k in screen.query_one(MagiFooter).query("FooterKey")]

    app = MagiApp(COLD)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await loaded_run_screen(pilot)
        screen.jump_to(find_event(screen, "subgraph_0_after_postcleanuppass"))
        await pilot.pause()
        before = footer_keys(screen)
        assert any("Diff" in k for k in before)
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen) and app.screen.diff is not None)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen and footer_keys(screen) == before, what="the same keys")
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: app.screen is not screen, what="help")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen and footer_keys(screen) == before, what="the same keys")
        await pilot.press("T")  # the triage list takes the focus: its keys (n / p) join the footer
        await wait_for(pilot, lambda: any("Next failure" in k for k in footer_keys(screen)), what="triage keys")
