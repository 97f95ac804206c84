"""Issue 32 (3): no process of ``bisect`` / ``fix`` outlives it. SIGTERM, SIGHUP or SIGINT to magi-tui kill the
running trial's whole process group at once, leave the partial ``bisect.json`` / ``fix.json`` marked
``interrupted`` with the signal, remove the trial's temporary file, and exit 128 + the signal; SIGKILL of
magi-tui (its death) still kills the program and its child (``PR_SET_PDEATHSIG`` and the trial's watchdog)
and leaves the partial file, marked interrupted.

Real processes, no torch: ``python prog.py`` runs under a stand-in for the tracer (``MAGI_TUI_TRACER``) that
runs the script as ``python -m tracer`` would; the program starts a grandchild that sleeps, writes both pids,
then sleeps itself.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import slow

REPO = Path(__file__).resolve().parents[2]

STUB_TRACER = """\
import runpy, sys
# python -m stub_tracer -o ROOT script.py args: the script as __main__, untraced
args = sys.argv[1:]
sys.argv = args[2:]
runpy.run_path(args[2], run_name="__main__")
"""

PROGRAM = """\
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(f"{os.getpid()} {child.pid}\\n")
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
print("1.5", flush=True)
time.sleep(300)
"""


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper that never comes is dead)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return not Path("/proc").is_dir()


def _all_gone(pids: list[int], within: float = 5.0) -> bool:
    end = time.monotonic() + within
    while any(_alive(p) for p in pids) and time.monotonic() < end:
        time.sleep(0.05)
    return not any(_alive(p) for p in pids)


def _start(tmp_path: Path, verb: str) -> tuple[subprocess.Popen, Path, Path]:
    """``magi-tui VERB -o ROOT --json -- python prog.py PIDS`` started, once the program and its child run."""
    (tmp_path / "stub_tracer.py").write_text(STUB_TRACER)
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    pids = tmp_path / "pids"
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)]),
           "MAGI_TUI_TRACER": "stub_tracer", "TMPDIR": str(tmp)}
    proc = subprocess.Popen([sys.executable, "-m", "magi_tui", verb, "-o", str(tmp_path / "runs"), "--json", "--",
                             sys.executable, str(prog), str(pids)], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    end = time.monotonic() + slow.limit(30)
    while not pids.exists():
        if proc.poll() is not None or time.monotonic() > end:
            proc.kill()
            out, err = proc.communicate()
            pytest.fail(f"the program did not start: {proc.returncode} {out!r} {err!r}")
        time.sleep(0.05)
    return proc, pids, tmp


def _result_file(tmp_path: Path, name: str) -> dict:
    [f] = (tmp_path / "runs").glob(f"*/{name}")
    assert not list(f.parent.glob(f".{name}.*")), "a temporary copy of the result was left"
    return json.loads(f.read_text())


@pytest.mark.parametrize("verb, name", [("bisect", "bisect.json"), ("fix", "fix.json")])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_kills_the_trial_and_its_child_and_leaves_the_result_marked(tmp_path, verb, name, sig):
    proc, pids, tmp = _start(tmp_path, verb)
    trial = [int(p) for p in pids.read_text().split()]
    t0 = time.monotonic()
    proc.send_signal(sig)
    out, err = slow.communicate(proc, timeout=30)
    assert time.monotonic() - t0 < slow.limit(10)
    assert proc.returncode == 128 + sig, (out, err)
    assert _all_gone(trial), "a process of the trial outlived magi-tui"
    saved = _result_file(tmp_path, name)
    assert saved["interrupted"] is True and saved["signal"] == sig.name
    assert saved["error"] == f"interrupted by {sig.name}"
    assert json.loads(out) == saved  # --json: the same, on stdout
    assert f"could not {verb}: interrupted by {sig.name}" in err.decode()
    assert list(tmp.iterdir()) == []  # the trial's probe file removed


@pytest.mark.parametrize("verb, name", [("bisect", "bisect.json"), ("fix", "fix.json")])
def test_the_death_of_magi_tui_kills_the_trial_and_its_child(tmp_path, verb, name):
    proc, pids, tmp = _start(tmp_path, verb)
    trial = [int(p) for p in pids.read_text().split()]
    proc.kill()  # SIGKILL: no handler runs
    slow.communicate(proc, timeout=10)
    assert _all_gone(trial), "a process of the trial outlived magi-tui"
    saved = _result_file(tmp_path, name)  # the partial result written before the run, marked interrupted
    assert saved["interrupted"] is True and saved["signal"] is None
    assert "did not finish" in saved["error"]
    end = time.monotonic() + slow.limit(5)
    while list(tmp.iterdir()) and time.monotonic() < end:  # the watchdog removes the probe file
        time.sleep(0.05)
    assert list(tmp.iterdir()) == []


def test_timeout_kills_like_the_shell_does(tmp_path):
    """``timeout 240 magi-tui bisect ...`` (SIGTERM from outside, as ``timeout`` sends it) leaves nothing."""
    if not Path("/usr/bin/timeout").exists() and not Path("/bin/timeout").exists():
        pytest.skip("no timeout(1)")
    (tmp_path / "stub_tracer.py").write_text(STUB_TRACER)
    (tmp_path / "prog.py").write_text(PROGRAM)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)]),
           "MAGI_TUI_TRACER": "stub_tracer"}
    t0 = time.monotonic()
    out = slow.run(["timeout", "3", sys.executable, "-m", "magi_tui", "bisect", "-o", str(tmp_path / "runs"),
                    "--json", "--", sys.executable, str(tmp_path / "prog.py"), str(tmp_path / "pids")],
                   cwd=tmp_path, env=env, capture_output=True, timeout=60)
    assert time.monotonic() - t0 < slow.limit(15)
    assert out.returncode == 124  # timeout's own code: the command was killed by its TERM
    assert _all_gone([int(p) for p in (tmp_path / "pids").read_text().split()])
    assert json.loads(out.stdout)["signal"] == "SIGTERM"
