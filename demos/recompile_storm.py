"""A recompile storm: the same function called with new shapes and dtypes (``dynamic=False``).

Shows: ``fullgraph_recompile`` events whose reasons name the size and the dtype mismatch, one compile
id per cache entry, and ``compiled_functions/`` with several entries (most recently used first).
"""

import torch

from _demo import recorded


def f(x, w):
    return torch.relu(x @ w) + 1


def main():
    g = torch.compile(f, backend="aot_eager", dynamic=False)
    for n in (4, 6, 8):  # new batch sizes
        g(torch.randn(n, 16), torch.randn(16, 16))
    g(torch.randn(8, 16, dtype=torch.float64), torch.randn(16, 16, dtype=torch.float64))  # new dtype


if __name__ == "__main__":
    with recorded("recompile_storm"):
        main()
