"""The proving programs of the recompile advice table (``magi_tui/model/analysis/advice.py``).

Each case runs one small program on real torch twice: as it recompiles ("before"), and with the advice
followed ("after"), and counts Dynamo's recompiles both times. Run as a script (``python
tests/advice/cases.py [CASE ...]``, in one process: every case, or the named ones) it prints one JSON object
``{case: {"before": n, "after": m, "advice": [...], "reason": "..."}, "torch": "2.13.0+cpu"}``;
``advice`` is the advice id magi-tui gives the first reason of each recompile of the "before" run (so a
case proves the entry whose text the user sees), ``reason`` torch's first reason, verbatim.

A recompile is counted from Dynamo's own compile records (``torch._dynamo.utils.get_compilation_metrics()``:
one per compile of a frame, resume functions included, whether or not it made a graph), as those with a
``recompile_reason``; ``torch._dynamo.reset()`` and a cleared record list start every run. Every run uses
``backend="eager"``: guards and recompiles are Dynamo's, so no Inductor compile time is spent.

Where the advice names a value (``TORCH_COMPILE_DYNAMIC_SOURCES="G['K']"``), the "after" run takes it from
magi-tui's reading of the "before" run's reason (:func:`magi_tui.model.analysis.guards.parse_reason`), so what is
proven is what the user reads. Importing this module does not import torch (the test module lists the
cases without it).
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: case id -> a function returning ``(before, after)`` run results
CASES: dict[str, Callable[[], tuple[dict, dict]]] = {}

torch: Any = None  # imported by main()


def case(fn: Callable[[], tuple[dict, dict]]) -> Callable[[], tuple[dict, dict]]:
    CASES[fn.__name__] = fn
    return fn


def run(fn: Callable, calls: list, *, dynamic: bool | None = None, dynamo: dict | None = None,
        compiler: dict | None = None, backend: Any = "eager") -> dict:
    """Compile ``fn`` and make ``calls`` (an argument tuple, or a function to run between calls: a setup
    step); the recompiles Dynamo counted and their reasons."""
    from torch._dynamo.utils import clear_compilation_metrics, get_compilation_metrics

    torch._dynamo.reset()
    clear_compilation_metrics()
    with torch._dynamo.config.patch(**(dynamo or {})), torch.compiler.config.patch(**(compiler or {})):
        compiled = torch.compile(fn, backend=backend, dynamic=dynamic)
        for call in calls:
            if callable(call):
                call()
            else:
                compiled(*call)
    reasons = [m.recompile_reason for m in get_compilation_metrics() if m.recompile_reason]
    torch._dynamo.reset()
    return {"recompiles": len(reasons), "reasons": reasons}


def reason_of(result: dict) -> Any:
    """magi-tui's reading of the first reason of the first recompile of a run."""
    from magi_tui.model.analysis.guards import parse_reason

    return parse_reason(result["reasons"][0])


def env_of(result: dict) -> str:
    """The ``TORCH_COMPILE_DYNAMIC_SOURCES`` value the → line of ``result``'s first recompile names."""
    r = reason_of(result)
    assert r.dynamic_source and f'TORCH_COMPILE_DYNAMIC_SOURCES="{r.dynamic_source}"' in (r.suggestion or ""), r
    return r.dynamic_source


def x4() -> Any:
    return torch.ones(4)


# -- sizes ---------------------------------------------------------------------------------------------
def double(x):
    return x * 2


def sizes(mark: str | None = None) -> list:
    out = []
    for n in (4, 8, 16, 32):
        t = torch.ones(n)
        if mark == "dynamic":
            torch._dynamo.mark_dynamic(t, 0)
        elif mark == "unbacked":
            torch._dynamo.decorators.mark_unbacked(t, 0)
        out.append((t,))
    return out


@case
def size_static_mark_dynamic():
    return run(double, sizes(), dynamic=False), run(double, sizes("dynamic"), dynamic=False)


@case
def size_static_dynamic_sources():
    before = run(double, sizes(), dynamic=False)
    return before, run(double, sizes(), dynamic=False, compiler={"dynamic_sources": env_of(before)})


@case
def size_static_drop_dynamic_false():
    return run(double, sizes(), dynamic=False), run(double, sizes())


@case
def size_auto_dynamic_sources():
    before = run(double, sizes())
    return before, run(double, sizes(), compiler={"dynamic_sources": env_of(before)})


@case
def size_auto_mark_dynamic():
    return run(double, sizes()), run(double, sizes("dynamic"))


@case
def shape_range_mark_unbacked():
    def with_one(mark=None):
        out = []
        for n in (4, 8, 1, 16):  # a size of 1 leaves the range [2, oo] a dynamic size is compiled for
            t = torch.ones(n)
            if mark:
                torch._dynamo.decorators.mark_unbacked(t, 0)
            out.append((t,))
        return out
    return run(double, with_one()), run(double, with_one("unbacked"))


# -- ints ----------------------------------------------------------------------------------------------
def times(x, n):
    return x * n


def ints(tensor: bool = False) -> list:
    return [(x4(), torch.tensor(n) if tensor else n) for n in (3, 5, 7, 9)]


@case
def int_static_dynamic_sources():
    before = run(times, ints(), dynamic=False)
    return before, run(times, ints(), dynamic=False, compiler={"dynamic_sources": env_of(before)})


@case
def int_static_tensor():
    return run(times, ints(), dynamic=False), run(times, ints(tensor=True), dynamic=False)


@case
def int_static_drop_dynamic_false():
    return run(times, ints(), dynamic=False), run(times, ints())


@case
def int_auto_dynamic_sources():
    before = run(times, ints())
    return before, run(times, ints(), compiler={"dynamic_sources": env_of(before)})


@case
def int_auto_tensor():
    return run(times, ints()), run(times, ints(tensor=True))


# a global int (``G['K']`` in torch's guards) and an int attribute of a module object (``G['cfg'].K``)
K: Any = 3
cfg = types.ModuleType("cfg")
cfg.K = 3


def times_global(x):
    return x * K


def times_cfg(x):
    return x * cfg.K


def set_global(name: str, value: Any) -> Callable[[], None]:
    def step() -> None:
        globals()[name] = value
    return step


def set_cfg(value: Any) -> Callable[[], None]:
    def step() -> None:
        cfg.K = value
    return step


def global_calls(tensor: bool = False) -> list:
    out: list = []
    for n in (3, 5, 7, 9):
        out += [set_global("K", torch.tensor(n) if tensor else n), (x4(),)]
    return out


@case
def global_int_dynamic_sources():
    before = run(times_global, global_calls())
    return before, run(times_global, global_calls(), compiler={"dynamic_sources": env_of(before)})


@case
def global_int_module_dynamic_sources():
    calls: list = []
    for n in (3, 5, 7, 9):
        calls += [set_cfg(n), (x4(),)]
    before = run(times_cfg, calls)
    return before, run(times_cfg, calls, compiler={"dynamic_sources": env_of(before)})


@case
def global_int_as_argument():
    return run(times_global, global_calls()), run(times, ints())


@case
def global_int_tensor():
    return run(times_global, global_calls()), run(times_global, global_calls(tensor=True))


# an int attribute of an nn.Module
def scaled_module() -> Any:
    class Scaled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.n: Any = 3

        def forward(self, x):
            return x * self.n
    return Scaled()


def module_calls(m: Any, tensor: bool = False) -> list:
    out: list = []
    for n in (3, 5, 7, 9):
        out += [lambda n=n: setattr(m, "n", torch.tensor(n) if tensor else n), (x4(),)]
    return out


@case
def module_int_allow_unspec():
    m = scaled_module()
    return (run(m, module_calls(m)),
            run(m, module_calls(m), dynamo={"allow_unspec_int_on_nn_module": True}))


@case
def module_int_dynamic_sources():
    m = scaled_module()
    before = run(m, module_calls(m))
    return before, run(m, module_calls(m), compiler={"dynamic_sources": env_of(before)})


MODEL: Any = None


def call_model(x):
    return MODEL(x)


@case
def module_int_global_dynamic_sources():
    global MODEL
    MODEL = scaled_module()  # a module the compiled function reaches as a global: ``G['MODEL'].n``
    before = run(call_model, module_calls(MODEL))
    return before, run(call_model, module_calls(MODEL), compiler={"dynamic_sources": env_of(before)})


@case
def module_int_tensor():
    m = scaled_module()
    return run(m, module_calls(m)), run(m, module_calls(m, tensor=True))


# -- floats --------------------------------------------------------------------------------------------
def floats(tensor: bool = False) -> list:
    return [(x4(), torch.tensor(f) if tensor else f) for f in (0.5, 1.5, 2.5, 3.5)]


SPECIALIZED = {"specialize_float": True}


@case
def float_specialized_tensor():
    return run(times, floats(), dynamo=SPECIALIZED), run(times, floats(tensor=True), dynamo=SPECIALIZED)


@case
def float_specialized_specialize_float_false():
    return run(times, floats(), dynamo=SPECIALIZED), run(times, floats(), dynamo={"specialize_float": False})


@case
def float_specialized_dynamic_sources():
    """TORCH_COMPILE_DYNAMIC_SOURCES does not make a float dynamic: the count stays."""
    return (run(times, floats(), dynamo=SPECIALIZED),
            run(times, floats(), dynamo=SPECIALIZED, compiler={"dynamic_sources": "L['n']"}))


@case
def float_static_tensor():
    return run(times, floats(), dynamic=False), run(times, floats(tensor=True), dynamic=False)


@case
def float_static_drop_dynamic_false():
    return run(times, floats(), dynamic=False), run(times, floats())


@case
def float_auto_tensor():
    return run(times, floats()), run(times, floats(tensor=True))


@case
def float_auto_dynamic_true():
    return run(times, floats()), run(times, floats(), dynamic=True)


@case
def float_auto_dynamic_sources():
    return run(times, floats()), run(times, floats(), compiler={"dynamic_sources": "L['n']"})


# -- values computed before a graph break (.item()) ---------------------------------------------------
def times_item(x, t):
    return x * t.item()


CAPTURE = {"capture_scalar_outputs": True}


def items(*values: float) -> list:
    return [(x4(), torch.tensor(v)) for v in values]


@case
def item_float_capture():
    return run(times_item, items(0.5, 1.5, 2.5)), run(times_item, items(0.5, 1.5, 2.5), dynamo=CAPTURE)


@case
def item_int_capture():
    return run(times_item, items(2, 3, 4)), run(times_item, items(2, 3, 4), dynamo=CAPTURE)


@case
def item_float_specialized_capture():
    return (run(times_item, items(0.5, 1.5, 2.5, 3.5), dynamo=SPECIALIZED),
            run(times_item, items(0.5, 1.5, 2.5, 3.5), dynamo={**SPECIALIZED, **CAPTURE}))


# -- expected: nothing removes these -------------------------------------------------------------------
def branch(x, b):
    return x + 1 if b else x - 1


@case
def bool_dynamic_true():
    calls = [(x4(), b) for b in (True, False, True, False)]
    return run(branch, calls), run(branch, calls, dynamic=True)


@case
def bool_training_dynamic_true():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.1))
    calls = [(x4(),), model.eval, (x4(),), model.train, (x4(),)]
    return run(model, calls), run(model, calls, dynamic=True)


def plus_len(x, s):
    return x + len(s)


@case
def constant_dynamic_true():
    calls = [(x4(), "ab"), (x4(), "cd")]
    return run(plus_len, calls), run(plus_len, calls, dynamic=True)


def plus_one(x):
    return x + 1


@case
def rank_dynamic_true():
    calls = [(x4(),), (torch.ones(2, 2),)]
    return run(plus_one, calls), run(plus_one, calls, dynamic=True)


@case
def global_state_grad_mode_dynamic_true():
    calls = [(x4(),), lambda: torch.set_grad_enabled(False), (x4(),), lambda: torch.set_grad_enabled(True)]
    return run(double, calls), run(double, calls, dynamic=True)


@case
def global_state_default_device_dynamic_true():
    calls = [(x4(),), lambda: torch.set_default_device("cpu"), (x4(),), lambda: torch.set_default_device(None)]
    return run(double, calls), run(double, calls, dynamic=True)


@case
def function_dynamic_true():
    """Functions through one decorator's wrapper (as transformers wraps every forward): each compiles its
    own entry of the wrapper frame."""
    from torch._dynamo.utils import clear_compilation_metrics, get_compilation_metrics

    def logged(fn):
        def wrapper(*args):
            return fn(*args)
        return wrapper

    def sin(x):
        return x.sin()

    def cos(x):
        return x.cos()

    def tan(x):
        return x.tan()

    def through(dynamic):
        torch._dynamo.reset()
        clear_compilation_metrics()
        for fn in (sin, cos, tan):
            torch.compile(logged(fn), backend="eager", dynamic=dynamic)(x4())
        reasons = [m.recompile_reason for m in get_compilation_metrics() if m.recompile_reason]
        return {"recompiles": len(reasons), "reasons": reasons}
    return through(None), through(True)


# -- tensors: dtype, requires_grad, device, dispatch keys, layout -------------------------------------
@case
def dtype_cast():
    return (run(plus_one, [(x4(),), (x4().double(),)]),
            run(plus_one, [(x4(),), (x4().double().to(torch.float32),)]))


@case
def requires_grad_detach():
    g = x4().requires_grad_()
    return run(plus_one, [(x4(),), (g,)]), run(plus_one, [(x4(),), (g.detach(),)])


@case
def device_move():
    meta = torch.empty(4, device="meta")
    return (run(plus_one, [(x4(),), (meta,)]),
            run(plus_one, [(x4(),), (torch.empty_like(meta, device="cpu"),)]))


@case
def dispatch_keys_clone_inference_tensor():
    with torch.inference_mode():
        inference = torch.ones(4)
    return run(plus_one, [(x4(),), (inference,)]), run(plus_one, [(x4(),), (inference.clone(),)])


def layouts(contiguous: bool = False) -> list:
    # one size (4, 4), four strides: (4, 1), then views of wider tensors, (8, 1), (16, 1), (32, 1)
    views = [torch.ones(4, 4)] + [torch.ones(4, n)[:, :4] for n in (8, 16, 32)]
    return [(v.contiguous() if contiguous else v,) for v in views]


@case
def stride_static_transposed_contiguous():
    a = torch.ones(4, 4)
    return (run(plus_one, [(a,), (a.t(),)], dynamic=False),
            run(plus_one, [(a,), (a.t().contiguous(),)], dynamic=False))


@case
def stride_static_contiguous():
    return run(plus_one, layouts(), dynamic=False), run(plus_one, layouts(contiguous=True), dynamic=False)


@case
def stride_auto_contiguous():
    return run(plus_one, layouts()), run(plus_one, layouts(contiguous=True))


# -- Python values: types, None, objects, sequences, dicts, aliasing, backends -------------------------
def plus_maybe(x, y):
    return x + 1 if y is None else x + y


@case
def type_tensor_not_none():
    y = torch.ones(4) * 2
    return run(plus_maybe, [(x4(), y), (x4(), None)]), run(plus_maybe, [(x4(), y), (x4(), torch.zeros(4))])


@case
def type_same_sequence_type():
    return run(plus_len, [(x4(), [1, 2]), (x4(), (1, 2))]), run(plus_len, [(x4(), [1, 2]), (x4(), list((1, 2)))])


@case
def none_always_tensor():
    y = torch.ones(4) * 2
    return run(plus_maybe, [(x4(), None), (x4(), y)]), run(plus_maybe, [(x4(), torch.zeros(4)), (x4(), y)])


def apply(x, f):
    return f(x)


@case
def identity_reuse():
    return run(apply, [(x4(), torch.relu), (x4(), torch.sigmoid)]), run(apply, [(x4(), torch.relu)] * 2)


def total(xs):
    return sum(xs)


def total_stacked(t):
    return t.sum(0)


@case
def length_stack():
    lists = [[x4()] * n for n in (2, 3, 4)]
    return run(total, [(xs,) for xs in lists]), run(total_stacked, [(torch.stack(xs),) for xs in lists])


def dict_total(d):
    return sum(d.values())


@case
def length_dict_fixed():
    return (run(dict_total, [({"a": x4()},), ({"a": x4(), "b": x4()},)]),
            run(dict_total, [({"a": x4(), "b": x4()},), ({"a": x4(), "b": x4()},)]))


@case
def dict_keys_same():
    return run(dict_total, [({"a": x4()},), ({"b": x4()},)]), run(dict_total, [({"a": x4()},), ({"a": x4()},)])


@case
def dict_keys_same_order():
    return (run(dict_total, [({"a": x4(), "b": x4()},), ({"b": x4(), "a": x4()},)]),
            run(dict_total, [({"a": x4(), "b": x4()},), ({"a": x4(), "b": x4()},)]))


def get_a(d):
    return d.get("a", 0) + 1


@case
def dict_key_present():
    return run(get_a, [({"a": x4()},), ({"b": x4()},)]), run(get_a, [({"a": x4()},), ({"a": x4()},)])


def add(a, b):
    return a + b


@case
def aliasing_clone():
    a, b = x4(), x4()
    return run(add, [(a, b), (a, a)]), run(add, [(a, b), (a, a.clone())])


@case
def aliasing_is_clone():
    """``a is b``: two arguments that were one object when compiled."""
    a, b = x4(), x4()
    return run(add, [(a, a), (a, b)]), run(add, [(a, a.clone()), (a, b)])


@case
def backend_reuse():
    def be_a(gm, example_inputs):
        return gm.forward

    def be_b(gm, example_inputs):
        return gm.forward

    from torch._dynamo.utils import clear_compilation_metrics, get_compilation_metrics

    def with_backends(*backends):
        torch._dynamo.reset()
        clear_compilation_metrics()
        for be in backends:
            torch.compile(plus_one, backend=be)(x4())
        reasons = [m.recompile_reason for m in get_compilation_metrics() if m.recompile_reason]
        return {"recompiles": len(reasons), "reasons": reasons}
    return with_backends(be_a, be_b), with_backends(be_a, be_a)


def count_check() -> dict:
    """One program counted two ways: compile records with a recompile reason (what every case counts), and
    graphs beyond the first (``counters["stats"]["unique_graphs"]``: one per compile of this graph-break-free
    function)."""
    from torch._dynamo.utils import counters

    counters.clear()
    got = run(double, sizes(), dynamic=False)
    return {"recompiles": got["recompiles"], "graphs": counters["stats"]["unique_graphs"] - 1}


def main(names: list[str]) -> None:
    global torch
    import torch as _torch

    torch = _torch
    from magi_tui.model.analysis.guards import parse_reason

    out: dict[str, Any] = {"torch": torch.__version__, "_count_check": count_check()}
    for name in names or list(CASES):
        before, after = CASES[name]()
        out[name] = {"before": before["recompiles"], "after": after["recompiles"],
                     "advice": [parse_reason(r).advice for r in before["reasons"]],
                     "reason": before["reasons"][0].splitlines()[0] if before["reasons"] else None}
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
