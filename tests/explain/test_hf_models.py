"""Explanations on small Hugging Face models built from configs (random weights, no network), called with
keyword tensors, run under the tracer and under TORCH_TRACE (issue 20.1, 20.2, 20.7, 20.11)."""

from __future__ import annotations

import pytest

from tests.explain.realrun import both, traced, triage
from tests.support import ahead

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytestmark = [pytest.mark.torch, pytest.mark.slow]

KW = {"HF_CALL": "kwargs"}


def explain(j: dict) -> list[tuple]:
    return [(r["compile_id"], r["kinds"], r["automatic_dynamic"], r["dynamic_sources"],
             [(p["kind"], p["subject"], p["index"], p["expected"], p["actual"], p["dynamic_source"])
              for p in r["reasons_parsed"]]) for r in j["recompiles"]]


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    return ahead.early_result("gpt2", tmp_path_factory)


@ahead.early("gpt2")
def _gpt2(base):
    """triage of hf_gpt2.py from the tracer and from the log (started early: tests/support/ahead.py)"""
    run, log = both("hf_gpt2.py", base, KW)
    return triage(run)[1], triage(log)[1]


def test_keyword_tensor_recompile_is_read_from_the_tracer_and_the_log_alike(gpt2):
    run, log = gpt2
    assert explain(run) == explain(log)
    (cid, kinds, auto, sources, reasons), = explain(run)
    # was: kind "other", expected/actual null, no suggestion
    assert reasons == [("size", "kwargs['input_ids']", 1, "8", "16", "L['kwargs']['input_ids']:1")]
    assert auto is True and kinds == ["size"]
    # attention_mask has the same length: marking input_ids alone is specialised back to 8
    assert sources == ["L['kwargs']['attention_mask']:1", "L['kwargs']['input_ids']:1"]
    sugg = run["recompiles"][0]["suggestion"]
    assert "input_ids" in sugg and "TORCH_COMPILE_DYNAMIC_SOURCES=\"L['kwargs']['attention_mask']:1," in sugg


def test_automatic_dynamic_is_the_normal_path_not_a_warning(gpt2):
    for j in gpt2:
        assert j["status"] == "ok"
        msgs = [(c["level"], c["message"]) for c in j["checks"]]
        assert not any(level == "warn" and "recompile" in m for level, m in msgs), msgs
        assert any(level == "ok" and "automatic dynamic" in m for level, m in msgs), msgs


def test_following_the_advice_removes_the_recompile(gpt2, tmp_path):
    env = gpt2[0]["recompiles"][0]["suggestion"].split('TORCH_COMPILE_DYNAMIC_SOURCES="', 1)[1].split('"', 1)[0]
    _, after = triage(traced("hf_gpt2.py", tmp_path, {**KW, "TORCH_COMPILE_DYNAMIC_SOURCES": env}))
    assert after["recompiles"] == [] and [f["compiles"] for f in after["frames"]] == [1]


def test_log_and_tracer_give_the_same_recompile_actual(tmp_path):
    """Torch's reason ``n == 3`` has no actual value; both sources read it off the next compile's guards
    (issue 20.11)."""
    got = []
    for j in (triage(path)[1] for path in both("scalar.py", tmp_path)):
        (r,) = j["recompiles"]
        got.append((r["kind"], r["expected"], r["actual"]))
        assert r["guard_diff"]["changes"] == [{"older": "3", "newer": "5"}]
    assert got == [("scalar", "3", "5")] * 2


def test_llama_training_step_keyword_recompile_from_both_sources(tmp_path):
    """A Llama training step (forward, loss, backward) at two lengths: the same explanation from the tracer
    and from the log, the keyword source named, the normal automatic-dynamic path, no warning."""
    run, log = (triage(path)[1] for path in both("hf_llama_train.py", tmp_path))
    assert explain(run) == explain(log)
    (cid, kinds, auto, sources, reasons), = explain(run)
    assert reasons[0][:5] == ("size", "kwargs['input_ids']", 1, "8", "16") and auto is True
    assert "L['kwargs']['input_ids']:1" in sources
    for j in (run, log):
        assert j["status"] == "ok" and not any(c["level"] == "warn" for c in j["checks"])
