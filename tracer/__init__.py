"""magi-tui's tracer: record any ``torch.compile`` run into a run directory, live.

    from tracer import explain_compilation
    with explain_compilation("runs") as run:
        model(x)
    print(run.path)

or ``python -m tracer [-o ROOT] script.py args...``. ``import tracer`` does not import torch.
"""

from __future__ import annotations

from typing import Any

__all__ = ["explain_compilation", "observe_lifecycle", "emit_event", "traced_backend",
           "piecewise_backend", "current_session"]


def __getattr__(name: str) -> Any:
    if name == "explain_compilation":
        from tracer.session import explain_compilation

        return explain_compilation
    if name == "current_session":
        from tracer.session import current

        return current
    if name in ("observe_lifecycle", "emit_event", "traced_backend"):
        from tracer import lifecycle

        return getattr(lifecycle, name)
    if name == "piecewise_backend":
        from tracer.piecewise import piecewise_backend

        return piecewise_backend
    raise AttributeError(name)
