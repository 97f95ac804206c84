"""A small real program run under the tracer in a fresh process: its run directory, for tests that need
what a traced run records (runtime.json: calls per compiled entry, eager calls)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tests.support import slow

ROOT = Path(__file__).resolve().parents[2]

#: 30 calls at one shape, 20 at another, then 5 past the recompile limit of 2 (eager)
CALLS_PROGRAM = """
import sys, torch
from tracer import explain_compilation
torch._dynamo.config.recompile_limit = 2
def f(x):
    return x * 2 + 1
cf = torch.compile(f, backend="eager", dynamic=False)
with explain_compilation(sys.argv[1], label="calls") as run:
    for _ in range(30): cf(torch.ones(3))
    for _ in range(20): cf(torch.ones(4))
    for n in range(5, 10): cf(torch.ones(n))      # past the limit of 2: 5 eager calls
print(run.path)
"""


def traced_run(out: Path, program: str = CALLS_PROGRAM) -> Path:
    """Run ``program`` (it prints its run dir last) with ``out`` as its argument; the run dir."""
    (out / "prog.py").write_text(program)
    proc = slow.run([sys.executable, str(out / "prog.py"), str(out)], capture_output=True, text=True,
                    env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return Path(proc.stdout.strip().splitlines()[-1])
