"""The list screens' base (:class:`magi_tui.ui.screens.rows.ListScreen`): a read that fails mid-way (here the
disk answering an I/O error) is one line on the screen, where its status is said, and never a traceback; the app
stays up and Esc still goes back. Before the base, the runs list, frames and compiled functions let it escape
their worker and took the app down."""

from __future__ import annotations

import pytest

from magi_tui.ui.app import MagiApp
from tests.support.paths import COLD, FIXTURES
from tests.support.pilot import loaded_run_screen, screen_text, wait_for

pytestmark = pytest.mark.usefixtures("fixtures_dir")


def _plain(screen) -> str:
    """The screen's words, whole: its Static lines and its tree's labels (a tree cuts a long one)."""
    from textual.widgets import Static, Tree

    parts = [str(w.render()) for w in screen.query(Static)]
    for tree in screen.query(Tree):
        parts += [str(n.label) for n in tree.root.children]
    return "\n".join(parts)


def _disk_gone(*_args, **_kwargs):
    raise OSError(5, "Input/output error")


@pytest.mark.parametrize(("module", "reader", "key", "screen", "said"), [
    ("frames", "analyse", "w", "FramesScreen", "cannot analyse the frames: OSError: [Errno 5] Input/output error"),
    ("compiled", "index_compiled_functions", "c", "CompiledFunctionsScreen",
     "cannot read compiled_functions/: OSError: [Errno 5] Input/output error"),
    ("compile_info", "compile_infos", "i", "CompileInfoScreen",
     "cannot read the compiles: OSError: [Errno 5] Input/output error"),
])
async def test_a_failed_read_of_a_run_view_is_said_on_screen(monkeypatch, module, reader, key, screen, said):
    import importlib

    monkeypatch.setattr(importlib.import_module(f"magi_tui.ui.screens.{module}"), reader, _disk_gone)
    app = MagiApp(COLD)
    async with app.run_test(size=(120, 30)) as pilot:
        await loaded_run_screen(pilot)
        await pilot.press(key)
        # on screen whole, or (the compiled functions tree's leaf) cut at the tree's width
        await wait_for(pilot, lambda: type(app.screen).__name__ == screen and said[:45] in screen_text(app),
                       what=f"the {screen}'s failure on screen")
        assert said in _plain(app.screen)
        assert app.is_running and "Traceback" not in screen_text(app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "RunScreen", what="back to the run")


async def test_a_failed_scan_of_the_runs_list_is_its_status_line(monkeypatch):
    from magi_tui.ui.screens import runs

    monkeypatch.setattr(runs, "find_runs", _disk_gone)
    app = MagiApp(FIXTURES)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: type(app.screen).__name__ == "RunsScreen" and app.screen.loaded,
                       what="the runs list's read")
        status = str(app.screen.query_one("#runs-status").render())
        assert status == "cannot list the runs: OSError: [Errno 5] Input/output error"
        assert app.is_running and app.screen.rows == []
