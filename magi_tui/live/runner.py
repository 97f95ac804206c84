"""``magi-tui run``: the traced program as a child process.

* The command is rewritten to run under the tracer: a leading ``python`` / ``python3`` /
  ``sys.executable`` becomes ``sys.executable -m tracer -o ROOT`` (``MAGI_TUI_TRACER`` names another
  module, for tests). Any other command runs as given; its run is then found by watching ROOT.
* The child gets its own session and process group (``start_new_session``), no terminal on stdin,
  ``PYTHONUNBUFFERED=1`` (so its lines arrive as they are printed), and on Linux a parent-death signal
  (a tiny exec shim sets ``PR_SET_PDEATHSIG``), so even a killed magi-tui leaves no orphan.
* stdout and stderr are read in chunks and split into lines (``\\n``, and ``\\r`` so progress bars
  show their updates); a line ``MAGI_RUN_DIR=<path>`` on stderr names the run directory.
* :meth:`ProgramRunner.stop` stops it cleanly: SIGINT to the group, then SIGTERM after a grace period,
  then SIGKILL. :meth:`ProgramRunner.kill_now` is the synchronous last resort used on app exit.

Nothing here imports Textual.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Union

from magi_format.layout import RUN_DIR_ANNOUNCE
from magi_format.text import literal

RUN_DIR_PREFIX = RUN_DIR_ANNOUNCE
MAX_LINES = 20_000
MAX_LINE_CHARS = 4_000
SIGINT_GRACE_S = 3.0
SIGTERM_GRACE_S = 2.0

_PY_NAME = re.compile(r"^python(\d+(\.\d+)?)?$")
#: interpreter options that take no argument and may precede the script
_PY_FLAGS = re.compile(r"^-[bBdEiIOqsSuvx]+$")

# CSI (colours, cursor moves), OSC (titles, hyperlinks), and two-byte escapes
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]")


def clean_line(text: str) -> str:
    """Program output made safe to show literally: ANSI sequences stripped, other control characters
    shown as ``\\xNN``, tabs expanded, very long lines cut."""
    return literal(_ANSI.sub("", text).expandtabs(4), MAX_LINE_CHARS)


def _is_python(arg: str) -> bool:
    if arg == sys.executable:
        return True
    try:
        if Path(arg).resolve() == Path(sys.executable).resolve():
            return True
    except OSError:
        pass
    return bool(_PY_NAME.match(Path(arg).name))


def tracer_command(command: list[str], root: str | os.PathLike[str], module: str | None = None) -> list[str]:
    """``python [flags] script.py args`` -> ``sys.executable [flags] -m tracer -o ROOT script.py args``.

    Commands that are not a Python script (``python -m pkg``, ``python -c``, ``torchrun``, a shell
    script) are returned unchanged: their run is found by watching ROOT instead.
    """
    module = module or os.environ.get("MAGI_TUI_TRACER") or "tracer"
    if not command or not _is_python(command[0]):
        return list(command)
    i = 1
    flags = []
    while i < len(command) and _PY_FLAGS.match(command[i]):
        flags.append(command[i])
        i += 1
    if i >= len(command) or command[i].startswith("-"):
        return list(command)  # -m / -c / -W ...: not a script
    return [sys.executable, *flags, "-m", module, "-o", str(root), *command[i:]]


# A tiny exec shim: ask the kernel to SIGTERM the program when magi-tui dies, then exec it.
_SHIM = (
    "import ctypes,os,signal,sys\n"
    "try:\n"
    " ctypes.CDLL(None,use_errno=True).prctl(1,signal.SIGTERM)\n"
    "except Exception:\n"
    " pass\n"
    "if os.getppid()!=int(sys.argv[1]):sys.exit(143)\n"
    "try:\n"
    " os.execvp(sys.argv[2],sys.argv[2:])\n"
    "except OSError as e:\n"
    " sys.stderr.write(f'magi-tui: cannot run {sys.argv[2]!r}: {e.strerror}\\n');sys.exit(127)\n"
)


@dataclass
class OutputLine:
    """A line the program printed (also the event reporting it)."""

    stream: str  # "stdout" | "stderr" | "magi" (our own messages)
    text: str    # already cleaned


@dataclass
class RunDirAnnounced:
    """The tracer named the run directory it writes (``MAGI_RUN_DIR=`` on stderr)."""

    path: Path


@dataclass
class ProgramStarted:
    pid: int


@dataclass
class SignalSent:
    signal: str


@dataclass
class ProgramExited:
    """The program ended (``returncode`` as :func:`exit_text` explains it; 127: could not start)."""

    returncode: int


RunnerEvent = Union[OutputLine, RunDirAnnounced, ProgramStarted, SignalSent, ProgramExited]
Listener = Callable[[RunnerEvent], None]


class ProgramRunner:
    """One program run: start it, collect its output, stop it."""

    def __init__(self, argv: list[str], *, cwd: str | os.PathLike[str] | None = None,
                 env: dict[str, str] | None = None, shim: bool | None = None) -> None:
        self.argv = list(argv)
        self.cwd = cwd
        self.env = env
        self.shim = sys.platform.startswith("linux") if shim is None else shim
        self.lines: deque[OutputLine] = deque(maxlen=MAX_LINES)
        self.dropped = 0
        self.run_dirs: list[Path] = []
        self.pid: int | None = None
        self.returncode: int | None = None
        self.started_at: float | None = None
        self.ended_at: float | None = None
        self.stop_requested: str | None = None  # the last signal we sent
        self.error: str | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self._listeners: list[Listener] = []
        self._stopping: asyncio.Task | None = None

    # -- observers -----------------------------------------------------------------------------
    def subscribe(self, fn: Listener) -> None:
        self._listeners.append(fn)

    def unsubscribe(self, fn: Listener) -> None:
        try:
            self._listeners.remove(fn)
        except ValueError:
            pass

    def _emit(self, event: RunnerEvent) -> None:
        for fn in list(self._listeners):
            try:
                fn(event)
            except Exception:  # a closing widget must not stop the output pump
                pass

    def _line(self, stream: str, text: str) -> None:
        if len(self.lines) == self.lines.maxlen:
            self.dropped += 1
        line = OutputLine(stream, clean_line(text))
        self.lines.append(line)
        self._emit(line)
        if stream == "stderr" and text.startswith(RUN_DIR_PREFIX):
            path = Path(text[len(RUN_DIR_PREFIX):].strip())
            if path and path not in self.run_dirs:
                self.run_dirs.append(path)
                self._emit(RunDirAnnounced(path))

    # -- state ---------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._proc is not None and self.returncode is None

    @property
    def command_text(self) -> str:
        return " ".join(self.argv)

    def status_text(self) -> str:
        if self.error:
            return f"could not start: {self.error}"
        if self.returncode is None:
            if self.pid is None:
                return "starting"
            return f"running (pid {self.pid})" + (f", {self.stop_requested} sent" if self.stop_requested else "")
        return exit_text(self.returncode)

    # -- running -------------------------------------------------------------------------------
    async def run(self) -> int:
        """Start the program and wait for it; returns its exit code. Cancelling this kills it."""
        env = dict(os.environ if self.env is None else self.env)
        env.setdefault("PYTHONUNBUFFERED", "1")
        argv = self.argv
        if self.shim:
            argv = [sys.executable, "-c", _SHIM, str(os.getpid()), *self.argv]
        self._line("magi", f"$ {self.command_text}")
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, cwd=self.cwd, env=env, start_new_session=True)
        except OSError as exc:
            self.error = f"{self.argv[0]}: {exc.strerror or exc}"
            self.returncode = 127
            self.ended_at = time.time()
            self._line("magi", f"magi-tui: cannot run {self.error}")
            self._emit(ProgramExited(self.returncode))
            return self.returncode
        self.pid = self._proc.pid
        self.started_at = time.time()
        self._emit(ProgramStarted(self.pid))
        pumps = [asyncio.create_task(self._pump(self._proc.stdout, "stdout")),
                 asyncio.create_task(self._pump(self._proc.stderr, "stderr"))]
        try:
            rc = await self._proc.wait()
            # a grandchild may keep the pipes open: take what is there, then stop reading
            _done, pending = await asyncio.wait(pumps, timeout=1.0)
            for t in pending:
                t.cancel()
        except asyncio.CancelledError:
            for t in pumps:
                t.cancel()
            self.kill_now()
            raise
        self.returncode = rc
        self.ended_at = time.time()
        self._kill_group(signal.SIGKILL)  # anything it left behind in its group
        self._line("magi", f"magi-tui: the program {exit_text(rc)}")
        self._emit(ProgramExited(rc))
        return rc

    async def _pump(self, stream: asyncio.StreamReader | None, name: str) -> None:
        if stream is None:
            return
        buf = b""
        while True:
            chunk = await stream.read(1 << 16)
            if not chunk:
                break
            buf += chunk
            parts = re.split(rb"\r\n|\n|\r", buf)
            buf = parts.pop()
            for p in parts:
                self._line(name, p.decode("utf-8", "replace"))
            if len(buf) > 1 << 20:  # a 1 MB line without a newline: show it in pieces
                self._line(name, buf.decode("utf-8", "replace"))
                buf = b""
        if buf:
            self._line(name, buf.decode("utf-8", "replace"))

    # -- stopping ------------------------------------------------------------------------------
    def _kill_group(self, sig: int) -> bool:
        """Signal the program's process group; False when nothing is left in it."""
        if self.pid is None:
            return False
        try:
            os.killpg(self.pid, sig)
            return True
        except (ProcessLookupError, PermissionError):
            return False

    def send(self, sig: int) -> None:
        if self.running:
            self.stop_requested = signal.Signals(sig).name
            self._line("magi", f"magi-tui: sending {self.stop_requested} to the program")
            self._kill_group(sig)
            self._emit(SignalSent(self.stop_requested))

    async def stop(self, int_grace: float = SIGINT_GRACE_S, term_grace: float = SIGTERM_GRACE_S) -> int | None:
        """SIGINT, then SIGTERM after ``int_grace`` s, then SIGKILL after ``term_grace`` s more.

        Calling it again while a stop is under way escalates to the next signal at once."""
        if not self.running:
            return self.returncode
        if self._stopping is not None and not self._stopping.done():
            nxt = signal.SIGTERM if self.stop_requested == "SIGINT" else signal.SIGKILL
            self.send(nxt)
            return None
        self._stopping = asyncio.current_task()
        for sig, grace in ((signal.SIGINT, int_grace), (signal.SIGTERM, term_grace), (signal.SIGKILL, 5.0)):
            if not self.running:
                break
            if self.stop_requested in ("SIGTERM", "SIGKILL") and sig == signal.SIGINT:
                continue
            self.send(sig)
            end = time.monotonic() + grace
            while self.running and time.monotonic() < end:
                await asyncio.sleep(0.05)
        return self.returncode

    def kill_now(self, int_grace: float = 1.0, term_grace: float = 1.0) -> None:
        """Synchronous stop for when the event loop is going away: SIGINT, SIGTERM, SIGKILL, waiting
        briefly for the group to disappear between each."""
        if self.pid is None or self.returncode is not None:
            return
        for sig, grace in ((signal.SIGINT, int_grace), (signal.SIGTERM, term_grace), (signal.SIGKILL, 0.5)):
            if not self._kill_group(sig):
                return
            self.stop_requested = signal.Signals(sig).name
            end = time.monotonic() + grace
            while time.monotonic() < end:
                if not self._group_alive():
                    return
                time.sleep(0.02)

    def _group_alive(self) -> bool:
        if self.pid is None:
            return False
        # reap our own child if nobody else does (the loop may not run any more)
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid == self.pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        except ChildProcessError:
            pass
        try:
            os.killpg(self.pid, 0)
            return True
        except (ProcessLookupError, PermissionError):
            return False


def shell_exit_code(rc: int | None) -> int:
    """The program's exit status as a shell reports it: its own code, or 128 + n when signal n ended it
    (``magi-tui run`` exits with it, so ``run -- prog && next`` behaves as ``prog && next``)."""
    if rc is None:
        return 0
    return 128 - rc if rc < 0 else rc


def exit_text(rc: int) -> str:
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        return f"was stopped by {name} (exit {rc})"
    return f"exited with code {rc}"
