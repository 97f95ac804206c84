"""Issue 31 (8): ``fix`` checks determinism first. When it has a change to try, the baseline runs twice
before any candidate; a program whose two runs print other numbers (random numbers without a seed,
timestamps) is ``nondeterministic`` (exit 3): every change is rejected untried, saying why (no change can be
proven by comparing outputs with such a baseline), with the lines that moved and what to do. Numbers that move
within ``--rtol`` / ``--atol`` are deterministic enough; the second run is outside ``--max-runs``.

Real processes, no torch: ``python prog.py`` runs under a stand-in for the tracer (``MAGI_TUI_TRACER``) that
writes a run directory with one graph break on ``print`` (a candidate for ``fix``), names it as the tracer
does, then runs the script."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from magi_tui.model.outputs.fixes import fix_lines
from magi_tui.model.sources.fix_file import FIX_FILE
from tests.support.cli import run_cli

STUB_TRACER = """\
import json, os, runpy, sys, tempfile
# python -m stub_run_tracer -o ROOT script.py args: a run dir with one print graph break, then the script
args = sys.argv[1:]
os.makedirs(args[1], exist_ok=True)
run = tempfile.mkdtemp(prefix="run_", dir=args[1])
os.mkdir(os.path.join(run, "timeline_events"))


def line(i, name, **a):
    return json.dumps({"index": i, "name": name, "relative_time": "0.0ms", "files": [],
                       "attributes": {"scope": "fullgraph", "compile_id": "0/0", "frame": "f", **a},
                       "datetime": "2026-11-22 11:19:01.460", "timestamp": 1795346341.0 + i / 1000}) + "\\n"


with open(os.path.join(run, "timeline_events", "timeline.jsonl"), "w") as f:
    f.write(line(0, "fullgraph_before_compile", lifecycle_name="compile")
            + line(1, "fullgraph_graph_break", reason="Failed to trace builtin operator `print`", gb_id="GB0059",
                   gb_type="Failed to trace builtin operator",
                   explanation="Dynamo does not know how to trace builtin operator `print`",
                   hints=["Or add it to torch._dynamo.config.reorderable_logging_functions"],
                   user_file="prog.py", user_line=3, source_line="print(x)")
            + line(2, "fullgraph_after_compile", lifecycle_name="compile", duration_ms=3.0))
print("MAGI_RUN_DIR=" + run, file=sys.stderr, flush=True)
sys.argv = args[2:]
runpy.run_path(args[2], run_name="__main__")
"""

RANDOM = """\
import random
print("step", 1)
print("loss", random.random())
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
def fix(tmp_path, monkeypatch, capsys):
    """``fix(source, *options)``: ``magi-tui fix --json`` of the program -> (exit code, JSON)."""
    (tmp_path / "stub_run_tracer.py").write_text(STUB_TRACER)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("MAGI_TUI_TRACER", "stub_run_tracer")

    def run(source: str, *options: str) -> tuple[int, dict]:
        prog = tmp_path / "prog.py"
        prog.write_text(source)
        code, out, _err = run_cli(capsys, "fix", "-o", str(tmp_path / "runs"), "--json", *options, "--", "python",
                                  str(prog))
        res = json.loads(out)
        assert json.loads((Path(res["directory"]) / FIX_FILE).read_text()) == res
        return code, res

    return run


def test_random_numbers_reject_every_change_untried_saying_why(fix):
    code, res = fix(RANDOM)
    assert code == 3 and res["verdict"] == "nondeterministic" and res["error"] is None
    assert res["best"] is None and res["runs"] == 2  # the baseline twice, no candidate run
    ref = res["reference"]
    assert ref["deterministic"] is False and ref["why"].startswith("number 2: ")
    assert [m[0] for m in ref["moved"]] == ["-", "+"] and all(m[1:].startswith("loss ") for m in ref["moved"])
    assert all(r and Path(r).is_dir() for r in ref["runs"]) and ref["runs"][0] == res["baseline"]["run"]
    (c,) = res["candidates"]
    assert c["key"] == "reorderable_print" and c["tried"] is False and c["kept"] is False
    assert c["outputs_equal"] is None and c["run"] is None and c["resolved"] == []
    assert c["why"].startswith("not tried: the baseline is not reproducible (two runs of the program as it is "
                               "disagree: number 2: ")
    assert "so no change can be proven by comparing its output with the baseline's" in c["why"]
    advice = " ".join(res["advice"])
    assert "torch.manual_seed" in advice and "random.seed" in advice and "numpy.random.seed" in advice


def test_the_text_and_the_fix_view_say_why(fix, capsys, tmp_path):
    _code, res = fix(RANDOM)
    lines = [text for _style, text, _i in fix_lines(res)]
    assert lines[0].startswith("baseline: 1 graph break(s)")
    assert lines[1].startswith("nondeterministic: two runs of the program as it is disagree (number 2: ")
    assert "no change can be proven by comparing outputs, so none was tried" in lines[1]
    assert any(ln.strip().startswith("-loss ") for ln in lines) and any(ln.strip().startswith("+loss ") for ln in lines)
    row = next(ln for ln in lines if ln.startswith("let Dynamo move print()") and ln.endswith(" no"))
    assert row.split()[-2:] == ["—", "no"]  # outputs: not run
    assert "no change can be proven: the baseline is nondeterministic" in lines
    assert any(ln.startswith("→ make the program print the same thing every run") for ln in lines)

    code, out, err = run_cli(capsys, "fix", "-o", str(tmp_path / "runs2"), "--", "python", str(tmp_path / "prog.py"))
    assert code == 3 and "nondeterministic: two runs of the program as it is disagree" in out
    assert "baseline again: does the program print the same numbers twice?" in err


async def test_the_fix_screen_shows_the_verdict(fix, tmp_path):
    from magi_tui.ui.app import MagiApp
    from magi_tui.ui.screens.fix import FixScreen
    from tests.support.pilot import screen_text, wait_for

    _code, res = fix(RANDOM)
    app = MagiApp(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(FixScreen(tmp_path / "runs"))
        await wait_for(pilot, lambda: isinstance(app.screen, FixScreen) and app.screen.loaded, what="the fix view")
        await wait_for(pilot, lambda: "nondeterministic: two runs of the program as it is" in screen_text(app),
                       what="the verdict on screen")
        assert "loss" in screen_text(app)


def test_numbers_within_the_tolerances_are_deterministic_enough(fix, tmp_path):
    code, res = fix(SLIGHTLY)
    assert code == 3 and res["verdict"] == "nondeterministic"
    (slight,) = [a for a in res["advice"] if "differ only slightly" in a]
    assert "--atol 0.001 or --rtol 0.001" in slight
    (tmp_path / "ran").unlink()

    code, res = fix(SLIGHTLY, "--rtol", "1e-2")
    assert code == 0 and res["verdict"] == "no_proven_change"
    assert res["reference"]["deterministic"] is True and res["reference"]["numbers_changed"] == 1
    (c,) = res["candidates"]
    assert c["tried"] is True and c["outputs_equal"] is True and c["why"] == "no fewer graph breaks or recompiles"
    assert res["runs"] == 3 and res["advice"] == []
    lines = [text for _style, text, _i in fix_lines(res)]
    assert lines[1].startswith("reference: the baseline ran twice and printed the same numbers within the "
                               "tolerances (1 moved, at most 0.0005)")


def test_the_second_run_is_outside_max_runs(fix):
    code, res = fix("print('loss', 1.5)\n", "--max-runs", "2")
    assert code == 0 and res["reference"]["deterministic"] is True and res["reference"]["numbers_changed"] == 0
    assert res["runs"] == 3 and [c["tried"] for c in res["candidates"]] == [True]
    assert not any("not tried" in n for n in res["notes"])

