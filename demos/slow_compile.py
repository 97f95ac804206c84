"""A slow compile that emits events over about 20 seconds — to watch ``magi-tui attach`` live.

Six functions compiled one after another through the piecewise backend (eager pieces) with a pass that
takes its time, so lifecycles stay open for a while and events keep arriving.
"""

import os
import time

import torch

from _demo import recorded
from tracer import piecewise_backend

STEP_S = float(os.environ.get("SLOW_COMPILE_STEP_S", "0.8"))


def slow_pass(graph):
    """Pretends to be an expensive analysis."""
    time.sleep(STEP_S)


def make(i):
    def f(x):
        y = torch.relu(x) * (i + 1)
        z = torch.softmax(y, dim=-1)
        return z.sum(dim=-1) + i

    f.__name__ = f"stage_{i}"
    # a code object of its own: with one shared code object Dynamo recompiled once for the new closure value,
    # then made it dynamic (automatic dynamic shapes) and compiled nothing more -- 2 compiles in ~4 s, not 6
    f.__code__ = f.__code__.replace(co_name=f"stage_{i}")
    return f


def main():
    backend = piecewise_backend(split_ops=[torch.softmax], passes=[slow_pass], compiler="eager")
    for i in range(6):
        g = torch.compile(make(i), backend=backend)
        g(torch.randn(4, 8))
        time.sleep(STEP_S)


if __name__ == "__main__":
    with recorded("slow_compile"):
        main()
