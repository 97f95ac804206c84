"""A CI-like history, made once per session from a real TORCH_TRACE log (tests/support/history_runs.py):
200 runs an hour apart, the real GB0124 graph break in runs 120..169, compile time drifting +0.2 % a run and
jumping x1.5 at run 150; indexed once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.history_runs import Plan, make_history

PLAN = Plan(200, break_from=120, break_until=170, drift=0.002, jump_at=150, jump=1.5)


@pytest.fixture(scope="session")
def ci_history(tmp_path_factory) -> tuple[Path, Path]:
    """(the runs' root, the index folder)."""
    from magi_tui.history.write import index_runs

    base = tmp_path_factory.mktemp("history")
    root, index = base / "runs", base / "index"
    make_history(root, PLAN)
    res = index_runs([root], index, jobs=2)
    assert res.found == 200 and not res.errors
    return root, index
