"""print() of a tensor that is changed in place after it: moving the print (reorderable logging) alters
what is printed, so that suggested change must be rejected."""
import torch


@torch.compile(backend="eager")
def f(x):
    x = x * 2
    print(x)
    x.add_(10)
    return x.sum()


for i in range(2):
    print(f(torch.ones(2) * i).item())
