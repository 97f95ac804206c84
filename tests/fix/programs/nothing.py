"""Nothing to fix: one compile, no break."""
import torch


@torch.compile(backend="eager")
def f(x):
    return x.sin() + 1


for _ in range(3):
    print(f(torch.ones(3)).tolist())
