"""``magi-tui run -- CMD`` exits as a shell would (hostile round 3, item 3): the program's own code, or
128 + n when signal n killed it (it said 0 for a program killed by SIGKILL). In a real terminal (tmux)."""

from __future__ import annotations

import shlex
import shutil
import sys
import time

import pytest

from tests.e2e.tmux import MAGI, Tmux
from tests.support import slow

pytestmark = [pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
              pytest.mark.slow]


@pytest.mark.parametrize("body, want", [
    ("import os, signal; print('dying', flush=True); os.kill(os.getpid(), signal.SIGKILL)", 128 + 9),
    ("import os, signal; print('dying', flush=True); os.kill(os.getpid(), signal.SIGTERM)", 128 + 15),
    ("import sys; print('dying', flush=True); sys.exit(3)", 3),
])
def test_run_exits_with_the_programs_status(tmp_path, body, want):
    rc_file = tmp_path / "rc"
    prog = tmp_path / "prog.py"
    prog.write_text(body + "\n")
    cmd = shlex.join([MAGI, "run", "-o", str(tmp_path / "runs"), "--", sys.executable, str(prog)])
    tmux = Tmux(100, 30, f"{cmd}; echo $? > {shlex.quote(str(rc_file))}; sleep 30")
    try:
        tmux.wait_for("dying", timeout=60)
        tmux.wait_for("the program", timeout=30)  # its end is in the log panel
        time.sleep(0.3)
        tmux.keys("q")
        end = time.monotonic() + slow.limit(20)
        while not (rc_file.exists() and rc_file.read_text().strip()) and time.monotonic() < end:
            time.sleep(0.1)
        assert rc_file.read_text().strip() == str(want), tmux.screen()
    finally:
        tmux.kill()
