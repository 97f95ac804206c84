"""Run vs run on two real traced programs: B adds a graph break, a recompile and a pass that changes
its piece's graph."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from magi_tui.cli import main
from magi_tui.model.outputs.compare import compare_runs, compare_text
from magi_tui.model.run import RunModel

pytestmark = [pytest.mark.torch, pytest.mark.slow]
PROGRAM = Path(__file__).resolve().parent / "programs" / "pair.py"
PRINT_LINE = next(i for i, ln in enumerate(PROGRAM.read_text().splitlines(), 1) if "print(" in ln)


def _json(capsys, *argv) -> tuple[int, dict]:
    code = main(list(argv))
    return code, json.loads(capsys.readouterr().out)


def test_compare_json_names_what_changed(traced_pair, capsys):
    a, b = traced_pair
    code, j = _json(capsys, "compare", str(a), str(b), "--json")
    assert code == 0
    assert j["a"] == str(a) and j["b"] == str(b) and j["changed"] is True
    # graph breaks: the print in B, shaped like triage's worklist entries
    added = j["graph_breaks"]["added"]
    assert [e["gb_id"] for e in added] == ["GB0059"] and j["graph_breaks"]["removed"] == []
    assert added[0]["user_frame"]["file"].endswith("pair.py") and added[0]["user_frame"]["line"] == PRINT_LINE
    assert {"gb_id", "gb_type", "reason", "user_frame", "count", "compile_ids", "frames"} <= set(added[0])
    # recompiles: A none, B recompiled for the new size, with torch's reason
    rc = j["recompiles"]
    assert rc["a"] == [] and rc["removed"] == [] and len(rc["b"]) == len(rc["added"]) >= 1
    assert any("size mismatch" in r["reasons"][0] for r in rc["added"])
    assert j["failures"] == {"new": [], "fixed": [], "a_unrecovered": 0, "b_unrecovered": 0}
    assert set(j["compile_s"]) >= {"a", "b", "delta", "phases"} and j["compile_s"]["a"] > 0
    assert set(j["cache"]) == {"a", "b", "delta", "misses_explained"}
    # frames aligned by code object: f on both sides (compiled once in A, twice in B, the same Dynamo graph
    # for compile 0), h (with the break) in B only
    frames = {fr["name"]: fr for fr in j["frames"]}
    f = frames["f"]
    assert f["status"] == "both" and f["compiles"] == {"a": 1, "b": 2, "delta": 1}
    assert f["recompiles"] == {"a": 0, "b": 1, "delta": 1} and f["graph_breaks"]["b"] == 0
    assert f["op_counts"] == {"a": [3], "b": [3, 3]} and f["graphs_differ"] is False
    ids = {c["frame_compile_id"]: c for c in f["compile_ids"]}
    assert ids[0]["same_graph"] is True and ids[0]["a"]["graph_hash"] == ids[0]["b"]["graph_hash"]
    assert ids[1]["a"] is None and ids[1]["b"]["compile_id"].endswith("/1")
    assert frames["h"]["status"] == "only_b" and frames["h"]["graph_breaks"]["b"] >= 1
    assert added[0]["frames"] and added[0]["frames"][0].startswith("h (pair.py:")


def test_passes_on_both_sides_say_whether_the_graph_changed(traced_pair):
    a, b = traced_pair
    c = compare_runs(RunModel(a).load(), RunModel(b).load())
    both = {p.lifecycle: p for p in c.passes if p.both and p.frame_compile_id == 0 and p.frame.startswith("f ")}
    swap = both["SwapPass"]
    assert swap.after_differs is True
    assert swap.a.changed_graph is False and swap.b.changed_graph is True  # only B's pass rewrote relu
    assert swap.before_differs is False                                    # from the same graph
    assert swap.a.after.path is not None and swap.b.after.path is not None and swap.a.after.title
    assert "compiler_compile" in both and "graph_split" in both
    text = compare_text(c)
    assert "+ GB0059" in text and "SwapPass" in text and "(A kept, B changed, same input: the pass made the difference)" in text


def test_a_run_against_itself_is_unchanged(traced_pair, capsys):
    a, _ = traced_pair
    code, j = _json(capsys, "compare", str(a), str(a), "--json")
    assert code == 0 and j["changed"] is False
    assert j["graph_breaks"]["added"] == j["graph_breaks"]["removed"] == []
    assert all(fr["status"] == "both" and fr["graphs_differ"] is False for fr in j["frames"])
    assert all(p["after_differs"] is False for p in j["passes"])
    assert j["compile_s"]["delta"] == 0


def test_compare_unusable_input_is_exit_2(traced_pair, tmp_path, capsys):
    a, b = traced_pair
    assert main(["compare", str(a), str(tmp_path / "nope")]) == 2
    assert "B: no such file" in capsys.readouterr().err
    root = a.parents[2]          # .../a holds one run: a root is fine
    assert main(["compare", str(root), str(b)]) == 0
    capsys.readouterr()


@pytest.mark.usefixtures("fixtures_dir")
def test_upstream_runs_without_compile_ids_align_by_code_object(capsys):
    """The shared transformer runs (cold, then warm cache): no compile ids, so frames come from
    compiled_functions/ and passes are matched by lifecycle, piece and occurrence."""
    from tests.support.paths import COLD, WARM

    code, j = _json(capsys, "compare", str(COLD), str(WARM), "--json")
    assert code == 0
    assert [f["status"] for f in j["frames"]] == ["both"] and j["frames"][0]["name"] == "forward"
    assert j["cache"]["a"]["misses"] > 0 and j["cache"]["b"]["hits"] > 0 and j["cache"]["delta"]["hits"] > 0
    both = [p for p in j["passes"] if p["status"] == "both"]
    assert both and all(p["frame"] == "" and p["after_differs"] is False for p in both)
    # the warm run loads pieces from the cache: their post-grad passes ran in A only
    assert any(p["status"] == "only_a" and p["lifecycle"] == "PostCleanupPass" for p in j["passes"])
    assert j["compile_s"]["a"] > j["compile_s"]["b"]
