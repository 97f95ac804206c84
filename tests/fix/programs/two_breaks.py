"""Two graph breaks with two different changes: .item() and print(). Each change alone leaves the other."""
import torch


@torch.compile(backend="eager")
def f(x, s):
    k = s.item()
    y = x * k
    print("scaled")
    return y + 1


for i in range(3):
    print(f(torch.ones(3) * i, torch.tensor(2.0 + i)).tolist())
