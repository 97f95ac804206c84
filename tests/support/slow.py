"""Time limits that scale with the machine, and a timed-out real run that says so.

A test's time limit on a subprocess (a traced torch program, the CLI on a fixture, a tlparse oracle) is a
guard against a hang, not a speed claim: on a 2-core machine shared with other work (load 12-39 seen in
issue 36) a program that takes 60 s alone takes many times that. So a limit is a *base* (what a quiet
2-core machine needs, with room) times :func:`factor`: ``$MAGI_TEST_SLOW`` when set, else how oversubscribed
the machine is now (1-minute load average per core, at least 1, at most :data:`MAX_FACTOR`). And when a run
does run out of time, the test fails saying that -- "the traced program did not finish in N s (machine
busy?)" -- instead of failing an assertion about output the program never got to write.

Waiting is on conditions: :func:`wait_until` polls until a deadline; fixed sleeps belong only where a test
*means* time to pass (a writer pacing its events).
"""

from __future__ import annotations

import os
import subprocess
import time
from typing import Any, Callable, Sequence

import pytest

#: a limit never grows past this many times its base without $MAGI_TEST_SLOW (a hang must still end)
MAX_FACTOR = 8.0


def load_per_core() -> float:
    """The 1-minute load average per core (0 where the platform has none)."""
    try:
        return os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:
        return 0.0


def factor() -> float:
    """How much longer than on a quiet machine a test should allow: ``$MAGI_TEST_SLOW`` (e.g. ``3``), else
    measured now from the load average; never below 1."""
    env = os.environ.get("MAGI_TEST_SLOW")
    if env:
        try:
            return max(1.0, float(env))
        except ValueError:
            pytest.fail(f"MAGI_TEST_SLOW={env!r} is not a number (it multiplies the tests' time limits)",
                        pytrace=False)
    return min(MAX_FACTOR, max(1.0, load_per_core()))


def limit(base_s: float) -> float:
    """``base_s`` (enough on a quiet 2-core machine) scaled for this machine now."""
    return base_s * factor()


def _busy_note(seconds: float) -> str:
    return (f"did not finish in {seconds:.0f} s (machine busy? load {os.getloadavg()[0]:.1f} on "
            f"{os.cpu_count()} cores; MAGI_TEST_SLOW=<n> allows n times longer)")


def _what(cmd: Any) -> str:
    if isinstance(cmd, (list, tuple)):
        words = [os.path.basename(str(cmd[0]))] + [str(c) for c in cmd[1:]]
        text = " ".join(words)
    else:
        text = str(cmd)
    return f"`{text[:100]}`"


def run(cmd: Sequence[Any] | str, *, timeout: float, what: str | None = None, **kw: Any) -> subprocess.CompletedProcess:
    """``subprocess.run`` with ``timeout`` as a base scaled by :func:`factor`; running out of time fails the
    test with a message that says so (naming ``what``, e.g. "the traced program")."""
    seconds = limit(timeout)
    try:
        return subprocess.run(cmd, timeout=seconds, **kw)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{what or _what(cmd)} {_busy_note(seconds)}", pytrace=False)


def communicate(proc: subprocess.Popen, *, timeout: float, what: str | None = None,
                input: Any = None) -> tuple[Any, Any]:
    """``proc.communicate`` with a scaled limit; on running out the process is killed and the test fails."""
    seconds = limit(timeout)
    try:
        return proc.communicate(input=input, timeout=seconds)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"{what or _what(proc.args)} {_busy_note(seconds)}", pytrace=False)


def wait(proc: subprocess.Popen, *, timeout: float, what: str | None = None) -> int:
    """``proc.wait`` with a scaled limit; on running out the process is killed and the test fails."""
    seconds = limit(timeout)
    try:
        return proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"{what or _what(proc.args)} {_busy_note(seconds)}", pytrace=False)


def wait_until(cond: Callable[[], Any], *, timeout: float, what: str, interval: float = 0.05) -> Any:
    """Poll ``cond()`` until it is truthy (returned) or a scaled ``timeout`` passes (the test fails naming
    ``what``)."""
    seconds = limit(timeout)
    end = time.monotonic() + seconds
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() >= end:
            pytest.fail(f"timed out after {seconds:.0f} s waiting for {what} (machine busy? load "
                        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)", pytrace=False)
        time.sleep(interval)
