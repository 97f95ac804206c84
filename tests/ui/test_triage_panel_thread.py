"""A costly triage analysis (a 1M-event run: ~0.5 s) runs off the UI loop, and a result an update
overtook is never shown: it is redone, and after a few such races done on the loop."""

from __future__ import annotations

import threading

import pytest

import magi_tui.live.analysis_throttle as analysis_throttle
import magi_tui.ui.widgets.triage_panel as triage_panel
from magi_tui.model import RunModel
from magi_tui.model.analysis.checks import analyse
from magi_tui.ui.app import MagiApp
from magi_tui.ui.widgets.triage_panel import TriagePanel
from tests.support.paths import FIXTURES
from tests.support.pilot import loaded_run_screen, open_triage, screen_text, wait_for

needs_fixtures = pytest.mark.usefixtures("fixtures_dir")


class _Spy:
    """Records the thread of every analysis of a loaded run (the panel's first, at mount, may see no
    events yet); while ``race`` is set, every analysis off the main thread sees an update arrive while it
    runs (the model's event list is replaced, as a reset would)."""

    def __init__(self, monkeypatch) -> None:
        self.seen: list[str] = []
        self.race = False
        self.real = triage_panel.analyse
        monkeypatch.setattr(triage_panel, "analyse", self)
        monkeypatch.setattr(analysis_throttle, "THREAD_MIN_S", 0.0)  # treat every analysis as costly

    def __call__(self, run):
        result = self.real(run)
        if run.events:
            self.seen.append(threading.current_thread().name)
            if self.race and threading.current_thread() is not threading.main_thread():
                run.events = list(run.events)
        return result


async def _open(pilot):
    screen = await loaded_run_screen(pilot)
    await open_triage(pilot, screen)
    return screen


@needs_fixtures
async def test_a_costly_analysis_runs_off_the_ui_loop(monkeypatch):
    seen = _Spy(monkeypatch).seen
    want = [c.message for c in analyse(RunModel(FIXTURES / "recompile_explain").load()).checks]
    app = MagiApp(FIXTURES / "recompile_explain")
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await _open(pilot)
        panel = screen.query_one(TriagePanel)
        await wait_for(pilot, lambda: panel.throttle.result is not None
                       and [c.message for c in panel.throttle.result.checks] == want, what="the analysis")
        await wait_for(pilot, lambda: "6 recompile(s) in 4 frame(s)" in screen_text(app), what="the checks shown")
    assert seen and all(name != threading.main_thread().name for name in seen)


@needs_fixtures
async def test_an_analysis_overtaken_by_an_update_is_redone_then_done_on_the_loop(monkeypatch):
    spy = _Spy(monkeypatch)
    app = MagiApp(FIXTURES / "recompile_explain")
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await _open(pilot)
        panel = screen.query_one(TriagePanel)
        await wait_for(pilot, lambda: "6 recompile(s) in 4 frame(s)" in screen_text(app), what="the checks shown")
        spy.race, spy.seen[:] = True, []
        panel.throttle.sig = None  # the findings changed: analyse again
        panel.refresh_contents()
        main = threading.main_thread().name
        await wait_for(pilot, lambda: main in spy.seen, what="the analysis done on the loop")
        # each threaded result was thrown away (an update overtook it), MAX_RACES in a row, then the
        # analysis was done on the loop, and that is what is shown
        assert len(spy.seen) == analysis_throttle.MAX_RACES + 1 and main not in spy.seen[:-1]
        assert spy.seen[-1] == main
        assert panel.throttle.n == len(panel.run.events) and panel.throttle.races == 0
        await wait_for(pilot, lambda: "6 recompile(s) in 4 frame(s)" in screen_text(app), what="the checks shown")
