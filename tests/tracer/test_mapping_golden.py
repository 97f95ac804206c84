"""The mapping on torch's real recorded TORCH_TRACE logs, without torch (``tracelog.py`` runs in a
subprocess that fails if torch got imported). What a user would check: compile ids, graph breaks with
their id / type / user line, recompiles with every reason, the backend failure with its whole message,
restarts, the three cache states, backward graphs — plus a golden file of every event for regressions
(``MAGI_UPDATE_GOLDEN=1`` rewrites it)."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.support import slow

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from tracelog import trace_logs  # noqa: E402

LOGS = {p.stem: p for p in trace_logs()}
pytestmark = pytest.mark.usefixtures("torch_trace_dir")
_cache: dict[str, list[dict]] = {}


def mapped(stem: str) -> list[dict]:
    if stem not in _cache:
        proc = slow.run([sys.executable, str(HERE / "tracelog.py"), str(LOGS[stem])],
                        capture_output=True, text=True, timeout=120)
        assert proc.returncode != 3, "mapping a log imported torch"
        assert proc.returncode == 0, proc.stderr
        _cache[stem] = [json.loads(line) for line in proc.stdout.splitlines()]
    return _cache[stem]


def summary(ev: dict) -> dict:
    a = ev["attributes"]
    keep = ("compile_id", "attempt", "frame", "lifecycle_name", "gb_id", "gb_type", "user_frame", "user_function",
            "source_line", "hints", "reasons", "exception_type", "exception_message", "cache", "backward",
            "restart_reason", "fail_type", "recompile_limit", "limit_type")
    out = {"name": ev["name"], **{k: a[k] for k in keep if a.get(k) is not None}}
    if a.get("reason"):
        out["reason"] = a["reason"].splitlines()[0]
    if "restart_reason" in out:
        out["restart_reason"] = out["restart_reason"].splitlines()[0]
    out["files"] = sorted(ev["files"])
    return out


@pytest.mark.parametrize("stem", sorted(LOGS))
def test_golden_events(stem):
    got = [summary(e) for e in mapped(stem)]
    golden = HERE / "golden" / f"{stem}.json"
    if os.environ.get("MAGI_UPDATE_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n")
    assert golden.exists(), f"no golden file {golden.name}: review the mapping, then MAGI_UPDATE_GOLDEN=1"
    assert got == json.loads(golden.read_text())


@pytest.mark.parametrize("stem", sorted(LOGS))
def test_every_before_is_closed_with_the_same_compile_id(stem):
    open_: Counter = Counter()
    for e in mapped(stem):
        a = e["attributes"]
        lc = a.get("lifecycle_name")
        if not lc:
            continue
        key = (lc, a.get("compile_id"))
        if "_before_" in e["name"]:
            open_[key] += 1
        else:
            assert open_[key] > 0, f"{e['name']} closes nothing ({key})"
            open_[key] -= 1
    assert not +open_, f"left open: {+open_}"


def test_graph_breaks_recompiles_failure_log():
    evs = mapped("graph_breaks_recompiles_failure")
    ids = [e["attributes"].get("compile_id") for e in evs if e["name"] == "fullgraph_before_compile"]
    # torch's compile ids, as tlparse lists them (attempts are the separate attribute)
    assert ids == ["0/0", "1/0", "1/1", "0/1", "1/2", "1/3", "0/2", "1/4", "2/0", "3/0", "4/0", "5/0", "6/0"]

    breaks = [e["attributes"] for e in evs if e["name"] == "fullgraph_graph_break"]
    assert [(b["compile_id"], b["gb_id"]) for b in breaks] == [
        ("0/0", "GB0124"), ("0/1", "GB0124"), ("0/2", "GB0124"), ("3/0", "GB0059"), ("4/0", "GB0059")]
    item = breaks[0]
    assert item["gb_type"] == "Unsupported Tensor.item() call with capture_scalar_outputs=False"
    assert item["user_frame"] == "/home/user/project/capture_demo.py:149"  # not torch's nn.Module frames
    assert (item["user_file"], item["user_line"], item["user_function"]) == (
        "/home/user/project/capture_demo.py", 149, "forward")
    assert item["source_line"] == "if h.sum().item() > 0:"
    assert item["explanation"].startswith("Dynamo does not support tracing `Tensor.item()`")
    assert item["hints"] and "capture_scalar_outputs = True" in item["hints"][0]
    # the whole cause, not the header line
    assert item["reason"].startswith("Encountered graph break when attempting to trace CALL")
    assert "Unsupported Tensor.item() call" in item["reason"] and "gb0124.html" in item["reason"]
    printed = breaks[3]
    assert printed["gb_type"] == "Failed to trace builtin operator"
    assert printed["user_function"] == "helper_with_print" and printed["user_frame"].endswith(":157")
    assert len(printed["hints"]) == 3 and "print" in printed["explanation"]

    recompiles = [e["attributes"] for e in evs if e["name"] == "fullgraph_recompile"]
    assert [r["compile_id"] for r in recompiles] == ["1/1", "0/1", "1/2", "1/3", "0/2", "1/4"]
    assert all(r["frame"] for r in recompiles)  # known from the frame's earlier compiles
    assert all(r["recompile_limit"] == 8 for r in recompiles)  # torch._dynamo.config in the metrics
    by_id = {r["compile_id"]: r for r in recompiles}
    assert by_id["0/1"]["frame"] == "forward"
    assert by_id["0/1"]["reasons"] == ["0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6"]
    assert by_id["0/2"]["reason"] == "0/1: tensor 'x' dtype mismatch. expected Float, actual Double"
    assert len(by_id["0/2"]["reasons"]) == 2  # one per cache entry that failed
    assert by_id["1/1"]["reason"].startswith("1/0: ___stack0 == 21.66")  # .item() value guard on the resume fn
    assert by_id["1/1"]["frame"] == "torch_dynamo_resume_in_forward_at_149"

    failed = [e for e in evs if e["name"] == "fullgraph_failed_compile"]
    assert len(failed) == 1
    fa = failed[0]["attributes"]
    assert fa["compile_id"] == "2/0" and fa["frame"] == "always_fails"
    assert fa["exception_type"] == "BackendCompilerFailed"
    assert fa["exception_message"] == ("backend='failing_backend' raised:\n"
                                       "BackendBoom: deliberate failure in custom backend (6 nodes)")
    # the graph the backend rejected is kept beside the error (issue 31.10), as tlparse keeps it
    assert sorted(failed[0]["files"]) == ["captured_graph.py", "metrics.json", "phases.json", "traceback.txt"]
    assert failed[0]["metrics"]["fail_type"] == "BackendCompilerFailed"
    assert "entire_frame_compile_time_s" in failed[0]["metrics"]

    restarts = [e["attributes"] for e in evs if e["name"] == "fullgraph_restart_analysis"]
    assert [r["compile_id"] for r in restarts] == ["0/0", "0/1", "0/2", "3/0", "4/0"]
    assert all(r["attempt"] == 1 for r in restarts)

    cache = Counter((e["name"], e["attributes"]["cache"]) for e in evs if e["name"].startswith("fullgraph_cache_"))
    assert cache == {("fullgraph_cache_miss", "fx_graph"): 6, ("fullgraph_cache_miss", "aotautograd"): 6,
                     ("fullgraph_cache_hit", "fx_graph"): 2, ("fullgraph_cache_hit", "aotautograd"): 2}
    assert not [e for e in evs if e["name"] == "fullgraph_recompile_limit_hit"]  # the limit was not reached


def test_dynamic_shapes_backward_log():
    evs = mapped("dynamic_shapes_backward")
    rec = [e["attributes"] for e in evs if e["name"] == "fullgraph_recompile"]
    assert len(rec) == 1 and rec[0]["frame"] == "f" and "x.size()[0]" in rec[0]["reason"]
    # the backward graphs Inductor loaded (cache hit) inside the forward's compile are marked
    bw = [(e["name"], e["attributes"].get("cache")) for e in evs if e["attributes"].get("backward")]
    # (the backward's runnable reproducer is marked too: its graph's inputs are tangents)
    assert bw == [("fullgraph_after_aot_backward_graph", None), ("fullgraph_fx_graph_runnable", None),
                  ("fullgraph_before_post_grad_passes", "hit"),
                  ("fullgraph_after_post_grad_passes", "hit"), ("fullgraph_after_inductor_codegen", None),
                  ("fullgraph_cache_hit", "fx_graph")]
    fw_codegen = [e for e in evs if e["name"] == "fullgraph_after_inductor_codegen" and not e["attributes"].get("backward")]
    assert len(fw_codegen) == 3
    guards = [e["attributes"]["leaf_guard_count"] for e in evs if e["name"] == "fullgraph_after_build_guards"]
    assert all(g > 0 for g in guards)


def test_a_restart_reason_given_as_one_string_is_one_restart():
    """compilation_metrics from a hostile or older log may carry ``restart_reasons`` as a string."""
    from magi_format.torch_mapping import TraceMapper

    mapper = TraceMapper({})
    md = {"compilation_metrics": {"compile_id": "0/0", "co_name": "f", "restart_reasons": "Restarting analysis",
                                  "entire_frame_compile_time_s": 0.1},
          "frame_id": 0, "frame_compile_id": 0, "attempt": 0}
    events = [e for e in mapper.handle(md, None) if e[0].endswith("restart_analysis")]
    assert len(events) == 1
