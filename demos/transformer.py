"""A small transformer through the piecewise backend: the graph is split at attention, each piece runs
two FX passes and is compiled with Inductor. The README's main demo (about 30 s on 2 CPU cores).

Shows: ``graph_split`` (the split module), ``subgraph_<k>_before/after_<pass>`` with each piece's graph
before and after every pass (``decomposegelupass`` really changes the graph: press ``d`` on it),
``compiler_compile`` per piece, Inductor's output code and cache events, ``compiled_functions/``.
"""

import math

import torch
import torch.nn.functional as F

from _demo import recorded
from tracer import piecewise_backend


class DecomposeGeluPass:
    """gelu(x) -> 0.5 * x * (1 + erf(x / sqrt(2))) (exact gelu, spelled out)."""

    name = "DecomposeGeluPass"

    def __call__(self, graph):
        for node in list(graph.nodes):
            if node.op == "call_function" and "gelu" in getattr(node.target, "__name__", ""):
                x = node.args[0]
                with graph.inserting_before(node):
                    scaled = graph.call_function(torch.mul, (x, 1 / math.sqrt(2)))
                    erf = graph.call_function(torch.erf, (scaled,))
                    one_plus = graph.call_function(torch.add, (erf, 1.0))
                    half_x = graph.call_function(torch.mul, (x, 0.5))
                    out = graph.call_function(torch.mul, (half_x, one_plus))
                node.replace_all_uses_with(out)
                graph.erase_node(node)


class RemoveDropoutPass:
    """Drops dropout calls (inference)."""

    name = "RemoveDropoutPass"

    def __call__(self, graph):
        for node in list(graph.nodes):
            if node.op == "call_function" and "dropout" in getattr(node.target, "__name__", ""):
                node.replace_all_uses_with(node.args[0])
                graph.erase_node(node)


class Block(torch.nn.Module):
    def __init__(self, dim=64, heads=4):
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.norm2 = torch.nn.LayerNorm(dim)
        self.fc1 = torch.nn.Linear(dim, 4 * dim)
        self.fc2 = torch.nn.Linear(4 * dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        h = F.dropout(F.gelu(self.fc1(self.norm2(x))), p=0.1, training=False)
        return x + self.fc2(h)


class TwoLayerTransformer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block1 = Block()
        self.block2 = Block()

    def forward(self, x):
        return self.block2(self.block1(x))


def main():
    torch.manual_seed(0)
    model = TwoLayerTransformer().eval()
    backend = piecewise_backend(split_ops=[F.scaled_dot_product_attention],
                                passes=[RemoveDropoutPass(), DecomposeGeluPass()], compiler="inductor")
    compiled = torch.compile(model, backend=backend)
    x = torch.randn(2, 16, 64)
    with torch.no_grad():
        out = compiled(x)
        ref = model(x)
    print("max abs diff vs eager:", (out - ref).abs().max().item())


if __name__ == "__main__":
    with recorded("transformer"):
        main()
