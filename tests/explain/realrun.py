"""Running a real program twice, under our tracer and under ``TORCH_TRACE``, and reading both with
``magi-tui triage --json``: the two sources must give the same answers. :func:`both` makes the two runs
at once (two processes: both cores of a 2-core machine)."""

from __future__ import annotations

import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.support import slow

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).with_name("programs")


def _env(extra: dict[str, str] | None) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1")
    env.pop("TORCH_TRACE", None)
    env.pop("TORCH_COMPILE_DYNAMIC_SOURCES", None)
    env.update(extra or {})
    return env


def traced(program: str, out: Path, env: dict[str, str] | None = None) -> Path:
    """The run dir our tracer wrote for ``programs/<program>``."""
    proc = slow.run([sys.executable, "-m", "tracer", "-o", str(out), str(PROGRAMS / program)], cwd=out,
                    env=_env(env), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return Path(next(ln for ln in proc.stderr.splitlines() if ln.startswith("MAGI_RUN_DIR=")).split("=", 1)[1])


def torch_trace(program: str, out: Path, env: dict[str, str] | None = None) -> Path:
    """The TORCH_TRACE log torch wrote for ``programs/<program>``."""
    out.mkdir(parents=True, exist_ok=True)
    proc = slow.run([sys.executable, str(PROGRAMS / program)], cwd=out,
                    env=_env({**(env or {}), "TORCH_TRACE": str(out)}), capture_output=True, text=True,
                    timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    logs = sorted(out.glob("*.log"))
    assert len(logs) == 1, logs
    return logs[0]


def both(program: str, base: Path, env: dict[str, str] | None = None) -> tuple[Path, Path]:
    """(:func:`traced` into ``base``, :func:`torch_trace` into ``base/log``) of one program, run at once."""
    base.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(2) as pool:
        run = pool.submit(traced, program, base, env)
        trace = pool.submit(torch_trace, program, base / "log", env)
        return run.result(), trace.result()


def triage(path: Path, *flags: str) -> tuple[int, dict]:
    proc = slow.run([sys.executable, "-m", "magi_tui", "triage", "--json", *flags, str(path)],
                    env=_env(None), capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc.returncode, json.loads(proc.stdout)
