"""Where the real fixtures are: in this repository, under ``tests/fixtures/`` (each one's provenance is in
``tests/fixtures/README.md``), so a fresh clone with nothing beside it runs the whole suite.

A fixture that is missing is a broken checkout, not a reason to skip: tests reach fixtures through these
names, and :func:`require` (or the ``fixtures_dir`` / ``fx`` fixtures built on it) fails the test that needs
one with a message that names the path.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: every recorded fixture the tests share: upstream run dirs and torch's own TORCH_TRACE logs
FIXTURES_ROOT = ROOT / "tests" / "fixtures"
#: the real upstream run dirs (MagiCompiler's magi_depyf layer)
FIXTURES = FIXTURES_ROOT / "magi_depyf"
#: real TORCH_TRACE logs (torch's structured trace, tlparse's input)
TORCH_TRACE = FIXTURES_ROOT / "torch_trace"
TRANSFORMER = FIXTURES / "transformer" / "magi_depyf"
COLD = TRANSFORMER / "run_20261122_111900" / "model_1_TwoLayerTransformer_rank_0"
WARM = TRANSFORMER / "run_20261122_112002" / "model_1_TwoLayerTransformer_rank_0"


def require(path: Path) -> Path:
    """``path`` if it exists; otherwise the calling test FAILS (never skips): the fixture is part of the repo."""
    if not path.exists():
        pytest.fail(f"fixture missing: {path} (a checkout without tests/fixtures/? see tests/fixtures/README.md)",
                    pytrace=False)
    return path
