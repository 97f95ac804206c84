"""The multi-rank jobs recorded under ``tests/torchtrace/jobs/`` (``jobs/record_jobs.py``): where they are."""

from __future__ import annotations

from pathlib import Path

from magi_tui.model.sources.torchtrace import name_rank

JOBS = Path(__file__).resolve().parent / "jobs"
#: 2 ranks; rank 1 takes another branch (a graph break, one all_reduce run eagerly)
BRANCH2 = JOBS / "branch2"
#: 3 ranks; rank 2 gets 6 rows instead of 4 (ranks 0 and 1 agree)
SHAPE3 = JOBS / "shape3"


def rank_logs(folder: Path) -> dict[int, Path]:
    """rank -> its log in ``folder`` (by torch's file name)."""
    return {name_rank(p.name): p for p in sorted(folder.glob("*.log"))}
