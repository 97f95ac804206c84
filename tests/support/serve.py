"""A real ``magi-tui serve`` on a free loopback port, for the tests that talk to it: started in its own process
group, its printed URL (with the token) read back, stopped with everything it started."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from tests.support import slow
from tests.support.net import free_port
from tests.support.paths import ROOT

_URL = re.compile(r"Open (http://\S+/\?token=[A-Za-z0-9_\-]+)")


@contextlib.contextmanager
def serving(path: Path, log: Path, *args: str) -> Iterator[tuple[str, int]]:
    """Yield (the printed URL with its token, the port) of a server on ``path``."""
    port = free_port()
    with open(log, "wb") as out:
        server = subprocess.Popen([sys.executable, "-m", "magi_tui", "serve", str(path), "--port", str(port), *args],
                                  cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                  env={**os.environ, "COLUMNS": "400"})
    try:
        end = time.monotonic() + slow.limit(30)
        while True:
            m = _URL.search(log.read_text(errors="replace"))
            if m:
                break
            assert server.poll() is None and time.monotonic() < end, log.read_text(errors="replace")
            time.sleep(0.1)
        yield m.group(1), port
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # the server and the app processes it started
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
