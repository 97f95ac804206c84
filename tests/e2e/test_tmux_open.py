"""The real ``magi-tui`` in a real terminal (tmux), driven by keys and read back from the screen."""

from __future__ import annotations

import shutil
import time

import pytest

from tests.e2e.tmux import MAGI, Tmux
from tests.support import slow
from tests.support.paths import COLD

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.usefixtures("fixtures_dir"),
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
        end = time.monotonic() + slow.limit(10)
        while time.monotonic() < end and "esc Back" in t.screen():
            time.sleep(0.1)
        assert "esc Back" not in t.screen()  # the app exited back to the shell command
    finally:
        t.kill()


def test_esc_never_quits_and_help_stays_in_the_footer_at_80x24():
    t = Tmux(80, 24, f"{MAGI} {COLD}; sleep 30")
    try:
        screen = t.wait_for("esc Back")
        footer = screen.rstrip("\n").splitlines()[-1]
        assert "? Help" in footer, footer  # docked right: never cut, whatever else the footer holds
        t.keys("t")
        t.wait_for("Δ", "+299.0ms")  # the flat timeline: relative times and deltas
        for _ in range(3):  # timeline closed, then triage closed, then a hint; never the shell
            t.keys("Escape")
            time.sleep(0.4)
        screen = t.wait_for("q quits")
        assert "esc Back" in screen and t.alive()
        t.keys("?")
        t.wait_for("Keys  (esc closes)")
        t.keys("G")
        t.wait_for("command palette")  # help scrolls to its end
        t.keys("Escape")
        end = time.monotonic() + slow.limit(10)
        while time.monotonic() < end and "Keys  (esc closes)" in t.screen():
            time.sleep(0.1)
        time.sleep(0.3)  # a key right after Escape would read as alt+key
        t.keys("q")
        end = time.monotonic() + slow.limit(10)
        while time.monotonic() < end and "esc Back" in t.screen():
            time.sleep(0.1)
        assert "esc Back" not in t.screen()
    finally:
        t.kill()
