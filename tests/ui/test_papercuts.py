"""What a newcomer tripped on (issue 32, items 9 and 10), checked as they met it: typing a filter in the runs
list, the hint line at 80 columns, which side of a diff the mark is, durations in the detail pane, failures
under NO_COLOR, and ``magi-tui run``'s first screen."""

from __future__ import annotations

import json
import sys

import pytest
from rich.style import Style
from textual import events
from textual.color import Color

from magi_tui.ui.app import MagiApp
from magi_tui.ui.labels import attr_duration
from magi_tui.ui.screens.runs import RunsScreen, RunsTable, status_hint
from tests.support.paths import COLD
from tests.support.pilot import find_event, loaded_run_screen, notes, screen_text, wait_for

TRANSFORMER_ROOT = COLD.parent.parent  # two runs of one model


def burst(app, text: str) -> None:
    """Keys as a terminal delivers a word typed fast or pasted: all read before the app handles the first."""
    for ch in text:
        app._driver.send_message(events.Key(ch, ch))


# -- the runs list ---------------------------------------------------------------------------------------------

@pytest.mark.usefixtures("fixtures_dir")
async def test_typing_a_word_filters_by_it_and_runs_no_key_it_holds():
    """``item`` typed at once: the filter is ``item`` (``m`` marked a run and the filter was ``ite``); once the
    list has the focus again (Enter), ``m`` marks."""
    app = MagiApp(TRANSFORMER_ROOT)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen) and len(app.screen.rows) == 2)
        screen = app.screen
        flt = screen.query_one("#runs-filter")
        burst(app, "item")
        await wait_for(pilot, lambda: flt.value == "item", what="the filter 'item'")
        await pilot.pause(0.2)
        assert flt.value == "item" and screen.marked == [] and not notes(app)
        assert screen.query_one(RunsTable).row_count == 0  # nothing is called "item"
        await pilot.press("escape")  # clears the filter, the list has the focus
        assert flt.value == "" and screen.query_one(RunsTable).has_focus
        await pilot.press("m")  # a key again
        assert len(screen.marked) == 1
        burst(app, "Two")  # a word that begins with a key the list binds (T is not one; s and r are)
        await wait_for(pilot, lambda: flt.value == "Two", what="the filter 'Two'")
        assert screen.query_one(RunsTable).row_count == 2


@pytest.mark.usefixtures("fixtures_dir")
async def test_the_hint_line_fits_80_columns():
    for sort_key in ("started", "label", "events", "failures", "status", "duration"):
        assert len(status_hint(99999, sort_key)) <= 78, sort_key  # the line has a cell of padding each side
    app = MagiApp(TRANSFORMER_ROOT)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen) and len(app.screen.rows) == 2)
        await pilot.pause()
        assert status_hint(2, "started") in screen_text(app)
        await pilot.press("s")  # the hint follows the sort
        await wait_for(pilot, lambda: status_hint(2, "label") in screen_text(app), what="the hint after s")


# -- the diff: the mark is the base ------------------------------------------------------------------------

@pytest.mark.usefixtures("fixtures_dir")
async def test_m_then_d_diffs_the_mark_as_base_against_the_current_as_new():
    from magi_tui.ui.screens.diff import DiffScreen

    app = MagiApp(COLD)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await loaded_run_screen(pilot)
        older = find_event(screen, "fullgraph_after_removeitempass")
        newer = find_event(screen, "fullgraph_after_full_graph_manager")
        screen.jump_to(older)
        await pilot.pause()
        await pilot.press("m")
        marked = app.mark.ref
        screen.jump_to(newer)
        await pilot.pause()
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen) and app.screen.diff is not None,
                       what="the diff")
        diff_screen = app.screen
        assert diff_screen.left is marked and diff_screen.right.event is newer
        lines = screen_text(app).splitlines()
        minus = next(ln for ln in lines if " − " in ln)
        plus = next(ln for ln in lines if ln.lstrip().startswith("+ "))
        assert "marked" in minus and f"{older.index:04d} {older.name}" in minus
        assert "current" in plus and f"{newer.index:04d} {newer.name}" in plus
        # the mark's lines are the removed ones (−), the current file's the added (+)
        assert diff_screen.diff.a == marked.path.read_text().splitlines()


# -- durations in the detail pane -----------------------------------------------------------------------

def test_duration_attributes_read_as_durations():
    assert attr_duration("duration_ms", 8.994830000006004) == "9.0ms"
    assert attr_duration("duration_ms", 0.06936799991308362) == "69µs"
    assert attr_duration("entire_frame_compile_time_s", 27.4112) == "27.41s"
    assert attr_duration("guard_latency_us", 1500) == "1.5ms"
    assert attr_duration("estimated_runtime_ns", 2_000_000) == "2.0ms"
    assert attr_duration("max_compile_seconds", 125) == "2m05s"
    # not durations: no unit, a point in time, not a number, not a duration's value
    for key, value in (("graph_index", 3), ("start_us", 1.7e15), ("start_time", 1795346341.46),
                       ("timestamp_s", 1.0), ("duration_ms", "8.99"), ("duration_ms", True),
                       ("duration_ms", -1.0), ("duration_ms", float("nan")), ("_ms", 1.0)):
        assert attr_duration(key, value) is None, (key, value)


@pytest.mark.usefixtures("fixtures_dir")
async def test_the_detail_pane_shows_a_duration_and_keeps_the_raw_number():
    from magi_tui.ui.widgets.detail import EventDetail

    app = MagiApp(COLD)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await loaded_run_screen(pilot)
        ev = find_event(screen, "fullgraph_after_removeitempass")
        raw = screen.run.attributes(ev)["duration_ms"]
        assert raw == 0.06936799991308362
        screen.jump_to(ev)
        await wait_for(pilot, lambda: screen.query_one(EventDetail).current_event is ev, what="its detail")
        await pilot.pause()
        text = screen_text(app)
        row = next(ln for ln in text.splitlines() if "duration_ms" in ln)
        assert "69µs" in row and "0.0693" not in text
        detail = screen.query_one(EventDetail)
        last = detail.refs[-1]  # the raw map: attributes.json, the last tab
        assert last.name == "attributes.json" and last.event is ev
        assert json.loads(last.path.read_text())["duration_ms"] == raw
        tabs = detail.query_one("#detail-tabs")
        assert "attributes.json" in str(tabs.query("Tab").last().label)  # a tab away (tab / ])


# -- NO_COLOR ----------------------------------------------------------------------------------------------------

def test_no_color_keeps_failures_readable_and_standing_out():
    from magi_tui.ui.no_color import is_red, readable_style

    panel = Color(30, 30, 30)
    for red in ("red", "#ba3c5b", "#f4005f"):  # rich's, Textual's $error, the ANSI theme's red
        st = readable_style(Style.parse(f"bold {red}"), panel)
        assert st.bold and st.reverse, red
        fg = Color.from_rich_color(st.color)
        assert abs(fg.brightness - panel.brightness) >= 0.4, red  # not grey on grey
        plain = readable_style(Style.parse(red), panel)
        assert plain.bold and not plain.reverse
    for other in ("#ffa62b", "yellow", "green", "magenta", "#9d65ff"):  # warnings and the rest: unchanged
        st = readable_style(Style.parse(other), panel)
        assert not st.bold and not st.reverse, other
    assert not is_red(Style.parse("#ffa62b").color)


@pytest.mark.usefixtures("fixtures_dir")
async def test_no_color_app_swaps_in_the_readable_filter(monkeypatch):
    from textual.filter import Monochrome

    from magi_tui.ui.no_color import ReadableNoColor

    monkeypatch.setenv("NO_COLOR", "1")
    app = MagiApp(COLD)
    assert app.no_color
    assert any(isinstance(f, ReadableNoColor) for f in app._filters)
    assert not any(isinstance(f, Monochrome) for f in app._filters)


# -- magi-tui run: "starting <program>…", not the older runs ------------------------------------------------

@pytest.mark.usefixtures("fixtures_dir")
async def test_run_says_starting_the_program_instead_of_listing_older_runs(tmp_path):
    import shutil

    from magi_tui.ui.screens.waiting import WaitingScreen

    root = tmp_path / "runs"
    shutil.copytree(TRANSFORMER_ROOT.parent, root / "magi_depyf")  # runs of earlier invocations
    app = MagiApp(root, command=["sh", "-c", "echo warming up; sleep 3; exit 3"])
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, WaitingScreen) and app.screen.initial,
                       what="the first scan")
        screen = app.screen
        await wait_for(pilot, lambda: "warming up" in screen_text(app), what="the program's output")
        text = screen_text(app)
        assert "starting sh -c echo warming up; sleep 3; exit 3 …" in text
        assert "TwoLayerTransformer" not in text and not screen.query_one(RunsTable).display
        assert "m Mark" not in text and "s Sort" not in text  # the list's keys: nothing to act on
        assert screen.check_action("mark_run", ()) is False
        await wait_for(pilot, lambda: " 1 s" in screen_text(app) or " 2 s" in screen_text(app), timeout=5,
                       what="how long so far")
        # it ended before any run of its own: said, and the list of the older runs is back
        await wait_for(pilot, lambda: app.program.returncode == 3, timeout=15, what="the exit")
        await wait_for(pilot, lambda: "before any run appeared" in screen_text(app), what="the end")
        text = screen_text(app)
        assert "starting sh" not in text and "TwoLayerTransformer" in text
        assert screen.query_one(RunsTable).display and screen.query_one(RunsTable).has_focus


@pytest.mark.skipif(sys.platform != "linux", reason="the program runner's shim is Linux's")
async def test_run_opens_the_programs_run_once_it_is_named(tmp_path, monkeypatch):
    """With the program's run named (MAGI_RUN_DIR=), its run screen replaces the starting screen."""
    from magi_tui.ui.screens.command import CommandRunScreen

    run = tmp_path / "runs" / "magi_depyf" / "run_20261122_120000" / "model_1_prog_rank_0"
    go = tmp_path / "go"  # the program names its run once the test has seen the starting screen, not after a sleep
    script = ("import os, sys, time; r, go = sys.argv[1:3]; end = time.time() + 120\n"
              "while not os.path.exists(go) and time.time() < end: time.sleep(0.02)\n"
              "os.makedirs(os.path.join(r, 'timeline_events')); "
              "open(os.path.join(r, 'timeline_events', 'timeline.jsonl'), 'w').close(); "
              "print('MAGI_RUN_DIR=' + r, file=sys.stderr, flush=True); time.sleep(1)")
    app = MagiApp(tmp_path / "runs", command=[sys.executable, "-c", script, str(run), str(go)])
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: "starting " in screen_text(app), what="the starting screen")
        go.touch()
        await wait_for(pilot, lambda: isinstance(app.screen, CommandRunScreen) and app.screen.loaded, timeout=15,
                       what="its run")
        assert app.screen.run.path == run
        await wait_for(pilot, lambda: app.program.returncode == 0, timeout=15, what="the program's end")
