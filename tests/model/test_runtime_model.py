"""Calls per compiled entry in triage (issue 24 item 1, viewer side): ``frames[].entries`` and
``frames[].eager_calls`` from a run the tracer records in the test, from a TORCH_TRACE log's
``graph_execution`` records, and nothing invented from a file that is not one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from magi_tui.model.analysis.runtime import from_graph_execution, from_runtime_json, read_runtime_file
from magi_tui.model.outputs.report import triage_json, triage_text
from magi_tui.model.run import RunModel
from tests.support import ahead, slow


@pytest.fixture
def traced_run(calls_run) -> Path:
    return calls_run  # tests/conftest.py: one traced run, shared with tests/ui/test_runtime_views.py


@pytest.mark.torch
def test_triage_json_has_each_entrys_calls_and_the_frames_eager_calls(traced_run):
    out = triage_json(RunModel(traced_run).load())
    (frame,) = out["frames"]
    assert frame["name"] == "f" and frame["limit_hit"]
    assert [(e["compile_id"], e["calls"]) for e in frame["entries"]] == [("0/0", 30), ("0/1", 20)]
    assert all(isinstance(e["seconds"], float) and e["seconds"] > 0 for e in frame["entries"])
    assert frame["eager_calls"] == 5
    assert out["runtime"]["source"] == "tracer"
    assert out["runtime"]["cache_lookups"] == {"hits": 48, "misses": 6}   # 1 recompile + 5 eager
    text = triage_text(RunModel(traced_run).load())
    row = next(ln for ln in text.splitlines() if ln.rstrip().endswith("f (prog.py:5)"))
    assert row.split()[5:7] == ["50", "5"]                                 # CALLS, EAGER


def test_a_log_without_runtime_records_says_nothing_was_counted(tmp_path):
    assert from_graph_execution([None, "", "{}", '{"graph_execution_order": "x"}']) is None
    info = from_graph_execution(['{"graph_execution_order": [{"compile_id": "0/0"}, {"compile_id": "0/0"},'
                                 ' {"compile_id": "[1/0]"}, {"compile_id": null}, 7]}'])
    assert {k: [(e.compile_id, e.calls, e.seconds) for e in v] for k, v in info.entries.items()} == \
        {"0": [("0/0", 2, None)], "1": [("1/0", 1, None)]}
    assert info.eager_calls("0") is None and any("seconds" in n for n in info.not_recorded)


@pytest.mark.parametrize("text", ["", "[]", '{"entries": 3}', '{"entries": [1, {"compile_id": 5}]}',
                                  '{"entries": [{"compile_id": "0/0", "calls": -1, "seconds": "x"}],'
                                  ' "eager_calls": {"0": true, "1": 2}, "cache_lookups": []}', "{" * 100000])
def test_a_hostile_runtime_json_is_read_as_far_as_it_holds(tmp_path, text):
    (tmp_path / "runtime.json").write_text(text)
    info = read_runtime_file(tmp_path)
    if info is None:
        return
    for entries in info.entries.values():
        for e in entries:
            assert e.calls is None or (isinstance(e.calls, int) and e.calls >= 0)
            assert e.seconds is None or isinstance(e.seconds, float)
    assert all(isinstance(v, int) and not isinstance(v, bool) for v in info.eager.values())


def test_runtime_json_through_a_symlink_out_of_the_run_is_not_read(tmp_path):
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"entries": [{"compile_id": "0/0", "calls": 9}]}))
    run = tmp_path / "run"
    run.mkdir()
    (run / "runtime.json").symlink_to(outside)
    assert read_runtime_file(run) is None
    assert from_runtime_json(json.loads(outside.read_text())).entries["0"][0].calls == 9


LOG_PROGRAM = """
import torch
from torch._inductor.debug import record_and_log_graph_execution_order
def f(x):
    return x * 2 + 1
cf = torch.compile(f, dynamic=False)
with record_and_log_graph_execution_order():
    for _ in range(3): cf(torch.ones(3))
    for _ in range(2): cf(torch.ones(4))
"""


@ahead.early("graph_execution_log")
def _graph_execution_log(folder: Path) -> Path:
    """LOG_PROGRAM's TORCH_TRACE log (a cold Inductor cache of its own; started early: tests/support/ahead.py)."""
    import os
    import sys

    pytest.importorskip("torch")
    (folder / "prog.py").write_text(LOG_PROGRAM)
    env = dict(os.environ, TORCH_TRACE=str(folder / "trace"), TORCHINDUCTOR_CACHE_DIR=str(folder / "ind"))
    proc = slow.run([sys.executable, str(folder / "prog.py")], env=env, capture_output=True, text=True,
                    timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (log,) = (folder / "trace").iterdir()
    return log


@pytest.fixture
def graph_execution_log(tmp_path_factory) -> Path:
    return ahead.early_result("graph_execution_log", tmp_path_factory)


@pytest.mark.torch
@pytest.mark.slow
def test_a_torch_trace_logs_graph_execution_records_give_calls_per_compile_id(graph_execution_log):
    out = triage_json(RunModel(graph_execution_log).load())
    (frame,) = out["frames"]
    assert [(e["compile_id"], e["calls"], e["seconds"]) for e in frame["entries"]] == [("0/0", 3, None),
                                                                                      ("0/1", 2, None)]
    assert frame["eager_calls"] is None                       # torch records no eager call
    assert out["runtime"]["source"] == "graph_execution" and out["runtime"]["not_recorded"]
