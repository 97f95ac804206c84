"""One verdict for frames that fell back to eager (issue 20.3): Dynamo skipping a frame after a graph break
it cannot resume from and a frame at the recompile limit are both "ran eagerly", status ``degraded``,
exit 0 unless ``--fail-on fallback``; a compiler crash stays a failure even when ``suppress_errors`` hid
it, and so does an error that reached the program (``fullgraph=True``). Failures say where they were
raised (issue 20.8). From the tracer and from TORCH_TRACE alike."""

from __future__ import annotations

import pytest

from tests.explain.realrun import PROGRAMS, both, torch_trace, triage
from tests.support import ahead

pytest.importorskip("torch")
pytestmark = [pytest.mark.torch, pytest.mark.slow]
PROGRAM = PROGRAMS / "eager.py"


def line_of(needle: str) -> int:
    return next(i for i, ln in enumerate(PROGRAM.read_text().splitlines(), 1) if needle in ln)


@pytest.fixture(scope="module")
def skip_runs(tmp_path_factory):
    return ahead.early_result("skip_runs", tmp_path_factory)


@ahead.early("skip_runs")
def _skip_runs(base):
    """eager.py's frames Dynamo skips, traced and logged (started early: tests/support/ahead.py)"""
    return both("eager.py", base, {"EAGER_MODE": "skip"})


def test_skipped_frames_are_ran_eagerly_not_failed(skip_runs):
    answers = []
    for path in skip_runs:
        code, j = triage(path)
        assert (code, j["status"], j["failures"], j["first_failure"]) == (0, "degraded", [], None)
        eager = [(e["frame"].split(" ")[0], e["cause"], e["reason"], e["line"]) for e in j["ran_eagerly"]]
        answers.append(eager)
        assert j["summary"]["ran_eagerly"] == 2
        warn = next(c["message"] for c in j["checks"] if "ran eagerly" in c["message"])
        assert warn.startswith("2 frame(s) ran eagerly (unsupported ×2); first: in_context")
        code, _ = triage(path, "--fail-on", "fallback")
        assert code == 1
    assert answers[0] == answers[1]
    assert answers[0][0] == ("in_context", "unsupported", "Graph break under GenericContextWrappingVariable",
                             line_of("cannot resume inside a generic context manager"))


def test_recompile_limit_is_the_same_verdict(tmp_path):
    code, j = triage(torch_trace("eager.py", tmp_path, {"EAGER_MODE": "limit"}))
    assert (code, j["status"]) == (0, "degraded")
    assert [(e["frame"].split(" ")[0], e["cause"]) for e in j["ran_eagerly"]] == [("scale", "recompile_limit")]


def test_compiler_crash_hidden_by_suppress_errors_stays_a_failure_with_its_source(tmp_path):
    for path in both("eager.py", tmp_path, {"EAGER_MODE": "crash"}):
        code, j = triage(path)
        assert (code, j["status"], j["ran_eagerly"]) == (1, "failed", [])
        (f,) = j["failures"]
        assert f["exception_type"] == "BackendCompilerFailed"
        # torch records no user frame for a backend crash: the frame being compiled
        assert f["source"] == {"file": str(PROGRAM), "line": line_of("def scale("), "what": "frame"}


def test_an_error_that_reached_the_program_stays_a_failure(tmp_path):
    code, j = triage(torch_trace("eager.py", tmp_path, {"EAGER_MODE": "fullgraph"}))
    assert (code, j["status"], j["ran_eagerly"]) == (1, "failed", [])
    assert j["failures"][0]["exception_type"] == "Unsupported"
    # tlparse's "Failure Source": the line Dynamo was tracing when it raised
    assert j["failures"][0]["source"] == {"file": str(PROGRAM), "line": line_of("# under try"),
                                          "what": "raised"}
