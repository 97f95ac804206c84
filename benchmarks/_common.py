"""What the benchmarks that time whole processes share: running "our" code from a chosen checkout (so one
script can measure the code before and after a change in the same run), one child process's CPU, wall and
peak memory, and a program in a real terminal (a private tmux server) read the way a user reads it.

Kept apart from any one benchmark so a new one imports these instead of copying them.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

__all__ = ["ROOT", "Tmux", "code_env", "compile_code", "load_average", "median", "proc_cpu_s", "proc_hwm_mb",
           "use_code", "whole_process"]


# -- our code, from a chosen checkout --------------------------------------------------------------
def use_code(code: str | Path) -> None:
    """In a child process: import ``magi_tui``/``magi_format``/``tracer`` from ``code`` (another checkout),
    not from this one. Call it before any of them is imported; benchmark modules put this checkout first
    on ``sys.path`` when imported, so this takes it out again."""
    code = Path(code).resolve()
    sys.path[:] = [p for p in sys.path if not p or Path(p).resolve() != ROOT]
    sys.path.insert(0, str(code))


def _pyc_folder(code: Path, root: Path) -> Path:
    return root / ("pyc_" + str(code.resolve()).strip("/").replace("/", "_"))


def code_env(code: str | Path, pyc_root: Path) -> dict[str, str]:
    """The environment of a process running ``code`` as installed: its bytecode compiled beforehand
    (:func:`compile_code`) into a folder of its own (``pip install`` compiles it; this workspace sets
    ``PYTHONDONTWRITEBYTECODE``, and without bytecode each launch compiles our sources again)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(_pyc_folder(Path(code), pyc_root))
    env["PYTHONPATH"] = str(Path(code).resolve())
    return env


def compile_code(code: str | Path, pyc_root: Path, python: str = sys.executable) -> None:
    """Compile ``code``'s packages (and the stdlib and site-packages modules they import) into the folder
    :func:`code_env` names, once, before anything is measured."""
    code = Path(code).resolve()
    script = ("import compileall, difflib, magi_tui.ui.app, magi_tui.ui.screens.run, magi_tui.ui.screens.diff\n"
              "for pkg in ('magi_tui', 'magi_format', 'tracer'):\n"
              "    compileall.compile_dir(pkg, quiet=1)\n")
    subprocess.run([python, "-c", script], cwd=code, env=code_env(code, pyc_root), check=True)


# -- one whole process -----------------------------------------------------------------------------
def whole_process(cmd: list[str], *, cwd: str | Path | None = None, env: dict[str, str] | None = None,
                  timeout: float = 600, ok: tuple[int, ...] = (0, 1)) -> dict:
    """CPU (user + system, all threads), wall and peak RSS of one child process, from ``wait4``; its
    stdout's last line parsed when it is JSON (``child``). Its output goes to a temporary file and only the
    tail is read back, so this process stays small (a child's ``ru_maxrss`` counts its parent's pages at
    fork: the driver of a memory row must itself be small). ``ok``: the exit codes that are a measurement
    (``triage`` exits 1 on a failed run). A child past ``timeout`` is killed and marked ``timed_out``."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=cwd, env=env)
        timed_out = False
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - t0 > timeout:
                proc.kill()
                _pid, status, ru = os.wait4(proc.pid, 0)
                timed_out = True
                break
            time.sleep(0.005)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(max(0, out.seek(0, 2) - (64 << 10)))
        err.seek(max(0, err.seek(0, 2) - (64 << 10)))
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    row: dict = {"cpu_s": ru.ru_utime + ru.ru_stime, "wall_s": wall, "peak_rss_mb": ru.ru_maxrss / 1024}
    if timed_out:
        row["timed_out"] = True
        return row
    if proc.returncode not in ok:
        raise RuntimeError(f"{' '.join(map(str, cmd[:5]))} exited {proc.returncode}: {stderr[-2000:]}")
    last = stdout.strip().splitlines()[-1:] if stdout.strip() else []
    if last and last[0].startswith("{"):
        row["child"] = json.loads(last[0])
    return row


def proc_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a running process, all its threads (``/proc/PID/stat``, clock ticks)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_hwm_mb(pid: int) -> float:
    """Peak resident set of a running process (``VmHWM``)."""
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


# -- a real terminal -------------------------------------------------------------------------------
class Tmux:
    """One program in a private tmux server (``tmux -L bench-…``: never the default server), 120x40 unless
    told. ``screen()`` is what a user sees (``capture-pane``); ``wait_for`` polls it."""

    def __init__(self, command: str, *, env: dict[str, str] | None = None, size: tuple[int, int] = (120, 40)) -> None:
        if shutil.which("tmux") is None:
            raise RuntimeError("tmux not found")
        self.sock = f"bench-{uuid.uuid4().hex[:8]}"
        env = dict(env or os.environ, TERM="xterm-256color")
        env.pop("TMUX", None)
        self.started = time.perf_counter()
        # ``exec``: the pane's process is the program itself, so its CPU and memory can be read
        subprocess.run(["tmux", "-L", self.sock, "new-session", "-d", "-x", str(size[0]), "-y", str(size[1]),
                        f"exec {command}"], check=True, env=env)
        self.pid = int(self._tmux("display-message", "-p", "#{pane_pid}").strip())

    def _tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.sock, *args], capture_output=True, text=True).stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p")

    def send(self, *keys: str) -> None:
        self._tmux("send-keys", *keys)

    def wait_for(self, cond: Callable[[str], bool], what: str, timeout: float = 60, step: float = 0.0) -> float:
        """Poll the screen until ``cond(screen)``; returns the ``perf_counter`` when it held."""
        end = time.perf_counter() + timeout
        while True:
            text = self.screen()
            now = time.perf_counter()
            if cond(text):
                return now
            if now > end:
                raise RuntimeError(f"{what}: never on screen in {timeout:.0f}s; last screen:\n{text[-1500:]}")
            if step:
                time.sleep(step)

    def wait_idle(self, quiet: float = 0.3, timeout: float = 30) -> None:
        """Until the program has used no CPU for ``quiet`` seconds (its workers done, nothing painting)."""
        end = time.perf_counter() + timeout
        last, since = proc_cpu_s(self.pid), time.perf_counter()
        while time.perf_counter() < end:
            time.sleep(0.05)
            now = proc_cpu_s(self.pid)
            if now != last:
                last, since = now, time.perf_counter()
            elif time.perf_counter() - since >= quiet:
                return

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.sock, "kill-server"], capture_output=True)

    def __enter__(self) -> Tmux:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- reading the numbers ---------------------------------------------------------------------------
def median(rows: list[dict], key: str) -> float | None:
    vals = [r[key] for r in rows if r.get(key) is not None]
    return round(statistics.median(vals), 3) if vals else None


def load_average() -> tuple[float, float, float]:
    return os.getloadavg()
