"""Runs list, help, palette, timeline and compiled-functions screens on the real fixtures."""

from __future__ import annotations

import pytest

from magi_tui.ui.actions import act
from magi_tui.ui.app import MagiApp
from magi_tui.ui.screens.compiled import CFTree, CompiledFunctionsScreen
from magi_tui.ui.screens.help import HelpScreen
from magi_tui.ui.screens.run import RunScreen
from magi_tui.ui.screens.runs import COLUMNS, RunsScreen, RunsTable
from magi_tui.ui.widgets.timeline_view import TimelineView
from tests.support.paths import COLD, FIXTURES
from tests.support.pilot import loaded_run_screen, screen_text, selected_event, wait_for

pytestmark = pytest.mark.usefixtures("fixtures_dir")


async def test_runs_screen_lists_every_fixture_run_newest_first_and_filters():
    app = MagiApp(FIXTURES)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.rows)
        screen = app.screen
        table = screen.query_one(RunsTable)
        assert table.row_count == 14
        col = {c: i for i, c in enumerate(COLUMNS)}
        assert COLUMNS[:2] == ("started", "status")  # the status is never the column 80 columns cut off
        first = str(table.get_row_at(0)[col["label"]])
        assert first == "append_same_dir"  # the newest run of the fixtures (11:24:17)
        statuses = {str(table.get_row_at(i)[col["status"]]) for i in range(table.row_count)}
        assert {"ok", "failed", "recovered", "empty"} <= statuses
        # typing filters
        await pilot.press(*"TwoLayer")
        assert table.row_count == 2
        await pilot.press("escape")  # clears the filter
        assert table.row_count == 14
        await pilot.press("s")  # sort by label
        labels = [str(table.get_row_at(i)[col["label"]]) for i in range(table.row_count)]
        assert labels == sorted(labels, key=str.lower)


async def test_help_lists_the_keys_of_the_screen():
    app = MagiApp(COLD)
    async with app.run_test(size=(100, 40)) as pilot:
        await loaded_run_screen(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await wait_for(pilot, lambda: "Jump to the first failed event" in screen_text(app))
        text = screen_text(app)
        for act_id in ("first_failure", "timeline", "mark", "compiled", "back"):
            a = act(act_id)
            assert f"{a.display_keys} " in text and a.help[:40] in text, a
        await pilot.press("G")  # the help scrolls: the keys that work everywhere are at the end
        await wait_for(pilot, lambda: "command palette" in screen_text(app))
        await pilot.press("escape")
        assert isinstance(app.screen, RunScreen)


async def test_palette_jumps_to_an_event_by_name():
    app = MagiApp(COLD)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await loaded_run_screen(pilot)
        await pilot.press("ctrl+p")
        await pilot.press(*"after_graph_split")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is screen)
        await wait_for(pilot, lambda: getattr(selected_event(screen), "name", "") == "fullgraph_after_graph_split")


async def test_timeline_lists_events_in_order_and_enter_jumps_to_the_tree():
    app = MagiApp(COLD)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await loaded_run_screen(pilot)
        await pilot.press("t")
        tl = screen.query_one(TimelineView)
        assert tl.has_focus
        await pilot.pause()
        await wait_for(pilot, lambda: "#0000" in screen_text(app))
        text = screen_text(app)
        assert "#0000" in text and "fullgraph_before_magi" in text
        await pilot.press("G")
        assert tl.cursor == len(screen.run.events) - 1
        await pilot.press("g", *["j"] * 13, "enter")
        assert screen.query_one("#left").current == "tree"
        assert selected_event(screen).index == 13


async def test_compiled_functions_browser_shows_entries_newest_first():
    app = MagiApp(FIXTURES / "recompile_explain")
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded_run_screen(pilot)
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, CompiledFunctionsScreen)
                       and app.screen.query_one(CFTree).root.children)
        await wait_for(pilot, lambda: "toy_with_break" in screen_text(app))
        text = screen_text(app)
        assert "toy_with_break" in text and "entry_0 (most recently used)" in text
        assert text.index("entry_0 (most recently used)") < text.index("entry_1")
        await pilot.press("q")
        assert isinstance(app.screen, RunScreen)


async def test_keys_work_on_an_empty_run():
    app = MagiApp(FIXTURES / "toy_explain_warm_cache")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await loaded_run_screen(pilot)
        assert screen.run.status == "empty"
        for key in ("f", "d", "m", "t", "t", "T", "T", "n"):
            await pilot.press(key)
        assert isinstance(app.screen, RunScreen)
        await pilot.press("c")  # it has compiled_functions
        assert isinstance(app.screen, CompiledFunctionsScreen)


@pytest.mark.parametrize("keys,shows", [
    (("f",), "TensorifyScalarRestartAnalysis"),   # the first failure's exception, in the detail pane
    (("f", "d"), " diff "),                       # the diff screen's title
    (("t",), "+"),                                # the timeline's relative times
    (("T",), "#0000"),                            # the run screen with the other right pane
    (("c",), "compiled_functions"),               # the compiled functions browser
    (("question_mark",), "Keys  (esc closes)"),   # help
])
async def test_every_screen_renders_with_no_color(monkeypatch, keys, shows):
    """NO_COLOR makes Textual render through a monochrome filter, which rejects unstyled segments."""
    monkeypatch.setenv("NO_COLOR", "1")
    app = MagiApp(COLD)
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded_run_screen(pilot)
        for key in keys:
            await pilot.press(key)
            await pilot.pause(0.2)
        await wait_for(pilot, lambda: shows in screen_text(app), what=f"{shows!r} on screen after {keys}")
        text = screen_text(app)
        assert "Traceback" not in text


async def test_the_file_on_view_is_the_current_file_even_with_no_tab_active():
    """m and d take the file on view; Tabs can be left with no tab active after quick re-shows, and then
    the file on view is still the answer, but never one of another event."""
    from magi_tui.ui.widgets.detail import EventDetail
    from tests.support.pilot import find_event

    app = MagiApp(COLD)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await loaded_run_screen(pilot)
        detail = screen.query_one(EventDetail)
        with_files = next(e for e in screen.run.events if e.files)
        screen.jump_to(with_files)
        await wait_for(pilot, lambda: detail.current_file is not None, what="a file on view")
        shown = detail.current_file
        detail.query_one("#detail-tabs").active = ""
        assert detail.current_file is shown
        no_files = next(e for e in screen.run.events if not e.files and screen.run.span_of(e) is None)
        screen.jump_to(no_files)
        await wait_for(pilot, lambda: detail.current_event is no_files, what="the event without files")
        detail.query_one("#detail-tabs").active = ""
        assert detail.current_file is None
        assert find_event(screen, with_files.name).files
