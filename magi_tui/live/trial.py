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

import json
import math
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from magi_format.layout import RUN_DIR_ANNOUNCE
from magi_tui.live.runner import exit_text, tracer_command

#: torch's switches for the caches a trial runs without (the module docstring says why these and no more)
STAGE_CACHES_OFF = {
    "TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE": "0",
    "TORCHINDUCTOR_AUTOGRAD_CACHE": "0", "TORCHINDUCTOR_AUTOGRAD_REMOTE_CACHE": "0",
    "TORCH_DYNAMO_AUTOMATIC_DYNAMIC_LOCAL_PGO": "0", "TORCH_DYNAMO_AUTOMATIC_DYNAMIC_REMOTE_PGO": "0",
}

__all__ = ["Overrides", "Application", "TrialResult", "run_trial", "new_trials_dir", "parse_numbers", "compare_numbers",
           "Judge", "DEFAULT_RTOL", "DEFAULT_ATOL"]

DEFAULT_RTOL = 1e-4
DEFAULT_ATOL = 1e-5
#: what the program printed is kept up to this many characters per stream (the tail of stderr)
MAX_KEEP = 200_000


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

    @property
    def numbers(self) -> list[float]:
        return parse_numbers(self.stdout)

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
              env: dict[str, str] | None = None, cancel: threading.Event | None = None) -> TrialResult:
    """Run ``command`` once with ``overrides``; a ``python script.py`` command runs traced into ``root``.

    Never raises for the program's sake: a program that cannot start, crashes, runs past ``timeout`` or is
    cancelled (``cancel`` set: the app's bisect stopped) is a result (``returncode`` 127 / its code / None,
    and ``error``). A program stopped early is killed with its whole process group (it runs in a session of
    its own), so no child of it is left running."""
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
    try:
        proc = subprocess.Popen(argv, env=base, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        result.returncode = 127
        result.error = f"cannot run {command[0]}: {exc.strerror or exc}"
        out, err = b"", b""
    else:
        out, err = _wait(proc, result, start, timeout, cancel)
    result.seconds = time.monotonic() - start
    result.stdout = out.decode("utf-8", "replace")[-MAX_KEEP:]
    kept = []
    for line in err.decode("utf-8", "replace").splitlines():
        if line.startswith(RUN_DIR_ANNOUNCE) and result.run_dir is None:
            result.run_dir = Path(line[len(RUN_DIR_ANNOUNCE):].strip())
        else:
            kept.append(line)
    result.stderr = "\n".join(kept)[-MAX_KEEP:]
    result.applications, result.versions = _read_probe(Path(probe))
    try:
        os.unlink(probe)
    except OSError:
        pass
    return result


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the program and every child it started (its own session)
    except (ProcessLookupError, PermissionError):
        pass


def _wait(proc: subprocess.Popen, result: TrialResult, start: float, timeout: float | None,
          cancel: threading.Event | None) -> tuple[bytes, bytes]:
    """The program's output once it exits, or once ``timeout`` or ``cancel`` stopped it (``result.error``)."""
    try:
        while True:
            left = None if timeout is None else timeout - (time.monotonic() - start)
            tick = 0.2 if cancel is not None else left
            if left is not None and tick is not None:
                tick = max(0.0, min(tick, left))
            try:
                out, err = proc.communicate(timeout=tick)
                result.returncode = proc.returncode
                _kill_group(proc)
                return out, err
            except subprocess.TimeoutExpired:
                if cancel is not None and cancel.is_set():
                    result.error = "cancelled"
                    break
                if timeout is not None and time.monotonic() - start >= timeout:
                    result.error = f"ran past the time limit ({timeout:g} s)"
                    break
    finally:
        _kill_group(proc)  # stopped early, or exited leaving children in its group: none is left running
    out, err = proc.communicate()
    return out or b"", err or b""


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
            diff = compare_numbers(self.reference.numbers, result.numbers, self.rtol, self.atol)
            if diff is not None and not result.ok:
                diff += f" ({result.status_text()})"
            return (diff is not None), (diff or f"same {len(result.numbers)} number(s) as the reference")
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
