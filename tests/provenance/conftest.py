"""One real Inductor compile on CPU, recorded as a user would: ``python -m tracer --provenance
--keep-trace fused_program.py`` (caches off, so Inductor runs its scheduler and torch writes its
provenance; ``--keep-trace`` also keeps torch's own TORCH_TRACE log of it), once per session for every
provenance test, started early (tests/support/ahead.py)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from tests.support import ahead, slow

PROGRAM = Path(__file__).with_name("fused_program.py")


@pytest.fixture(scope="session")
def provenance_run(tmp_path_factory) -> Path:
    return ahead.early_result("provenance_run", tmp_path_factory)


@ahead.early("provenance_run")
def _record(root: Path) -> Path:
    pytest.importorskip("torch")
    env = dict(os.environ, TORCHINDUCTOR_FORCE_DISABLE_CACHES="1")
    proc = slow.run([sys.executable, "-m", "tracer", "--provenance", "--keep-trace", "-o", str(root / "runs"), str(PROGRAM)],
                    capture_output=True, text=True, timeout=600, env=env, cwd=root)
    assert proc.returncode == 0, proc.stderr[-3000:]
    m = re.search(r"^MAGI_RUN_DIR=(.+)$", proc.stderr, re.M)
    assert m, proc.stderr[-3000:]
    return Path(m.group(1))
