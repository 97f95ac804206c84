"""One tiny program, two variants (``MAGI_CMP_VARIANT=a|b``), traced under ``python -m tracer``.

B adds a graph break (a ``print`` in another compiled function), a recompile (a new batch size with
``dynamic=False``), and a pass that changes its piece's graph (relu -> sigmoid) while the graph it is
given stays the same. Backend: the tracer's piecewise backend with eager pieces, so every pass and piece
records its graph and nothing is compiled by Inductor.
"""

import os

import torch

from tracer import piecewise_backend

VARIANT = os.environ.get("MAGI_CMP_VARIANT", "a")


class SwapPass:
    name = "SwapPass"

    def __call__(self, graph):
        if VARIANT != "b":
            return
        for node in list(graph.nodes):
            if node.op == "call_function" and getattr(node.target, "__name__", "") == "relu":
                node.target = torch.sigmoid
                return


def f(x):
    return torch.relu(x) * 2 + 1


def h(x):
    y = x * 3
    print("graph break")
    return y - 1


g = torch.compile(f, backend=piecewise_backend(passes=[SwapPass()], compiler="eager"), dynamic=False)
g(torch.randn(4))
g(torch.randn(4))
if VARIANT == "b":
    g(torch.randn(6))
    torch.compile(h, backend="eager")(torch.randn(4))
