"""What the History screen (``H``) shows, asked of an index in a few calls from its worker thread: the trend
of each metric, the break and recompile causes, and for one cause the run where it appeared and the run
where it was gone. The answers are :mod:`magi_tui.history.query`'s canned ones, the same as
``magi-tui history … --json``; nothing is computed here that the queries do not say."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from magi_tui.history.query import METRICS, History, first_seen, gone, lit, top_causes, trend

#: the runs a trend shows (the newest), and the causes listed
TREND_RUNS = 200
CAUSES = 50


def program_of(h: History, run_path: str | Path) -> str | None:
    """The program the index files ``run_path`` under (None: that run is not in the index)."""
    # the index holds absolute paths (write.py); the app may show a run by a relative one
    rows = h.dicts(f"SELECT program FROM runs WHERE path = {lit(str(Path(run_path).absolute()))} LIMIT 1")
    return rows[0]["program"] if rows else None


def overview(h: History, label: str | None = None, last: int = TREND_RUNS) -> dict[str, Any]:
    """Every metric's trend (oldest first), the causes (most runs first) and how many runs there are."""
    where = "" if label is None else f" AND (label = {lit(label)} OR program = {lit(label)})"
    counted = h.dicts(f"SELECT count(*) AS n, count(*) FILTER (WHERE status = 'error') AS errors FROM runs "
                      f"WHERE true{where}")
    return {"label": label, "runs": counted[0]["n"], "errors": counted[0]["errors"],
            "trends": {m: trend(h, m, label, last)["runs"] for m in METRICS},
            "causes": top_causes(h, limit=CAUSES)["causes"]}


def lifetime(h: History, ident: str, label: str | None = None) -> dict[str, Any]:
    """When ``ident`` appeared (its first run), its last run, and the run after that (None: still there),
    among the runs of ``label``; with no label, of the program of the run where it first appeared (a break
    is gone when its own program's next run lacks it, not another program's)."""
    if label is None:
        first = first_seen(h, ident)["first_seen"]
        label = program_of(h, first["path"]) if first is not None else None
    seen = first_seen(h, ident, label)
    went = gone(h, ident, label)
    return {"id": ident, "program": label, "first_seen": seen["first_seen"], "last_seen": went["last_seen"],
            "runs_with_it": seen["runs_with_it"], "state": went["state"], "gone_in": went["gone_in"]}
