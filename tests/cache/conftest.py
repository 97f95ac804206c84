"""Unpacks the recorded runs of tests/cache/fixtures (README.md there) once per session."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


def _unpack(name: str, dest: Path) -> Path:
    with tarfile.open(FIXTURES / name) as tf:
        tf.extractall(dest, filter="data")
    return dest


@pytest.fixture(scope="session")
def seeded(tmp_path_factory) -> Path:
    """``runs/`` (run dirs, in time order) and ``tt/`` (the same runs' TORCH_TRACE logs)."""
    d = tmp_path_factory.mktemp("seeded")
    _unpack("seeded_runs.tar.xz", d)
    _unpack("seeded_torch_trace.tar.xz", d)
    return d


@pytest.fixture(scope="session")
def job(tmp_path_factory) -> Path:
    return _unpack("two_rank_job.tar.xz", tmp_path_factory.mktemp("job")) / "out"
