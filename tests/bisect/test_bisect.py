"""``magi-tui bisect`` and ``magi-tui report`` on seeded bugs (tests/bisect/programs/): each is named
right (layer, stage, graph) by exit code and by ``--compare-output``, the healthy program is "not
reproduced", and no bisect makes more runs than torch's compiler bisector on the same bug.

The slow tests share their runs: one bisect per program by exit code, then the same program by
``--compare-output`` with the first bisect's trials (``memo``: the same command and overrides are the
same run; only the judge differs), so each costs one run more (the reference). The programs' bisects are
made ahead, two at a time (tests/support/ahead.py): each test names its program with ``ahead``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from magi_tui.cli import main
from magi_tui.live.bisect import BISECT_FILE, Bisector
from magi_tui.live.trial import Judge, Overrides, TrialResult, compare_numbers, parse_numbers
from magi_tui.model.outputs.bugreport import build_report, write_report
from tests.support import ahead

PROGRAMS = Path(__file__).parent / "programs"
#: one compile thread: Inductor's worker pool costs more than it saves on tiny graphs and 2 cores
ENV = {**os.environ, "TORCHINDUCTOR_COMPILE_THREADS": "1"}


# -- the pieces, without torch ----------------------------------------------------------------------

def test_numbers_are_parsed_and_compared_with_tolerances():
    assert parse_numbers("loss 1.5 tensor([2., -3e-2, nan]) step10 x_2 inf") == pytest.approx(
        [1.5, 2.0, -0.03, float("nan"), float("inf")], nan_ok=True)
    assert compare_numbers([1.0, float("nan")], [1.00001, float("nan")]) is None
    assert "number 2" in compare_numbers([1.0, 2.0], [1.0, 2.1])
    assert "printed 1 number(s), the reference 2" == compare_numbers([1.0, 2.0], [1.0])
    assert compare_numbers([1.0], [1.05], rtol=0.1) is None
    assert compare_numbers([float("inf")], [1e308]) is not None


def test_judge_by_exit_code_and_by_numbers():
    def res(rc, out=""):
        return TrialResult(Overrides(), ["python", "x.py"], rc, 0.1, stdout=out,
                           stderr="Traceback...\nValueError: boom" if rc else "")

    assert Judge("exit")(res(0)) == (False, "exited with code 0")
    assert Judge("exit")(res(1)) == (True, "exited with code 1: ValueError: boom")
    by_numbers = Judge("output", reference=res(0, "1.0 2.0"))
    assert by_numbers(res(0, "1.0 2.0"))[0] is False
    assert by_numbers(res(1, "1.0 2.0"))[0] is False      # the numbers alone decide
    assert by_numbers(res(0, "1.0 2.5")) == (True, "number 2: 2.5 where the reference printed 2.0")
    assert by_numbers(res(1, "")) == (True, "printed 0 number(s), the reference 2 (exited with code 1)")


def test_overrides_are_torch_switches():
    assert Overrides().environ() == {}
    assert Overrides(backend="eager").environ() == {"TORCH_COMPILE_OVERRIDE_BACKENDS": ">=0:eager"}
    assert Overrides(graph_backends=(((0, 2), "aot_eager"),)).environ() == {
        "TORCH_COMPILE_OVERRIDE_BACKENDS": "0,2:aot_eager"}
    env = Overrides(bisect=("inductor", "lowerings", 7), inductor_config=(("fallback_random", True),)).environ()
    assert env == {"MAGI_TRIAL_BISECT": '["inductor", "lowerings", 7]',
                   "TORCH_COMPILE_OVERRIDE_INDUCTOR_CONFIGS": ">=0:fallback_random=True"}
    assert json.loads(Overrides(config=(("torch._functorch.config.cse", False),)).environ()["MAGI_TRIAL_CONFIG"]) == {
        "torch._functorch.config.cse": False}
    assert Overrides(no_compile=True).environ() == {"TORCH_COMPILE_DISABLE": "1"}


@pytest.mark.parametrize("argv, message", [
    (["bisect"], "nothing to bisect"),
    (["bisect", "--", "python", "no/such/script.py"], "no such script"),
    (["bisect", "--rtol", "nan", "--", "python", __file__], "--rtol"),
])
def test_bisect_usage_errors_exit_2(argv, message, capsys, tmp_path):
    assert main([*argv[:1], "-o", str(tmp_path), *argv[1:]]) == 2
    assert message in capsys.readouterr().err


def test_bisect_that_cannot_run_exits_1(capsys, tmp_path):
    assert main(["bisect", "-o", str(tmp_path), "--json", "--", "/no/such/program"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["error"].startswith("cannot run /no/such/program") and out["culprit"] is None


def test_report_of_nothing_exits_2(capsys, tmp_path):
    assert main(["report", str(tmp_path / "nope")]) == 2
    assert "no such file or directory" in capsys.readouterr().err
    assert main(["report", str(tmp_path)]) == 2
    assert "no run under" in capsys.readouterr().err


# -- the command line on programs that compile nothing (quick: a few runs of the tracer) ------------

@pytest.mark.torch
@pytest.mark.slow
def test_cli_bisect_json_not_reproduced_and_the_program_itself(tmp_path, capsys):
    ok = tmp_path / "ok.py"
    ok.write_text("print(1.5, 2)\n")
    assert main(["bisect", "-o", str(tmp_path / "runs"), "--json", "--", sys.executable, str(ok)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["reproduced"] is False and out["culprit"] is None
    # the program as it is first: it passes, so the failure did not reproduce and no layer is run
    assert [s["backend"] for s in out["steps"]] == ["program"]
    assert out["runs"] == 1 and out["torch_bisector_runs"] == 5
    assert out["as_reported"]["why"] == "the program as it is exited with code 0"
    assert "--compare-output" in out["advice"][0]
    assert all(s["run"] and Path(s["run"]).is_dir() for s in out["steps"])  # every run traced
    assert set(out["steps"][0]) >= {"backend", "subsystem", "limit", "verdict", "seconds", "run"}
    saved = json.loads((Path(out["directory"]) / BISECT_FILE).read_text())
    assert saved["steps"] == out["steps"]

    bad = tmp_path / "bad.py"
    bad.write_text("import sys\nsys.exit(3)\n")
    assert main(["bisect", "-o", str(tmp_path / "runs"), "--json", "--", sys.executable, str(bad)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["reproduced"] is True and out["culprit"]["backend"] is None
    assert "fails with torch.compile disabled" in out["culprit"]["layer"]
    assert [s["change"] for s in out["steps"]] == ["as it is", "every graph on eager", "torch.compile disabled"]
    assert main(["report", out["directory"], "-o", str(tmp_path / "report")]) == 0
    text = (tmp_path / "report" / "REPORT.md").read_text()
    assert "the program itself (it fails with torch.compile disabled)" in text and "exited with code 3" in text
    saved = (tmp_path / "report" / "files" / "bisect.json").read_text()
    assert out["directory"] not in saved and '"directory": "."' in saved
    assert main(["report", out["directory"], "-o", str(tmp_path / "report")]) == 2  # never over it
    capsys.readouterr()

    assert main(["bisect", "-o", str(tmp_path / "runs"), "--compare-output", "--json", "--",
                 sys.executable, str(bad)]) == 1   # no reference: the program fails without compile too
    out = json.loads(capsys.readouterr().out)
    assert out["error"].startswith("the reference run (torch.compile disabled) exited with code 3")


# -- seeded bugs: one bisect by exit code, the same by --compare-output on its runs -----------------

def _bisect_both(program: str, root: Path) -> tuple:
    memo: dict = {}
    cmd = [sys.executable, str(PROGRAMS / program)]
    by_exit = Bisector(cmd, root / "exit", memo=memo, env=ENV).run()
    by_output = Bisector(cmd, root / "output", compare_output=True, memo=memo, env=ENV).run()
    return by_exit, by_output


@pytest.fixture(scope="module")
def bisect_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("bisect")


@pytest.fixture(scope="module", autouse=True)
def bisects(request, bisect_root):
    """Started with the module's first test, so the selected programs' bisects run beside the quick
    tests and the command-line one."""
    runs = ahead.start(request, lambda program: _bisect_both(program, bisect_root / Path(program).stem))
    yield runs
    runs.close()


@pytest.fixture
def bisected(request, bisects) -> tuple:
    """(by exit code, by --compare-output): the two bisects of the program the test's ahead mark names."""
    return bisects.result_for(request.node)


def _check_common(by_exit, by_output):
    for res in (by_exit, by_output):
        assert res.error is None and res.reproduced
        # not more than torch's, but for the reference's two runs (by output)
        assert res.torch_runs is None or res.runs - res.graph_runs <= res.torch_runs + 2 * (res.mode == "output")
    assert by_output.steps[0].verdict == "reference" and by_output.steps[0].change == "torch.compile disabled"
    assert by_output.steps[1].verdict == "reference" and by_output.reference["deterministic"] is True
    assert by_output.runs == by_exit.runs + 2  # its steps are the exit bisect's, plus the reference twice
    assert by_exit.steps[0].change == by_output.steps[2].change == "as it is"  # the failure confirmed first
    assert by_output.culprit == by_exit.culprit


@pytest.mark.torch
@pytest.mark.slow
@pytest.mark.ahead("post_grad_bug.py")
def test_post_grad_pass_bug_named_with_its_graph_and_diff(bisect_root, bisected):
    by_exit, by_output = bisected
    _check_common(by_exit, by_output)
    c = by_exit.culprit
    assert (c["backend"], c["subsystem"], c["debug_info"]) == ("inductor", "post_grad_passes",
                                                               "post_grad_custom_post_pass")
    assert c["graph"]["compile_id"] == "1/0" and c["graph"]["frame"] == "shift"  # not graph 0 (no add)
    run = Path(c["graph"]["run"])
    assert (run / c["graph"]["before"]).is_file() and (run / c["graph"]["after"]).is_file()
    # the culprit pass's own diff: the add turned into a sub, nothing else (no per-process noise either)
    own = c["graph"]["pass_diff"]
    assert (own["file"], own["removed"], own["added"]) == ("post_grad_graph.py", 1, 1)
    changed = [ln for ln in own["lines"] if ln[:2] in ("- ", "+ ")]
    assert len(changed) == 2 and "aten.add.Tensor" in changed[0] and "aten.sub.Tensor" in changed[1]
    assert own["before"]["limit"] == c["bisect_number"] - 1 and own["after"]["limit"] == c["bisect_number"]
    assert by_exit.runs < by_exit.torch_runs
    assert [s.subsystem for s in by_exit.steps if s.limit == -1] == [
        "pre_grad_passes", "joint_graph_passes", "post_grad_passes"]

    # the bug report of that bisect: reproducer, versions, the stage's diff, the steps; nothing absolute
    rep = build_report(Path(by_exit.directory))
    target = write_report(rep, bisect_root / "report")
    text = target.read_text()
    files = sorted(p.name for p in (target.parent / "files").iterdir())
    assert "repro_1_0.py" in files and "bisect.json" in files
    assert any(f.startswith("before_post_grad_passes") for f in files)
    assert "post_grad_custom_post_pass" in text and "graph 1/0" in text and "torch: 2." in text
    assert "](files/repro_1_0.py)" in text
    assert str(by_exit.directory) not in (target.parent / "files" / "bisect.json").read_text()


@pytest.mark.torch
@pytest.mark.slow
@pytest.mark.ahead("decomp_bug.py")
def test_wrong_decomposition_named(bisected):
    by_exit, by_output = bisected
    _check_common(by_exit, by_output)
    c = by_exit.culprit
    assert (c["backend"], c["subsystem"]) == ("aot_eager_decomp_partition", "decomposition")
    assert "hardtanh" in c["debug_info"] and c["graph"]["compile_id"] == "0/0"
    # the decomposition's own diff: the AOT graph's hardtanh became the wrong clamp
    own = c["graph"]["pass_diff"]
    assert own["file"] == "aot_inference_graph.py"
    removed = [ln for ln in own["lines"] if ln.startswith("- ")]
    added = [ln for ln in own["lines"] if ln.startswith("+ ")]
    assert "aten.hardtanh.default" in removed[0] and "aten.clamp.default(mul, -2.0, 2.0)" in added[0]
    assert by_exit.runs <= by_exit.torch_runs  # the same, with the program as it is run first


@pytest.mark.torch
@pytest.mark.slow
@pytest.mark.ahead("backend_bug.py")
def test_backend_crashing_on_one_graph_of_three(bisected):
    by_exit, by_output = bisected
    _check_common(by_exit, by_output)
    c = by_exit.culprit
    assert c["backend"] == "program" and c["subsystem"] is None
    assert c["graph"]["frame_id"] == 2 and c["graph"]["frame"].startswith("torch_dynamo_resume_in_step")
    assert by_exit.graph_runs == 2  # three frames, bisected
    assert by_exit.torch_runs is None  # torch's bisector swaps the program's backend for inductor


@pytest.mark.torch
@pytest.mark.slow
@pytest.mark.ahead("backend_bug.py")
async def test_B_writes_the_bug_report_of_a_bisected_run(bisected, tmp_path):
    """In the app, B on the culprit's run (made by a bisect) writes the bundle beside it."""
    from magi_tui.ui.app import MagiApp
    from tests.support.pilot import loaded_run_screen, wait_for

    run = Path(bisected[0].culprit["graph"]["run"])
    app = MagiApp(run)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded_run_screen(pilot)
        await pilot.press("B")
        await wait_for(pilot, lambda: (run.parent / f"bug_report_{run.name}" / "REPORT.md").is_file(),
                       what="the bug report")
    text = (run.parent / f"bug_report_{run.name}" / "REPORT.md").read_text()
    assert "graph 2/0" in text and "picky_backend: cannot run a graph with cos" in text
    assert "graph break" in text and "](files/bisect.json)" in text


@pytest.mark.torch
@pytest.mark.slow
@pytest.mark.ahead("healthy.py")
def test_healthy_program_not_reproduced(bisected):
    by_exit, by_output = bisected
    for res in (by_exit, by_output):
        assert res.error is None and res.reproduced is False and res.culprit is None
        assert res.as_reported["reproduces"] is False
    # the program as it is passes: no layer is run (the reference twice first, by output)
    assert by_exit.runs == 1 and by_output.runs == 3 and by_exit.torch_runs == 5
    assert "--compare-output" in by_exit.advice[0] and by_output.advice == []
