"""Where the real fixtures are: one way for every test (``$MAGI_SHARED``, else ``../shared``)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("MAGI_SHARED", ROOT.parent / "shared"))
#: the real upstream run dirs ($MAGI_TUI_FIXTURES overrides, e.g. a copy elsewhere)
FIXTURES = Path(os.environ.get("MAGI_TUI_FIXTURES", SHARED / "fixtures" / "magi_depyf"))
TORCH_TRACE = SHARED / "fixtures" / "torch_trace"
TRANSFORMER = FIXTURES / "transformer" / "magi_depyf"
COLD = TRANSFORMER / "run_20261122_111900" / "model_1_TwoLayerTransformer_rank_0"
WARM = TRANSFORMER / "run_20261122_112002" / "model_1_TwoLayerTransformer_rank_0"
