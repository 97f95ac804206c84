"""Two functions compiled through one decorator (as transformers wraps every model's forward in one
``wrapper``): Dynamo caches by code, so the second is a recompile of the wrapper frame. triage says that,
from the tracer and from the log alike, instead of "a different object: create it once and reuse it"."""

from __future__ import annotations

import pytest

from tests.explain.realrun import both, triage

pytest.importorskip("torch")
pytestmark = [pytest.mark.torch, pytest.mark.slow]


def test_a_second_function_through_one_wrapper_is_explained_as_such(tmp_path):
    for path in both("shared_wrapper.py", tmp_path):
        code, tj = triage(path)
        assert code == 0
        (rc,) = tj["recompiles"]
        assert rc["frame"].startswith("wrapper (shared_wrapper.py:") and rc["kind"] == "function", path
        assert "wrapper several functions come through" in rc["suggestion"]
        assert "reuse" not in rc["suggestion"]
        assert [f["source"] for f in rc["functions_changed"]] == ["L['fn']"], path
        # expected, as automatic dynamic shapes are: an ok check of its own rule, no recompile warning
        by_rule = {c["rule"]: c for c in tj["checks"]}
        assert by_rule["shared-wrapper"]["level"] == "ok" and "wrapper (shared_wrapper.py:" in \
            by_rule["shared-wrapper"]["message"]
        assert "recompiles" not in by_rule  # neither a warning nor "no recompiles"
        assert by_rule["compiles-per-frame"]["level"] == "ok"
        assert "1 other function(s) through a shared wrapper" in by_rule["compiles-per-frame"]["message"]
        # and --fail-on recompiles does not fail for it
        assert triage(path, "--fail-on", "recompiles")[0] == 0
