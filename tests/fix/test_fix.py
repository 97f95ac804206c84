"""``magi-tui fix`` on programs written for it (issue 23): each ends with the right best change, proven
by re-running it traced; a change that alters the printed numbers is rejected; nothing to fix is no
change. Real compiles (eager backend), a few seconds a run; each test's ``magi-tui fix`` is made ahead,
two at a time (tests/support/ahead.py), and the test asserts on its JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.support import ahead, slow
from tests.support.paths import ROOT

pytest.importorskip("torch")
pytestmark = [pytest.mark.slow, pytest.mark.torch]
PROGRAMS = Path(__file__).resolve().parent / "programs"


def fix(tmp_path: Path, program: str, *extra: str) -> tuple[int, dict]:
    r = slow.run([sys.executable, "-m", "magi_tui", "fix", "--json", "-o", str(tmp_path / "runs"), *extra,
                  "--", "python", str(PROGRAMS / program)], cwd=ROOT, capture_output=True, text=True,
                 env=dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1"), timeout=600)
    assert r.returncode in (0, 1), r.stderr[-3000:]
    return r.returncode, json.loads(r.stdout)


@pytest.fixture(scope="module")
def fixes(request, tmp_path_factory):
    base = tmp_path_factory.mktemp("fix")
    runs = ahead.start(request, lambda *args: fix(Path(tempfile.mkdtemp(dir=base)), *args))
    yield runs
    runs.close()


@pytest.fixture
def fixed(request, fixes) -> tuple[int, dict]:
    """(exit code, JSON) of ``magi-tui fix --json <the test's ahead mark>``."""
    return fixes.result_for(request.node)


KEYS = {"change", "env", "config", "patch", "graph_breaks", "recompiles", "compile_s", "outputs_equal", "kept"}


# first: the longest run (a Hugging Face model) starts first, beside the others
@pytest.mark.ahead("hf_seqlen.py")
def test_hugging_face_sequence_length_recompile(request, fixes):
    pytest.importorskip("transformers")
    code, out = fixes.result_for(request.node)
    assert code == 0
    assert out["baseline"]["recompiles"] == 1
    assert any(i.startswith("size:kwargs['input_ids']:1@") for i in out["baseline"]["worklist"])
    best = out["best"]
    src = best["env"]["TORCH_COMPILE_DYNAMIC_SOURCES"].split(",")
    assert {"L['kwargs']['input_ids']:1", "L['kwargs']['attention_mask']:1"} <= set(src)
    assert (best["recompiles"], best["outputs_equal"], best["kept"]) == (0, True, True)


@pytest.mark.parametrize("program, recompiles, best_env, best_config", [
    pytest.param("storm_positional.py", 5, {"TORCH_COMPILE_DYNAMIC_SOURCES": "L['x']:0"},
                 "torch.compiler.config.dynamic_sources = \"L['x']:0\"", marks=pytest.mark.ahead("storm_positional.py")),
    # input_ids alone is specialised back by attention_mask (same length): the trial's guards add it
    pytest.param("storm_keyword.py", 3,
                 {"TORCH_COMPILE_DYNAMIC_SOURCES": "L['kwargs']['attention_mask']:1,L['kwargs']['input_ids']:1"},
                 "torch.compiler.config.dynamic_sources = \"L['kwargs']['attention_mask']:1,L['kwargs']['input_ids']:1\"",
                 marks=pytest.mark.ahead("storm_keyword.py")),
    # a dynamic source does nothing for a float; dynamic from the start does
    pytest.param("float_recompile.py", 1,
                 {"TORCH_COMPILE_OVERRIDE_DYNAMO_CONFIGS": ">=0:assume_static_by_default=False"},
                 "torch._dynamo.config.assume_static_by_default = False", marks=pytest.mark.ahead("float_recompile.py")),
])
def test_recompile_storms_end_with_a_proven_dynamic_change(fixed, program, recompiles, best_env, best_config):
    code, out = fixed
    assert code == 0
    assert out["baseline"]["recompiles"] == recompiles and out["baseline"]["graph_breaks"] == 0
    best = out["best"]
    assert KEYS <= set(best) and best == out["candidates"][0]
    assert best["env"] == best_env and best["config"] == [best_config]
    assert (best["recompiles"], best["graph_breaks"], best["outputs_equal"], best["kept"]) == (0, 0, True, True)
    added = [ln for ln in best["patch"].splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    assert added == [f"+{best_config}"]
    assert Path(best["run"]).is_dir() and best["run"] != out["baseline"]["run"]  # proven by its own run
    # and the patch too: a copy of the script with the line in it, run without the variables
    assert best["patch_proven"] is True and Path(best["patch_run"]).is_dir(), best["patch_why"]


@pytest.mark.ahead("item_break.py")
def test_item_break_is_captured(fixed):
    code, out = fixed
    assert code == 0
    assert out["baseline"]["graph_breaks"] == 1
    best = out["best"]
    assert best["env"] == {"TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS": "1"}
    assert best["config"] == ["torch._dynamo.config.capture_scalar_outputs = True"]
    assert (best["graph_breaks"], best["recompiles"], best["outputs_equal"]) == (0, 0, True)
    assert set(best["resolved"]) == {"GB0124@item_break.py:7", "float:computed@item_break.py:7"}
    assert best["patch_proven"] is True


@pytest.mark.ahead("print_break.py")
def test_print_break_moved_and_its_patch_proven(tmp_path, fixed):
    code, out = fixed
    assert code == 0
    best = out["best"]
    assert best["env"] == {} and best["config"] == ["torch._dynamo.config.reorderable_logging_functions.add(print)"]
    assert (out["baseline"]["graph_breaks"], best["graph_breaks"], best["outputs_equal"]) == (1, 0, True)
    # the baseline twice (the same numbers: deterministic), the change, the patched copy
    assert best["patch_proven"] is True and out["runs"] == 4 and out["reference"]["deterministic"] is True
    # the patch itself, applied to a copy and traced, has no break left
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "print_break.py").write_text((PROGRAMS / "print_break.py").read_text())
    subprocess.run(["patch", "-p1", "-s"], input=best["patch"], text=True, cwd=copy, check=True)
    r = slow.run([sys.executable, "-m", "tracer", "-o", str(copy / "runs"), str(copy / "print_break.py")],
                 cwd=ROOT, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                 timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    t = slow.run([sys.executable, "-m", "magi_tui", "triage", "--json", str(copy / "runs")], cwd=ROOT,
                 capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=120)
    assert json.loads(t.stdout)["worklist"] == []


@pytest.mark.ahead("two_breaks.py")
def test_two_changes_each_leaving_the_other_break_are_proven_together(fixed):
    code, out = fixed
    assert code == 0
    alone = {c["key"]: c for c in out["candidates"]}
    assert alone["capture_scalar_outputs"]["graph_breaks"] == 1 and alone["reorderable_print"]["graph_breaks"] == 1
    best = out["best"]
    assert best["key"] == "capture_scalar_outputs+reorderable_print"
    assert (best["graph_breaks"], best["recompiles"], best["outputs_equal"]) == (0, 0, True)
    assert best["env"] == {"TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS": "1"}
    assert best["config"] == ["torch._dynamo.config.capture_scalar_outputs = True",
                              "torch._dynamo.config.reorderable_logging_functions.add(print)"]
    assert best["patch_proven"] is True


@pytest.mark.ahead("nonzero_break.py")
def test_data_dependent_shape_break_is_captured(fixed):
    code, out = fixed
    assert code == 0
    assert "GB0036@nonzero_break.py:7" in out["baseline"]["worklist"]
    best = out["best"]
    assert best["env"]["TORCHDYNAMO_CAPTURE_DYNAMIC_OUTPUT_SHAPE_OPS"] == "1"
    assert (best["graph_breaks"], best["recompiles"], best["outputs_equal"], best["patch_proven"]) == (0, 0, True, True)


@pytest.mark.ahead("print_mutates.py")
def test_a_change_that_alters_the_output_is_rejected(fixed):
    code, out = fixed
    assert code == 0
    assert out["best"] is None
    (c,) = out["candidates"]
    assert c["config"] == ["torch._dynamo.config.reorderable_logging_functions.add(print)"]
    assert c["graph_breaks"] == 0  # it did remove the break ...
    assert (c["outputs_equal"], c["kept"]) == (False, False)  # ... and printed other numbers
    assert c["why"].startswith("output changed")


@pytest.mark.ahead("nothing.py")
def test_nothing_to_fix(fixed):
    code, out = fixed
    assert code == 0
    assert out["best"] is None and out["candidates"] == [] and out["runs"] == 1  # nothing to try: run once
    assert out["reference"] is None
    assert (out["baseline"]["graph_breaks"], out["baseline"]["recompiles"]) == (0, 0)


@pytest.mark.ahead("storm_positional.py", "--max-runs", "2")
def test_max_runs_is_kept(fixed):
    code, out = fixed
    assert code == 0 and out["runs"] == 3  # the baseline's second run is outside --max-runs
    assert [c["key"] for c in out["candidates"]] == ["dynamic_sources"] and out["best"]["kept"]
    assert out["best"]["patch_proven"] is None
    assert any("not tried" in n for n in out["notes"]) and any("patch was not run" in n for n in out["notes"])


@pytest.mark.ahead("float_recompile.py")
def test_a_float_gets_its_setting_tried_and_its_code_change_shown_never_called_proven(fixed):
    """Issue 31.7: for a float compiled as a constant, fix tries ``specialize_float=False`` (a setting torch
    2.13 reads) and shows the code change (a 0-d tensor argument) without running or calling it proven; a
    patch's diff is printed only when its own run proved it."""
    from magi_tui.model.outputs.fixes import fix_lines

    code, out = fixed
    by_key = {c["key"]: c for c in out["candidates"]}
    spec = by_key["specialize_float"]
    assert spec["tried"] is True and spec["env"] == {"TORCH_COMPILE_OVERRIDE_DYNAMO_CONFIGS": ">=0:specialize_float=False"}
    tensor = by_key["float_as_tensor"]
    assert tensor["tried"] is False and tensor["kept"] is False and tensor["run"] is None
    assert tensor["why"].startswith("not proven here: a code edit") and "torch.tensor(scale)" in tensor["code"]
    text = "\n".join(t for _s, t, _i in fix_lines(out))
    assert "— not run: not proven here" in text and "code:   at the call" in text
    # a patch not proven by its own run never shows its diff as a fix
    unproven = dict(out, best=dict(out["best"], patch_proven=False, patch_why="exit code 1 where the baseline exited 0"))
    unproven["candidates"] = [unproven["best"], *out["candidates"][1:]]
    lines = "\n".join(t for _s, t, _i in fix_lines(unproven))
    assert "patch not proven: exit code 1" in lines and "+++ b/" not in lines


@pytest.mark.ahead("float_recompile.py")
def test_triage_says_what_fix_proved_for_the_same_program(fixed, tmp_path):
    """Issue 31.7: triage and fix agree: a run of the program under the fix's root reads 'magi-tui fix
    proved: …' with the fix's own words."""
    code, out = fixed
    root = Path(out["directory"]).parent
    baseline = Path(out["baseline"]["run"])
    r = slow.run([sys.executable, "-m", "magi_tui", "triage", "--json", str(baseline)], cwd=ROOT,
                 capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=120)
    j = json.loads(r.stdout)
    assert [p["change"] for p in j["fix_proven"]][:1] == [out["best"]["change"]]
    line = next(c["message"] for c in j["checks"] if c["rule"] == "fix-proven")
    assert line.startswith("magi-tui fix proved: " + out["best"]["change"]) and out["best"]["why"] in line
    assert str(root) in line
