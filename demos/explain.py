"""Explain a compile: a graph-break worklist, an explained recompile, a recompile-limit fallback.

Shows (all with ``backend="eager"``, a few seconds on CPU):

1. a graph-break worklist: ``log_shape`` calls ``print`` (torch's GB0059), hit again and again as the
   loop feeds ``layer`` new batch sizes, plus a second, different break — a data-dependent ``if`` on a
   tensor in ``gate`` (GB0170). Each ``fullgraph_graph_break`` names the id, the type, torch's
   explanation and hints, and the user's own line (file, line, function, source text);
2. an explained recompile: ``scale`` called with float32, then float64 (``dynamic=False``): a
   ``fullgraph_recompile`` whose reason is ``tensor 'x' dtype mismatch. expected Float, actual Double``;
3. a recompile-limit fallback: ``pad`` with ``torch._dynamo.config.recompile_limit = 2`` and four
   batch sizes: two compiles, then ``fullgraph_recompile_limit_hit`` — the frame runs eagerly from then on.
"""

import torch
import torch._dynamo

from _demo import recorded


def log_shape(h):
    print("layer output", tuple(h.shape))  # graph break: builtin print
    return h


def layer(x, w):
    h = x @ w
    log_shape(h)
    return torch.relu(h)


def gate(x):
    if x.sum() > 0:  # graph break: data-dependent branching on a tensor
        return x * 2
    return -x


def scale(x):
    return x * 0.5 + 1


def pad(x):
    return torch.nn.functional.pad(x, (1, 1))


def main():
    w = torch.randn(8, 8)
    layer_c = torch.compile(layer, backend="eager")
    for n in (2, 3, 4, 5):  # 1. the same break, hit from a loop
        layer_c(torch.randn(n, 8), w)
    gate_c = torch.compile(gate, backend="eager")
    gate_c(torch.ones(4))  # 1. a second, different break

    scale_c = torch.compile(scale, backend="eager", dynamic=False)
    scale_c(torch.randn(4))
    scale_c(torch.randn(4, dtype=torch.float64))  # 2. recompile: dtype mismatch

    pad_c = torch.compile(pad, backend="eager", dynamic=False)
    with torch._dynamo.config.patch(recompile_limit=2):
        for n in (1, 2, 3, 4):  # 3. the third size hits the limit: eager from then on
            out = pad_c(torch.ones(n, 2))
    assert out.shape == (4, 4)


if __name__ == "__main__":
    with recorded("explain"):
        main()
