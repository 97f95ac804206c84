"""The bisect screen (``magi-tui bisect --app``): a real :class:`Bisector` runs in the app's worker thread on
small shell programs (no torch: an untraced command, each trial a real process), its steps appear one by
one at 80x24, the culprit line shows when it ends, and ctrl+c kills the running trial and its children.
A finished bisect folder opens on the same screen from its bisect.json."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from magi_tui.live.bisect import BISECT_FILE, Bisector
from magi_tui.ui.app import MagiApp
from magi_tui.ui.screens.bisect import BisectScreen, StepList
from tests.support import slow


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


async def _wait(pilot, cond, seconds: float = 20.0) -> None:
    end = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < end, "timed out"
        await pilot.pause(0.05)


@pytest.mark.slow
async def test_steps_appear_one_by_one_then_the_culprit(tmp_path):
    # fails however it is compiled, and without torch.compile too: three trials of ~0.6 s each (the program as
    # it is: the failure reproduces as reported; every graph on eager; torch.compile disabled)
    bis = Bisector(["sh", "-c", "sleep 0.6; echo 'ValueError: boom' >&2; exit 3"], tmp_path,
                   cancel=threading.Event())
    app = MagiApp(tmp_path, bisector=bis)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, BisectScreen)
        table = screen.query_one(StepList)
        await _wait(pilot, lambda: table.option_count >= 1)
        assert screen.running and table.option_count == 1, "the first step shows while the bisect still runs"
        first = str(table.get_option_at_index(0).prompt)
        assert "reproduces" in first and "as it is" in first and "ValueError: boom" in first
        await _wait(pilot, lambda: screen.result is not None)
        assert table.option_count == 3
        assert "every graph on eager" in str(table.get_option_at_index(1).prompt)
        assert "torch.compile disabled" in str(table.get_option_at_index(2).prompt)
        culprit = str(screen.query_one("#bisect-culprit").render())
        assert "culprit: the program itself" in culprit and "3 run(s)" in culprit
        await pilot.press("enter")  # an untraced command made no run: a warning, no screen
        assert app.screen is screen
        await pilot.press("escape")  # the first screen: Esc never quits
        assert app.is_running and app.screen is screen
    assert (tmp_path / BISECT_FILE).is_file()


@pytest.mark.slow
async def test_ctrl_c_kills_the_running_trial_and_its_children(tmp_path):
    pids = tmp_path / "pids"
    script = f"echo $$ > {pids}; sleep 60 & echo $! >> {pids}; wait"
    bis = Bisector(["sh", "-c", script], tmp_path / "b", cancel=threading.Event())
    (tmp_path / "b").mkdir()
    app = MagiApp(tmp_path / "b", bisector=bis)
    async with app.run_test(size=(80, 24)) as pilot:
        await _wait(pilot, lambda: pids.is_file() and len(pids.read_text().split()) == 2)
        shell, child = (int(p) for p in pids.read_text().split())
        assert _alive(shell) and _alive(child)
        await pilot.press("ctrl+c")
        screen = app.screen
        await _wait(pilot, lambda: screen.result is not None, 10)
        assert "could not bisect: cancelled" in str(screen.query_one("#bisect-culprit").render())
        assert screen.query_one(StepList).option_count == 0  # a killed trial is no step
    end = time.monotonic() + slow.limit(5)
    while (_alive(shell) or _alive(child)) and time.monotonic() < end:
        time.sleep(0.05)
    assert not _alive(shell) and not _alive(child), "a process of the cancelled trial is still running"


@pytest.mark.slow
async def test_q_while_bisecting_quits_and_leaves_no_process(tmp_path):
    pids = tmp_path / "pids"
    bis = Bisector(["sh", "-c", f"sleep 60 & echo $! > {pids}; wait"], tmp_path, cancel=threading.Event())
    app = MagiApp(tmp_path, bisector=bis)
    async with app.run_test(size=(80, 24)) as pilot:
        await _wait(pilot, lambda: pids.is_file() and pids.read_text().strip())
        child = int(pids.read_text())
        await pilot.press("q")
    assert bis.done.wait(10) and bis.result.error == "cancelled"
    end = time.monotonic() + slow.limit(5)
    while _alive(child) and time.monotonic() < end:
        time.sleep(0.05)
    assert not _alive(child)


@pytest.mark.slow
async def test_a_finished_bisect_folder_opens_on_the_bisect_screen(tmp_path):
    Bisector(["sh", "-c", "exit 0"], tmp_path).run()  # healthy: the program as it is passes, not reproduced
    app = MagiApp(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, BisectScreen)
        await _wait(pilot, lambda: screen.result is not None)
        table = screen.query_one(StepList)
        assert table.option_count == 1 and "passes" in str(table.get_option_at_index(0).prompt)
        culprit = str(screen.query_one("#bisect-culprit").render())
        assert "the failure did not reproduce: the program as it is exited with code 0 (1 run(s))" in culprit
        assert "→ the program exits 0 as it is" in culprit and "--compare-output" in culprit
        await pilot.press("d")
        assert app.screen is screen  # no culprit: nothing to diff, a warning


def test_the_cli_refuses_app_without_a_command(capsys):
    from magi_tui.cli import main

    assert main(["bisect", "--app"]) == 2
    assert "nothing to bisect" in capsys.readouterr().err
