"""A backend that raises. With ``suppress_errors`` (the default here) Dynamo falls back to eager and
the program goes on; ``--no-suppress`` lets the error reach the program (the demo reports it).

Shows: ``fullgraph_failed_compile`` with the exception type, message and traceback; run status failed.
"""

import sys

import torch

from _demo import recorded


class BackendBoom(RuntimeError):
    pass


def failing_backend(gm, example_inputs):
    raise BackendBoom("this backend always fails (a demo)")


def f(x):
    return (x * 2).sum()


def main(suppress: bool):
    torch._dynamo.config.suppress_errors = suppress
    g = torch.compile(f, backend=failing_backend)
    try:
        print("result:", g(torch.ones(4)).item())
    except Exception as exc:
        print(f"the compile failed and the error reached the program: {type(exc).__name__}", file=sys.stderr)


if __name__ == "__main__":
    with recorded("failing_backend"):
        main(suppress="--no-suppress" not in sys.argv)
