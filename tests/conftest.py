"""Test setup for every test: where the real fixtures are (tests/fixtures/), and a deterministic environment."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

# Deterministic rendering: no colour overrides from the caller, one timezone for local times.
os.environ.pop("NO_COLOR", None)
os.environ.pop("TEXTUAL_THEME", None)
os.environ["TZ"] = "UTC"
time.tzset()

from tests.support import ahead  # noqa: E402
from tests.support.paths import FIXTURES, TORCH_TRACE, require  # noqa: E402  (after the environment is fixed)


def pytest_collection_finish(session):
    ahead.start_early(session)  # the selected tests' early runs (tests/support/ahead.py)


def pytest_sessionfinish(session):
    ahead.stop_early()


@ahead.early("calls_run")
def _calls_run(folder: Path) -> Path:
    pytest.importorskip("torch")
    from tests.support.traced import traced_run

    return traced_run(folder)


@pytest.fixture(scope="session")
def calls_run(tmp_path_factory) -> Path:
    """The run of :data:`tests.support.traced.CALLS_PROGRAM` (calls per compiled entry, eager calls), traced
    once for every test that reads it (the model's and the app's): read it, never write into it."""
    return ahead.early_result("calls_run", tmp_path_factory)


@pytest.fixture
def fixtures_dir() -> Path:
    """The upstream run dirs in tests/fixtures/: missing, the test fails (they are part of the repository)."""
    return require(FIXTURES)


@pytest.fixture
def torch_trace_dir() -> Path:
    """The real TORCH_TRACE logs in tests/fixtures/torch_trace/: missing, the test fails."""
    for name in ("graph_breaks_recompiles_failure.log", "dynamic_shapes_backward.log"):
        require(TORCH_TRACE / name)
    return TORCH_TRACE


@pytest.fixture
def copy_fixture(tmp_path):
    """Copy a fixture tree into tmp_path (fixtures are read-only) and return the copy."""

    def _copy(src: Path, name: str | None = None) -> Path:
        dst = tmp_path / (name or src.name)
        shutil.copytree(src, dst)
        for p in dst.rglob("*"):
            os.chmod(p, 0o755 if p.is_dir() else 0o644)
        os.chmod(dst, 0o755)
        return dst

    return _copy
