"""A CUDA Inductor compile with a graph break, a dynamic-shape recompile, keyword tensors, max-autotune
and CUDA graphs: recorded on a real GPU under another torch version."""
import sys

import torch
import torch.nn as nn

dev = "cuda" if torch.cuda.is_available() else "cpu"
print("torch", torch.__version__, dev, flush=True)


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x, *, mask=None):
        h = self.fc2(torch.nn.functional.gelu(self.fc1(self.ln(x))))
        if mask is not None:
            h = h * mask.unsqueeze(-1)
        return x + h


class Net(nn.Module):
    def __init__(self, d=256, n=3):
        super().__init__()
        self.blocks = nn.ModuleList(Block(d) for _ in range(n))
        self.head = nn.Linear(d, 10)

    def forward(self, x, mask=None):
        for i, b in enumerate(self.blocks):
            x = b(x, mask=mask)
            if i == 0:
                print("after block 0", x.shape)  # a graph break
        return self.head(x).softmax(-1)


net = Net().to(dev)
cnet = torch.compile(net)
with torch.no_grad():
    for seq in (16, 32, 48):  # the second length recompiles (dynamic), the third reuses it
        x = torch.randn(4, seq, 256, device=dev)
        m = torch.ones(4, seq, device=dev)
        y = cnet(x, mask=m)
    print("out", tuple(y.shape), float(y.sum()), flush=True)


@torch.compile(mode="max-autotune-no-cudagraphs")
def fused(a, b):
    return torch.relu(a @ b + 1.0).sum(dim=0)


a = torch.randn(512, 512, device=dev)
print("fused", float(fused(a, a).sum()), flush=True)


@torch.compile(mode="reduce-overhead")
def graphed(a):
    return (a.sin() * 2).cos()


for _ in range(3):
    r = graphed(a)
print("graphed", float(r.sum()), flush=True)
sys.exit(0)
