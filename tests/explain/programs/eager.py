"""Frames that run eagerly while the program goes on, and a compiler crash, chosen by ``EAGER_MODE``:

* ``skip``: Dynamo gives up on two frames after graph breaks it cannot resume from (inside a generic
  context manager; under ``try``): both run uncompiled, the results are right;
* ``limit``: a frame reaches the recompile limit (2) and later calls run uncompiled;
* ``crash``: the backend raises; ``suppress_errors`` hides it and the frame runs eagerly, but it is a
  compiler crash;
* ``fullgraph``: the same graph break under ``fullgraph=True`` raises to the program (which catches it).
"""

import contextlib
import os

import torch
import torch._dynamo

MODE = os.environ.get("EAGER_MODE", "skip")


@contextlib.contextmanager
def quiet():
    yield


def in_context(x):
    with quiet():
        x = x + 1
        torch._dynamo.graph_break()  # cannot resume inside a generic context manager
        return x * 2


def in_try(x):
    try:
        y = x + 1
        torch._dynamo.graph_break()  # under try
    except ValueError:
        y = x
    return y * 2


def scale(x, n):
    return x * n


def crashing_backend(gm, inputs):
    raise RuntimeError("backend bug: aten.mul not supported")


if MODE == "skip":
    for fn in (in_context, in_try):
        assert torch.equal(torch.compile(fn, backend="eager")(torch.ones(3)), fn(torch.ones(3)))
elif MODE == "limit":
    torch._dynamo.config.recompile_limit = 2
    c = torch.compile(scale, backend="eager", dynamic=False)
    for n in range(2, 6):
        assert torch.equal(c(torch.ones(3), n), torch.ones(3) * n)
elif MODE == "crash":
    torch._dynamo.config.suppress_errors = True
    assert torch.equal(torch.compile(scale, backend=crashing_backend)(torch.ones(3), 2), torch.ones(3) * 2)
elif MODE == "fullgraph":
    try:
        torch.compile(in_try, backend="eager", fullgraph=True)(torch.ones(3))
    except Exception as e:  # torch._dynamo.exc.Unsupported
        print("raised", type(e).__name__)
print("done")
