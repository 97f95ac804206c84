"""No bug: Inductor computes what eager PyTorch does."""
import sys

import torch


def f(x):
    return (x.sin() + x.cos()) * 2


torch.manual_seed(0)
x = torch.randn(4)
out = torch.compile(f)(x)
print(" ".join(f"{v:.6f}" for v in out.tolist()))
sys.exit(0 if torch.allclose(out, f(x)) else 1)
