"""Guard diffs show the difference: the changed tokens first (named by their field), and each changed
guard line cut around its change, in text and JSON (issue 20.6)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from magi_tui.model.analysis.guards import diff_guards, reason_from_diff

HEAD = ("| | +- TENSOR_MATCH: check_tensor(L['x'], Tensor, DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, "
        "AutogradCPU), ")


def line(dtype="torch.float32", size="[4, 8]", stride="[8, 1]", rg="False"):
    return f"{HEAD}{dtype}, device=None, requires_grad={rg}, size={size}, stride={stride})  # y = x + 1  # m.py:3 in f"


def test_changed_tokens_come_first_with_their_field():
    d = diff_guards([line()], [line(size="[4, 16]", stride="[16, 1]", rg="True")])
    assert d.headline() == "requires_grad: False -> True; size: 8 -> 16; stride: 8 -> 16"
    (c,) = d.as_json()["changed_lines"]
    # a 120-column cut used to end before "size=": the two lines looked identical
    assert line()[:120] == line(size="[4, 16]")[:120]
    assert c["older"] != c["newer"] and "requires_grad=False" in c["older"] and "requires_grad=True" in c["newer"]
    assert len(c["older"]) <= 100 and c["older"].startswith("…")
    assert c["changes"][0] == {"older": "False", "newer": "True"}


def test_dtype_change_reads_as_a_dtype_reason():
    d = diff_guards([line()], [line(dtype="torch.float64")])
    assert d.headline() == "torch.float32 -> torch.float64"
    r = reason_from_diff(d)
    assert (r.kind, r.subject, r.expected, r.actual) == ("dtype", "x", "torch.float32", "torch.float64")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=160), max_size=6), st.lists(st.text(max_size=160), max_size=6))
def test_any_guard_text_diffs_without_an_exception(a, b):
    d = diff_guards(a, b)
    json.dumps(d.as_json())
    d.headline()
    reason_from_diff(d)
