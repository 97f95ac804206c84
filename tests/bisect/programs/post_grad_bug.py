"""Seeded bug: a custom post-grad pass that turns every add into a sub. Two graphs: `scale` (frame 0, on
aot_eager: no post-grad passes there) and `shift` (frame 1, on Inductor, where the add is).

Prints the compiled numbers; exits 1 when they differ from eager PyTorch (the program's own check)."""
import sys

import torch
import torch._inductor.config as cfg


def bad_pass(graph):
    for n in graph.nodes:
        if n.op == "call_function" and n.target is torch.ops.aten.add.Tensor:
            n.target = torch.ops.aten.sub.Tensor


cfg.post_grad_custom_post_pass = bad_pass


def scale(x):
    return x.cos() * 2


def shift(x, y):
    return (x + y).sin()


torch.manual_seed(0)
x, y = torch.randn(4), torch.randn(4)
a = torch.compile(scale, backend="aot_eager")(x)
b = torch.compile(shift)(a, y)
print(" ".join(f"{v:.6f}" for v in b.tolist()))
sys.exit(0 if torch.allclose(b, shift(scale(x), y), atol=1e-5) else 1)
