"""Tracer tests run real (small) compiles on CPU. Each module that needs torch skips without it (the
mapping of recorded logs does not: test_mapping_golden.py runs without torch)."""

from __future__ import annotations

import sys

import pytest


@pytest.fixture(autouse=True)
def fresh_dynamo():
    if "torch" not in sys.modules:  # a test that never imported torch has no Dynamo state to reset
        yield
        return
    import torch._dynamo

    torch._dynamo.reset()
    saved = torch._dynamo.config.suppress_errors
    yield
    torch._dynamo.config.suppress_errors = saved
    torch._dynamo.reset()
