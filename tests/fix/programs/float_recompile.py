"""A float argument that changes every call: compiled as a constant, then recompiled."""
import torch


@torch.compile(backend="eager")
def f(x, scale):
    return x * scale + 1


for s in (0.5, 1.5, 2.5, 3.5):
    print(f(torch.ones(3), s).tolist())
