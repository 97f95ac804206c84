"""Keys that never surprise: Esc never quits from a pane, ? is always on screen, help scrolls with j/k,
the palette jumps by event number, F refuses a finished run, runs are told apart by their path, the
README's key table is the catalogue's, and a keymap file remaps keys."""

from __future__ import annotations

import re

import pytest
from textual.widgets import ContentSwitcher

from magi_tui.ui.actions import CATALOGUE, markdown_table
from magi_tui.ui.app import MagiApp
from magi_tui.ui.screens.help import HelpBody, HelpScreen
from magi_tui.ui.screens.run import RunScreen
from magi_tui.ui.screens.runs import RunsScreen
from magi_tui.ui.widgets.detail import EventDetail
from tests.support.paths import COLD, ROOT
from tests.support.pilot import loaded_run_screen, notes, screen_text, wait_for
from tests.support.timeline import lc, write_run

pytestmark = pytest.mark.usefixtures("fixtures_dir")


async def test_esc_closes_the_timeline_and_never_quits():
    app = MagiApp(COLD)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await loaded_run_screen(pilot)
        await pilot.press("t")
        assert screen.query_one("#left", ContentSwitcher).current == "timeline"
        await pilot.press("escape")
        await pilot.pause()
        assert app.is_running and app.screen is screen
        assert screen.query_one("#left", ContentSwitcher).current == "tree"
        right = screen.query_one("#right", ContentSwitcher)
        if right.current != "triage":  # a run with failures opens on the triage panel
            await pilot.press("T")
        assert right.current == "triage"
        await pilot.press("escape")
        assert screen.query_one("#right", ContentSwitcher).current == "detail"
        # on the first screen with nothing open, Esc says how to quit instead of quitting
        await pilot.press("escape")
        await pilot.press("escape")
        await pilot.pause()
        assert app.is_running and app.screen is screen
        assert any("q quits" in n for n in notes(app))
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running


async def test_esc_pops_a_pushed_run_screen_back_to_the_runs_list(tmp_path):
    app = MagiApp(COLD.parent.parent)  # the transformer fixture: two runs
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen) and len(app.screen.rows) == 2)
        await pilot.press("enter")
        screen = await loaded_run_screen(pilot)
        await pilot.press("t")
        for _ in range(4):  # timeline, triage, then the screen: never further
            if not isinstance(app.screen, RunScreen):
                break
            await pilot.press("escape")
            await pilot.pause()
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen), what="back on the runs list")
        assert app.is_running and screen not in app.screen_stack


@pytest.mark.parametrize("size", [(80, 24), (100, 30)])
async def test_help_key_always_visible_in_the_footer(size):
    app = MagiApp(COLD)
    async with app.run_test(size=size) as pilot:
        await loaded_run_screen(pilot)
        last = screen_text(app).rstrip("\n").splitlines()[-1]
        assert "? Help" in last, last
        assert "esc Back" in last


async def test_help_scrolls_with_j_and_k():
    app = MagiApp(COLD)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded_run_screen(pilot)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        body = app.screen.query_one(HelpBody)
        assert body.max_scroll_y > 0  # at 80x24 the help is longer than the screen
        await pilot.press("j", "j", "j")
        await wait_for(pilot, lambda: body.scroll_y >= 3, what="help to scroll down")
        await pilot.press("k")
        await wait_for(pilot, lambda: body.scroll_y == 2, what="help to scroll up")
        await pilot.press("G")
        await wait_for(pilot, lambda: body.scroll_y == body.max_scroll_y, what="help to reach the end")
        assert "Everywhere" in screen_text(app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RunScreen))


@pytest.mark.parametrize("query", ["13", "#0013"])
async def test_palette_jumps_by_event_number(query):
    app = MagiApp(COLD)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await loaded_run_screen(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause(0.2)
        await pilot.press(*[{"#": "number_sign"}.get(c, c) for c in query])
        await pilot.pause(0.5)
        await wait_for(pilot, lambda: "#0013 fullgraph_failed_compiler_compile" in screen_text(app), what="the hit")
        # a number is an event number: no fuzzy pass over every name, so the event is listed once
        assert "#13 fullgraph_failed_compiler_compile" not in screen_text(app)
        await pilot.press("enter")
        detail = screen.query_one(EventDetail)
        await wait_for(pilot, lambda: app.screen is screen and detail.current_event is not None
                       and 13 in {e.index for e in [detail.current_event, *(detail.current_span.events
                                                                            if detail.current_span else [])]},
                       what="the jump to event 13")


async def test_follow_refused_on_a_finished_run():
    app = MagiApp(COLD)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await loaded_run_screen(pilot)
        await pilot.press("F")
        await pilot.pause()
        assert screen.follow is False
        assert any("not live" in n for n in notes(app))
        assert "LIVE" not in screen_text(app)


async def test_runs_with_one_label_are_told_apart_by_their_path(tmp_path):
    root = tmp_path / "root"
    for i in range(3):
        run = root / "magi_depyf" / f"run_20261122_11190{i}" / "model_1_Tiny_rank_0"
        write_run(run, [lc(0, "before", "compile"), lc(1, "after", "compile")])
    app = MagiApp(root)
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen) and len(app.screen.rows) == 3)
        await pilot.pause(0.2)
        text = screen_text(app)
        for i in range(3):
            assert f"magi_depyf/run_20261122_11190{i}/model_1_Tiny_rank_0" in text
        assert str(tmp_path) not in text.replace(f"runs under {root}", "")


def test_readme_key_table_is_the_catalogue():
    readme = (ROOT / "README.md").read_text()
    m = re.search(r"<!-- keys:start -->\n(.*?)\n<!-- keys:end -->", readme, re.S)
    assert m, "README.md lacks the generated key table markers"
    assert m.group(1).strip() == markdown_table().strip(), \
        "README key table is stale: python -m magi_tui.ui.actions > table, paste between the markers"


def test_every_binding_has_an_id_from_the_catalogue():
    from magi_tui.ui.screens.command import CommandRunScreen
    from magi_tui.ui.screens.waiting import WaitingScreen
    from magi_tui.ui.widgets.detail import EventDetail
    from magi_tui.ui.widgets.event_tree import EventTree
    from magi_tui.ui.widgets.timeline_view import TimelineView

    ids = {a.id for a in CATALOGUE}
    from magi_tui.ui.screens.compare import CompareScreen
    from magi_tui.ui.screens.compiled import CompiledFunctionsScreen
    from magi_tui.ui.screens.diff import DiffScreen
    from magi_tui.ui.screens.ranks import RanksScreen
    from magi_tui.ui.widgets.diff_view import DiffView
    from magi_tui.ui.widgets.file_view import FileLines, FileView
    from magi_tui.ui.widgets.triage_panel import TriagePanel

    for cls in (MagiApp, RunScreen, RunsScreen, CommandRunScreen, WaitingScreen, HelpScreen, EventTree,
                TimelineView, EventDetail, HelpBody, CompiledFunctionsScreen, DiffScreen, DiffView, FileView,
                TriagePanel, CompareScreen, RanksScreen, FileLines):
        for b in cls.BINDINGS:
            assert b.id, f"{cls.__name__}: {b.key} has no id"
            assert b.id in ids or b.id.startswith("move_"), f"{cls.__name__}: {b.id} not in the catalogue"


async def test_keymap_file_remaps_a_key(tmp_path, monkeypatch):
    km = tmp_path / "keymap.toml"
    km.write_text('[keys]\nfirst_failure = "x"\nno_such_action = "y"\n')
    monkeypatch.setenv("MAGI_TUI_KEYMAP", str(km))
    app = MagiApp(COLD)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await loaded_run_screen(pilot)
        assert any("unknown action id 'no_such_action'" in n for n in notes(app))
        await pilot.press("x")
        ff = screen.run.triage.first_failure.event
        await wait_for(pilot, lambda: screen.query_one(EventDetail).current_event is ff, what="x to jump")
        # the footer shows the remapped key
        assert "x First failure" in screen_text(app)


def test_keymap_file_problems_are_reported_not_fatal(tmp_path):
    from magi_tui.config import load_keymap
    from magi_tui.ui.actions import keymap_ids

    known = keymap_ids()

    bad = tmp_path / "bad.toml"
    bad.write_text("[keys\n")
    assert load_keymap(bad, known)[0] == {} and "keymap" in load_keymap(bad, known)[1][0]
    assert load_keymap(tmp_path / "missing.toml", known) == ({}, [])
    ok = tmp_path / "ok.toml"
    ok.write_text('[keys]\ndiff = "D, ctrl+d"\n')
    assert load_keymap(ok, known) == ({"diff": "D,ctrl+d"}, [])


async def test_palette_offers_failures_and_breaks_before_typing():
    app = MagiApp(COLD)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await loaded_run_screen(pilot)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: "failure: #" in screen_text(app), timeout=20, what="discovered failures in the palette")
        first = screen.run.triage.failures[0]
        assert f"failure: #{first.event.index:04d} {first.exception_type}" in screen_text(app)
        # choosing one jumps to it
        await pilot.press("enter")
        detail = screen.query_one(EventDetail)
        await wait_for(pilot, lambda: app.screen is screen and detail.current_event is not None, what="the jump")
