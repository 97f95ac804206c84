"""Real traced programs shared by the compare / ranks / check tests: traced once per session, each in
its own process (as two CI runs would be), with the eager backend. Only the tests that use them need
torch (the skip is here, in the fixtures): the others in this folder run without it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ahead, slow
from tests.support.paths import ROOT

PROGRAMS = Path(__file__).resolve().parent / "programs"


def _trace(root: Path, program: str, **env: str) -> subprocess.Popen:
    pytest.importorskip("torch")
    e = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", **env)
    return subprocess.Popen([sys.executable, "-m", "tracer", "-o", str(root), str(PROGRAMS / program)],
                            cwd=ROOT, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _run_dirs(root: Path) -> list[Path]:
    from magi_tui.model.sources.discovery import find_runs

    return [r.path for r in find_runs(root)]


def _wait(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        out, err = slow.communicate(p, timeout=240, what="the traced program")
        assert p.returncode == 0, err[-3000:]


@pytest.fixture(scope="session")
def traced_pair(tmp_path_factory) -> tuple[Path, Path]:
    """(A, B): the same program; B with an extra graph break, a recompile and a pass that changes a graph
    (started early: tests/support/ahead.py)."""
    return ahead.early_result("traced_pair", tmp_path_factory)


@ahead.early("traced_pair")
def _pair(base: Path) -> tuple[Path, Path]:
    ra, rb = base / "a", base / "b"
    _wait([_trace(ra, "pair.py", MAGI_CMP_VARIANT="a"), _trace(rb, "pair.py", MAGI_CMP_VARIANT="b")])
    (a,), (b,) = _run_dirs(ra), _run_dirs(rb)
    return a, b


@pytest.fixture(scope="session")
def two_ranks(tmp_path_factory) -> Path:
    """A root holding rank 0 and rank 1 of one job (``RANK`` set, no torchrun; started early)."""
    return ahead.early_result("two_ranks", tmp_path_factory)


@ahead.early("two_ranks")
def _ranks(root: Path) -> Path:
    _wait([_trace(root, "ranked.py", RANK="0"), _trace(root, "ranked.py", RANK="1")])
    assert len(_run_dirs(root)) == 2
    return root
