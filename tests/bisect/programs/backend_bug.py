"""Seeded bug: the program's own backend breaks one graph of three (the one with a cos): its compiled
function raises when called. Three graphs: `tail` (frame 0), then `step`, split in two by a graph break
(frames 1 and 2: the cos is in 2)."""
import torch


def picky_backend(gm, example_inputs):
    if any(n.target in (torch.cos, torch.Tensor.cos, "cos") for n in gm.graph.nodes):
        def broken(*args):
            raise RuntimeError("picky_backend: cannot run a graph with cos")
        return broken
    return gm.forward


def step(x):
    y = x.sin() + 1
    torch._dynamo.graph_break()
    return y.cos() * 2


def tail(x):
    return x.exp() - 1


torch.manual_seed(0)
x = torch.randn(4)
first = torch.compile(tail, backend=picky_backend)(x)   # frame 0
out = torch.compile(step, backend=picky_backend)(first)  # frames 1 and 2 (the resume after the break)
print(" ".join(f"{v:.6f}" for v in out.tolist()))
