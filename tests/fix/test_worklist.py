"""Worklist ids (issue 23): the same in two runs of the same code, resolved / new / unchanged in
``compare``, and ``check``'s ``allow_new_break_ids`` against a baseline. Real traced programs (eager)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import slow
from tests.support.paths import ROOT

pytest.importorskip("torch")
pytestmark = [pytest.mark.slow, pytest.mark.torch]
PROGRAMS = Path(__file__).resolve().parent / "programs"


def _trace(root: Path, program: str, **env: str) -> subprocess.Popen:
    e = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", **env)
    return subprocess.Popen([sys.executable, "-m", "tracer", "-o", str(root), str(PROGRAMS / program)],
                            cwd=ROOT, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return slow.run([sys.executable, "-m", "magi_tui", *args], cwd=ROOT, capture_output=True, text=True,
                    env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=120)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """item_break.py traced twice as it is, and once with TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1."""
    from magi_tui.model.sources.discovery import find_runs

    base = tmp_path_factory.mktemp("worklist")
    procs = {"a1": _trace(base / "a1", "item_break.py"), "a2": _trace(base / "a2", "item_break.py"),
             "fixed": _trace(base / "fixed", "item_break.py", TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS="1")}
    for p in procs.values():
        _out, err = slow.communicate(p, timeout=240, what="the traced program (item_break.py)")
        assert p.returncode == 0, err[-3000:]
    return {k: find_runs(base / k)[0].path for k in procs}


def _triage(run: Path) -> dict:
    r = _cli("triage", "--json", str(run))
    return json.loads(r.stdout)


def test_ids_are_the_same_in_two_runs_of_the_same_code(runs):
    a1, a2 = _triage(runs["a1"]), _triage(runs["a2"])
    assert a1["schema_version"] == 2
    assert [b["id"] for b in a1["graph_breaks"]] == ["GB0124@item_break.py:7"]
    # the .item() value is guarded in the resume function: a float recompile of a computed value
    assert [r["id"] for r in a1["recompiles"]] == ["float:computed@item_break.py:7"]
    assert a1["worklist"] == a2["worklist"]
    assert [(e["id"], e["kind"], e["count"]) for e in a1["worklist"]] == [
        ("GB0124@item_break.py:7", "graph_break", 1), ("float:computed@item_break.py:7", "recompile", 1)]
    assert a1["run"] != a2["run"]


def test_compare_reports_the_worklist_by_id(runs):
    r = _cli("compare", "--json", str(runs["a1"]), str(runs["fixed"]))
    assert r.returncode == 0, r.stderr
    w = json.loads(r.stdout)["worklist"]
    assert {e["id"] for e in w["resolved"]} == {"GB0124@item_break.py:7", "float:computed@item_break.py:7"}
    assert w["new"] == [] and w["unchanged"] == []
    text = _cli("compare", str(runs["a1"]), str(runs["fixed"])).stdout
    assert "worklist: 2 resolved · 0 new · 0 unchanged" in text
    assert "resolved: GB0124@item_break.py:7 ×1" in text
    same = json.loads(_cli("compare", "--json", str(runs["a1"]), str(runs["a2"])).stdout)["worklist"]
    assert same["resolved"] == same["new"] == []
    assert [(e["id"], e["count_a"], e["count_b"]) for e in same["unchanged"]] == [
        ("GB0124@item_break.py:7", 1, 1), ("float:computed@item_break.py:7", 1, 1)]


def test_check_refuses_new_break_ids_against_the_baseline(runs, tmp_path):
    policy = tmp_path / "p.toml"
    policy.write_text("[budget]\nallow_new_break_ids = false\nallow_new_recompile_ids = false\n")
    ok = _cli("check", "--json", "--policy", str(policy), "--baseline", str(runs["a1"]), str(runs["fixed"]))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = _cli("check", "--json", "--policy", str(policy), "--baseline", str(runs["fixed"]), str(runs["a1"]))
    assert bad.returncode == 1
    rep = json.loads(bad.stdout)
    by = {b["name"]: b for b in rep["budgets"]}
    assert by["allow_new_break_ids"]["actual"] == ["GB0124@item_break.py:7"]
    assert "new GB0124@item_break.py:7" in by["allow_new_break_ids"]["message"]
    assert by["allow_new_recompile_ids"]["actual"] == ["float:computed@item_break.py:7"]
    alone = _cli("check", "--json", "--policy", str(policy), str(runs["a1"]))
    assert alone.returncode == 0
    assert all(b["skipped"] for b in json.loads(alone.stdout)["budgets"] if "new_" in b["name"])
