"""A graph break on .item(): the scale is read as a Python number inside the compiled function."""
import torch


@torch.compile(backend="eager")
def f(x, s):
    k = s.item()
    return x * k + 1


for i in range(3):
    print(f(torch.ones(3) * i, torch.tensor(2.0 + i)).tolist())
