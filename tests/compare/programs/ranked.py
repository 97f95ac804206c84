"""A torchrun-free two-rank job: run once per ``RANK``; rank 1 scales by a different constant (its
Dynamo graph differs) and recompiles for a float64 input (a compile id rank 0 never had)."""

import os

import torch

RANK = int(os.environ.get("RANK", "0"))


def f(x):
    return torch.relu(x) * (RANK + 1)


g = torch.compile(f, backend="eager")
g(torch.randn(4))
if RANK == 1:
    g(torch.randn(4, dtype=torch.float64))
