"""Two graph breaks: a data-dependent branch in the user's own code (torch's GB0170: an explanation with
blank lines and three hints), and a ``print`` inside an installed library (a package under a
``site-packages`` folder written next to the working directory), called from the user's ``step``."""

import os
import sys

import torch

lib = os.path.join(os.getcwd(), "venv", "lib", "site-packages")
os.makedirs(lib, exist_ok=True)
with open(os.path.join(lib, "normlib.py"), "w") as f:
    f.write("def normalize(x):\n    print('normalizing')\n    return x / (x.abs().max() + 1)\n")
sys.path.insert(0, lib)
from normlib import normalize  # noqa: E402


def gate(x):
    if x.sum() > 0:  # data-dependent branch
        return x * 2
    return x - 1


def step(x):
    return normalize(x) + 1  # the user's call into the library


torch.compile(gate, backend="eager")(torch.ones(4))
torch.compile(step, backend="eager")(torch.ones(4))
print("done")
