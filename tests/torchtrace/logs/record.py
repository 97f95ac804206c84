"""Re-records the small TORCH_TRACE logs beside this file from real programs (torch 2.13, CPU).

``python tests/torchtrace/logs/record.py [name ...]``: each program runs in a fresh process with
``TORCH_TRACE`` set, and its log is copied here as ``<name>.log``. The logs are committed: tests read
them without torch, and compare what we report with what tlparse reports on the same file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent

PROGRAMS = {
    # torch._dynamo.reset() between two functions: the second compile reuses compile id 0/0 (issue 19.4);
    # a recompile (dtype), a graph break, aot_eager's lazy backward
    "jit_reset": '''
        import torch
        import torch._dynamo

        def first(x):
            return torch.sin(x) + 1

        def second(x):
            y = torch.cos(x) * 2
            print("break")
            return y + 1

        c1 = torch.compile(first, backend="eager")
        c1(torch.ones(3))
        c1(torch.ones(3, dtype=torch.float64))
        torch._dynamo.reset()
        c2 = torch.compile(second, backend="aot_eager")
        x = torch.ones(3, requires_grad=True)
        c2(x).sum().backward()
    ''',
    # torch.export's draft_export under TORCH_DTRACE (torch's verbose trace, what `tlparse --export` reads) of
    # data-dependent code: the issues it reports (a guard on a data-dependent value, added during export)
    "export": '''
        import torch

        class DataDependent(torch.nn.Module):
            def forward(self, x, n):
                k = n.item()
                if k > 2:
                    return x[:k] * 2
                return x

        ep = torch.export.draft_export(DataDependent(), (torch.ones(6), torch.tensor(4)))
        print(len(ep._report.failures), "issue(s)")
    ''',
    # AOTInductor with provenance tracking: kernels -> FX nodes, written outside any compile id
    "aot_provenance": '''
        import os
        import tempfile
        import torch
        import torch._inductor.config as cfg

        cfg.trace.provenance_tracking_level = 1

        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(4, 4)

            def forward(self, x):
                return torch.relu(self.lin(x)) + 1

        with torch.no_grad():
            ep = torch.export.export(M(), (torch.randn(2, 4),))
            torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(tempfile.mkdtemp(), "m.pt2"))
    ''',
    # compiled autograd (issue 33.4): torch._dynamo.config.compiled_autograd and a backward inside a compiled
    # step; the backward is a graph break (a resume frame), each backward a compiled-autograd graph (!0/1/0,
    # !1/3/0: the second differs, the grads now accumulate). torch's counters: compiled_autograd.captures 2,
    # stats.unique_graphs 3, one graph break (Tensor.backward)
    "compiled_autograd": """
        import torch
        from torch._dynamo.utils import counters

        torch._dynamo.config.compiled_autograd = True


        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(4, 4)

            def forward(self, x):
                return torch.relu(self.lin(x)).sum()


        m = M()


        @torch.compile(backend="aot_eager")
        def step(x):
            loss = m(x)
            loss.backward()
            return loss


        for _ in range(2):
            step(torch.randn(2, 4))
        print(dict(counters["compiled_autograd"]), dict(counters["stats"]))
    """,
    # compiled autograd with a fullgraph compiler over a hook that breaks the graph: Dynamo raises Unsupported
    # inside the compiled-autograd graph (!0/1/0) and backward() raises; tlparse lists it as a failure
    "compiled_autograd_fail": """
        import torch
        from torch._dynamo import compiled_autograd
        from torch._dynamo.utils import counters


        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(4, 4)

            def forward(self, x):
                return torch.relu(self.lin(x)).sum()


        m = M()


        def hook(grad):
            torch._dynamo.graph_break()
            return grad * 2


        m.lin.weight.register_hook(hook)
        loss = torch.compile(m, backend="aot_eager")(torch.randn(2, 4))
        try:
            with compiled_autograd._enable(torch.compile(backend="aot_eager", fullgraph=True)):
                loss.backward()
        except Exception as e:
            print("raised", type(e).__name__)
        print(dict(counters["compiled_autograd"]), dict(counters["stats"]))
    """,
    # one function compiled, torch._dynamo.reset(), compiled again (issue 33.9): two frames of one label,
    # compile ids 0/0 and (after the reset) 0/0 again
    "reset_same_function": """
        import torch
        import torch._dynamo


        def f(x):
            return torch.sin(x) + 1


        torch.compile(f, backend="aot_eager")(torch.ones(3))
        torch._dynamo.reset()
        torch.compile(f, backend="aot_eager")(torch.ones(3))
    """,
    # issue 33.6: a module compiled by Inductor (frames `forward` and its resume after a graph break, a
    # forward and a backward graph), run twice in fresh processes with one TORCHINDUCTOR_CACHE_DIR: the
    # second run (`warm_cache_warm.log`) loads from the AOT autograd / FX graph caches. Each run prints
    # torch's counters (kept beside the log as `<log>.counters.json`)
    "warm_cache": """
        import json

        import torch
        from torch._dynamo.utils import counters


        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(4, 4)

            def forward(self, x):
                y = torch.relu(self.lin(x))
                print("break")
                return y * 2


        torch.manual_seed(0)
        net = torch.compile(Net())
        net(torch.randn(2, 4)).sum().backward()
        net(torch.randn(2, 4)).sum().backward()
        print("COUNTERS " + json.dumps({k: dict(v) for k, v in counters.items()}, sort_keys=True))
    """,
    # issue 33.6, recorded with torch 2.4.0 (the oldest torch the tracer claims: run this file with that torch's
    # python), whose dynamo_start stacks end at torch's wrappers (convert_frame's `__call__`), not at the
    # compiled frame: `Module.compile()` (Dynamo compiles `_call_impl`, which redirects to `forward`) and
    # `torch.compile(module)` of a second instance (a recompile of the same `forward`), a graph break on
    # `print` (restarts, a resume frame)
    "module_call_2_4": """
        import json

        import torch
        from torch._dynamo.utils import counters


        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(4, 4)

            def forward(self, x):
                y = torch.relu(self.lin(x))
                print("break")
                return y * 2


        torch.manual_seed(0)
        a = Net()
        a.compile(backend="eager")
        a(torch.randn(2, 4))
        b = torch.compile(Net(), backend="eager")
        b(torch.randn(2, 4))
        print("torch", torch.__version__)
        print("COUNTERS " + json.dumps({k: dict(v) for k, v in counters.items()}, sort_keys=True))
    """,
}
#: programs run twice in fresh processes sharing one TORCHINDUCTOR_CACHE_DIR: ``<name>_cold.log``, ``<name>_warm.log``
TWICE = frozenset({"warm_cache"})


def record(name: str) -> Path:
    with tempfile.TemporaryDirectory() as d:
        prog = Path(d) / f"{name}.py"
        prog.write_text(textwrap.dedent(PROGRAMS[name]))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_LOGS", "TORCH_COMPILE", "TORCHDYNAMO"))}
        if name in TWICE:
            env["TORCHINDUCTOR_CACHE_DIR"] = str(Path(d) / "inductor_cache")
            for run in ("cold", "warm"):
                env["TORCH_TRACE"] = str(Path(d) / run)
                proc = subprocess.run([sys.executable, str(prog)], cwd=d, env=env, check=True, capture_output=True,
                                      text=True)
                (log,) = sorted((Path(d) / run).glob("*.log"))
                out = HERE / f"{name}_{run}.log"
                shutil.copyfile(log, out)
                line = next(x for x in proc.stdout.splitlines() if x.startswith("COUNTERS "))
                (HERE / f"{name}_{run}.log.counters.json").write_text(line.removeprefix("COUNTERS ") + "\n")
            return out
        env["TORCH_DTRACE" if name == "export" else "TORCH_TRACE"] = str(Path(d) / "trace")
        proc = subprocess.run([sys.executable, str(prog)], cwd=d, env=env, check=True, capture_output=True, text=True)
        print(proc.stdout, end="")
        logs = sorted((Path(d) / "trace").glob("*.log"))
        assert len(logs) == 1, logs
        out = HERE / f"{name}.log"
        shutil.copyfile(logs[0], out)
        line = next((x for x in proc.stdout.splitlines() if x.startswith("COUNTERS ")), None)
        if line is not None:  # torch's counters, as the program printed them
            (HERE / f"{name}.log.counters.json").write_text(line.removeprefix("COUNTERS ") + "\n")
        return out


if __name__ == "__main__":
    for n in sys.argv[1:] or list(PROGRAMS):
        out = record(n)
        print(out, out.stat().st_size)
