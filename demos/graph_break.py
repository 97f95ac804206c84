"""A graph break: ``.item()`` drives Python control flow, and a ``print`` inside an inlined helper.

Shows: ``fullgraph_graph_break`` events with the reason, the restart that follows each break, and
the resume functions (frames ``torch_dynamo_resume_in_...``) compiled as their own compile ids.
"""

import torch

from _demo import recorded


def helper(x):
    print("inside helper")  # a graph break inside an inlined function
    return x * 2


def f(x):
    y = x.sin()
    if y.sum().item() > 0:  # .item() -> graph break
        y = y.cos()
    return helper(y) + 1


def main():
    g = torch.compile(f, backend="eager")
    for _ in range(2):
        g(torch.randn(8))


if __name__ == "__main__":
    with recorded("graph_break"):
        main()
