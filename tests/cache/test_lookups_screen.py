"""Issue 34.5 in the app: Enter on the triage panel's cache-miss line (and on a miss row of the compare
screen) opens the two lookups side by side, the differing key component first, in the user's terms; Esc
goes back. Real seeded runs (tests/cache/fixtures/README.md), at 80x24."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList

from magi_tui.model.analysis.cache_explain import MissExplained
from magi_tui.ui.app import MagiApp
from magi_tui.ui.screens import lazy
from magi_tui.ui.widgets.diff_view import DiffView
from tests.support.pilot import loaded_run_screen, screen_text, wait_for


def _run(seeded: Path, n: int) -> Path:
    return sorted((seeded / "runs" / "magi_depyf").glob("run_*/model_1_seeded_rank_0"))[n - 1]


def _top(app) -> str:
    return type(app.screen).__name__


async def test_enter_on_the_miss_line_shows_the_changed_setting_first(seeded):
    app = MagiApp(_run(seeded, 3))      # max_fusion_size 64 -> 32 against the warm rerun before it
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await loaded_run_screen(pilot)
        await pilot.press("T")
        triage = screen.query_one("#triage-list", OptionList)
        await wait_for(pilot, lambda: triage.option_count > 0, what="the triage list")
        triage.focus()
        for _ in range(triage.option_count):    # down the list as a user does, to the cache-miss line
            i = triage.highlighted
            if i is not None and (triage.get_option_at_index(i).id or "").startswith("cache_why:"):
                break
            await pilot.press("j")
        assert "cache missed: Inductor config max_fusion_size: 64 → 32" in str(
            triage.get_option_at_index(triage.highlighted).prompt)
        await pilot.press("enter")
        await wait_for(pilot, lambda: _top(app) == "CacheLookupsScreen", what="the lookups screen")
        await pilot.pause()
        view = app.screen.query_one(DiffView)
        first = view.diff.rows[0]                                # the pairs, side by side
        assert (first.kind, first.left, first.right) == ("replace", "Inductor config max_fusion_size: 64",
                                                         "Inductor config max_fusion_size: 32")
        assert view.diff.rows[1].kind == "fold" and view.diff.rows[1].folded == 635
        text = screen_text(app)
        lines = text.splitlines()
        at = next(k for k, ln in enumerate(lines) if "1 - Inductor config max_fusion_size: 64" in ln)
        assert "1 + Inductor config max_fusion_size: 32" in lines[at + 1]   # unified at 80 columns: − then +
        assert "⋯ 635 unchanged" in lines[at + 2]
        assert "because Inductor config max_fusion_size: 64 → 32" in text
        assert "1 of 636 key components differ" in text
        assert "a Same too" in text and "esc Back" in text       # the keys, in the footer
        await pilot.press("a")                                   # the same components listed too
        await pilot.pause()
        assert not any(r.kind == "fold" for r in view.diff.rows) and len(view.diff.rows) == 636
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen, what="back to the run")


async def test_enter_on_a_compare_miss_row_shows_the_graph_change(seeded):
    app = MagiApp(seeded / "runs")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: _top(app) == "RunsScreen" and app.screen.rows, what="the runs")
        app.push_screen(lazy("CompareScreen")(_run(seeded, 6), _run(seeded, 7)))   # relu -> sigmoid
        await wait_for(pilot, lambda: _top(app) == "CompareScreen" and app.screen.loaded, what="the comparison")
        compare = app.screen
        table = compare.query_one(OptionList)
        await pilot.press("L")                                   # not on a miss row: says what to select
        await pilot.pause()
        assert _top(app) == "CompareScreen"
        table.highlighted = next(i for i, o in enumerate(compare.row_objects) if isinstance(o, MissExplained))
        await pilot.press("enter")
        await wait_for(pilot, lambda: _top(app) == "CacheLookupsScreen", what="the lookups screen")
        await pilot.pause()
        view = app.screen.query_one(DiffView)
        assert view.diff.rows[0].left.startswith("the graph (gm)")
        changed = [r for r in view.diff.rows[:12] if r.kind in ("replace", "delete", "insert")]
        assert changed and "relu" in changed[0].left and "sigmoid" in changed[0].right
        assert "because the graph changed: relu → sigmoid" in screen_text(app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is compare, what="back to the comparison")


async def test_l_on_a_miss_row_with_no_color(seeded, monkeypatch):
    """NO_COLOR: the changed component still reads as changed (the − / + markers), nothing crashes."""
    monkeypatch.setenv("NO_COLOR", "1")
    app = MagiApp(_run(seeded, 11))     # the input's shape (4, 16) -> (8, 16)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await loaded_run_screen(pilot)
        await pilot.press("T")
        triage = screen.query_one("#triage-list", OptionList)
        await wait_for(pilot, lambda: triage.option_count > 0, what="the triage list")
        triage.focus()
        triage.highlighted = next(i for i in range(triage.option_count)
                                  if (triage.get_option_at_index(i).id or "").startswith("Cache misses:"))
        await pilot.press("L")
        await wait_for(pilot, lambda: _top(app) == "CacheLookupsScreen", what="the lookups screen")
        await pilot.pause()
        lines = screen_text(app).splitlines()
        assert any(ln.startswith("  1 - input x (example_inputs[2]): TensorMetadata(") for ln in lines)
        assert any(ln.startswith("  1 + input x (example_inputs[2]): TensorMetadata(") for ln in lines)
        assert "because input x: shape (4, 16) → (8, 16)" in "\n".join(lines)
