"""Fixtures for the model tests (helpers live in magi_model_helpers.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from magi_model_helpers import FIXTURES


@pytest.fixture
def fx() -> Path:
    if FIXTURES is None:
        pytest.skip("fixtures not found (set MAGI_TUI_FIXTURES to shared/fixtures/magi_depyf)")
    return FIXTURES


@pytest.fixture
def fx_copy(tmp_path, fx):
    """``fx_copy("transformer")`` -> a writable copy of one fixture under tmp_path."""
    def copy(rel: str) -> Path:
        dst = tmp_path / "copy" / rel
        shutil.copytree(fx / rel, dst, symlinks=True)
        return dst
    return copy
