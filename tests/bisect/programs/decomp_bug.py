"""Seeded bug: a wrong decomposition (hardtanh clamps to [-2, 2] instead of its bounds), registered in
the table Inductor and aot_eager_decomp_partition decompose with.

Prints the compiled numbers; exits 1 when they differ from eager PyTorch."""
import sys

import torch
from torch._inductor.decomposition import decompositions

aten = torch.ops.aten


def wrong_hardtanh(x, min_val=-1.0, max_val=1.0):
    return torch.clamp(x, -2.0, 2.0)


decompositions[aten.hardtanh.default] = wrong_hardtanh


def f(x):
    return torch.nn.functional.hardtanh(x * 3) + x.abs()


torch.manual_seed(0)
x = torch.randn(6)
out = torch.compile(f)(x)
print(" ".join(f"{v:.6f}" for v in out.tolist()))
sys.exit(0 if torch.allclose(out, f(x)) else 1)
