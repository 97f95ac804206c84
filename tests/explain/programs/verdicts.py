"""Programs whose verdict the tool must get right (issue 31), one per VERDICT_MODE:

* ``limit_raise``: ``fail_on_recompile_limit_hit``: torch raises FailOnRecompileLimitHit into the program;
* ``crash``: a compiled graph (Inductor, with SDPA's CPU kernel) that crashes at run time: an index out of
  bounds inside the generated kernel on the second call;
* ``interrupt``: a backend that takes long, stopped by Ctrl-C (the test sends SIGINT) while it compiles;
* ``outside``: compiles fine, then the program's own code raises (not torch.compile's doing);
* ``fullgraph``: ``fullgraph=True`` and a graph break: torch raises Unsupported into the program;
* ``backend_raise``: a backend that rejects the graph (BackendCompilerFailed reaches the program);
* ``lazy``: a backend that does its work at the first call (the first call's time is not run time);
* ``ddp_outer`` / ``ddp_inner``: ``torch.compile(DDP(model))`` (compiles nothing on torch 2.13) and
  ``DDP(torch.compile(model))`` (the proven fix), one gloo rank.
"""

import os
import sys
import time

import torch

MODE = os.environ.get("VERDICT_MODE", "crash")

if MODE == "limit_raise":
    torch._dynamo.config.fail_on_recompile_limit_hit = True
    torch._dynamo.config.recompile_limit = 2

    @torch.compile(backend="eager", dynamic=False)
    def scale(x):
        return x * 2 + 1

    for n in range(1, 6):
        scale(torch.randn(n))  # the third size raises

elif MODE == "crash":
    import torch.nn.functional as F

    @torch.compile
    def attend(q, idx):
        return F.scaled_dot_product_attention(q, q, q)[0, 0, idx] * 2

    q = torch.randn(2, 4, 16, 8)
    print(attend(q, torch.tensor([1, 2])).sum())
    print(attend(q, torch.tensor([1, 200])).sum())  # out of bounds inside the compiled kernel

elif MODE == "interrupt":
    def slow_backend(gm, example_inputs):
        print("COMPILING", flush=True)
        time.sleep(120)
        return gm

    @torch.compile(backend=slow_backend)
    def f(x):
        return torch.sin(x) + 1

    f(torch.randn(4))

elif MODE == "outside":
    @torch.compile(backend="eager")
    def f(x):
        return x + 1

    f(torch.randn(3))
    raise ValueError("the program's own bug, after the compile")

elif MODE == "fullgraph":
    @torch.compile(fullgraph=True, backend="eager")
    def f(x):
        print("a graph break")
        return x + 1

    f(torch.randn(3))

elif MODE == "backend_raise":
    def broken_backend(gm, example_inputs):
        raise RuntimeError("the backend rejects this graph")

    @torch.compile(backend=broken_backend)
    def rejected(x):
        return torch.sin(x) * 3

    rejected(torch.randn(4))

elif MODE == "lazy":
    def lazy_backend(gm, example_inputs):
        state = {"ready": False}

        def run(*args):
            if not state["ready"]:  # the backend's real work, done at the first call (as piecewise backends do)
                time.sleep(0.5)
                state["ready"] = True
            return gm(*args)
        return run

    @torch.compile(backend=lazy_backend)
    def lazy(x):
        return torch.cos(x) + 1

    for _ in range(6):
        lazy(torch.randn(4))

elif MODE in ("ddp_outer", "ddp_inner"):
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    dist.init_process_group("gloo", rank=0, world_size=1)
    m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    model = torch.compile(DDP(m), backend="eager") if MODE == "ddp_outer" else DDP(torch.compile(m, backend="eager"))
    for _ in range(2):
        model(torch.randn(8, 16)).sum().backward()
    dist.destroy_process_group()

print("done", MODE, file=sys.stderr)
