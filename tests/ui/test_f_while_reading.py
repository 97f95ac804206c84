"""``f`` / ``n`` pressed while a run is still being read: "no failure" is not known yet.

Before, ``f`` during the load said "No failed events in this run." (false: the failure was further on) and
did nothing, so a user pressed it again and again, a toast each time. Now it says the run is still being
read and goes to the first failure as soon as one is read; when the whole run is read without one, it
says so then. The load is held after its first read (a gate in the reader, on the load's own thread), so
the keys are pressed while it is certainly still reading, however fast the machine.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from magi_tui.model.sources.reader import TimelineReader
from magi_tui.ui.app import MagiApp
from magi_tui.ui.screens.run import RunScreen
from tests.support.pilot import notes, selected_event, wait_for

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from synth import write_synthetic_run  # noqa: E402


@pytest.fixture
def gate(monkeypatch):
    """The reader's reads after the first wait until the yielded event is set (the load's thread waits,
    not the app's); set at the end whatever happened, so a failed test leaves no load waiting."""
    go = _gate_after_first_read(monkeypatch)
    yield go
    go.set()


def _gate_after_first_read(monkeypatch) -> threading.Event:
    go = threading.Event()
    real = TimelineReader.read
    reads = {"n": 0}

    def read(self, *args, **kwargs):
        reads["n"] += 1
        if reads["n"] > 1:
            assert go.wait(60), "the test never let the load go on"
        return real(self, *args, **kwargs)

    monkeypatch.setattr(TimelineReader, "read", read)
    return go


def _run(tmp_path: Path, *, fail_last: bool) -> Path:
    """3,000 events (several reads), no restarts: with ``fail_last``, one failure, the last event."""
    return write_synthetic_run(tmp_path / "model_1_S_rank_0", 3000, fail_last=fail_last, restart_every=0,
                               with_files=0)


async def _first_screen_still_reading(pilot) -> RunScreen:
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, RunScreen) and bool(app.screen.run.events),
                   what="the first read on screen")
    screen = app.screen
    assert not screen.loaded
    return screen


async def test_f_while_reading_goes_to_the_failure_once_it_is_read(tmp_path, gate):
    app = MagiApp(_run(tmp_path, fail_last=True))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _first_screen_still_reading(pilot)
        assert screen.run.triage.first_failure is None  # the failure is the run's last event: not read yet
        await pilot.press("f")
        await pilot.press("f")
        said = [n for n in notes(app) if "failure" in n or "failed" in n]
        assert said == ["Still reading the run: f goes to the first failure as soon as one is read."]  # once
        await pilot.press("n")
        assert notes(app)[-1] == "No failure or restart read yet: the run is still being read."
        gate.set()
        await wait_for(pilot, lambda: screen.loaded, what="the whole run read")
        ff = screen.run.triage.first_failure
        assert ff is not None
        await wait_for(pilot, lambda: selected_event(screen) is ff.event, what="the cursor on the first failure")
        # the failure's detail, as f shows it: the load's end does not put the triage panel over it
        assert screen.query_one("#right").current == "detail"
        assert screen.query_one("#detail").current_event is ff.event
        assert not any("No failed events" in n for n in notes(app))


async def test_f_while_reading_a_run_without_failures_says_so_when_it_is_read(tmp_path, gate):
    app = MagiApp(_run(tmp_path, fail_last=False))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _first_screen_still_reading(pilot)
        await pilot.press("f")
        assert "No failed events in this run." not in notes(app)  # not known yet
        start = selected_event(screen)
        gate.set()
        await wait_for(pilot, lambda: "No failed events in this run." in notes(app), what="the answer at the end")
        assert screen.loaded and screen.run.triage.first_failure is None
        assert selected_event(screen) is start  # nothing to go to: the cursor stays
        await pilot.press("n")
        assert notes(app)[-1] == "No failures or restarts in this run."
