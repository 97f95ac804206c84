"""The real ``magi-tui`` in a real terminal (tmux), driven by keys and read back from the screen."""

from __future__ import annotations

import shutil
import time

import pytest

from tests.support.paths import COLD, FIXTURES
from tests.e2e.tmux import MAGI, Tmux

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.skipif(not FIXTURES.is_dir(), reason="shared fixtures missing"),
    pytest.mark.slow,
]



@pytest.mark.parametrize("size", [(100, 30), (80, 24)])
def test_open_first_failure_diff_quit(size):
    t = Tmux(*size, f"{MAGI} {COLD}; sleep 30")
    try:
        t.wait_for("esc Back")  # the footer: the run screen is up
        screen = t.wait_for("RECOVERED")  # the triage panel opens by default on a run with failures
        assert "72 events" in screen
        t.keys("f")
        screen = t.wait_for("failed_compiler_compile")
        assert "TensorifyScalarRestartAnalysis" in screen
        t.keys("d")
        screen = t.wait_for("identical")  # a RestartAnalysis fails before the graph changes
        assert " diff " in screen and "before_compiler_compile_graph" in screen
        assert "+ 0013 fullgraph_failed_compile" in screen
        t.keys("q")
        t.wait_for("esc Back")
        t.keys("q")
        end = time.monotonic() + 10
        while time.monotonic() < end and "esc Back" in t.screen():
            time.sleep(0.1)
        assert "esc Back" not in t.screen()  # the app exited back to the shell command
    finally:
        t.kill()
