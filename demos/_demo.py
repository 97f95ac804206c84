"""Shared by the demos: record into ./runs (or $MAGI_TRACER_ROOT) unless already under ``python -m tracer``."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without installing


@contextmanager
def recorded(label: str):
    from tracer import explain_compilation

    root = os.environ.get("MAGI_TRACER_ROOT", "runs")
    with explain_compilation(root, label=label) as run:  # nested under python -m tracer: same run
        if run.path is not None:
            print(f"recording into {run.path}", file=sys.stderr)
        yield run
