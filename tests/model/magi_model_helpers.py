"""Fixture paths relative to the fixture root, for the model and CLI tests (line builders live in
``tests/support/timeline.py`` and are re-exported here)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.timeline import ev_line, lc, write_run  # noqa: F401  (re-exported)

REPO = Path(__file__).resolve().parents[2]


def fixtures_root() -> Path | None:
    """The real upstream run dirs: $MAGI_TUI_FIXTURES, else tests/fixtures/, else ../shared/fixtures/."""
    candidates = []
    if os.environ.get("MAGI_TUI_FIXTURES"):
        candidates.append(Path(os.environ["MAGI_TUI_FIXTURES"]))
    if os.environ.get("MAGI_SHARED"):  # the same variable tests/conftest.py reads
        candidates.append(Path(os.environ["MAGI_SHARED"]) / "fixtures" / "magi_depyf")
    candidates += [REPO / "tests" / "fixtures" / "magi_depyf", REPO.parent / "shared" / "fixtures" / "magi_depyf"]
    for c in candidates:
        if (c / "transformer").is_dir():
            return c
    return None


FIXTURES = fixtures_root()
COLD = ("transformer/magi_depyf/run_20261122_111900/model_1_TwoLayerTransformer_rank_0")
WARM = ("transformer/magi_depyf/run_20261122_112002/model_1_TwoLayerTransformer_rank_0")


