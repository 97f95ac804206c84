"""A Python int the compile specialised on (``dynamic=False``): torch's reason names only the compiled value
(``n == 3``); the new value is in the next compile's guards."""

import torch

c = torch.compile(lambda x, n: x * n, backend="eager", dynamic=False)
for n in (3, 5):
    c(torch.ones(3), n)
