"""A trial that runs past its time limit or is cancelled is killed with every process it started (it runs in
a session of its own), and says why; one that finishes keeps its exit code and output."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from magi_tui.live.trial import run_trial
from tests.support import slow


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _gone(pid: int) -> bool:
    end = time.monotonic() + slow.limit(5)
    while _alive(pid) and time.monotonic() < end:
        time.sleep(0.05)
    return not _alive(pid)


def test_a_timed_out_trial_leaves_no_child(tmp_path):
    pids = tmp_path / "pids"
    t0 = time.monotonic()
    r = run_trial(["sh", "-c", f"sleep 60 & echo $! > {pids}; wait"], root=tmp_path, timeout=0.5)
    assert time.monotonic() - t0 < slow.limit(5)
    assert r.returncode is None and r.error == "ran past the time limit (0.5 s)"
    assert _gone(int(pids.read_text()))


def test_a_cancelled_trial_stops_within_a_tick_and_leaves_no_child(tmp_path):
    pids = tmp_path / "pids"
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    t0 = time.monotonic()
    r = run_trial(["sh", "-c", f"sleep 60 & echo $! > {pids}; wait"], root=tmp_path, cancel=cancel)
    assert time.monotonic() - t0 < slow.limit(3)
    assert r.returncode is None and r.error == "cancelled"
    assert _gone(int(pids.read_text()))


def test_a_finished_trial_keeps_its_code_and_output(tmp_path):
    r = run_trial(["sh", "-c", "echo 1.5 2; echo 'ValueError: x' >&2; exit 4"], root=tmp_path,
                  cancel=threading.Event())
    assert r.returncode == 4 and r.numbers == [1.5, 2.0] and r.last_error_line() == "ValueError: x"
