"""Rank vs rank on a real two-rank job (two processes with ``RANK`` set, no torchrun)."""

from __future__ import annotations

import json

import pytest

from magi_tui.cli import main

pytestmark = [pytest.mark.torch, pytest.mark.slow]


def test_divergent_rank_comes_first(two_ranks, capsys):
    code = main(["ranks", str(two_ranks), "--json"])
    j = json.loads(capsys.readouterr().out)
    assert code == 1 and j["diverged"] is True
    (job,) = j["jobs"]
    assert job["status"] == "diverged" and job["reference_rank"] == 0 and job["divergent_ranks"] == [1]
    assert [r["rank"] for r in job["ranks"]] == [1, 0]     # the rank that diverges is shown first
    kinds = {d["kind"]: d for d in job["divergences"]}
    # rank 1 compiled f again for float64: a compile id rank 0 never had, with its own recompile reason
    assert kinds["compile_ids"]["compile_id"] == "0/1" and kinds["compile_ids"]["by_rank"] == {"0": False, "1": True}
    assert "dtype mismatch" in kinds["recompile_reasons"]["by_rank"]["1"][0]
    # the same compile id 0/0 captured a different graph (x * 1 vs x * 2): same op count, other hash
    g = kinds["graphs"]["by_rank"]
    assert g["0"]["op_count"] == g["1"]["op_count"] and g["0"]["graph_hash"] != g["1"]["graph_hash"]
    assert job["summary"] == {"compile_ids": 1, "graphs": 1, "cache": 0, "recompile_reasons": 1}
    assert main(["ranks", str(two_ranks)]) == 1
    text = capsys.readouterr().out
    assert "DIVERGED: rank(s) 1 differ from rank 0" in text.splitlines()[0]


def test_one_rank_alone_is_no_job(traced_pair, tmp_path, capsys):
    a, _ = traced_pair
    assert main(["ranks", str(a)]) == 2
    assert "no job with several ranks" in capsys.readouterr().err
    assert main(["ranks", str(tmp_path / "nope")]) == 2


def test_ranks_that_agree_are_consistent(traced_pair, tmp_path, capsys):
    import shutil

    a, _ = traced_pair
    job = tmp_path / "magi_depyf" / "run_20261123_070000"
    for rank in (0, 1):
        shutil.copytree(a, job / f"model_1_pair_rank_{rank}")
    assert main(["ranks", str(tmp_path), "--json"]) == 0
    (j,) = json.loads(capsys.readouterr().out)["jobs"]
    assert j["status"] == "consistent" and j["divergent_ranks"] == [] and j["divergences"] == []
