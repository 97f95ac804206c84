"""Record the recompile reasons torch 2.13 writes, one real program per guard family (re-run to refresh
``reasons_torch.json``): ``python tests/explain/record_reasons.py > tests/explain/reasons_torch.json``.

Each case compiles a small function twice with an input that fails one kind of guard; the reasons are
what torch's ``get_guard_fail_reason`` returned (``torch._dynamo.guards.guard_failures``), word for word.
"""

from __future__ import annotations

import json
import sys

import torch
import torch._dynamo
from torch._dynamo import guards as dyn_guards


def reasons_of(fn, calls, **compile_kw):
    torch._dynamo.reset()
    dyn_guards.guard_failures.clear()
    c = torch.compile(fn, backend="eager", **compile_kw)
    for args, kwargs in calls:
        c(*args, **kwargs)
    return [r for rs in dyn_guards.guard_failures.values() for r in rs]


class M(torch.nn.Module):
    def __init__(self, act):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.act = act

    def forward(self, x):
        return self.act(self.lin(x))


def main() -> None:
    out: dict[str, list[str]] = {}
    x4, x8 = torch.randn(4), torch.randn(8)
    out["size"] = reasons_of(lambda x: x * 2, [((x4,), {}), ((x8,), {})], dynamic=False)
    out["kwargs_size"] = reasons_of(lambda **kw: kw["input_ids"] + 1,
                                    [((), {"input_ids": torch.ones(2, 8)}), ((), {"input_ids": torch.ones(2, 16)})],
                                    dynamic=False)
    out["dtype"] = reasons_of(lambda x: x + 1, [((x4,), {}), ((x4.double(),), {})])
    out["requires_grad"] = reasons_of(lambda x: x + 1, [((x4,), {}), ((x4.clone().requires_grad_(),), {})])
    out["rank"] = reasons_of(lambda x: x + 1, [((x4,), {}), ((torch.randn(2, 2),), {})])
    out["stride"] = reasons_of(lambda x: x + 1, [((torch.randn(4, 4),), {}), ((torch.randn(4, 4).t(),), {})],
                               dynamic=False)
    out["int_scalar"] = reasons_of(lambda x, n: x * n, [((x4, 3), {}), ((x4, 5), {})])
    out["float_scalar"] = reasons_of(lambda x, f: x * f, [((x4, 0.5), {}), ((x4, 1.5), {})])
    out["bool_scalar"] = reasons_of(lambda x, b: x + 1 if b else x - 1, [((x4, True), {}), ((x4, False), {})])
    out["none"] = reasons_of(lambda x, y: x if y is None else x + y, [((x4, None), {}), ((x4, x4), {})])
    out["list_length"] = reasons_of(lambda xs: sum(xs), [(([x4, x4],), {}), (([x4, x4, x4],), {})])
    out["dict_keys"] = reasons_of(lambda d: sum(d.values()), [(({"a": x4},), {}), (({"a": x4, "b": x4},), {})])
    out["type"] = reasons_of(lambda x, s: x + len(s), [((x4, "ab"), {}), ((x4, (1, 2)), {})])
    out["obj_id_fn"] = reasons_of(lambda x, f: f(x), [((x4, torch.relu), {}), ((x4, torch.sigmoid), {})])
    m1, m2 = M(torch.nn.ReLU()), M(torch.nn.GELU())
    out["module_swap"] = reasons_of(lambda m, x: m(x), [((m1, x4), {}), ((m2, x4), {})])
    m3 = M(torch.nn.ReLU())

    def train_then_eval(mod, x):
        return mod(x)
    torch._dynamo.reset()
    dyn_guards.guard_failures.clear()
    c = torch.compile(train_then_eval, backend="eager")
    c(m3, x4)
    m3.eval()
    c(m3, x4)
    out["training"] = [r for rs in dyn_guards.guard_failures.values() for r in rs]
    m4 = M(torch.nn.ReLU())
    cm = torch.compile(m4, backend="eager", dynamic=False)
    torch._dynamo.reset()
    dyn_guards.guard_failures.clear()
    cm(torch.randn(2, 4))
    cm(torch.randn(3, 4))
    out["module_forward"] = [r for rs in dyn_guards.guard_failures.values() for r in rs]
    out["automatic_dynamic"] = reasons_of(lambda x: x * 2, [((torch.randn(n),), {}) for n in (4, 8, 16)])
    out["dynamic_range"] = reasons_of(lambda x: x * 2, [((torch.randn(n),), {}) for n in (4, 8, 1)])
    out["grad_mode"] = []
    torch._dynamo.reset()
    dyn_guards.guard_failures.clear()
    c = torch.compile(lambda x: x * 2, backend="eager")
    c(x4)
    with torch.no_grad():
        c(x4)
    out["grad_mode"] = [r for rs in dyn_guards.guard_failures.values() for r in rs]
    g = {"k": 1}

    def uses_global(x):
        return x * g["k"]
    torch._dynamo.reset()
    dyn_guards.guard_failures.clear()
    c = torch.compile(uses_global, backend="eager")
    c(x4)
    g["k"] = 2
    c(x4)
    out["dict_value"] = [r for rs in dyn_guards.guard_failures.values() for r in rs]
    out["float_item"] = reasons_of(lambda x, t: x * t.item(), [((x4, torch.tensor(0.5)), {}),
                                                                ((x4, torch.tensor(1.5)), {})])
    out["aliasing"] = reasons_of(lambda a, b: a + b, [((x4, x4.clone()), {}), ((x4, x4), {})])
    json.dump({"torch": torch.__version__, "reasons": out}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
