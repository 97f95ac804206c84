"""Two ranks on gloo, each compiling the same model: one run per rank (rank in the run dir name).

    torchrun --nproc-per-node 2 demos/two_ranks.py

Then ``magi-tui runs`` lists both; mark a graph on rank 0 (``m``) and diff it on rank 1 (``d``).
"""

import os

import torch
import torch.distributed as dist

from _demo import recorded


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.lin(x)) * (dist.get_rank() + 1 if dist.is_initialized() else 1)


def main():
    if "RANK" in os.environ and not dist.is_initialized():
        dist.init_process_group("gloo")
    torch.manual_seed(0)
    with recorded("two_ranks"):
        m = torch.compile(M(), backend="aot_eager")
        out = m(torch.randn(4, 8))
        if dist.is_initialized():
            dist.all_reduce(out)
    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
