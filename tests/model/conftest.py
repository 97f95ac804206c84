"""Fixtures for the model tests (helpers live in tests/support/)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.paths import FIXTURES, require


@pytest.fixture
def fx() -> Path:
    """tests/fixtures/magi_depyf: missing, the test fails."""
    return require(FIXTURES)


@pytest.fixture
def fx_copy(tmp_path, fx):
    """``fx_copy("transformer")`` -> a writable copy of one fixture under tmp_path."""
    def copy(rel: str) -> Path:
        dst = tmp_path / "copy" / rel
        shutil.copytree(fx / rel, dst, symlinks=True)
        return dst
    return copy
