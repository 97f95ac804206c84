"""Issue 31 (8): ``bisect`` checks its premises before it spends runs on layers. With ``--compare-output`` the
reference (torch.compile disabled) runs twice: a program whose two runs print other numbers (random numbers
without a seed, timestamps, pids) is ``nondeterministic`` (exit 3), with the lines and numbers that moved and
what to do, and never blamed on a layer; numbers that move within ``--rtol`` / ``--atol`` are deterministic
enough. Then the program as it is must show the failure as reported, else "the failure did not reproduce";
after such an exit-code bisect it suggests ``--compare-output``.

Real processes, no torch: ``python prog.py`` runs under a stand-in for the tracer (``MAGI_TUI_TRACER``) that
runs the script as ``python -m tracer`` would, untraced."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from magi_tui.live.bisect import BISECT_FILE
from magi_tui.model.outputs.bisect_view import culprit_lines
from tests.support.cli import run_cli

STUB_TRACER = """\
import runpy, sys
# python -m stub_tracer -o ROOT script.py args: the script as __main__, untraced
args = sys.argv[1:]
sys.argv = args[2:]
runpy.run_path(args[2], run_name="__main__")
"""

RANDOM = """\
import random
print("step", 1)
print("loss", random.random())
print("step", 2)
"""

PID_AND_TIME = """\
import os, time
print("pid", os.getpid())
print("started at", time.time())
"""

#: 1.0 the first time, 1.0005 after (a counter file beside it): the numbers move, slightly
SLIGHTLY = """\
import os
p = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ran")
n = os.path.exists(p)
open(p, "a").write("x")
print("loss", 1.0 + 5e-4 * n)
"""


@pytest.fixture
def prog(tmp_path, monkeypatch):
    """``prog(source)``: the command ``python <tmp>/prog_<n>.py``, run under the stand-in tracer."""
    (tmp_path / "stub_tracer.py").write_text(STUB_TRACER)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("MAGI_TUI_TRACER", "stub_tracer")
    made: list[Path] = []

    def make(source: str) -> list[str]:
        p = tmp_path / f"prog_{len(made)}.py"
        p.write_text(source)
        made.append(p)
        return ["python", str(p)]

    return make


def _bisect(capsys, tmp_path, *args: str) -> tuple[int, dict]:
    code, out, _err = run_cli(capsys, "bisect", "-o", str(tmp_path / "runs"), "--json", *args)
    res = json.loads(out)
    saved = json.loads((Path(res["directory"]) / BISECT_FILE).read_text())
    assert saved == res  # bisect.json holds the same
    return code, res


def test_random_numbers_are_nondeterministic_and_no_layer_is_blamed(capsys, tmp_path, prog):
    code, res = _bisect(capsys, tmp_path, "--compare-output", "--", *prog(RANDOM))
    assert code == 3
    assert res["verdict"] == "nondeterministic" and res["error"] is None
    assert res["reproduced"] is False and res["culprit"] is None
    # the reference twice, nothing else: no layer's run is spent, none blamed
    assert [(s["verdict"], s["change"]) for s in res["steps"]] == [
        ("reference", "torch.compile disabled"), ("nondeterministic", "torch.compile disabled, again")]
    assert not any(s["backend"] for s in res["steps"])
    ref = res["reference"]
    assert ref["deterministic"] is False and ref["why"].startswith("number 2: ")
    assert "where the first run printed" in ref["why"]
    # what moved: the loss line, not the steps around it; the number that changed
    assert [m[0] for m in ref["moved"]] == ["-", "+"] and all("loss" in m for m in ref["moved"])
    assert ref["numbers_changed"] == 1 and ref["numbers_moved"][0]["index"] == 2
    assert ref["exit_codes"] == [0, 0] and ref["counts"] == [3, 3]
    advice = " ".join(res["advice"])
    assert "torch.manual_seed" in advice and "random.seed" in advice and "numpy.random.seed" in advice
    assert "--atol" not in advice  # not "slightly": a tolerance is no answer to random numbers
    assert res["torch_bisector_runs"] is None


def test_the_text_says_nondeterministic_with_the_moved_lines(capsys, tmp_path, prog):
    code, out, err = run_cli(capsys, "bisect", "-o", str(tmp_path / "runs"), "--compare-output", "--",
                             *prog(PID_AND_TIME))
    assert code == 3
    first = out.splitlines()[0]
    assert first.startswith("nondeterministic: two runs with torch.compile disabled disagree (number 1: ")
    assert "no layer is blamed" in first
    for word in ("Dynamo", "AOTAutograd", "culprit"):
        assert word not in out
    assert "  moved (the first reference run -, the second +):" in out
    assert any(ln.strip().startswith("-pid ") for ln in out.splitlines())
    assert any(ln.strip().startswith("+started at ") for ln in out.splitlines())
    assert "→ make the program print the same thing every run" in out
    assert "nondeterministic" in err  # the step, as it finished


def test_numbers_within_the_tolerances_are_deterministic_enough(capsys, tmp_path, prog):
    command = prog(SLIGHTLY)
    code, res = _bisect(capsys, tmp_path, "--compare-output", "--", *command)
    assert code == 3 and res["verdict"] == "nondeterministic"
    assert res["reference"]["max_abs_diff"] == pytest.approx(5e-4)
    (slight,) = [a for a in res["advice"] if "differ only slightly" in a]
    assert "--atol 0.001 or --rtol 0.001" in slight
    (tmp_path / "ran").unlink()

    code, res = _bisect(capsys, tmp_path, "--compare-output", "--rtol", "1e-2", "--", *command)
    assert code == 0 and res["verdict"] == "not_reproduced"
    ref = res["reference"]
    assert ref["deterministic"] is True and ref["numbers_changed"] == 1 and ref["rtol"] == 1e-2
    assert res["steps"][1]["verdict"] == "reference" and "within the tolerances" in res["steps"][1]["why"]
    # then the program as it is (untraced, nothing compiles): the same numbers, so nothing to bisect
    assert [s["change"] for s in res["steps"]] == ["torch.compile disabled", "torch.compile disabled, again",
                                                   "as it is"]
    assert res["as_reported"]["reproduces"] is False
    assert res["as_reported"]["why"] == ("the program as it is printed the same 1 number(s) as with "
                                         "torch.compile disabled (within the tolerances)")


def test_a_failure_that_does_not_reproduce_stops_before_the_layers(capsys, tmp_path, prog):
    code, res = _bisect(capsys, tmp_path, "--", *prog("print('loss', 1.5)\n"))
    assert code == 0 and res["verdict"] == "not_reproduced" and res["reproduced"] is False
    assert [(s["backend"], s["change"], s["verdict"]) for s in res["steps"]] == [("program", "as it is", "passes")]
    assert res["as_reported"] == {"reproduces": False, "why": "the program as it is exited with code 0",
                                  "run": None}
    assert res["reference"] is None  # by exit code: no reference run
    # an exit-code bisect that finds nothing: bisect by the numbers instead
    (advice,) = res["advice"]
    assert "magi-tui bisect --compare-output -- python " in advice and "prints wrong numbers" in advice

    code, out, _err = run_cli(capsys, "bisect", "-o", str(tmp_path / "runs"), "--", *prog("print(1)\n"))
    assert code == 0
    assert out.startswith("the failure did not reproduce: the program as it is exited with code 0 (1 run(s))")
    assert "→ the program exits 0 as it is: if it prints wrong numbers rather than failing, bisect by them: " \
           "magi-tui bisect --compare-output" in out


def test_a_reproduced_failure_is_confirmed_first_then_bisected(capsys, tmp_path, prog):
    code, res = _bisect(capsys, tmp_path, "--", *prog("import sys\nprint('boom')\nsys.exit(3)\n"))
    assert code == 0 and res["verdict"] == "culprit"
    assert res["as_reported"]["reproduces"] is True and res["as_reported"]["why"] == (
        "the program as it is exited with code 3")
    # the program as it is first; then the layers (eager fails too), then without torch.compile
    assert [s["change"] for s in res["steps"]] == ["as it is", "every graph on eager", "torch.compile disabled"]
    assert res["culprit"]["backend"] is None and "the program itself" in res["culprit"]["layer"]
    assert res["advice"] == []


def test_the_second_reference_failing_is_nondeterministic_too(capsys, tmp_path, prog):
    count = tmp_path / "count"
    code, res = _bisect(capsys, tmp_path, "--compare-output", "--", *prog(
        f"import os, sys\np = {str(count)!r}\nn = os.path.exists(p)\nopen(p, 'a').write('x')\n"
        "print('loss', 1.5)\nsys.exit(2 if n else 0)\n"))
    assert code == 3 and res["verdict"] == "nondeterministic"
    assert res["reference"]["exit_codes"] == [0, 2]
    assert res["reference"]["why"] == "exit code 0 in the first run, 2 in the second"
    assert any("exit code changes from run to run" in a for a in res["advice"])


def test_a_reference_that_fails_is_still_an_error(capsys, tmp_path, prog):
    code, res = _bisect(capsys, tmp_path, "--compare-output", "--", *prog("import sys\nsys.exit(4)\n"))
    assert code == 1 and res["verdict"] == "error" and res["reference"] is None
    assert res["error"].startswith("the reference run (torch.compile disabled) exited with code 4")
    assert len(res["steps"]) == 1  # no second reference run after a failed first


def test_the_screen_lines_say_it_too():
    res = {"verdict": "nondeterministic", "reproduced": False, "culprit": None, "runs": 2, "steps": [{}, {}],
           "reference": {"deterministic": False, "why": "number 1: 0.2 where the first run printed 0.1",
                         "moved": ["-loss 0.1", "+loss 0.2"]},
           "advice": ["seed the RNGs"]}
    assert culprit_lines(res) == [
        "nondeterministic: two runs with torch.compile disabled disagree (number 1: 0.2 where the first run "
        "printed 0.1): no layer is blamed, no run can be judged against that reference (2 run(s))",
        "moved: -loss 0.1  +loss 0.2", "→ seed the RNGs"]
    old = {"reproduced": False, "culprit": None, "steps": [{}] * 4}  # a bisect.json from before
    assert culprit_lines(old) == ["not reproduced (4 run(s))"]


async def test_the_bisect_screen_shows_the_verdict(capsys, tmp_path, prog):
    from magi_tui.ui.app import MagiApp
    from magi_tui.ui.screens.bisect import BisectScreen, StepList
    from tests.support.pilot import wait_for

    code, res = _bisect(capsys, tmp_path, "--compare-output", "--", *prog(RANDOM))
    assert code == 3
    app = MagiApp(Path(res["directory"]))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BisectScreen) and app.screen.result is not None,
                       what="the bisect screen")
        text = str(app.screen.query_one("#bisect-culprit").render())
        assert "nondeterministic: two runs with torch.compile disabled disagree" in text
        assert "→ make the program print the same thing every run" in text
        table = app.screen.query_one(StepList)
        assert table.option_count == 2 and "nondeterministic" in str(table.get_option_at_index(1).prompt)


def test_a_command_that_is_not_a_script_is_checked_the_same(capsys, tmp_path):
    code, res = _bisect(capsys, tmp_path, "--compare-output", "--", sys.executable, "-c",
                        "import random; print(random.random())")
    assert code == 3 and res["reference"]["runs"] == [None, None]
