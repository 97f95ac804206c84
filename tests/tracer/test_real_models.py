"""The tracer on the models users run (issue 33.10): small real models built from configs (random weights, no
network: BERT masked-LM, T5, GPT-2 ``generate()``, a Llama training step with Inductor, a diffusers UNet), each
run as a user runs it -- ``python prog.py`` and ``python -m tracer --keep-trace prog.py`` -- and held to what a
user checks (tests/tracer/realrun.py): the recording never stops and drops nothing, the program's stdout,
stderr and exit status are unchanged, and ``magi-tui triage --json`` of the run dir says what it says of the
TORCH_TRACE log torch wrote in the same process, and tlparse reads that log as we do.

The BERT case is the one that stopped the tracer (``TypeError: unhashable type: 'dict'``: a code object whose
constants hold a dict, used as a dict key when writing ``compiled_functions/``)."""

from __future__ import annotations

import importlib.util
import os

import pytest

from tests.tracer.realrun import check

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytestmark = [pytest.mark.torch, pytest.mark.slow]

no_diffusers = pytest.mark.skipif(importlib.util.find_spec("diffusers") is None, reason="diffusers not installed")
#: each model is a minute of a 2-core machine traced and plain: the suite runs the BERT shape that stopped the
#: tracer and GPT-2's generate(); every model with MAGI_TEST_ALL_MODELS=1 (scripts/torch-matrix.sh runs them all per torch)
every_model = pytest.mark.skipif(not os.environ.get("MAGI_TEST_ALL_MODELS"),
                                 reason="one of the heavier models: set MAGI_TEST_ALL_MODELS=1")

CASES = [
    # BERT with every call shape at once: keyword tensors, a mask, output_hidden_states / attentions
    # (transformers' output-capturing hooks), return_dict, a training step, an eval call (aot_eager: seconds)
    pytest.param("hf_bert_mlm.py", {"BERT_BACKEND": "aot_eager"}, id="bert-mlm", marks=every_model),
    pytest.param("hf_bert_mlm.py", {"BERT_BACKEND": "aot_eager", "BERT_COMPILE": "method"},
                 id="bert-mlm-model.compile"),
    pytest.param("hf_bert_mlm.py", {"BERT_BACKEND": "aot_eager", "BERT_COMPILE": "dynamic"},
                 id="bert-mlm-dynamic", marks=every_model),
    pytest.param("hf_t5.py", {}, id="t5", marks=every_model),
    pytest.param("hf_gpt2_generate.py", {}, id="gpt2-generate"),
    pytest.param("hf_llama_train.py", {}, id="llama-train-inductor", marks=every_model),  # the heaviest
    pytest.param("diffusers_unet.py", {}, id="diffusers-unet", marks=[no_diffusers, every_model]),
]


@pytest.mark.parametrize(("program", "env"), CASES)
def test_the_tracer_records_a_real_model_whole_and_changes_nothing(program, env, tmp_path):
    r = check(program, tmp_path, env)
    assert r["exit"] == [0, 0], r["plain_stderr"] + "\n---\n" + r["traced_stderr"]
    assert r["stdout_same"], (r["plain_stdout"], r["traced_stdout"])
    assert r["stderr_same"], (r["plain_stderr"], r["traced_stderr"])
    assert "TracerWarning" not in r["traced_stderr"]
    tracer = r["tracer"]
    assert tracer["dropped_records"] == 0, tracer["drop_errors"]
    assert tracer["not_recorded"] == []
    assert r["status"][0] == r["status"][1] and r["status"][0] in ("ok", "degraded"), r["status"]
    assert r["triage_same"], "\n".join(r["triage_differences"])
    assert r["tlparse"].get("same") is not False, r["tlparse"]["difference"]  # tlparse reads the log as we do
    assert r["frames"] >= 1
