"""A cache miss explained (issue 24 item 2): torch's cache key components, recorded by the tracer, name
what differs from the nearest lookup that would have hit. One shared scenario of real Inductor compiles
with one cache folder: a cold run, an identical warm rerun, a rerun with one Inductor setting changed."""

from __future__ import annotations

import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from magi_tui.model.analysis.cache_explain import change, explain_misses, parse_components, run_lookups
from magi_tui.model.outputs.compare import compare_lines, compare_runs
from magi_tui.model.outputs.report import triage_json
from magi_tui.model.run import RunModel
from tests.support import ahead, slow

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = """
import sys, torch
from tracer import explain_compilation
if sys.argv[2] == "changed":
    torch._inductor.config.max_fusion_size = 32
def f(x):
    return (x * 2 + 1).relu().sum(0)
cf = torch.compile(f, dynamic=False)
with explain_compilation(sys.argv[1], label=sys.argv[2]) as run:
    cf(torch.ones(4, 3))
    cf(torch.ones(5, 3))                    # a recompile: a miss explained within the run
print(run.path)
"""


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory) -> dict[str, Path]:
    return ahead.early_result("three_runs", tmp_path_factory)


@ahead.early("three_runs")
def _three_runs(out: Path) -> dict[str, Path]:
    """cold, warm, changed (started early: tests/support/ahead.py)"""
    pytest.importorskip("torch")
    (out / "prog.py").write_text(PROGRAM)
    env = dict(os.environ, PYTHONPATH=str(ROOT), TORCHINDUCTOR_CACHE_DIR=str(out / "inductor_cache"))
    env.pop("TORCHINDUCTOR_FORCE_DISABLE_CACHES", None)

    def run(mode: str) -> Path:
        proc = slow.run([sys.executable, str(out / "prog.py"), str(out / "runs" / mode), mode], env=env,
                        capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return Path(proc.stdout.strip().splitlines()[-1])

    runs = {"cold": run("cold")}
    # both after the cold run fills the cache, neither writes what the other looks up (the warm run
    # only hits; the changed run's keys differ): made at once, one process per core
    with ThreadPoolExecutor(2) as pool:
        later = {mode: pool.submit(run, mode) for mode in ("warm", "changed")}
        runs.update({mode: f.result() for mode, f in later.items()})
    return runs


pytestmark = [pytest.mark.torch, pytest.mark.slow]


def test_both_caches_record_their_key_components(three_runs):
    lookups = run_lookups(RunModel(three_runs["cold"]).load())
    assert {lk.cache for lk in lookups} == {"fx_graph", "aotautograd"}
    for lk in lookups:
        assert "gm" in lk.components and "torch_version" in lk.components
    assert any(name.startswith("inductor_config[") for lk in lookups for name in lk.components)


def test_a_warm_rerun_with_one_changed_inductor_setting_names_it(three_runs):
    c = compare_runs(RunModel(three_runs["cold"]).load(), RunModel(three_runs["changed"]).load())
    js = c.as_json()["cache"]["misses_explained"]
    against_a = [m for m in js if m["nearest"] and m["nearest"]["run"] == "baseline"]
    assert against_a and all(m["same_graph"] for m in against_a)
    assert {d["component"] for m in against_a for d in m["differs"]} == {"inductor_config[max_fusion_size]"}
    d = against_a[0]["differs"][0]
    assert (d["nearest"], d["value"]) == ("64", "32")
    text = "\n".join(line for _style, line in compare_lines(c))
    assert "inductor_config[max_fusion_size]: A 64 → 32 B" in text


def test_an_identical_warm_rerun_names_nothing(three_runs):
    c = compare_runs(RunModel(three_runs["cold"]).load(), RunModel(three_runs["warm"]).load())
    cache = c.as_json()["cache"]
    assert cache["b"]["misses"] == 0 and cache["b"]["hits"] > 0
    assert cache["misses_explained"] == []


def test_a_recompile_in_the_same_run_names_the_input_that_changed(three_runs):
    out = triage_json(RunModel(three_runs["cold"]).load())
    same = [m for m in out["cache"]["misses_explained"] if m["compile_id"] == "0/1"]
    assert same and all(m["nearest"]["run"] == "same_run" and m["nearest"]["compile_id"] == "0/0" for m in same)
    names = {d["component"] for m in same for d in m["differs"]}
    assert "example_inputs[0]" in names and not any(n.startswith("inductor_config") for n in names)
    assert json.dumps(out)           # the whole answer is JSON


def test_components_and_changes_are_read_as_far_as_they_hold():
    comps = parse_components(["[h1] gm: def forward(x):\n    return x", "nonsense", 7, "[h2] a[b]: 1"])
    assert comps == {"gm": ("h1", "def forward(x): return x"), "a[b]": ("h2", "1")}
    assert parse_components("x") == {}
    assert change("shape=[4, 3]", "shape=[8, 3]") == "shape=[4, 3] → shape=[8, 3]"
    assert change(None, "1") == "(absent) → 1"
    miss = explain_misses([])
    assert miss == []
