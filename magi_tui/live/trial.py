"""One trial: the user's program run once, traced, with a change made from outside it.

``magi-tui bisect`` (and any command that tries a change and looks at what it did) runs the program
many times, each time with something overridden: every graph on another backend, some graphs on
another backend, a compiler subsystem cut off after N applications, a config value. Nothing in the
program is edited; the change is made with torch's own switches:

* ``TORCH_COMPILE_OVERRIDE_BACKENDS`` (per graph, by frame id: ``">=0:eager"``, ``"1,3:aot_eager"``),
  ``TORCH_COMPILE_OVERRIDE_INDUCTOR_CONFIGS`` (Inductor settings, per graph);
* the subsystems of ``torch._inductor.compiler_bisector`` (decompositions, pre/joint/post-grad passes,
  lowerings): applications after the N-th are skipped, as ``TORCH_BISECT_MAX=N`` does, through
  ``MAGI_TRIAL_BISECT`` (``tracer/trial_hooks.py`` says why not ``TORCH_BISECT_BACKEND``);
* ``TORCH_COMPILE_DISABLE=1`` (the program in plain eager PyTorch: the reference);
* ``MAGI_TRIAL_CONFIG`` for other settings, ``MAGI_TRIAL_REORDERABLE_LOGGING`` for callables Dynamo may
  move after the graph, and ``MAGI_TRIAL_PROBE`` to count what was applied (read by
  ``tracer/trial_hooks.py``);
* any environment variable torch reads itself (``TORCH_COMPILE_DYNAMIC_SOURCES``, ``magi-tui fix``).

A ``python script.py`` command runs under ``python -m tracer`` (so every trial is a run directory the
app opens) with the caches off that would skip the stages being tried (:data:`STAGE_CACHES_OFF`: a hit in
the FX graph or AOT autograd cache skips every pass and lowering; profile-guided dynamic shapes carry one
trial's shapes into the next). Inductor's code cache stays on: it is keyed by the generated source, so a
kernel compiles once for all the trials that generate it (``TORCHINDUCTOR_FORCE_DISABLE_CACHES`` gives
each process a fresh cache folder and so compiles every kernel's C++ again: an Inductor trial took 2.3x
as long). The result
keeps the exit code, the output, the numbers printed on stdout and what the probe counted;
:func:`compare_numbers` and :class:`Judge` say whether a trial shows the bug. Nothing here imports
Textual or torch.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import math
import os
import re
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
from array import array
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import IO, Callable, Iterator, Literal

from magi_format.layout import RUN_DIR_ANNOUNCE
from magi_tui.live.runner import exit_text, tracer_command

#: torch's switches for the caches a trial runs without (the module docstring says why these and no more)
STAGE_CACHES_OFF = {
    "TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE": "0",
    "TORCHINDUCTOR_AUTOGRAD_CACHE": "0", "TORCHINDUCTOR_AUTOGRAD_REMOTE_CACHE": "0",
    "TORCH_DYNAMO_AUTOMATIC_DYNAMIC_LOCAL_PGO": "0", "TORCH_DYNAMO_AUTOMATIC_DYNAMIC_REMOTE_PGO": "0",
}

__all__ = ["Overrides", "Application", "TrialResult", "run_trial", "new_trials_dir", "parse_numbers", "compare_numbers",
           "compare_printed", "Judge", "DEFAULT_RTOL", "DEFAULT_ATOL", "kill_running_trials", "stop_on_signals",
           "default_timeout", "check_determinism", "determinism_advice"]

DEFAULT_RTOL = 1e-4
DEFAULT_ATOL = 1e-5
#: what the program printed is kept up to this many characters per stream (the tail)
MAX_KEEP = 200_000
#: bytes of each stream held while it is read (its tail: the text kept is cut from it), whatever it prints
TAIL_BYTES = 1 << 20
#: stderr's first bytes, held too: the tracer names the run directory there before the script starts
HEAD_BYTES = 64 << 10
#: numbers kept per trial for ``--compare-output`` (8 bytes each); more are counted, not kept
MAX_NUMBERS = 1_000_000
#: once the program has exited and its processes are killed, how long its pipes are read before moving on
READ_GRACE_S = 2.0
#: the signals that stop a bisect or a fix (:func:`stop_on_signals`)
STOP_SIGNALS = ("SIGTERM", "SIGHUP", "SIGINT")


def default_timeout(reference_seconds: float) -> float:
    """The time limit of a trial when none is given: 3x the first (reference) run's wall time + 60 s."""
    return 3 * reference_seconds + 60


@dataclass(frozen=True)
class Overrides:
    """What one trial changes, from outside the program. The empty value runs it as it is."""

    #: every compiled graph on this backend (``"eager"``, ``"aot_eager"``, ...)
    backend: str | None = None
    #: frame ids (as in compile id ``"<frame>/<n>"``) -> backend, for those graphs only
    graph_backends: tuple[tuple[tuple[int, ...], str], ...] = ()
    #: (backend, subsystem, max): applications after the max-th skipped (-1: all); needs the tracer
    bisect: tuple[str, str, int] | None = None
    #: Inductor settings for every graph (``fallback_random=True``)
    inductor_config: tuple[tuple[str, object], ...] = ()
    #: other settings by dotted name (``torch._functorch.config.cse``), set before the program starts
    config: tuple[tuple[str, object], ...] = ()
    #: the program without torch.compile at all
    no_compile: bool = False
    #: environment variables torch reads itself, as a user would set them (``TORCH_COMPILE_DYNAMIC_SOURCES``)
    env: tuple[tuple[str, str], ...] = ()
    #: callables (dotted: ``builtins.print``) added to ``torch._dynamo.config.reorderable_logging_functions``
    logging_functions: tuple[str, ...] = ()

    def environ(self) -> dict[str, str]:
        env: dict[str, str] = {}
        rules = []
        if self.backend:
            rules.append(f">=0:{self.backend}")
        for frames, backend in self.graph_backends:
            if frames:
                rules.append(f"{','.join(str(f) for f in frames)}:{backend}")
        if rules:
            env["TORCH_COMPILE_OVERRIDE_BACKENDS"] = ";".join(rules)
        if self.bisect is not None:
            env["MAGI_TRIAL_BISECT"] = json.dumps(list(self.bisect))
        if self.inductor_config:
            env["TORCH_COMPILE_OVERRIDE_INDUCTOR_CONFIGS"] = ">=0:" + ",".join(
                f"{k}={v}" for k, v in self.inductor_config)
        if self.config:
            env["MAGI_TRIAL_CONFIG"] = json.dumps(dict(self.config))
        if self.no_compile:
            env["TORCH_COMPILE_DISABLE"] = "1"
        if self.logging_functions:
            env["MAGI_TRIAL_REORDERABLE_LOGGING"] = ",".join(self.logging_functions)
        env.update(self.env)
        return env

    def describe(self) -> str:
        """One line: what this trial changed."""
        if self.no_compile:
            return "torch.compile disabled"
        parts = []
        if self.backend:
            parts.append(f"every graph on {self.backend}")
        for frames, backend in self.graph_backends:
            parts.append(f"frame {','.join(str(f) for f in frames)} on {backend}")
        if self.bisect is not None:
            backend, subsystem, limit = self.bisect
            parts.append(f"{backend}/{subsystem} " + ("off" if limit < 0 else f"applications 0..{limit} only"))
        for k, v in (*self.inductor_config, *self.config, *self.env):
            parts.append(f"{k}={v}")
        if self.logging_functions:
            parts.append("reorderable logging: " + ", ".join(self.logging_functions))
        return ", ".join(parts) or "as it is"


@dataclass(frozen=True)
class Application:
    """One application of a compiler subsystem the probe saw (``n`` counts from 0 per subsystem)."""

    backend: str
    subsystem: str
    n: int
    info: str | None
    compile_id: str | None

    @property
    def frame_id(self) -> int | None:
        try:
            return int(str(self.compile_id).split("/")[0].lstrip("[!"))
        except ValueError:
            return None


@dataclass
class TrialResult:
    """What one run of the program did."""

    overrides: Overrides
    command: list[str]
    returncode: int | None          # None: it did not finish in time (or could not start: see error)
    seconds: float
    stdout: str = ""
    stderr: str = ""
    run_dir: Path | None = None
    applications: list[Application] = field(default_factory=list)
    versions: dict = field(default_factory=dict)
    error: str | None = None        # could not start / timed out, in words
    #: the numbers printed on stdout, read as they were printed (the first MAX_NUMBERS); None: from ``stdout``
    printed: array | None = field(default=None, repr=False)
    #: how many numbers it printed in all (None: as many as ``numbers``)
    printed_count: int | None = None
    #: bytes printed on stdout and on stderr (``stdout`` / ``stderr`` keep their tails)
    output_bytes: tuple[int, int] = (0, 0)

    @property
    def numbers(self) -> list[float]:
        """Every number printed on stdout (all of it, not the tail kept), up to :data:`MAX_NUMBERS`."""
        if self.printed is not None:
            return self.printed.tolist()
        return parse_numbers(self.stdout)

    @property
    def number_count(self) -> int:
        return self.printed_count if self.printed_count is not None else len(self.numbers)

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def status_text(self) -> str:
        if self.error:
            return self.error
        return exit_text(self.returncode if self.returncode is not None else -1)

    def count(self, backend: str, subsystem: str) -> int:
        """How many applications of ``backend/subsystem`` the probe saw."""
        return sum(1 for a in self.applications if a.backend == backend and a.subsystem == subsystem)

    def application(self, backend: str, subsystem: str, n: int) -> Application | None:
        return next((a for a in self.applications
                     if a.backend == backend and a.subsystem == subsystem and a.n == n), None)

    def last_error_line(self) -> str:
        """The exception line of a traceback on stderr (the last ``Name: message`` line), or ''."""
        for line in reversed(self.stderr.splitlines()):
            if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Failed|Interrupt)\b.*", line):
                return line.strip()
        return ""


def _read_probe(path: Path) -> tuple[list[Application], dict]:
    apps: list[Application] = []
    versions: dict = {}
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return apps, versions
    for line in text.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue  # a line cut short by a killed program
        if not isinstance(obj, dict):
            continue
        if "versions" in obj and isinstance(obj["versions"], dict):
            versions = obj["versions"]
            continue
        try:
            apps.append(Application(str(obj["backend"]), str(obj["subsystem"]), int(obj["n"]),
                                    None if obj.get("info") is None else str(obj["info"]),
                                    None if obj.get("compile_id") is None else str(obj["compile_id"])))
        except (KeyError, TypeError, ValueError):
            continue
    return apps, versions


def run_trial(command: list[str], overrides: Overrides = Overrides(), *, root: str | os.PathLike[str],
              timeout: float | None = None, cwd: str | os.PathLike[str] | None = None,
              env: dict[str, str] | None = None, cancel: threading.Event | None = None,
              numbers: bool = True) -> TrialResult:
    """Run ``command`` once with ``overrides``; a ``python script.py`` command runs traced into ``root``.

    Never raises for the program's sake: a program that cannot start, crashes, runs past ``timeout`` or is
    cancelled (``cancel`` set: the app's bisect stopped, a signal) is a result (``returncode`` 127 / its
    code / None, and ``error``).

    No process of the trial outlives it: the program runs in a session of its own, and when it exits (or is
    stopped) its process group and whatever is left in its session is killed (:func:`_kill_tree`). If
    magi-tui itself dies first, the kernel kills the program (``PR_SET_PDEATHSIG``, Linux) and a watchdog
    (:data:`_WATCHDOG_MAIN`, a tiny process of its own that sees magi-tui's end as the end of its stdin)
    kills the rest and removes the trial's temporary file.

    Memory stays bounded whatever the program prints: each pipe is read in a thread as the program writes,
    keeping the tail (:data:`TAIL_BYTES`) and the numbers ``--compare-output`` needs (``numbers=False``: not
    read, a bisect by exit code needs none; ``TrialResult.numbers`` are then those of the tail kept). The
    trial ends when
    the program's process exits, not when its pipes close (a child it left behind may hold them): its
    readers get :data:`READ_GRACE_S` more."""
    argv = tracer_command(command, root)
    traced = argv != list(command)
    base = dict(os.environ if env is None else env)
    for k in [k for k in base if k.startswith(("TORCH_BISECT_", "TORCH_COMPILE_OVERRIDE_", "MAGI_TRIAL_"))]:
        del base[k]  # only what this trial asks for
    base.pop("TORCH_COMPILE_DISABLE", None)
    base.update(overrides.environ())
    base.update(STAGE_CACHES_OFF)
    base.setdefault("PYTHONUNBUFFERED", "1")
    fd, probe = tempfile.mkstemp(prefix="magi-trial-", suffix=".jsonl")
    os.close(fd)
    if traced:
        base["MAGI_TRIAL_PROBE"] = probe
    start = time.monotonic()
    result = TrialResult(overrides, argv, None, 0.0)
    watchdog = _start_watchdog()
    try:
        try:
            proc = subprocess.Popen(argv, env=base, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, start_new_session=True, preexec_fn=_pdeathsig())
        except (OSError, subprocess.SubprocessError) as exc:
            result.returncode = 127
            result.error = f"cannot run {command[0]}: {getattr(exc, 'strerror', None) or exc}"
        else:
            _supervise(proc, result, start, timeout, cancel, watchdog, probe, numbers)
    finally:
        _release(watchdog)
        result.seconds = time.monotonic() - start
        result.applications, result.versions = _read_probe(Path(probe))
        try:
            os.unlink(probe)
        except OSError:
            pass
    return result


def _supervise(proc: subprocess.Popen, result: TrialResult, start: float, timeout: float | None,
               cancel: threading.Event | None, watchdog: subprocess.Popen | None, probe: str,
               numbers: bool = True) -> None:
    """Read the program's output until it exits or is stopped, kill what it left, fill ``result``."""
    assert proc.stdout is not None and proc.stderr is not None
    inodes = tuple(os.fstat(p.fileno()).st_ino for p in (proc.stdout, proc.stderr))
    _RUNNING[proc.pid] = inodes
    _tell(watchdog, {"pid": proc.pid, "inodes": inodes, "files": [probe]})
    out = _Reader(proc.stdout, numbers=numbers)
    err = _Reader(proc.stderr, numbers=False, head=HEAD_BYTES)
    try:
        _wait(proc, result, start, timeout, cancel)
    finally:
        # killed before it is reaped: until then its pid cannot name another process's group
        _kill_tree(proc.pid)
        _RUNNING.pop(proc.pid, None)
        proc.wait()
        _drain(proc, (out, err), inodes)
    if result.error is None:
        result.returncode = proc.returncode
    result.output_bytes = (out.tail.total, err.tail.total)
    result.stdout = out.tail.text()[-MAX_KEEP:]
    if out.numbers is not None:
        result.printed, result.printed_count = out.numbers.values, out.numbers.total
    kept = []
    for line in err.tail.text().splitlines():
        if line.startswith(RUN_DIR_ANNOUNCE) and result.run_dir is None:
            result.run_dir = Path(line[len(RUN_DIR_ANNOUNCE):].strip())
        else:
            kept.append(line)
    if result.run_dir is None and not err.tail.whole():
        for line in err.tail.head.decode("utf-8", "replace").splitlines():
            if line.startswith(RUN_DIR_ANNOUNCE):  # printed first, scrolled out of the tail since
                result.run_dir = Path(line[len(RUN_DIR_ANNOUNCE):].strip())
                break
    result.stderr = "\n".join(kept)[-MAX_KEEP:]


def _wait(proc: subprocess.Popen, result: TrialResult, start: float, timeout: float | None,
          cancel: threading.Event | None) -> None:
    """Until the program's process exits (not its pipes: a child it left may hold them), or ``timeout`` or
    ``cancel`` stops it (``result.error``). The process is not reaped here."""
    watch = _ExitWatch(proc)
    try:
        while True:
            tick = 0.2 if cancel is not None else None
            if timeout is not None:
                left = max(0.0, timeout - (time.monotonic() - start))
                tick = left if tick is None else min(tick, left)
            if watch.wait(tick):
                return
            if cancel is not None and cancel.is_set():
                result.error = "cancelled"
                return
            if timeout is not None and time.monotonic() - start >= timeout:
                result.error = f"ran past the time limit ({timeout:g} s)"
                return
    finally:
        watch.close()


def _drain(proc: subprocess.Popen, readers: tuple["_Reader", ...], inodes: tuple[int, ...]) -> None:
    """The program and its group are gone: its readers reach the end of its pipes at once, unless a process
    that left its session still holds one (then that one is killed too, when /proc names it). After
    :data:`READ_GRACE_S` they stop regardless."""
    end = time.monotonic() + READ_GRACE_S
    if not all(r.join(0.25) for r in readers):
        _kill_tree(proc.pid, inodes)
        for r in readers:
            r.join(max(0.0, end - time.monotonic()))
    for r in readers:
        r.stop()
    for p in (proc.stdout, proc.stderr):
        if p is not None:
            p.close()


class _ExitWatch:
    """Waits for a process to exit without reaping it: a pidfd (Linux), else ``waitid(WNOWAIT)`` polled."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc
        self.sel: selectors.BaseSelector | None = None
        try:
            fd = os.pidfd_open(proc.pid)
        except (AttributeError, OSError):
            return
        self.fd = fd
        self.sel = selectors.DefaultSelector()
        self.sel.register(fd, selectors.EVENT_READ)

    def wait(self, seconds: float | None) -> bool:
        """True once the process has exited (within ``seconds``; None: however long it takes)."""
        if self.sel is not None:
            return bool(self.sel.select(seconds))
        end = None if seconds is None else time.monotonic() + seconds
        while True:
            if self._exited():
                return True
            left = None if end is None else end - time.monotonic()
            if left is not None and left <= 0:
                return False
            time.sleep(0.05 if left is None else min(0.05, left))

    def _exited(self) -> bool:
        if hasattr(os, "waitid"):
            try:
                return os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
            except ChildProcessError:
                return True
        return self.proc.poll() is not None

    def close(self) -> None:
        if self.sel is not None:
            self.sel.close()
            os.close(self.fd)


class _Tail:
    """The last ``limit`` bytes of a stream, its first ``head`` bytes, and how many it had in all."""

    def __init__(self, limit: int, head: int = 0) -> None:
        self.limit, self.head_limit = limit, head
        self.head = bytearray()
        self.chunks: deque[bytes] = deque()
        self.size = 0
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        if len(self.head) < self.head_limit:
            self.head += data[: self.head_limit - len(self.head)]
        self.chunks.append(data)
        self.size += len(data)
        while self.size - len(self.chunks[0]) >= self.limit:
            self.size -= len(self.chunks.popleft())

    def whole(self) -> bool:
        """The tail is all of it."""
        return self.total <= self.limit

    def text(self) -> str:
        return b"".join(self.chunks)[-self.limit:].decode("utf-8", "replace")


#: characters no number contains, after which printed text can be cut without changing what
#: :func:`parse_numbers` finds on either side (``+``, ``-`` and ``.`` are in numbers)
_CUT_AFTER = " \t\r\f\v,;:()[]{}<>=|/\\\"'!?*&^%$#@~`"


class _NumberScanner:
    """:func:`parse_numbers` over a stream, fed as it arrives: the first ``cap`` numbers kept, all counted.
    The text is scanned up to its last newline (or, in a line longer than 64 KiB, up to the last character
    no number holds), the rest carried to the next piece, with the character before it as the context of
    the pattern's look-behind: the numbers found are those of the whole text."""

    CARRY = 1 << 16

    def __init__(self, cap: int) -> None:
        self.values = array("d")
        self.total = 0
        self.cap = cap
        self._decode = codecs.getincrementaldecoder("utf-8")("replace").decode
        self._carry = ""
        self._before = "\n"

    def feed(self, data: bytes, final: bool = False) -> None:
        text = self._carry + self._decode(data, final)
        if final:
            cut = len(text)
        else:
            cut = text.rfind("\n") + 1
            if cut == 0 and len(text) > self.CARRY:
                cut = max(text.rfind(c) for c in _CUT_AFTER) + 1 or len(text) - 64
        if cut <= 0:
            self._carry = text
            return
        self._scan(self._before + text[:cut])
        self._before, self._carry = text[cut - 1], text[cut:]

    def _scan(self, text: str) -> None:
        if not any(d in text for d in "0123456789"):  # a number has a digit, or is nan / inf (rare: look)
            low = text.lower()
            if "nan" not in low and "inf" not in low:
                return
        room = self.cap - len(self.values)
        for m in _NUMBER.finditer(text, 1):
            self.total += 1
            if room > 0:
                self.values.append(float(m.group(0)))
                room -= 1


class _Reader:
    """One of the program's pipes, read in a thread as the program writes: its tail and numbers kept."""

    def __init__(self, pipe: IO[bytes], *, numbers: bool, head: int = 0) -> None:
        self.fd = pipe.fileno()
        self.tail = _Tail(TAIL_BYTES, head)
        self.numbers = _NumberScanner(MAX_NUMBERS) if numbers else None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="magi-trial-reader", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        sel = selectors.DefaultSelector()
        try:
            sel.register(self.fd, selectors.EVENT_READ)
            while not self._stop.is_set():
                if not sel.select(0.1):
                    continue
                try:
                    data = os.read(self.fd, 1 << 16)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    break
                if not data:
                    break
                self.tail.add(data)
                if self.numbers is not None:
                    self.numbers.feed(data)
        finally:
            sel.close()
            if self.numbers is not None:
                self.numbers.feed(b"", final=True)

    def join(self, timeout: float) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


# -- no process of a trial outlives it -------------------------------------------------------------------

#: the trials running now: their session leader's pid -> the inodes of their pipes (what a signal kills)
_RUNNING: dict[int, tuple[int, ...]] = {}


def _members(leader: int, inodes: tuple[int, ...] = ()) -> list[int]:
    """Live processes in ``leader``'s session or process group, or holding one of the pipes ``inodes``
    (from /proc: Linux; none elsewhere). Runs in the watchdog too: only ``os`` here."""
    found: list[int] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    me = os.getpid()
    wanted = {f"pipe:[{i}]" for i in inodes}
    for name in names:
        if not name.isdigit() or int(name) in (me, leader):
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
            state, _ppid, pgrp, session = stat[stat.rindex(b")") + 2:].split()[:4]
            if state == b"Z":
                continue
            if int(pgrp) == leader or int(session) == leader:
                found.append(int(name))
                continue
        except (OSError, ValueError, IndexError):
            continue
        if wanted:
            try:
                for fd in os.listdir(f"/proc/{name}/fd"):
                    if os.readlink(f"/proc/{name}/fd/{fd}") in wanted:
                        found.append(int(name))
                        break
            except OSError:
                continue
    return found


def _kill_tree(leader: int, inodes: tuple[int, ...] = ()) -> None:
    """SIGKILL ``leader``'s process group, then every process left in its session or group or holding its
    pipes (one that made a group of its own). Never raises. Runs in the watchdog too: only ``os``,
    ``signal``, ``time`` and :func:`_members` here."""
    for _ in range(3):
        try:
            os.killpg(leader, signal.SIGKILL)
        except OSError:
            pass
        others = _members(leader, inodes)
        for pid in others:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if not others:
            return
        time.sleep(0.02)  # one may have forked while it was killed


def kill_running_trials() -> None:
    """Kill every running trial's processes now (what a signal handler does first)."""
    for pid, _inodes in list(_RUNNING.items()):
        _kill_tree(pid)


_PRCTL: Callable[[int, int], int] | Literal[False] | None = None  # None: not looked up yet; False: none here


def _pdeathsig() -> Callable[[], None] | None:
    """Linux: a ``preexec_fn`` asking the kernel to SIGKILL the program when magi-tui dies
    (``PR_SET_PDEATHSIG``; it reaches the program only, the watchdog kills the rest), and ending it at once
    if magi-tui died before that. The libc function is found here, in the parent, not after the fork."""
    global _PRCTL
    if not sys.platform.startswith("linux"):
        return None
    if _PRCTL is None:
        try:
            import ctypes

            _PRCTL = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):
            _PRCTL = False
    if not _PRCTL:
        return None
    prctl, parent, kill = _PRCTL, os.getpid(), int(signal.SIGKILL)

    def preexec() -> None:
        prctl(1, kill)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:
            os._exit(128 + kill)

    return preexec


#: the watchdog's own code, after :func:`_members` and :func:`_kill_tree`: it reads its stdin to the end
#: (magi-tui's end closes it); a first line ``{"pid", "inodes", "files"}`` and no ``done`` line after it
#: means magi-tui died during the trial: the trial's processes are killed and its files removed
_WATCHDOG_MAIN = """
import json
for _s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
    signal.signal(_s, signal.SIG_IGN)
_data = b""
while True:
    try:
        _chunk = os.read(0, 65536)
    except InterruptedError:
        continue
    except OSError:
        _chunk = b""
    if not _chunk:
        break
    _data += _chunk
_lines = _data.split(b"\\n")
if _lines[0] and b"done" not in _lines:
    _job = json.loads(_lines[0])
    _kill_tree(int(_job["pid"]), tuple(_job["inodes"]))
    for _f in _job["files"]:
        try:
            os.unlink(_f)
        except OSError:
            pass
"""
_WATCHDOG: list[str | None] = []


def _watchdog_source() -> str | None:
    if not _WATCHDOG:
        try:
            import inspect

            _WATCHDOG.append("import os, signal, time\n" + inspect.getsource(_members) + inspect.getsource(_kill_tree)
                             + _WATCHDOG_MAIN)
        except (OSError, TypeError):
            _WATCHDOG.append(None)
    return _WATCHDOG[0]


def _start_watchdog() -> subprocess.Popen | None:
    """The trial's watchdog: a process of its own session (a signal to magi-tui's group passes it by)."""
    source = _watchdog_source()
    if source is None:
        return None
    try:
        return subprocess.Popen([sys.executable, "-I", "-S", "-c", source], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    except (OSError, subprocess.SubprocessError):
        return None


def _tell(watchdog: subprocess.Popen | None, job: dict) -> None:
    if watchdog is None or watchdog.stdin is None:
        return
    try:
        watchdog.stdin.write(json.dumps(job).encode() + b"\n")
        watchdog.stdin.flush()
    except OSError:
        pass


def _release(watchdog: subprocess.Popen | None) -> None:
    """The trial is over and nothing of it runs: the watchdog is told so, and ends."""
    if watchdog is None:
        return
    try:
        if watchdog.stdin is not None:
            watchdog.stdin.write(b"done\n")
            watchdog.stdin.close()
    except OSError:
        pass
    try:
        watchdog.wait(2)
    except subprocess.TimeoutExpired:
        watchdog.kill()
        watchdog.wait()


@contextlib.contextmanager
def stop_on_signals(on_signal: Callable[[int], None]) -> Iterator[None]:
    """While inside: SIGTERM, SIGHUP and SIGINT kill every running trial's processes at once, then call
    ``on_signal(signo)`` (which sets the command's cancel event: no other trial starts, the partial result is
    written). A signal the caller ignores (``nohup``) stays ignored; off the main thread nothing is installed."""
    installed: dict[int, Callable[[int, FrameType | None], object] | int | None] = {}

    def handler(signo: int, _frame: object) -> None:
        kill_running_trials()
        on_signal(signo)

    if threading.current_thread() is threading.main_thread():
        for name in STOP_SIGNALS:
            sig = getattr(signal, name, None)
            if sig is None:
                continue
            try:
                if signal.getsignal(sig) is signal.SIG_IGN:
                    continue
                installed[sig] = signal.signal(sig, handler)
            except (OSError, ValueError):
                continue
    try:
        yield
    finally:
        for sig, old in installed.items():
            try:
                if old is not None:  # None: a handler not set from Python, which cannot be put back
                    signal.signal(sig, old)
            except (OSError, ValueError, TypeError):
                pass


_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf(?:inity)?)(?![\w.])",
                     re.IGNORECASE)


def parse_numbers(text: str) -> list[float]:
    """Every number printed in ``text`` (``tensor([1.5, nan])`` gives 1.5 and nan), in order."""
    return [float(m.group(0)) for m in _NUMBER.finditer(text)]


def compare_numbers(reference: list[float], got: list[float], rtol: float = DEFAULT_RTOL,
                    atol: float = DEFAULT_ATOL) -> str | None:
    """None when ``got`` matches ``reference`` number for number within ``|a-b| <= atol + rtol*|ref|``
    (nan matches nan, an infinity only itself); else the first difference, in words."""
    if len(got) != len(reference):
        return f"printed {len(got)} number(s), the reference {len(reference)}"
    for i, (r, g) in enumerate(zip(reference, got)):
        if math.isnan(r) and math.isnan(g):
            continue
        if math.isinf(r) or math.isinf(g):
            if r == g:
                continue
        elif abs(g - r) <= atol + rtol * abs(r):
            continue
        return f"number {i + 1}: {g!r} where the reference printed {r!r}"
    return None


def compare_printed(reference: TrialResult, got: TrialResult, rtol: float = DEFAULT_RTOL,
                    atol: float = DEFAULT_ATOL) -> str | None:
    """:func:`compare_numbers` of two trials' printed numbers: how many they printed in all, then the numbers
    kept (the first :data:`MAX_NUMBERS`), number for number."""
    n_ref, n_got = reference.number_count, got.number_count
    if n_ref != n_got:
        return f"printed {n_got} number(s), the reference {n_ref}"
    return compare_numbers(reference.numbers, got.numbers, rtol, atol)


#: what ``reference.moved`` keeps of the diff of two runs' stdout, and ``numbers_moved`` of their numbers
MAX_MOVED_LINES = 12
MAX_MOVED_NUMBERS = 10
#: lines of each output the diff reads at most (a longer output is diffed on its first lines: that is enough
#: to show what moves, and difflib stays quick)
_MOVED_READ_LINES = 5_000
#: "the numbers differ only slightly": every changed number moved by at most this much, relatively
SLIGHT_REL_DIFF = 1e-2


def _json_number(v: float) -> float | str:
    """A number as JSON can hold it: ``nan`` / ``inf`` as text (``json.dumps`` would write NaN, no JSON)."""
    return v if math.isfinite(v) else repr(v)


def _moved_lines(first: str, second: str) -> list[str]:
    """A short diff of two outputs: the lines only the first printed (``-``), those only the second did
    (``+``), no context; at most :data:`MAX_MOVED_LINES`, then how many more."""
    import difflib

    a = first.splitlines()[:_MOVED_READ_LINES]
    b = second.splitlines()[:_MOVED_READ_LINES]
    out: list[str] = []
    more = 0
    for line in difflib.unified_diff(a, b, n=0, lineterm=""):
        if line.startswith(("---", "+++", "@@")):
            continue
        if len(out) < MAX_MOVED_LINES:
            out.append(line if len(line) <= 200 else line[:199] + "…")
        else:
            more += 1
    if more:
        out.append(f"… {more} more line(s)")
    return out


def check_determinism(first: TrialResult, second: TrialResult, rtol: float = DEFAULT_RTOL,
                      atol: float = DEFAULT_ATOL) -> dict:
    """Two runs of the program with the same settings (the reference run twice): do they agree? The same exit
    code and the same printed numbers within ``|a-b| <= atol + rtol*|a|`` (:func:`compare_printed`), which is
    all a later run is judged by; if not, nothing can be proven by comparing a run with them. The JSON object
    ``bisect.json`` / ``fix.json`` hold as ``reference``: ``deterministic``, ``why`` (the first difference
    beyond the tolerances, in words), ``moved`` (a short diff of the two stdouts), ``numbers_moved`` (the
    numbers that changed at all, ``{index, first, second}``), ``numbers_changed`` (how many),
    ``max_abs_diff`` / ``max_rel_diff`` (of those, finite ones only), ``exit_codes``, ``runs``."""
    why = None
    if first.returncode != second.returncode:
        why = f"exit code {first.returncode} in the first run, {second.returncode} in the second"
    diff = compare_printed(first, second, rtol, atol)
    if diff is not None:
        diff = diff.replace("where the reference printed", "where the first run printed").replace(
            "the reference", "the first run")
        why = diff if why is None else f"{why}; {diff}"
    a, b = first.numbers, second.numbers
    moved: list[dict] = []
    changed = 0
    max_abs = max_rel = 0.0
    for i, (x, y) in enumerate(zip(a, b)):
        if x == y or (math.isnan(x) and math.isnan(y)):
            continue
        changed += 1
        if len(moved) < MAX_MOVED_NUMBERS:
            moved.append({"index": i + 1, "first": _json_number(x), "second": _json_number(y)})
        if math.isfinite(x) and math.isfinite(y):
            d = abs(x - y)
            max_abs = max(max_abs, d)
            if x:
                max_rel = max(max_rel, d / abs(x))
            elif d:
                max_rel = math.inf
    partial = first.output_bytes[0] > MAX_KEEP or second.output_bytes[0] > MAX_KEEP
    moved_lines = _moved_lines(first.stdout, second.stdout) if changed or why else []
    if partial and moved_lines:
        moved_lines.append(f"(the diff is of the last {MAX_KEEP} characters each printed)")
    out = {"deterministic": why is None, "why": why,
           "moved": moved_lines,
           "numbers_moved": moved, "numbers_changed": changed,
           "counts": [first.number_count, second.number_count],
           "max_abs_diff": max_abs if changed else None,
           "max_rel_diff": (max_rel if math.isfinite(max_rel) else None) if changed else None,
           "exit_codes": [first.returncode, second.returncode],
           "runs": [None if r.run_dir is None else str(r.run_dir) for r in (first, second)],
           "rtol": rtol, "atol": atol}
    return out


def _tolerance(v: float) -> str:
    """A round tolerance above ``v`` (``3.2e-4`` -> ``1e-3``)."""
    return f"{10 ** math.ceil(math.log10(v * 1.5)):g}" if v > 0 else "0"


def determinism_advice(reference: dict) -> list[str]:
    """What to do about a program whose two reference runs disagree (:func:`check_determinism`)."""
    if reference.get("deterministic", True):
        return []
    out = ["make the program print the same thing every run: seed every random number generator before the "
           "first draw, at the top of the program (torch.manual_seed(0), random.seed(0), numpy.random.seed(0); "
           "a DataLoader's workers too), and print no timestamps, process ids, timings or addresses on stdout "
           "(print them on stderr: only the numbers on stdout are compared)"]
    codes = reference.get("exit_codes") or []
    if len(set(codes)) > 1:
        out.append(f"its exit code changes from run to run ({' then '.join(str(c) for c in codes)}): a failure "
                   "that comes and goes cannot be bisected by running it again")
    counts = reference.get("counts") or []
    rel, absd = reference.get("max_rel_diff"), reference.get("max_abs_diff")
    if (len(set(counts)) == 1 and isinstance(rel, (int, float)) and isinstance(absd, (int, float))
            and 0 < rel <= SLIGHT_REL_DIFF):
        out.append(f"the numbers differ only slightly (at most {absd:.3g}, {rel:.2g} relative): if that is noise "
                   f"to you, give tolerances wider than it, --atol {_tolerance(absd)} or --rtol {_tolerance(rel)} "
                   "(runs that differ within them count as the same)")
    return out


@dataclass
class Judge:
    """Does a trial show the bug? ``"exit"``: it exits non-zero (or runs past the time limit);
    ``"output"``: the numbers it prints differ from ``reference``'s beyond the tolerances (the numbers
    alone decide: a run that crashes before printing them all differs; one that prints them all and then
    exits non-zero does not)."""

    mode: str = "exit"
    reference: TrialResult | None = None
    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL

    def __call__(self, result: TrialResult) -> tuple[bool, str]:
        if self.mode == "output":
            if self.reference is None:
                raise ValueError("--compare-output needs a reference run")
            if result.returncode is None:  # timed out
                return True, result.status_text()
            diff = compare_printed(self.reference, result, self.rtol, self.atol)
            if diff is not None and not result.ok:
                diff += f" ({result.status_text()})"
            return (diff is not None), (diff or f"same {result.number_count} number(s) as the reference")
        if result.ok:
            return False, "exited with code 0"
        line = result.last_error_line()
        return True, result.status_text() + (f": {line}" if line else "")


def new_trials_dir(root: str | Path, kind: str) -> Path:
    """A fresh ``ROOT/<kind>_<YYYYmmdd_HHMMSS>[_<n>]`` for one command's trials (``bisect``, ``fix``): its runs
    and its JSON result."""
    base = Path(root)
    stamp = time.strftime("%Y%m%d_%H%M%S")
    for n in range(10_000):
        d = base / (f"{kind}_{stamp}" + (f"_{n}" if n else ""))
        try:
            d.mkdir(parents=True, exist_ok=False)
            return d
        except FileExistsError:
            continue
    raise OSError(f"cannot create a {kind} directory under {base}")
