"""The "before" run of the compare / CI-gate demo: a small MLP through the piecewise backend (eager
pieces, so it takes seconds), one FX pass, two calls with the same shape — no graph break, no recompile.

    python demos/compare_base.py && python demos/compare_regressed.py
    magi-tui compare runs/magi_depyf/run_<A>/model_1_compare_base_rank_0 runs/magi_depyf/run_<B>/model_1_compare_regressed_rank_0
    magi-tui check runs/…/model_1_compare_regressed_rank_0 --policy demos/compare_policy.toml \\
        --baseline runs/…/model_1_compare_base_rank_0 --junit check.xml      # exit 1, one line per broken budget

or in the app: ``magi-tui runs``, ``m`` on each run, ``c``; ``]`` jumps to a pass whose graph differs, ``d``
diffs it A vs B.
"""

import torch

from _demo import recorded
from tracer import piecewise_backend

REGRESSED = False


class ApproxGeluPass:
    """A custom FX pass: leaves the graph as it is in the base run; the regressed commit's version swaps
    gelu for tanh (so the graph after the pass differs between the two runs)."""

    name = "ApproxGeluPass"

    def __call__(self, graph):
        for node in list(graph.nodes):
            if REGRESSED and node.op == "call_function" and "gelu" in getattr(node.target, "__name__", ""):
                node.target = torch.tanh
                node.kwargs = {}


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 16)

    def forward(self, x):
        h = torch.nn.functional.gelu(self.fc1(x))
        if REGRESSED:
            print("debug: hidden norm computed")   # the regression: a print is a graph break
        return self.fc2(h) + x


def main():
    torch.manual_seed(0)
    model = MLP().eval()
    compiled = torch.compile(model, backend=piecewise_backend(passes=[ApproxGeluPass()], compiler="eager"),
                             dynamic=False)
    with torch.no_grad():
        compiled(torch.randn(4, 16))
        compiled(torch.randn(4, 16))
        if REGRESSED:
            compiled(torch.randn(8, 16))          # and a new batch size with dynamic=False: a recompile


def run(label: str) -> None:
    with recorded(label):
        main()


if __name__ == "__main__":
    run("compare_base")
