"""A graph break on print() inside the compiled function."""
import torch


@torch.compile(backend="eager")
def f(x):
    y = x * 2
    print("step")
    return y + 1


for i in range(3):
    print(f(torch.ones(3) * i).tolist())
