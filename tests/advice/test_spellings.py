"""Recompile reasons in every spelling torch uses read as the right kind and advice (issue 31.5), and the
automatic-dynamic verdict follows the cache entry the call matched. Torch-free: the texts are torch 2.13's
own, recorded by running the programs of ``cases.py`` (and older torch's spellings of the same guards)."""

from __future__ import annotations

import re

import pytest

from magi_tui.model.analysis.advice import TABLE
from magi_tui.model.analysis.checks.results import RecompileInfo as Recompile
from magi_tui.model.analysis.guards import KINDS, advise, parse_reason

_HINT = ("(HINT: torch.compile considers integer attributes of the nn.Module to be static. If you are observing "
         "recompilation, you might want to make this integer dynamic using "
         "torch._dynamo.config.allow_unspec_int_on_nn_module = True, or convert this integer into a tensor.)")
_C = "                                  # return x * n  # tests/advice/cases.py:139 in times"

#: torch's text -> (kind, advice, subject, expected, actual)
SPELLINGS = [
    ("0/0: tensor 'x' size mismatch at index 0. expected 4, actual 8", ("size", "size", "x", "4", "8")),
    ("0/0: tensor 'L['x']' size mismatch at index 0. expected 4, actual 8",  # torch before 2.5: L[…] kept
     ("size", "size", "L['x']", "4", "8")),
    ("0/0: tensor 'x' stride mismatch at index 0. expected 4, actual 8", ("stride", "stride", "x", "4", "8")),
    ("0/0: tensor 'x' dtype mismatch. expected Float, actual Double",
     ("dtype", "dtype", "x", "torch.float32", "torch.float64")),
    ("0/0: tensor 'x' requires_grad mismatch. expected requires_grad=0",
     ("requires_grad", "requires_grad", "x", "False", "True")),
    ("0/0: tensor 'x' rank mismatch. expected 1, actual 2", ("rank", "rank", "x", "1", "2")),
    ("0/0: tensor 'x' dispatch key set mismatch. expected DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, "
     "AutogradCPU), actual DispatchKeySet(Meta, BackendSelect, ADInplaceOrView, AutogradMeta)",
     ("device", "device", "x", "CPU", "Meta")),
    ("0/0: tensor 'x' dispatch key set mismatch. expected DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, "
     "AutogradCPU), actual DispatchKeySet(CPU, BackendSelect, ADInplaceOrView)",
     ("dispatch_key_set", "dispatch_key_set", "x", None, None)),
    ("0/0: Tensor device index mismatch. Expected device index to be 0, actual 1",
     ("device", "device", None, "0", "1")),
    # the stray quote is torch 2.13's (its C++ tensor check)
    ("0/0: expected type of 'y' to be a tensor type, ' but found <class 'NoneType'>",
     ("type", "type", "y", "Tensor", "NoneType")),
    ("0/0: expected type of 'L['grads'][232]' to be a tensor type, ' but found <class 'int'>",
     ("type", "type", "L['grads'][232]", "Tensor", "int")),
    ("0/0: expected type of 'y' to be a tensor type, but found a different type", ("type", "type", "y", "Tensor", None)),
    ("0/0: ___check_type_id(s, 140157062050624), type=<class 'list'>  # return x + len(s)  # cases.py:20 in f "
     "(HINT: type list)", ("type", "type", "s", "list", None)),
    ("0/0: ___check_type_id(self._modules['act'], 94173509723136), type=<class 'torch.nn.modules.activation.ReLU'>"
     "  # return self.act(x)  # m.py:85 in forward (HINT: type ReLU)", ("type", "type", "self._modules['act']", "ReLU", None)),
    ("0/0: TYPE_MISMATCH(L['d'])", ("type", "type", "d", None, None)),
    ("0/0: n == 3" + _C, ("scalar", "int", "n", "3", None)),
    ("0/0: L['n'] == 3", ("scalar", "int", "n", "3", None)),
    ("0/0: G['K'] == 3                                                   # return x * K  # cases.py:6 in f",
     ("scalar", "global_int", "G['K']", "3", None)),
    ("0/0: G['cfg'].K == 3                                               # return x * cfg.K  # c.py:9 in f",
     ("scalar", "global_int", "G['cfg'].K", "3", None)),
    ("0/0: self.n == 3                                              # return x * self.n  # m.py:58 in forward "
     + _HINT, ("scalar", "module_int", "self.n", "3", None)),
    ("0/0: G['MODEL'].n == 3                                             # return x * self.n  # m.py:58 in forward "
     + _HINT, ("scalar", "module_int", "G['MODEL'].n", "3", None)),
    ("0/0: n == 0.5" + _C, ("float", "float", "n", "0.5", None)),
    ("1/0: ___stack1 == 0.5                                         # return x * t.item()  # c.py:7 in resume",
     ("float", "scalar_output", "___stack1", "0.5", None)),
    ("1/0: ___stack1 == 2                                           # return x * t.item()  # c.py:7 in resume",
     ("scalar", "scalar_output", "___stack1", "2", None)),
    ("0/0: b == True" + _C, ("bool", "bool", "b", "True", None)),
    ("0/0: fn._modules['1'].training == True                        # return F.dropout(  # dropout.py:73 in forward",
     ("bool", "bool", "fn._modules['1'].training", "True", None)),
    ("0/0: s == 'ab'" + _C, ("constant", "constant", "s", "'ab'", None)),
    ("0/0: y is None" + _C, ("none", "none", "y", "None", None)),
    ("0/0: L['y'] is not None", ("none", "none", "y", "not None", None)),
    ("0/0: a is b                                              # return a + b  # cases.py:5 in add",
     ("aliasing", "aliasing", "a", None, None)),
    ('0/0: Duplicate tensors found: ["a", "b"]', ("aliasing", "aliasing", "a", None, None)),
    ("0/0: ___check_obj_id(f, 140260568295968), type=<class 'builtin_function_or_method'>  # return f(x)  # c.py:3",
     ("identity", "identity", "f", "builtin_function_or_method", None)),
    ("0/0: ___check_obj_id(L['f'], 140260568295968)", ("identity", "identity", "f", None, None)),
    ("0/0: ___check_obj_id(fn.__code__, 140224758107232), type=<class 'code'>  # return fn(*args)  # c.py:9",
     ("function", "function", "fn", "code", None)),
    ("0/0: Cache line invalidated because L['m'] got deallocated", ("identity", "identity", "m", None, None)),
    ("0/0: len(xs) == 2" + _C, ("length", "length", "xs", "2", None)),
    ("0/0: len(d) != 1", ("length", "length", "d", "1", None)),  # the C++ dict guard: not the 1 compiled for
    ("0/0: IndexError on L['xs'][2]", ("length", "length", "xs", "more than 2 items", None)),
    ("0/0: list(dict.keys(d))[0] == 'a'" + _C, ("dict_keys", "dict_keys", "d", "key 'a' at position 0", None)),
    ("0/0: KeyError on d['a']", ("dict_keys", "dict_keys", "d", "key 'a'", None)),
    ("0/0: not ___dict_contains('n', G['cfg'].__dict__)" + _C,
     ("dict_keys", "dict_keys", "G['cfg'].__dict__", "key 'n' absent", None)),
    ("0/0: GLOBAL_STATE changed: grad_mode ", ("global_state", "global_state", "grad_mode", None, None)),
    ("0/0: GLOBAL_STATE changed: autocast(cpu)_enabled ",
     ("global_state", "global_state", "autocast(cpu)_enabled", None, None)),
    ("0/0: GLOBAL_STATE changed: deterministic_algorithms ",
     ("global_state", "global_state", "deterministic_algorithms", None, None)),
    ("0/0: ___check_torch_function_mode_stack()",
     ("global_state", "global_state", "torch_function_mode_stack", None, None)),
    ("0/0: ___is_grad_enabled()", ("global_state", "global_state", "grad_mode", None, None)),
    ("0/0: utils_device.CURRENT_DEVICE == None", ("global_state", "global_state", "default device", "None", None)),
    ("0/1: 2 <= x.size()[0]  # return x * 2  # cases.py:48 in f (user code shown is first use of this value--the "
     "guard itself is not due user code but due to 0/1 specialization in the framework; to avoid specialization "
     "try torch._dynamo.decorators.mark_unbacked(tensor, dim))", ("shape_range", "shape_range", None, None, None)),
    ("0/0: BACKEND_MATCH failure: torch.compile detected different backend callables. Cached backend: "
     "_TorchCompileWrapper(compiler='be', dynamic=None) (id=0x7f78b616d5d0).", ("backend", "backend", None, None, None)),
]


@pytest.mark.parametrize("text, want", SPELLINGS, ids=[t[:60] for t, _ in SPELLINGS])
def test_each_spelling_reads_as_its_kind_and_advice(text, want):
    r = parse_reason(text)
    kind, advice, subject, expected, actual = want
    assert (r.kind, r.advice) == (kind, advice)
    if subject is not None:
        assert r.subject == subject
    if expected is not None or actual is not None:
        assert (r.expected, r.actual) == (expected, actual)
    assert r.suggestion and r.advice in TABLE


def test_torchs_hint_is_shown_verbatim_and_named_as_torchs():
    r = parse_reason(SPELLINGS[19][0])  # self.n == 3 … (HINT: …)
    assert r.hint == _HINT[len("(HINT: "):-1]
    assert f"Torch's HINT: {r.hint}" in r.suggestion and "(HINT:" not in r.guard
    assert 'TORCH_COMPILE_DYNAMIC_SOURCES="L[\'self\'].n"' in r.suggestion
    t = parse_reason(SPELLINGS[12][0])
    assert t.hint == "type list" and t.suggestion.endswith("Torch's HINT: type list")
    # without torch's hint, a submodule's int attribute gets the same advice in the table's own words; a bare
    # ``self.n`` (maybe a plain object's: dynamic after one recompile) the int's
    sub = parse_reason("0/0: self._modules['block'].n == 3")
    assert sub.advice == "module_int" and "allow_unspec_int_on_nn_module = True" in sub.suggestion
    assert parse_reason("0/0: self.n == 3").advice == "int"


def test_no_dynamic_source_is_advised_for_a_float_or_a_stride():
    for text in ("0/0: n == 0.5", "0/0: G['F'] == 0.5", "0/0: tensor 'x' stride mismatch at index 0. expected 4, actual 8"):
        r = parse_reason(text)
        assert r.dynamic_source is None and "TORCH_COMPILE_DYNAMIC_SOURCES=\"" not in r.suggestion, r
    assert "specialize_float" in parse_reason("0/0: n == 0.5").suggestion


_SENTENCE = re.compile(r"(?<=[.;:])\s+")


def _sentences(text: str) -> list[str]:
    return [s.strip(" .;:") for s in _SENTENCE.split(text) if s.strip(" .;:")]


def _all_suggestions() -> list[str]:
    out = [parse_reason(t).suggestion or "" for t, _ in SPELLINGS]
    for aid in ("size_automatic", "int_automatic", "float_automatic", "stride_automatic"):
        for sources in (["L['x']:0"], ["L['kwargs']['attention_mask']:1", "L['kwargs']['input_ids']:1"]):
            out.append(advise(aid, "x", "4", "8", 0, sources=sources))
    return out


def test_no_sentence_twice_and_no_dangling_punctuation():
    """Issue 31.6: a size suggestion ended with a dangling ';' and said "Torch's automatic dynamic shapes…"
    twice."""
    for text in _all_suggestions():
        assert text and text[-1] not in ";,: " and ";." not in text and ". ." not in text, text
        parts = _sentences(text)
        assert len(parts) == len(set(parts)), text
        assert text.count("automatic dynamic shapes") <= 1, text


def test_every_table_entry_renders():
    for aid in TABLE:
        assert advise(aid, "x", "1", "2", 0, extra="a and b", hint="h", sources=["L['x']:0"])


def _recompile(*texts: str, made: list[str], refused: bool = False) -> Recompile:
    return Recompile("f (p.py:1)", "f", "0/2", [parse_reason(t) for t in texts], made_dynamic=made, refused=refused)


def test_automatic_dynamic_follows_the_cache_entry_the_call_matched():
    size = "0/1: tensor 'x' size mismatch at index 0. expected 4, actual 8"
    other = "0/0: ___check_something_new(L['x'])"
    assert parse_reason(other).kind == "other"
    # torch lists the most recent entry first: its reason decides; another entry's unread reason does not
    assert _recompile(size, other, made=["L['x'].size()[0]"]).automatic_dynamic
    assert not _recompile(other, size, made=["L['x'].size()[0]"]).automatic_dynamic
    assert not _recompile(size, made=[]).automatic_dynamic             # nothing made dynamic: a static compile
    assert not _recompile(size, made=["L['x'].size()[0]"], refused=True).automatic_dynamic
    # what this compile made dynamic must be what the reason is about: a global int that recompiles on every
    # value is no automatic dynamic because another input's size became dynamic in the same compile
    assert not _recompile(size, made=["L['y'].size()[0]"]).automatic_dynamic
    assert not _recompile("0/0: G['K'] == 3", made=["L['x'].size()[0]"]).automatic_dynamic
    assert _recompile("0/0: G['K'] == 3", made=["G['K']"]).automatic_dynamic
    stride = "0/0: tensor 'x' stride mismatch at index 0. expected 4, actual 8"
    assert _recompile(stride, made=["L['x'].stride()[0]"]).automatic_dynamic
    assert "other" in KINDS
