"""A small Inductor compile for the provenance tests (run as ``python -m tracer --provenance``): two
matmuls (extern kernels) between pointwise ops and reductions that Inductor fuses into cpp kernels
(compile 0/0, inference); then a function that is trained (compile 1/0: a forward and a backward
graph, for which torch writes an empty node mapping)."""

import torch


def f(x, w):
    y = torch.relu(x @ w + 1.0)
    z = (y.sin() * 2 + y.cos()) @ w
    return z.tanh().sum(dim=1), (z * x).amax()


def trained(x, w):
    return (torch.relu(x @ w).sin() * 2).sum()


if __name__ == "__main__":
    torch.compile(f)(torch.randn(8, 8), torch.randn(8, 8))
    w = torch.randn(8, 8, requires_grad=True)
    torch.compile(trained)(torch.randn(8, 8), w).backward()
