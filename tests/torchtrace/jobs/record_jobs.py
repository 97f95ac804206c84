"""Record the multi-rank TORCH_TRACE jobs under ``tests/torchtrace/jobs/`` (torch 2.13, CPU, gloo).

    PYTHONPATH=. python tests/torchtrace/jobs/record_jobs.py [OUT]   # default: tests/torchtrace/jobs

Each job is one folder holding one ``dedicated_log_torch_trace_rank_<r>_<random>.log`` per rank, written by
torch itself (``TORCH_TRACE=<folder>``, ``torch.distributed`` on gloo, ranks started with
``torch.multiprocessing``). Inductor compiles real collectives (``dist.all_reduce`` inside the compiled
function becomes ``_c10d_functional.all_reduce_``), with ``inductor.config.log_tlparse`` on (per-op runtime
estimates and output tensor metadata) and the graph execution order recorded, as a tlparse multi-rank
user would run it. Every rank gets a cache folder of its own, so hits and misses do not race.

* ``branch2``: 2 ranks; rank 1 takes another branch: its second all_reduce runs eagerly
  (``torch.compiler.disable``), so it compiles another graph (a graph break and a resume function), its
  compiled collective sequence is shorter and it has more compile ids and cache lookups. At run time every
  rank still issues the same collectives in the same order (no hang).
* ``shape3``: 3 ranks; rank 2 gets a bigger batch (6 rows instead of 4): same compile ids and collectives,
  different tensor metadata (and runtime estimates, which Inductor puts at 0 ns on CPU). Its ranks 0 and 1
  alone are a job whose ranks agree (the tests copy them out).
* ``late2``: 2 ranks that compile before ``torch.distributed`` is initialised (a warm-up of ~500 ops on the
  ``eager`` backend, more than the first 64 KiB of the log), then run the ``shape3`` step: torch names
  each log ``dedicated_log_torch_trace_<random>.log`` (no rank: the first record came before
  ``init_process_group``) and writes ``"rank": N`` only into the records after it. The rank is in the
  records alone, and not in the log's head.

    PYTHONPATH=. python tests/torchtrace/jobs/record_jobs.py [OUT [JOB ...]]   # only these jobs
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
from pathlib import Path

import torch
import torch.multiprocessing as mp

JOBS = {"branch2": 2, "shape3": 3, "late2": 2}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank: int, world: int, job: str, port: int, cache_root: str) -> None:
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(cache_root, f"rank{rank}")
    import torch.distributed as dist
    from torch._inductor import config as inductor_config
    from torch._inductor.debug import record_and_log_graph_execution_order

    if job == "late2":  # compiled before the process group exists: the log is opened without a rank
        @torch.compile(backend="eager")
        def warmup(x):
            for i in range(500):
                x = x * 1.001 + i
            return x

        warmup(torch.ones(4))
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    inductor_config.log_tlparse = True
    torch.manual_seed(0)
    w = torch.randn(8, 8)

    @torch.compiler.disable
    def eager_all_reduce(t):
        dist.all_reduce(t)
        return t

    divergent = (job == "branch2" and rank == 1)

    @torch.compile(backend="inductor")
    def step(x):
        y = torch.relu(x @ w).sum(0)
        dist.all_reduce(y)
        z = y * 2
        if divergent:
            z = eager_all_reduce(z)
        else:
            dist.all_reduce(z)
        return z + 1

    rows = 6 if (job == "shape3" and rank == 2) else 4
    with record_and_log_graph_execution_order():
        step(torch.randn(rows, 8))
        step(torch.randn(rows, 8))
    dist.barrier()
    dist.destroy_process_group()


def record(out: Path, only: list[str] | None = None) -> None:
    for job, world in JOBS.items():
        if only and job not in only:
            continue
        folder = out / job
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        os.environ["TORCH_TRACE"] = str(folder)
        with tempfile.TemporaryDirectory() as cache_root:
            mp.spawn(_worker, args=(world, job, _free_port(), cache_root), nprocs=world, join=True)
        print(job, sorted(p.name for p in folder.iterdir()))


if __name__ == "__main__":
    record(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent, sys.argv[2:])
