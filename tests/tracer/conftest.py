"""Tracer tests run real (small) compiles on CPU."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def fresh_dynamo():
    import torch._dynamo

    torch._dynamo.reset()
    saved = torch._dynamo.config.suppress_errors
    yield
    torch._dynamo.config.suppress_errors = saved
    torch._dynamo.reset()
