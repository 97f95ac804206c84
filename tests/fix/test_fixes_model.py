"""The candidates' patch and the sibling-source rule, on text (no torch)."""

from __future__ import annotations

from magi_tui.model.outputs.fixes import config_patch, siblings, tensor_sizes


def test_patch_goes_after_import_torch(tmp_path):
    p = tmp_path / "prog.py"
    p.write_text('"""doc"""\nimport os\nimport torch\n\nx = 1\n')
    d = config_patch(p, ["torch._dynamo.config.capture_scalar_outputs = True"])
    assert " import torch\n+torch._dynamo.config.capture_scalar_outputs = True\n" in d
    assert d.startswith("--- a/prog.py\n+++ b/prog.py\n")


def test_patch_adds_import_torch_after_the_docstring(tmp_path):
    p = tmp_path / "prog.py"
    p.write_text('"""a\nlong doc\n"""\nfrom __future__ import annotations\nimport model\n')
    d = config_patch(p, ["torch._dynamo.config.assume_static_by_default = False"])
    assert " from __future__ import annotations\n+import torch\n+torch._dynamo.config" in d
    assert config_patch(tmp_path / "missing.py", ["x"]) is None


def test_siblings_of_the_same_length():
    guards = [
        "TENSOR_MATCH: check_tensor(L['kwargs']['input_ids'], Tensor, DispatchKeySet(CPU), torch.int64, "
        "device=None, requires_grad=False, size=[1, 6], stride=[6, 1])  # x",
        "TENSOR_MATCH: check_tensor(L['kwargs']['attention_mask'], Tensor, DispatchKeySet(CPU), torch.float32, "
        "device=None, requires_grad=False, size=[1, 6], stride=[6, 1])",
        "TENSOR_MATCH: check_tensor(L['kwargs']['labels'], Tensor, DispatchKeySet(CPU), torch.int64, "
        "device=None, requires_grad=False, size=[1, 7], stride=[7, 1])",
        "TENSOR_MATCH: check_tensor(L['self']._modules['emb']._parameters['weight'], Parameter, DispatchKeySet(CPU), "
        "torch.float32, device=None, requires_grad=True, size=[16, 6], stride=[6, 1])",
    ]
    sizes = tensor_sizes(guards)
    assert sizes["L['kwargs']['input_ids']"] == ["1", "6"] and not any(k.startswith("L['self']") for k in sizes)
    assert siblings("L['kwargs']['input_ids']:1", [sizes]) == ["L['kwargs']['attention_mask']:1"]
    assert siblings("L['kwargs']['input_ids']:0", [sizes]) == []  # a size of 1 is specialised anyway


def test_ids_of_real_logs_hold_no_values():
    """A shape-range guard names its bounds (4 <= x.size()[0] <= 4096): the id keeps what it is about."""
    from magi_tui.cli import _load_runs
    from magi_tui.model.outputs.report import triage_json
    from tests.support.paths import TORCH_TRACE, require

    require(TORCH_TRACE)

    def ids(name: str) -> list[str]:
        (run,) = _load_runs(TORCH_TRACE / name)
        return [w["id"] for w in triage_json(run)["worklist"]]

    assert ids("dynamic_shapes_backward.log") == ["shape_range:x.size()[0]@extra_events_demo.py:13"]
    assert ids("graph_breaks_recompiles_failure.log") == [
        "GB0124@capture_demo.py:149", "GB0059@capture_demo.py:157", "float:computed@capture_demo.py:149",
        "size:x:0@capture_demo.py:146", "size:h:0@capture_demo.py:149", "dtype:x@capture_demo.py:146",
        "dtype:h@capture_demo.py:149"]
