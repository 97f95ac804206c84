"""Diffs that read well (issue #12), checked on what the terminal shows (Pilot): the changed token
of a changed line is marked (on exactly its characters, also with NO_COLOR), the layout is unified
when a side would be narrow and side by side when wide (``u`` sticks), ``z`` masks per-process noise
(an address-only difference goes, a dtype difference stays), identical sides are shown once,
Home / End / g / G scroll back to the first column, the keys line keeps ``? Help`` on the right and a
click on a key presses it, and no row is lost to a horizontal scrollbar."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.app import App

from magi_tui.ui.app import MagiApp
from magi_tui.ui.screens.diff import DiffScreen
from magi_tui.ui.widgets.diff_view import DiffView
from tests.support.paths import COLD, FIXTURES
from tests.support.pilot import loaded_run_screen, screen_text, selected_event, wait_for

pytestmark = pytest.mark.usefixtures("fixtures_dir")

GRAPH = COLD / "timeline_events" / "files" / "0003_fullgraph_after_removeitempass" / "after_lifecycle_graph.txt"
EXPLAIN = FIXTURES / "recompile_explain"
CF = EXPLAIN / "compiled_functions"
#: two cache entries of one frame: a dtype recompile (float64 -> float32) plus address / name noise
DTYPE_PAIR = (CF / "toy_with_break" / "entry_0" / "guards.txt", CF / "toy_with_break" / "entry_1" / "guards.txt")
#: two cache entries that differ only in noise (addresses, a generated __builtins_dict___N name)
NOISE_PAIR = (CF / "forward" / "entry_0" / "guards.txt", CF / "forward" / "entry_1" / "guards.txt")


class Ref:
    def __init__(self, path: Path, root: Path) -> None:
        self.path = path
        self.root = root
        self.title = str(path.relative_to(root))


class DiffApp(App):
    def __init__(self, left: Path, right: Path, root: Path) -> None:
        super().__init__()
        self.pair = (left, right, root)

    def on_mount(self) -> None:
        left, right, root = self.pair
        self.push_screen(DiffScreen(Ref(left, root), Ref(right, root), left_run=root, right_run=root))


def graph_pair(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A real graph, and the same graph with one node's ``num_users=1`` now ``2`` (line 44)."""
    run = tmp_path / "run"
    (run / "a").mkdir(parents=True)
    (run / "b").mkdir()
    a = run / "a" / GRAPH.name
    b = run / "b" / GRAPH.name
    shutil.copyfile(GRAPH, a)
    lines = GRAPH.read_text().splitlines(keepends=True)
    assert lines[43].startswith("    %q : [num_users=1]")
    lines[43] = lines[43].replace("num_users=1", "num_users=2")
    b.write_text("".join(lines))
    return a, b, run


async def shown(pilot) -> DiffView:
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen) and app.screen.diff is not None,
                   what="the diff")
    await pilot.pause()
    return app.screen.query_one(DiffView)


def cells(app) -> list[list[tuple[str, object]]]:
    """What the terminal shows, one ``(character, style)`` per cell, row by row."""
    out = []
    for strip in app.screen._compositor.render_strips():
        row = []
        for seg in strip:
            if seg.control:
                continue
            row.extend((ch, seg.style) for ch in seg.text)
        out.append(row)
    return out


def marked(app, marker: str, token_line: str) -> tuple[str, str]:
    """On the screen row that shows ``marker`` (``-`` / ``+``) before ``token_line``'s text: the
    characters drawn underlined, and the row's text."""
    for row in cells(app):
        text = "".join(ch for ch, _ in row)
        if token_line in text and f" {marker} " in text[:12]:
            under = "".join(ch if (st is not None and st.underline) else "·" for ch, st in row)
            return under, text
    raise AssertionError(f"no {marker} row showing {token_line!r}:\n{screen_text(app)}")


def underlined_words(under: str) -> list[str]:
    return [w for w in under.split("·") if w.strip()]


@pytest.mark.parametrize("size", [(80, 24), (90, 30)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_changed_token_is_marked_not_the_line(tmp_path, size):
    a, b, run = graph_pair(tmp_path)
    app = DiffApp(a, b, run)
    async with app.run_test(size=size) as pilot:
        view = await shown(pilot)
        assert view.unified  # both widths leave a side under READABLE_SIDE columns
        assert "-1 +1 · 1 hunk(s)" in screen_text(app) and "z noise" in screen_text(app)
        await pilot.press("right_square_bracket")
        await pilot.pause()
        under, text = marked(app, "-", "%q : [num_users=")
        assert underlined_words(under) == ["1"]
        assert under[text.index("num_users=1") + len("num_users=")] == "1"
        under, text = marked(app, "+", "%q : [num_users=")
        assert underlined_words(under) == ["2"]
        assert under[text.index("num_users=2") + len("num_users=")] == "2"


@pytest.mark.parametrize("width", [120, 160])
async def test_changed_tokens_marked_side_by_side_where_it_fits(tmp_path, width):
    a, b, run = graph_pair(tmp_path)
    app = DiffApp(a, b, run)
    async with app.run_test(size=(width, 40)) as pilot:  # 120 columns: side by side (it opened unified)
        view = await shown(pilot)
        assert not view.unified
        await pilot.press("right_square_bracket")
        await pilot.pause()
        under, text = marked(app, "-", "%q : [num_users=")
        assert "│" in text and text.count("%q : [num_users=") == 2  # both sides on one row
        assert underlined_words(under) == ["1", "2"]


async def test_dtype_token_marked_with_no_color(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = DiffApp(*DTYPE_PAIR, EXPLAIN)
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.no_color
        await shown(pilot)
        await pilot.press("right_square_bracket")  # scrolls sideways to the change: it is past column 80
        await pilot.pause()
        under, _ = marked(app, "-", "torch.float64")
        assert underlined_words(under) == ["float64"]  # the token, not ``torch.`` nor the line
        under, _ = marked(app, "+", "torch.float32")
        assert underlined_words(under) == ["float32"]
        greys = {st.color.triplet for row in cells(app) for _, st in row
                 if st is not None and st.color is not None and st.color.triplet is not None}
        assert all(r == g == b for r, g, b in greys)  # monochrome: no hue to tell changes by


async def test_unified_at_80_side_by_side_at_160_until_u(tmp_path):
    a, b, run = graph_pair(tmp_path)
    app = DiffApp(a, b, run)
    async with app.run_test(size=(80, 24)) as pilot:
        view = await shown(pilot)
        assert view.unified and "│" not in screen_text(app).split("\n", 3)[3]
        await pilot.resize_terminal(160, 40)
        await wait_for(pilot, lambda: not view.unified, what="side by side at 160 columns")
        await pilot.pause()
        assert "│" in screen_text(app)
        await pilot.resize_terminal(80, 24)
        await wait_for(pilot, lambda: view.unified, what="unified again at 80 columns")
        await pilot.press("u")  # the user's choice: side by side, and it sticks
        assert not view.unified
        for w, h in [(160, 40), (80, 24), (100, 30)]:
            await pilot.resize_terminal(w, h)
            await pilot.pause()
            assert not view.unified, (w, h)
        await pilot.press("u")
        await pilot.resize_terminal(160, 40)
        await pilot.pause()
        assert view.unified


async def test_noise_toggle_hides_addresses_keeps_dtype():
    # guards: noise masked from the start, an address-only pair is identical
    app = DiffApp(*NOISE_PAIR, EXPLAIN)
    async with app.run_test(size=(120, 40)) as pilot:
        await shown(pilot)
        text = screen_text(app)
        assert "noise masked" in text.splitlines()[0]
        assert "identical once noise is masked" in text
        assert app.screen.diff.identical
        await pilot.press("z")  # raw: the addresses and generated names differ
        await wait_for(pilot, lambda: app.screen.diff is not None and not app.screen.diff.normalised,
                       what="the raw diff")
        await pilot.pause()
        text = screen_text(app)
        assert "noise masked" not in text.splitlines()[0]
        assert not app.screen.diff.identical and app.screen.diff.removed == 3
        await pilot.press("z")
        await wait_for(pilot, lambda: app.screen.diff is not None and app.screen.diff.normalised,
                       what="the masked diff")
    # the dtype recompile's pair: the noise goes, the dtype change stays
    app = DiffApp(*DTYPE_PAIR, EXPLAIN)
    async with app.run_test(size=(120, 40)) as pilot:
        await shown(pilot)
        d = app.screen.diff
        assert (d.removed, d.added) == (1, 1)
        assert "torch.float64" in d.rows[d.hunks[0]].left and "torch.float32" in d.rows[d.hunks[0]].right
        await pilot.press("z")
        await wait_for(pilot, lambda: app.screen.diff is not None and not app.screen.diff.normalised,
                       what="the raw diff")
        assert app.screen.diff.removed == 4


async def test_identical_sides_say_so_once_and_show_the_text_once():
    app = MagiApp(COLD)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await loaded_run_screen(pilot)
        await pilot.press("f")
        assert selected_event(screen).index == 13
        await pilot.press("d")
        view = await shown(pilot)
        await wait_for(pilot, lambda: "identical" in screen_text(app), what="identical")
        text = screen_text(app)
        assert text.count("identical") == 1  # said once, on the status line
        assert "identical: both sides have the same content" in text.splitlines()[2]
        # the text once: one column, each line once (no second copy beside it)
        assert "│" not in text and view.single
        assert text.count("import torch") == 1 and text.count("class GraphModule") == 1
        assert text.splitlines()[3].split()[:2] == ["1", "from"]
        assert "? Help" in text.rstrip("\n").splitlines()[-1]  # the footer still fits ? at 80 columns
        await pilot.press("u")  # nothing to split: still one copy
        await pilot.pause()
        assert "│" not in screen_text(app) and view.single


async def test_home_end_g_G_reset_horizontal_scroll(tmp_path):
    a, b, run = graph_pair(tmp_path)
    app = DiffApp(a, b, run)
    async with app.run_test(size=(80, 24)) as pilot:
        view = await shown(pilot)
        first = screen_text(app).splitlines()[4]  # line 41 (40 unchanged lines folded above)
        assert first.split()[0] == "41"
        for keys, back in [(("right",) * 3, "home"), (("l",) * 3, "g"), (("right",) * 2, "end"),
                           (("l",), "G")]:
            await pilot.press("home", *keys)
            await pilot.pause()
            assert view.x > 0 and "%q : [num_users=1]" not in screen_text(app)  # scrolled sideways
            await pilot.press(back)
            await pilot.pause()
            assert view.x == 0, back
            assert "%q : [num_users=1]" in screen_text(app), back  # the lines from their first column
            if back in ("home", "g"):
                assert screen_text(app).splitlines()[4] == first, back


@pytest.mark.parametrize("size", [(80, 24), (40, 20)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_key_bar_shows_the_keys_help_on_the_right_and_a_click_presses_one(size):
    app = MagiApp(COLD)
    async with app.run_test(size=size) as pilot:
        screen = await loaded_run_screen(pilot)
        screen.jump_to(next(e for e in screen.run.events if e.name == "fullgraph_after_graph_split"))
        await pilot.pause()
        await pilot.press("d")
        view = await shown(pilot)
        last = screen_text(app).rstrip("\n").splitlines()[-1]
        assert last.rstrip().endswith("? Help"), last  # docked right, never cut
        if size[0] < 80:
            return
        assert "] Next hunk" in last and "u Unified/split" in last and "esc Back" in last
        bar = app.screen.query_one("KeyBar")
        unified = view.unified
        await pilot.click(bar, offset=(last.index("u Unified") + 1, 0))
        await wait_for(pilot, lambda: view.unified is not unified, what="a click on u to switch the layout")
        await pilot.click(bar, offset=(last.index("? Help") + 1, 0))
        await wait_for(pilot, lambda: type(app.screen).__name__ == "HelpScreen", what="a click on ? to open help")


async def test_every_row_between_status_and_keys_is_the_diff():
    """No dead row for a horizontal scrollbar (the view scrolls sideways itself): at 80x24 the row
    just above the keys shows the diff, also after scrolling sideways."""
    app = MagiApp(COLD)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await loaded_run_screen(pilot)
        screen.jump_to(next(e for e in screen.run.events if e.name == "fullgraph_after_graph_split"))
        await pilot.pause()
        await pilot.press("d")
        view = await shown(pilot)
        assert view.size.height == 24 - 4  # title (2), status, keys
        for keys in ((), ("right", "right")):
            await pilot.press(*keys)
            await pilot.pause()
            above_keys = screen_text(app).rstrip("\n").splitlines()[-2]
            assert above_keys.split()[0].isdigit() and ("+" in above_keys or "-" in above_keys), above_keys
        assert view.x > 0
