"""A size-recompile storm on a positional tensor: batches of 2..7 rows, the compile static (no automatic dynamic)."""
import torch

torch._dynamo.config.automatic_dynamic_shapes = False


@torch.compile(backend="eager")
def f(x):
    return (x * 2 + 1).sum(0)


for n in range(2, 8):
    print(f(torch.arange(n * 3, dtype=torch.float32).reshape(n, 3)).tolist())
