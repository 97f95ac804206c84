"""Recompile reasons as torch 2.13 writes them (recorded by ``record_reasons.py`` from real programs, one per
guard family) read right, and the reader total over any text (issue 19.1, issue 20.1 / 20.7). Torch-free."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from magi_tui.model.analysis.guards import KINDS, dynamic_source_entry, parse_reason, user_expr

RECORDED = json.loads((Path(__file__).with_name("reasons_torch.json")).read_text())["reasons"]


def one(family: str, i: int = 0):
    return parse_reason(RECORDED[family][i])


def test_identity_and_type_guards_parse_instead_of_crashing():
    # ___check_obj_id / ___check_type_id raised IndexError("no such group") (a regex name defined twice)
    r = one("obj_id_fn")
    assert (r.kind, r.subject, r.expected, r.entry_compile_id) == ("identity", "f", "builtin_function_or_method", "0/0")
    r = one("module_swap")
    assert (r.kind, r.subject, r.expected) == ("type", "m._modules['act']", "ReLU")
    assert "m.act" in r.suggestion


def test_every_recorded_family_has_its_kind_and_advice():
    want = {"size": "size", "kwargs_size": "size", "dtype": "dtype", "requires_grad": "requires_grad",
            "rank": "rank", "stride": "stride", "int_scalar": "scalar", "float_scalar": "float",
            "bool_scalar": "bool", "list_length": "length", "dict_keys": "length", "type": "constant",
            "obj_id_fn": "identity", "module_swap": "type", "grad_mode": "global_state", "dict_value": "scalar",
            "float_item": "float", "aliasing": "aliasing"}
    for family, kind in want.items():
        r = one(family)
        assert r.kind == kind, (family, r)
        assert r.suggestion, family
    assert [parse_reason(x).kind for x in RECORDED["dynamic_range"]] == ["size", "shape_range", "size"]


def test_keyword_tensor_names_the_argument_the_dim_and_the_dynamic_sources_entry():
    r = one("kwargs_size")  # recorded: ``tensor 'kw['input_ids']' size mismatch at index 1. expected 8, actual 16``
    assert (r.kind, r.subject, r.index, r.expected, r.actual) == ("size", "kw['input_ids']", 1, "8", "16")
    assert r.dynamic_source == "L['kw']['input_ids']:1"
    assert "torch._dynamo.mark_dynamic(input_ids, 1)" in r.suggestion
    assert "TORCH_COMPILE_DYNAMIC_SOURCES=\"L['kw']['input_ids']:1\"" in r.suggestion
    # the spellings Hugging Face programs produce
    r = parse_reason("1/0: tensor 'kwargs['input_ids']' size mismatch at index 1. expected 8, actual 16")
    assert (r.subject, r.index, r.expected, r.actual, r.dynamic_source) == (
        "kwargs['input_ids']", 1, "8", "16", "L['kwargs']['input_ids']:1")
    r = parse_reason("tensor 'model_kwargs['position_ids']' size mismatch at index 1. expected 8, actual 9")
    assert r.kind == "size" and "mark_dynamic(position_ids, 1)" in r.suggestion
    r = parse_reason("tensor 'L['self']._modules['h']._modules['0']._parameters['weight']' dtype mismatch. "
                     "expected Float, actual Half")
    assert (r.kind, r.expected, r.actual) == ("dtype", "torch.float32", "torch.float16")
    assert user_expr(r.subject) == "self.h[0].weight"


def test_advice_is_right_for_torch_2_13():
    f = one("float_scalar")
    assert "specialize_int" not in f.suggestion and "torch.tensor(f)" in f.suggestion
    item = one("float_item")  # a float from .item() after a graph break
    assert "capture_scalar_outputs" in item.suggestion and "specialize_int" not in item.suggestion
    n = one("int_scalar")
    assert (n.expected, n.actual) == ("3", None)  # torch records only the compiled value
    assert n.as_json()["actual_recorded"] is False
    assert "TORCH_COMPILE_DYNAMIC_SOURCES=\"L['n']\"" in n.suggestion


def test_other_guard_families_read_right():
    # DEFAULT_DEVICE (guards.py: ``utils_device.CURRENT_DEVICE == None``)
    r = parse_reason("0/0: utils_device.CURRENT_DEVICE == None")
    assert r.kind == "global_state" and "set_default_device" in r.suggestion
    # a closure cell and a module attribute (ID_MATCH on nested sources)
    r = parse_reason("___check_obj_id(L['fn'].__closure__[0].cell_contents, 1402), type=<class 'function'>")
    assert (r.kind, user_expr(r.subject), r.expected) == ("identity", "fn.__closure__[0].cell_contents", "function")
    r = parse_reason("len(L['self']._modules['layers']._modules) == 2")
    assert (r.kind, r.expected) == ("length", "2") and "self.layers" in r.suggestion
    r = parse_reason("BACKEND_MATCH failure: torch.compile detected different backend callables.")
    assert r.kind == "backend"


def test_dynamic_sources_entries_only_for_frame_inputs():
    assert dynamic_source_entry("x", 0) == "L['x']:0"
    assert dynamic_source_entry("L['x']") == "L['x']"
    assert dynamic_source_entry("___stack0") is None
    # a global, as torch names it: torch 2.13 matches it (tests/advice: global_int_dynamic_sources)
    assert dynamic_source_entry("G['w']") == "G['w']"


FRAGMENTS = ["tensor '", "'", " size mismatch at index ", " mismatch", ". expected ", ", actual ", "___check_obj_id(",
             "___check_type_id(", ", type=<class '", "'>", ")", "L['", "']", "._modules['", "kwargs['", " == ", " != ",
             "len(", "GLOBAL_STATE changed: ", "Duplicate tensors found: [\"", "0/0: ", "  # ", "\n", "2 <= ",
             ".size()[", "]", "1", "-3", "0.5", "True", "None", "x", "Ne(", "BACKEND_MATCH"]


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(max_size=200), st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join)))
def test_any_text_gives_a_reason_never_an_exception(text):
    r = parse_reason(text)
    assert r.kind in KINDS
    json.dumps(r.as_json())


# the guard a frame keeps on the code of a function it calls, as torch 2.13 (CPU) and torch 2.11 (CUDA,
# transformers 5.17: its `wrapper` in generic.py that every model's forward comes through) wrote them
_FUNC_213 = ("| | | +- ID_MATCH: ___check_obj_id(L['fn'].__code__, 140680972470432), type=<class 'code'>",
             "| | | +- ID_MATCH: ___check_obj_id(L['fn'].__code__, 140680972472352), type=<class 'code'>")
_FUNC_211 = tuple(
    "| | | +- ID_MATCH: ___check_obj_id(L['func'].__code__, %d), type=<code object forward at 0x%s, file "
    '"/opt/torch/.venv/lib/python3.12/site-packages/transformers/models/%s", line %d>  '
    "# output = func(self, *args, **kwargs)  # transformers/utils/generic.py:933 in wrapper" % args
    for args in ((455558960, "1b274730", "llama/modeling_llama.py", 436),
                 (409384736, "1866b720", "gpt2/modeling_gpt2.py", 647)))


def test_a_function_changed_in_a_shared_wrapper_is_not_an_object_to_reuse():
    """torch names the code object's guard: the frame is a wrapper several functions come through, not an
    object the user re-creates (the identity advice would send them looking for one)."""
    r = parse_reason("___check_obj_id(L['fn'].__code__, 140680972470432), type=<class 'code'>")
    assert (r.kind, user_expr(r.subject)) == ("function", "fn")
    assert "wrapper several functions come through" in r.suggestion and "recompile_limit" in r.suggestion
    assert "reuse" not in r.suggestion
    assert "function" in KINDS


def test_the_functions_a_guard_diff_shows_changed_are_named_where_torch_describes_them():
    from magi_tui.model.analysis.guards import diff_guards, functions_changed

    for (old, new), want in ((_FUNC_213, [("L['fn']", None, None)]),
                             (_FUNC_211, [("L['func']", "forward (modeling_llama.py:436)",
                                           "forward (modeling_gpt2.py:647)")])):
        d = diff_guards(["TREE_GUARD_MANAGER:", "+- RootGuardManager", old],
                        ["TREE_GUARD_MANAGER:", "+- RootGuardManager", new])
        assert functions_changed(d) == want
    same = diff_guards(["x", _FUNC_213[0]], ["y", _FUNC_213[0]])  # the same function: nothing changed
    assert functions_changed(same) == []
