"""Compile wall time of the transformer demo: untraced vs traced (our tracer) vs ``TORCH_TRACE``.

Each measurement is a fresh process with Inductor's caches disabled
(``TORCHINDUCTOR_FORCE_DISABLE_CACHES=1``); the timed region is the first call (Dynamo + the
piecewise backend + Inductor for every piece), plus, when traced, the flush of the writer thread.
Prints JSON with the median of ``--repeat`` runs per mode and the ratios. Goal (issue 3): traced
<= 1.10x untraced and no worse than TORCH_TRACE.

Usage: python benchmarks/tracer_overhead.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def workload(mode: str, out_dir: str) -> float:
    sys.path.insert(0, str(REPO / "demos"))
    sys.path.insert(0, str(REPO))
    import torch
    import torch.nn.functional as F
    from transformer import DecomposeGeluPass, RemoveDropoutPass, TwoLayerTransformer

    from tracer import explain_compilation, piecewise_backend

    torch.manual_seed(0)
    model = TwoLayerTransformer().eval()
    x = torch.randn(2, 16, 64)
    backend = piecewise_backend(split_ops=[F.scaled_dot_product_attention],
                                passes=[RemoveDropoutPass(), DecomposeGeluPass()], compiler="inductor")
    compiled = torch.compile(model, backend=backend)
    with torch.no_grad():
        if mode == "traced":
            with explain_compilation(out_dir, label="overhead", compiled_functions=False) as run:
                t0 = time.perf_counter()
                compiled(x)
                run.flush()
                return time.perf_counter() - t0
        t0 = time.perf_counter()
        compiled(x)
        return time.perf_counter() - t0


def measure(mode: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, TORCHINDUCTOR_FORCE_DISABLE_CACHES="1", TORCHINDUCTOR_CACHE_DIR=f"{tmp}/ind")
        env.pop("TORCH_TRACE", None)
        if mode == "torch_trace":
            env["TORCH_TRACE"] = f"{tmp}/trace"
        proc = subprocess.run([sys.executable, __file__, "--child", mode, tmp], env=env, capture_output=True,
                              text=True, check=False)
        if proc.returncode != 0:
            raise SystemExit(proc.stderr[-2000:])
        return float(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(workload(*args.child))
        return
    modes = ("untraced", "traced", "torch_trace")
    times: dict[str, list[float]] = {m: [] for m in modes}
    for _ in range(args.repeat):  # interleaved, so drift in machine load hits every mode alike
        for m in modes:
            times[m].append(measure(m))
    med = {m: statistics.median(v) for m, v in times.items()}
    print(json.dumps({
        "workload": "demos/transformer.py first call (piecewise backend, 3 Inductor pieces), caches disabled",
        "runs": times,
        "median_s": {m: round(v, 3) for m, v in med.items()},
        "traced_vs_untraced": round(med["traced"] / med["untraced"], 3),
        "traced_vs_torch_trace": round(med["traced"] / med["torch_trace"], 3),
        "torch_trace_vs_untraced": round(med["torch_trace"] / med["untraced"], 3),
        "goal": "traced_vs_untraced <= 1.10 and traced_vs_torch_trace <= 1.0",
    }, indent=2))


if __name__ == "__main__":
    main()
