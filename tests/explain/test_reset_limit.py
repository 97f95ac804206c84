"""From a log, the same answers as from the tracer (issue 20.11): after ``torch._dynamo.reset()`` and at
the recompile limit, ``metrics`` and ``triage --json`` list the same compile ids, frames (file:line) and
compiles that ran eagerly, and the compile at the limit has its own row (frame, status ``ran eagerly``,
the limit), not an anonymous ``no metrics``."""

from __future__ import annotations

import json
import sys

import pytest

from tests.explain.realrun import PROGRAMS, _env, both, triage
from tests.support import slow

pytest.importorskip("torch")
pytestmark = [pytest.mark.torch, pytest.mark.slow]
PROGRAM = PROGRAMS / "reset_limit.py"


def metrics(path) -> list[dict]:
    proc = slow.run([sys.executable, "-m", "magi_tui", "metrics", "--json", str(path)], env=_env(None),
                    capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return json.loads(proc.stdout)["compiles"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("reset_limit")
    return both("reset_limit.py", base)


def test_metrics_agree_and_the_limit_compile_has_its_row(runs):
    answers = []
    for path in runs:
        rows = [(c["compile_id"], c["tlparse_id"], c["frame"], c["status"], (c["recompile_limit_hit"] or {}).get(
            "recompile_limit")) for c in metrics(path)]
        answers.append(rows)
    assert answers[0] == answers[1]
    assert answers[0] == [("0/0", "[0/0]", "f", "ok", None), ("R1/0/0", "[0/0]", "f", "ok", None),
                          ("R1/1/0", "[1/0]", "g", "ok", None), ("R1/1/1", "[1/1]", "g", "ran eagerly", 1)]


def test_triage_agrees_on_frames_and_fallbacks(runs):
    def line(needle):
        return next(i for i, ln in enumerate(PROGRAM.read_text().splitlines(), 1) if needle in ln)

    answers = []
    for path in runs:
        code, j = triage(path)
        assert (code, j["status"]) == (0, "degraded")
        answers.append((
            [(f["key"], f["name"], f["file"], f["line"], f["limit_hit"]) for f in j["frames"]],
            [(e["compile_id"], e["cause"], e["line"]) for e in j["ran_eagerly"]],
            [(i["kind"], i["compile_id"], i["line"]) for i in j["fallbacks"]["items"]],
            [r["compile_id"] for r in j["recompiles"]],
        ))
    assert answers[0] == answers[1]
    src = str(PROGRAM)
    assert answers[0][0] == [("0", "f", src, line("def f("), False), ("R1/0", "f", src, line("def f("), False),
                             ("R1/1", "g", src, line("def g("), True)]
    assert answers[0][2] == [("recompile_limit", "R1/1/1", line("def g("))]


def test_the_tracers_own_counts_carry_the_generation(runs):
    """The tracer's runtime counts and events of its own spell compile ids as the log's events do after a
    reset (``R1/0/0``), so each frame's entries and eager calls land on that frame, not on the one before
    the reset."""
    _, j = triage(runs[0])
    got = [(f["key"], [(e["compile_id"], e["calls"]) for e in f["entries"]], f["eager_calls"]) for f in j["frames"]]
    assert got == [("0", [("0/0", 1)], 0), ("R1/0", [("R1/0/0", 1)], 0), ("R1/1", [("R1/1/0", 1)], 2)]
    assert [(i["compile_id"], i["calls"]) for i in j["fallbacks"]["items"]] == [("R1/1/1", 2)]
