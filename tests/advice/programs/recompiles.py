"""Recompiles of four kinds, each in its own frame, for tests/advice: a float argument (torch makes it
dynamic after one recompile), a global int and an nn.Module int attribute (a recompile on every value; the
module's reason carries torch's HINT) and a type change (a tensor, then None)."""

import torch

K = 3


def scale(x, f):
    return x * f


def times_global(x):
    return x * K


class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.n = 3

    def forward(self, x):
        return x * self.n


def plus_maybe(x, y):
    return x + 1 if y is None else x + y


x = torch.ones(4)
cs = torch.compile(scale, backend="eager")
for f in (0.5, 1.5, 2.5):
    cs(x, f)
cg = torch.compile(times_global, backend="eager")
for K in (3, 5, 7):
    cg(x)
m = Scaled()
cm = torch.compile(m, backend="eager")
for n in (3, 5, 7):
    m.n = n
    cm(x)
cp = torch.compile(plus_maybe, backend="eager")
cp(x, torch.ones(4) * 2)
cp(x, None)
print("ok")
