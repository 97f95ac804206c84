"""``magi-tui export-trace`` on a root of runs (issue 32 item 9): the ranks of one job are one program, one
process per rank (``rank 1 · …``); unrelated runs -- another model, the same model traced again -- are
programs of their own (``program 2 · …``), never all "rank 0" of one job."""

from __future__ import annotations

import json
from pathlib import Path

from magi_tui.cli import main
from magi_tui.model.outputs.chrome_trace import build_trace
from tests.support.timeline import lc, write_run


def _run(root: Path, run_id: str, model: str, rank: int, ts: float = 1795346341.0) -> Path:
    return write_run(root / run_id / f"model_1_{model}_rank_{rank}",
                     [lc(0, "before", "compile", ts=ts), lc(1, "after", "compile", ts=ts)])


def _names(trace: dict) -> dict[int, str]:
    return {e["pid"]: e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "process_name"}


def test_unrelated_runs_are_programs_not_rank_0(tmp_path):
    """Three runs, each rank 0: two of one model traced twice, one of another model."""
    _run(tmp_path, "run_20261122_111900", "mlp", 0)
    _run(tmp_path, "run_20261122_112002", "mlp", 0)
    _run(tmp_path, "run_20261122_113000", "explain", 0)
    trace, procs = build_trace(tmp_path)
    names = _names(trace)
    assert sorted(names) == [0, 1, 2]  # numbered in path order
    assert [p.program for p in procs] == [1, 2, 3]
    assert names[0] == "program 1 · run_20261122_111900/model_1_mlp_rank_0"  # one model twice: its folder too
    assert names[1] == "program 2 · run_20261122_112002/model_1_mlp_rank_0"
    assert names[2] == "program 3 · model_1_explain_rank_0"
    assert not any(n.startswith("rank ") for n in names.values())
    assert [p["program"] for p in trace["otherData"]["magi_tui"]["processes"]] == [1, 2, 3]


def test_the_ranks_of_one_job_stay_one_process_per_rank(tmp_path):
    _run(tmp_path, "run_20261122_111900", "mlp", 0)
    _run(tmp_path, "run_20261122_111901", "mlp", 1)  # a rank's folder is its own second
    trace, procs = build_trace(tmp_path)
    names = _names(trace)
    assert names == {0: "rank 0 · model_1_mlp_rank_0", 1: "rank 1 · model_1_mlp_rank_1"}
    assert [(p.pid, p.rank, p.program) for p in procs] == [(0, 0, 1), (1, 1, 1)]


def test_a_job_beside_unrelated_runs_and_a_rerun(tmp_path, capsys):
    """A two-rank job, the same job run again later, and a lone run of another model: two programs of two
    ranks each (named by rank and folder) and one program of its own."""
    _run(tmp_path, "run_20261122_100000", "mlp", 0)
    _run(tmp_path, "run_20261122_100000", "mlp", 1)
    _run(tmp_path, "run_20261122_110000", "mlp", 0)
    _run(tmp_path, "run_20261122_110000", "mlp", 1)
    _run(tmp_path, "run_20261122_120000", "toy", 0)
    out = tmp_path / "t.json"
    assert main(["export-trace", str(tmp_path), "-o", str(out)]) == 0
    trace = json.loads(out.read_text())
    procs = trace["otherData"]["magi_tui"]["processes"]
    assert [(p["rank"], p["program"]) for p in procs] == [(0, 1), (1, 1), (0, 2), (1, 2), (0, 3)]
    names = list(_names(trace).values())
    assert names == ["rank 0 · run_20261122_100000/model_1_mlp_rank_0",
                     "rank 1 · run_20261122_100000/model_1_mlp_rank_1",
                     "rank 0 · run_20261122_110000/model_1_mlp_rank_0",
                     "rank 1 · run_20261122_110000/model_1_mlp_rank_1",
                     "program 3 · model_1_toy_rank_0"]
    assert "5 process(es)" in capsys.readouterr().out


def test_one_run_keeps_its_rank(tmp_path):
    run = _run(tmp_path, "run_20261122_111900", "mlp", 0)
    trace, _procs = build_trace(run)
    assert _names(trace) == {0: "rank 0 · model_1_mlp_rank_0"}
