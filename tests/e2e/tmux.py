"""Driving the real ``magi-tui`` in a real terminal: tmux on a private socket, keys in, screen out."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

from tests.support import slow

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

    def screen_ansi(self) -> str:
        """The screen with its attributes and colours (``capture-pane -e``: SGR sequences as tmux keeps them)."""
        return subprocess.run(["tmux", "-L", self.sock, "capture-pane", "-p", "-e"], capture_output=True,
                              text=True).stdout

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "-L", self.sock, "send-keys", *keys], check=True)

    def wait_for(self, *texts: str, timeout: float = 20.0) -> str:
        """The screen once every one of ``texts`` is on it (AssertionError with the screen if not); ``timeout``
        is a base that grows on a busy machine (tests/support/slow.py)."""
        timeout = slow.limit(timeout)
        end = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < end:
            screen = self.screen()
            if all(t in screen for t in texts):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{texts} not on screen after {timeout:.0f} s; screen was:\n{screen}")

    def alive(self) -> bool:
        return subprocess.run(["tmux", "-L", self.sock, "has-session"], capture_output=True).returncode == 0

    def kill(self) -> None:
        subprocess.run(["tmux", "-L", self.sock, "kill-server"], capture_output=True)
