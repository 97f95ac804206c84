"""A function compiled twice around torch._dynamo.reset(), then a second function past a recompile limit
of 1 (issue 20.11: the tracer and the log give the same compiles, frames and failed compiles)."""

import torch
import torch._dynamo


def f(x):
    return torch.sin(x) + 1


def g(x, n):
    return x * n


torch._dynamo.config.recompile_limit = 1
cf = torch.compile(f, backend="eager")
cf(torch.randn(4))
torch._dynamo.reset()
cf(torch.randn(4))
cg = torch.compile(g, backend="eager")
for n in (1, 2, 3):
    cg(torch.randn(3), n)
