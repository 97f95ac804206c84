"""A custom FX pass that fails inside one piece of a split graph.

The model is split at its softmax (``piecewise_backend``); each piece runs two passes. The second pass
raises on piece 1 only, so ``subgraph_1_failed_checknofp64pass`` is the first failure and the
backend fails with it (Dynamo falls back to eager under ``suppress_errors``).
"""

import torch

from _demo import recorded
from tracer import piecewise_backend


class CheckNoFp64Pass:
    """Refuses pieces that compute in float64 (piece 1 casts to double on purpose)."""

    name = "CheckNoFp64Pass"

    def __call__(self, graph):
        for node in graph.nodes:
            if node.op == "call_method" and node.target == "double":
                raise ValueError(f"float64 in this piece: node {node.name}")


def count_ops(graph):
    """A pass that looks and changes nothing."""
    return None


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(16, 16)
        self.b = torch.nn.Linear(16, 16)

    def forward(self, x):
        h = torch.softmax(self.a(x), dim=-1)
        return self.b(h.double().float())


def main():
    torch._dynamo.config.suppress_errors = True
    backend = piecewise_backend(split_ops=[torch.softmax], passes=[count_ops, CheckNoFp64Pass()], compiler="eager")
    m = torch.compile(M(), backend=backend)
    print(m(torch.randn(4, 16)).shape)


if __name__ == "__main__":
    with recorded("failing_pass"):
        main()
