"""A small Inductor compile for the provenance tests (run as ``python -m tracer --provenance``): two
matmuls (extern kernels) between pointwise ops and reductions that Inductor fuses into cpp kernels."""

import torch


def f(x, w):
    y = torch.relu(x @ w + 1.0)
    z = (y.sin() * 2 + y.cos()) @ w
    return z.tanh().sum(dim=1), (z * x).amax()


if __name__ == "__main__":
    torch.compile(f)(torch.randn(8, 8), torch.randn(8, 8))
