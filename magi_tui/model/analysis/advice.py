"""Recompile advice: the one table every "→" line of a recompile comes from, each entry proven on real torch.

An entry names the advice (``id``), the reason kind it explains (:data:`magi_tui.model.analysis.guards.KINDS`), its
text (a :meth:`str.format` template; the fields are filled by :func:`render`), and its proof: the ids of
the cases in ``tests/advice/cases.py`` that run a real program before and after following the advice on
the pinned torch, counting Dynamo's recompiles (``proofs``: fewer after; ``stays``: the same after, for
"expected, not a problem" entries, where nothing removes the recompile, and for claims that a setting
does *not* help), and the torch versions those proofs ran on (``torch``). ``tests/advice/`` fails when an
entry has no proof, a proof does not hold, or a traced run's → line is not this table's text.

Pure data and string formatting (no torch, no regular expressions): imported with the guard grammar
(:mod:`magi_tui.model.analysis.guards`), where a recompile is read.
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct

#: the torch versions every proof below ran on (tests/advice/: the pinned torch)
PROVEN_ON = ("2.13.0",)


class Advice(Struct, frozen=True):
    """One kind of → line."""

    id: str
    kind: str                       # the reason kind it explains (guards.KINDS)
    text: str                       # a str.format template (fields: :func:`render`)
    proofs: tuple[str, ...] = ()    # cases where following it leaves fewer recompiles
    stays: tuple[str, ...] = ()     # cases where the count stays (expected / "does not apply" claims)
    expected: bool = False          # expected, not a problem: nothing to fix
    torch: tuple[str, ...] = PROVEN_ON

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "text": self.text, "proofs": list(self.proofs),
                "stays": list(self.stays), "expected": self.expected, "torch": list(self.torch)}


_NORMAL = "new {values} run without compiling, the normal path"

TABLE: dict[str, Advice] = {a.id: a for a in (
    Advice("size", "size",
           "dim {index} of {who} changed size ({expected} -> {actual}). To compile it dynamic from the start: "
           "{mark} before the call{or_env}. Otherwise torch's automatic dynamic shapes make it dynamic after "
           "one recompile, unless the compile is static (dynamic=False), where every new size recompiles",
           proofs=("size_static_mark_dynamic", "size_static_dynamic_sources", "size_static_drop_dynamic_false")),
    Advice("size_automatic", "size",
           "dim {index} of {who} changed size ({expected} -> {actual}) and torch's automatic dynamic shapes "
           "made it dynamic in this recompile ({n} source(s) in all): " + _NORMAL.format(values="sizes")
           + ". To skip even this recompile, compile dynamic from the start: {start}",
           proofs=("size_auto_dynamic_sources", "size_auto_mark_dynamic")),
    Advice("int", "scalar",
           "the int {u} was compiled as the constant {expected}. Torch's automatic dynamic shapes make it "
           "dynamic after one recompile, unless the compile is static (dynamic=False), where every new value "
           "recompiles. To compile it dynamic from the start: {start}; or pass it as a 0-d tensor "
           "(torch.tensor({u}))",
           proofs=("int_static_dynamic_sources", "int_static_tensor", "int_static_drop_dynamic_false")),
    Advice("int_automatic", "scalar",
           "torch's automatic dynamic shapes made the int {u} dynamic in this recompile: "
           + _NORMAL.format(values="values") + ". To skip even this recompile: {start}, or pass it as a 0-d "
           "tensor (torch.tensor({u}))",
           proofs=("int_auto_dynamic_sources", "int_auto_tensor")),
    Advice("global_int", "scalar",
           "the global {name} ({subject} in torch's guards) is an int, and torch compiles an int global as a "
           "constant: every new value recompiles, not once and then dynamic. Make it dynamic: "
           "TORCH_COMPILE_DYNAMIC_SOURCES=\"{subject}\"; or pass it to the function as an argument (dynamic "
           "after one recompile); or make it a 0-d tensor (torch.tensor({name}))",
           proofs=("global_int_dynamic_sources", "global_int_module_dynamic_sources", "global_int_as_argument",
                   "global_int_tensor")),
    Advice("module_int", "scalar",
           "{u} is an int attribute of an nn.Module, and torch compiles those as constants: every new value "
           "recompiles, not once and then dynamic. {remedy}",
           proofs=("module_int_allow_unspec", "module_int_dynamic_sources", "module_int_global_dynamic_sources",
                   "module_int_tensor")),
    Advice("float", "float",
           "the float {u} was compiled as the constant {expected}. Pass it as a 0-d tensor (torch.tensor({u})): "
           "one compile for every value. Otherwise torch makes it dynamic after one recompile with "
           "torch._dynamo.config.specialize_float = False (torch 2.13's default), unless the compile is static "
           "(dynamic=False); TORCH_COMPILE_DYNAMIC_SOURCES does not apply to floats",
           proofs=("float_specialized_tensor", "float_specialized_specialize_float_false", "float_static_tensor",
                   "float_static_drop_dynamic_false"),
           stays=("float_specialized_dynamic_sources",)),
    Advice("float_automatic", "float",
           "torch's automatic dynamic shapes made the float {u} dynamic in this recompile: "
           + _NORMAL.format(values="values") + ". To skip even this recompile: pass it as a 0-d tensor "
           "(torch.tensor({u})) or compile with dynamic=True (TORCH_COMPILE_DYNAMIC_SOURCES does not apply to "
           "floats)",
           proofs=("float_auto_tensor", "float_auto_dynamic_true"), stays=("float_auto_dynamic_sources",)),
    Advice("scalar_output", "float",
           "{what} computed before a graph break (usually .item()) was compiled as {expected}: set "
           "torch._dynamo.config.capture_scalar_outputs = True to keep .item() in the graph (no break, no "
           "guard on its value)",
           proofs=("item_float_capture", "item_int_capture", "item_float_specialized_capture")),
    Advice("bool", "bool",
           "{u} is a Python bool: each value compiles its own graph (at most two); expected, not a problem",
           stays=("bool_dynamic_true", "bool_training_dynamic_true"), expected=True),
    Advice("constant", "constant",
           "{u} was compiled as the constant {expected}: each new value compiles its own graph (no dynamic "
           "setting applies); expected while the values are few",
           stays=("constant_dynamic_true",), expected=True),
    Advice("dtype", "dtype",
           "{u} arrived as {actual} but was compiled for {expected}: cast it before the call "
           "({u}.to({expected})) to reuse the compiled graph, or expect one compile per dtype",
           proofs=("dtype_cast",)),
    Advice("requires_grad", "requires_grad",
           "requires_grad of {u} changed between calls (compiled for {expected}): pass it the same way every "
           "call ({u}.detach() where it needs no gradient), or expect one compile each",
           proofs=("requires_grad_detach",)),
    Advice("type", "type",
           "{u} arrived as {actual} but was compiled for {expected}: each type compiles its own graph; pass "
           "the same type on every call{example}",
           proofs=("type_tensor_not_none", "type_same_sequence_type")),
    Advice("none", "none",
           "{u} was None on one call and not on another: each compiles its own graph; pass the same kind of "
           "value on every call (a tensor, not sometimes None) to compile once",
           proofs=("none_always_tensor",)),
    Advice("stride", "stride",
           "the memory layout of {u} changed (stride of dim {index}: {expected} -> {actual}; a transposed or "
           "sliced view): pass {u}.contiguous() to compile one layout for all of them",
           proofs=("stride_static_contiguous", "stride_static_transposed_contiguous")),
    Advice("stride_automatic", "stride",
           "torch's automatic dynamic shapes made a stride of {u} dynamic in this recompile (dim {index}: "
           "{expected} -> {actual}): views of this layout with other strides run without compiling, the normal "
           "path (another layout, a transposed one, still compiles once). To skip these recompiles: pass "
           "{u}.contiguous()",
           proofs=("stride_auto_contiguous",)),
    Advice("identity", "identity",
           "{u} is a different object than when compiled{was}: create it once and reuse it (each distinct "
           "object compiles its own graph)",
           proofs=("identity_reuse",)),
    Advice("function", "function",
           "{u} is a different function than when compiled{which}: this frame is a wrapper several functions "
           "come through (a decorator's inner function; transformers wraps every model's forward so), and "
           "each compiles its own entry of it, all against its one recompile limit "
           "(torch._dynamo.config.recompile_limit, 8 by default). Expected when a process compiles several "
           "models or functions through one decorator; with more of them than the limit, raise it",
           stays=("function_dynamic_true",), expected=True),
    Advice("length", "length",
           "the length of {u} changed (compiled for {expected}): pass the same number of items on every call, "
           "or stack them into one tensor (whose size torch can make dynamic)",
           proofs=("length_stack", "length_dict_fixed")),
    Advice("dict_keys", "dict_keys",
           "the keys of {u} changed (compiled for {expected}): pass the same keys, in the same order, on every "
           "call",
           proofs=("dict_keys_same", "dict_keys_same_order", "dict_key_present")),
    Advice("global_state", "global_state",
           "global state changed between calls ({what}): each state compiles its own graph; expected, not a "
           "problem while the states are few (training with grad and evaluating under torch.no_grad() are two)",
           stays=("global_state_grad_mode_dynamic_true", "global_state_default_device_dynamic_true"),
           expected=True),
    Advice("device", "device",
           "{u} is on another device ({actual}; compiled for {expected}): move it before the call, or expect "
           "one compile per device",
           proofs=("device_move",)),
    Advice("dispatch_key_set", "dispatch_key_set",
           "{u} changed its dispatch keys ({change}: an inference-mode tensor, a tensor subclass, "
           "functorch or autocast wrapping): pass the same kind of tensor on every call (an inference tensor: "
           "{u}.clone() outside torch.inference_mode())",
           proofs=("dispatch_keys_clone_inference_tensor",)),
    Advice("rank", "rank",
           "{u} arrived with {actual} dimension(s) (compiled for {expected}): each rank compiles its own graph; "
           "expected, no dynamic setting merges ranks",
           stays=("rank_dynamic_true",), expected=True),
    Advice("aliasing", "aliasing",
           "{who} are the same object on this call but were distinct when compiled (or the other way round): "
           "pass a copy ({last}.clone()) to keep them distinct, or expect one compile per aliasing pattern",
           proofs=("aliasing_clone", "aliasing_is_clone")),
    Advice("shape_range", "shape_range",
           "a dynamic dimension left the range the graph was compiled for ({u}): a size of 0 or 1 is "
           "specialised; torch._dynamo.decorators.mark_unbacked(tensor, dim) before the call avoids that",
           proofs=("shape_range_mark_unbacked",)),
    Advice("backend", "backend",
           "a different backend callable than when compiled: create the backend once (or functools.partial) "
           "and reuse it",
           proofs=("backend_reuse",)),
)}


#: the parts of a → line that depend on what torch recorded, filled into the templates above by
#: :func:`magi_tui.model.analysis.guards.advise`
CLAUSES = {
    "or_env": ' or TORCH_COMPILE_DYNAMIC_SOURCES="{env}"',
    "env": 'TORCH_COMPILE_DYNAMIC_SOURCES="{env}"',
    "dynamic_true": "compile with dynamic=True",
    "or_mark": " (or {mark} before the call)",
    "mark": "{mark} before the call",
    "hint": "Torch's HINT: {hint}",
    "module_int_remedy": "Set torch._dynamo.config.allow_unspec_int_on_nn_module = True (then it is dynamic after "
                         "one recompile), or make it a tensor",
    "module_int_env": 'Or TORCH_COMPILE_DYNAMIC_SOURCES="{env}": dynamic from the start',
    "not_none": " (a tensor, not sometimes None)",
    "was": " (compiled for a {expected})",
    "which": " (was {older}, now {newer})",
}


def render(advice_id: str, **fields: Any) -> str:
    """The → line of ``advice_id`` with its fields filled."""
    return TABLE[advice_id].text.format(**fields)
