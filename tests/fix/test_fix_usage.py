"""``magi-tui fix`` refuses what it cannot run with exit 2, a message and no traceback, before any trial:
no torch needed (the rest of the fix tests, in test_fix.py, trace real programs)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tests.support import slow
from tests.support.paths import ROOT

PROGRAMS = Path(__file__).resolve().parent / "programs"


def test_usage_errors_exit_2(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for args in (["fix"], ["fix", "--", "python", str(tmp_path / "missing.py")], ["fix", "--", "ls"],
                 ["fix", "--max-runs", "1", "--", "python", str(PROGRAMS / "nothing.py")]):
        r = slow.run([sys.executable, "-m", "magi_tui", *args], cwd=ROOT, capture_output=True, text=True,
                     env=env, timeout=60)
        assert r.returncode == 2, (args, r.stderr)
        assert "Traceback" not in r.stderr and r.stderr.strip()
