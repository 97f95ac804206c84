"""The candidates' patch and the sibling-source rule, on text (no torch)."""

from __future__ import annotations

from magi_tui.model.fixes import config_patch, siblings, tensor_sizes


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
