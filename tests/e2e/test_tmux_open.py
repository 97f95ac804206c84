"""The real ``magi-tui`` in a real terminal (tmux), driven by keys and read back from the screen."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.conftest import COLD, FIXTURES

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.skipif(not FIXTURES.is_dir(), reason="shared fixtures missing"),
    pytest.mark.slow,
]

MAGI = str(Path(sys.executable).with_name("magi-tui"))


class Tmux:
    def __init__(self, width: int, height: int, command: str) -> None:
        self.sock = f"magi-{uuid.uuid4().hex[:8]}"
        env = dict(os.environ, TERM="xterm-256color")
        subprocess.run(["tmux", "-L", self.sock, "new-session", "-d", "-x", str(width), "-y", str(height),
                        command], check=True, env=env)

    def screen(self) -> str:
        return subprocess.run(["tmux", "-L", self.sock, "capture-pane", "-p"], capture_output=True,
                              text=True).stdout

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "-L", self.sock, "send-keys", *keys], check=True)

    def wait_for(self, text: str, timeout: float = 20.0) -> str:
        end = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < end:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} not on screen; screen was:\n{screen}")

    def alive(self) -> bool:
        return subprocess.run(["tmux", "-L", self.sock, "has-session"], capture_output=True).returncode == 0

    def kill(self) -> None:
        subprocess.run(["tmux", "-L", self.sock, "kill-server"], capture_output=True)


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
