"""The bug-report bundle reproduces the bug (issue 31, item 11): ``magi-tui report`` copies the program (the
script the run traced, the modules beside it that it imports, the small files its command line names) with
relative paths, the culprit graph and its runnable repro (torch's ``fx_graph_runnable`` and Dynamo's captured
graph made runnable), the bisect's steps and the versions; its ``Reproduce:`` commands work from the bundle
moved elsewhere (the program's own folder gone), and a bisect by ``--compare-output`` reads "wrong output".

The real one: a program whose compiled graph (Inductor) indexes out of bounds at run time, traced with
``python -m tracer``; the bundle's program raises the same exception from the bundle, and both graph repros
run. The torch-free ones: a bisect folder made around a stored run, with a program folder holding configs,
a package, a link leading out of it and a file too big to copy.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from magi_tui.cli import main
from magi_tui.model.outputs import bugreport
from tests.support import ahead, slow

ROOT = Path(__file__).resolve().parents[2]
STORED_RUN = (ROOT / "tests" / "torchtrace" / "logs" / "cuda_2_11" / "runs" / "magi_depyf" / "run_20261124_205439"
              / "model_1_prog_rank_0")
REPRODUCE = re.compile(r"Reproduce[\w ]*: `([^`]+)`")

CRASH = '''\
import torch

from helpers import scale  # a module beside the script: the bundle holds it too


@torch.compile
def pick(x, idx):
    return (x.sin() * scale())[idx] + 1


x = torch.randn(8)
print(pick(x, torch.tensor([1, 2])).sum())
print(pick(x, torch.tensor([1, 200])).sum())  # out of bounds inside the compiled kernel
'''


def _env() -> dict[str, str]:
    env = dict(os.environ, TORCHINDUCTOR_COMPILE_THREADS="1")
    for name in ("TORCH_TRACE", "PYTHONPATH", "TORCH_COMPILE_DISABLE"):
        env.pop(name, None)
    return env


@ahead.early("crash_run")
def _crash_run(base: Path) -> tuple[Path, Path, subprocess.CompletedProcess]:
    """(the program's folder, its run, the traced process): run from its folder as ``python -m tracer
    crash.py``, the runs written elsewhere (started early: tests/support/ahead.py)."""
    pytest.importorskip("torch")
    project = base / "project"
    project.mkdir(parents=True)
    (project / "crash.py").write_text(CRASH)
    (project / "helpers.py").write_text("def scale():\n    return 2.0\n")
    proc = slow.run([sys.executable, "-m", "tracer", "-o", str(base / "runs"), "crash.py"], cwd=project,
                    env={**_env(), "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=600)
    run = Path(next(ln for ln in proc.stderr.splitlines() if ln.startswith("MAGI_RUN_DIR=")).split("=", 1)[1])
    return project, run, proc


@pytest.fixture(scope="module")
def crash_run(tmp_path_factory):
    return ahead.early_result("crash_run", tmp_path_factory)


def _commands(report: str) -> list[str]:
    return REPRODUCE.findall(report)


def _run_here(command: str, cwd: Path, bindir: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    """A ``Reproduce:`` command as a user types it in the bundle's folder (``python`` is this interpreter)."""
    env = _env()
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    return slow.run(command, shell=True, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def bindir(tmp_path) -> Path:
    d = tmp_path / "bin"
    d.mkdir()
    (d / "python").write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} \"$@\"\n")  # (a link: no venv)
    (d / "python").chmod(0o755)
    return d


@pytest.mark.torch
@pytest.mark.slow
def test_bundle_of_a_crashing_compiled_graph_reproduces_it_from_elsewhere(crash_run, tmp_path, bindir, capsys):
    project, run, proc = crash_run
    assert proc.returncode == 1, proc.stderr[-3000:]
    traced_type = proc.stderr.strip().splitlines()[-1].split(":")[0]
    assert traced_type == "RuntimeError" and "index out of bounds" in proc.stderr
    session = json.loads((run / "timeline_events" / "session.json").read_text())
    assert session["outcome"]["script"] == "crash.py"  # relative: found through the run's own records

    first = tmp_path / "first"
    assert main(["report", str(run), "-o", str(first / "bundle")]) == 0
    assert "wrote" in capsys.readouterr().out
    # the bundle moved away, the program's folder gone: nothing may point back into either
    moved = tmp_path / "elsewhere" / "bundle"
    moved.parent.mkdir()
    shutil.move(str(first / "bundle"), str(moved))
    project.rename(project.with_name("project_gone"))
    try:
        report = (moved / "REPORT.md").read_text()
        names = sorted(p.relative_to(moved).as_posix() for p in moved.rglob("*") if p.is_file())
        assert {"files/program/crash.py", "files/program/helpers.py", "files/repro_0_0.py",
                "files/graph_0_0.py"} <= set(names), names
        assert (moved / "files" / "program" / "crash.py").read_text() == CRASH
        assert "- run status: **failed**" in report
        assert "- the program ended: exit code 1: RuntimeError raised while compiled graph 0/0 ran" in report
        assert re.search(r"^- torch: 2\.", report, re.M) and "- magi-tui: " in report
        assert "python, platform: not recorded in this run" in report
        commands = _commands(report)
        assert commands == ["python files/program/crash.py", "python files/repro_0_0.py",
                            "python files/graph_0_0.py"], commands
        assert "Expected: it raises RuntimeError: " in report

        program = _run_here(commands[0], moved, bindir)
        assert program.returncode == 1, program.stderr[-3000:]
        last = program.stderr.strip().splitlines()[-1]
        assert last.split(":")[0] == traced_type and "index out of bounds" in last  # the same exception

        fx = _run_here(commands[1], moved, bindir)   # torch's repro: random inputs, in range (zeros)
        assert fx.returncode == 0, fx.stderr[-3000:]
        graph = _run_here(commands[2], moved, bindir)
        assert graph.returncode == 0, graph.stderr[-3000:]
        assert "compile 0/0's captured graph ran on inductor" in graph.stdout
    finally:
        project.with_name("project_gone").rename(project)


# -- without torch: a bisect folder around a stored run ------------------------------------------------------

TRAIN = '''\
import sys

from helpers import load      # beside the script
from mypkg.sub import twice   # a package beside it

args = sys.argv[1:]
config = args[args.index("--config") + 1]
print("config:", load(config).strip(), "twice:", twice(2))
'''


def _project(tmp: Path) -> tuple[Path, Path]:
    """A program folder: the script, a module, a package, configs, a link leading out, a big file."""
    proj = tmp / "proj"
    (proj / "configs").mkdir(parents=True)
    (proj / "mypkg").mkdir()
    (proj / "train.py").write_text(TRAIN)
    (proj / "helpers.py").write_text("import util2\n\n\ndef load(path):\n    return open(path).read()\n")
    (proj / "util2.py").write_text("X = 1\n")
    (proj / "mypkg" / "__init__.py").write_text("")
    (proj / "mypkg" / "sub.py").write_text("def twice(x):\n    return 2 * x\n")
    (proj / "configs" / "small.yaml").write_text("lr: 0.1\napi_key: 'q8Zr3Lm7Xv2Nb5Kt9Wc4Hs6Jd1'\n")
    (proj / "configs" / "big.json").write_bytes(b"0" * (bugreport.MAX_ARG_FILE + 1))
    (proj / "configs" / "hf_token.txt").write_text("not for the bundle\n")
    (proj / "weights.pt").write_bytes(b"not for the bundle")
    outside = tmp / "outside"
    outside.mkdir()
    (outside / "private.txt").write_text("not for the bundle\n")
    (proj / "link.txt").symlink_to(outside / "private.txt")
    return proj, outside


def _bisect_folder(proj: Path, mode: str) -> Path:
    """``proj/runs/bisect_<ts>/`` as ``magi-tui bisect`` leaves it (run from ``proj``), its culprit run a copy
    of a stored run whose session.json names the script as typed."""
    folder = proj / "runs" / "bisect_20261128_101010"
    run = folder / "magi_depyf" / STORED_RUN.parent.name / STORED_RUN.name
    shutil.copytree(STORED_RUN, run)
    session = run / "timeline_events" / "session.json"
    rec = json.loads(session.read_text())
    rec["outcome"] = {"ended_by": "program", "exit_code": 0, "interrupted": False, "exception": None,
                      "script": "train.py"}
    session.write_text(json.dumps(rec))
    command = ["python", "train.py", "--config", "configs/small.yaml", f"--big={proj / 'configs' / 'big.json'}",
               "--extra", "link.txt", "--login", "configs/hf_token.txt", "--weights", "weights.pt",
               "--api-key", "XYZ-very-secret-api-key-4242", "--lr", "0.1"]
    good = {"backend": "eager", "subsystem": None, "limit": None, "verdict": "passes", "seconds": 2.0,
            "run": None, "change": "every graph on eager", "why": "the same numbers"}
    bad = {"backend": None, "subsystem": None, "limit": None, "verdict": "reproduces", "seconds": 3.0,
           "run": str(run), "change": "the program as it is",
           "why": "number 2: 2.5 where the reference printed 2.0" if mode == "output" else "exited with code 1"}
    steps = [good, bad]
    if mode == "output":
        steps.insert(0, {"backend": None, "subsystem": None, "limit": None, "verdict": "reference", "seconds": 1.0,
                         "run": None, "change": "torch.compile disabled", "why": "4 number(s)"})
    bisect = {"reproduced": True, "mode": mode, "command": command, "runs": len(steps), "graph_runs": 0,
              "torch_bisector_runs": None, "directory": str(folder), "notes": [], "error": None,
              "versions": {"torch": "2.13.0+cpu", "python": "3.11.7", "platform": "Linux-x86_64"},
              "culprit": {"backend": "program", "layer": "the backend", "subsystem": None,
                          "graph": {"run": str(run), "compile_id": "1/0", "found_by": "failed compile"},
                          "run": str(run)},
              "steps": steps}
    (folder / "bisect.json").write_text(json.dumps(bisect))
    return folder


def test_wrong_output_bisect_reads_wrong_output_and_its_program_runs_from_the_bundle(tmp_path, bindir, capsys):
    proj, outside = _project(tmp_path)
    folder = _bisect_folder(proj, "output")
    out = tmp_path / "made" / "bundle"
    assert main(["report", str(folder), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    moved = tmp_path / "moved" / "bundle"
    moved.parent.mkdir()
    shutil.move(str(out), str(moved))
    shutil.rmtree(proj)  # the program's folder gone: the bundle stands alone

    report = (moved / "REPORT.md").read_text()
    status = next(ln for ln in report.splitlines() if ln.startswith("- run status:"))
    assert status.startswith("- run status: **wrong output** (number 2: 2.5 where the reference printed 2.0)"), status
    assert "**recovered**" not in report and "**degraded**" not in report
    assert "- bisect (by the numbers it prints, against torch.compile disabled) culprit: **the backend**" in report
    assert "| 2 | every graph on eager | right output |" in report
    assert "| 3 | the program as it is | wrong output |" in report
    assert "- python: 3.11.7" in report and "- platform: Linux-x86_64" in report

    names = sorted(p.relative_to(moved).as_posix() for p in moved.rglob("*") if p.is_file())
    for name in ("files/program/train.py", "files/program/helpers.py", "files/program/util2.py",
                 "files/program/mypkg/__init__.py", "files/program/mypkg/sub.py",
                 "files/program/configs/small.yaml", "files/bisect.json"):
        assert name in names, (name, names)
    assert not any(x in n for n in names for x in ("big.json", "link.txt", "private", "token", "weights")), names
    for p in moved.rglob("*"):
        if p.is_file():
            data = p.read_bytes()
            assert b"not for the bundle" not in data and b"XYZ-very-secret-api-key-4242" not in data, p
            assert b"q8Zr3Lm7Xv2Nb5Kt9Wc4Hs6Jd1" not in data, p  # the config passed the redactor too
    assert "api_key: '[redacted]'" in (moved / "files" / "program" / "configs" / "small.yaml").read_text()
    # what was left out, and why
    left = report[report.index("## Left out"):]
    assert "link.txt: outside the program's folder, not copied" in left
    assert f"big.json: {bugreport.MAX_ARG_FILE + 1:,} bytes, over the {bugreport.MAX_ARG_FILE:,} a named file" in left
    assert "configs/hf_token.txt: named like a credential's file, not copied" in left
    assert "weights.pt: not a config file (.pt), not copied" in left

    commands = _commands(report)
    program = ("python files/program/train.py --config files/program/configs/small.yaml "
               f"--big={proj / 'configs' / 'big.json'} --extra link.txt --login configs/hf_token.txt "
               "--weights weights.pt --api-key '[redacted]' --lr 0.1")
    assert commands[0] == program.replace(str(Path.home()), "~"), commands
    assert commands[1] == "env TORCH_COMPILE_DISABLE=1 " + commands[0]  # the reference to compare with
    assert "Some arguments were redacted" in report
    ran = _run_here(commands[0], moved, bindir, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "config: lr: 0.1\napi_key: '[redacted]' twice: 4"
    assert "wrote" in printed and str(moved) not in printed


def test_exit_code_bisect_reads_fails_and_says_what_to_expect(tmp_path):
    """The culprit's run of a bisect by exit code failed (the bisect says so), whatever its trace reads."""
    proj, _ = _project(tmp_path)
    folder = _bisect_folder(proj, "exit")
    out = tmp_path / "bundle"
    assert main(["report", str(folder), "-o", str(out)]) == 0
    report = (out / "REPORT.md").read_text()
    status = next(ln for ln in report.splitlines() if ln.startswith("- run status:"))
    assert status.startswith("- run status: **fails** (exited with code 1) — the bug shows in this run"), status
    assert status.endswith("the trace alone reads degraded (68 events, 4 frame(s))") and "wrong output" not in report
    assert "| 2 | the program as it is | reproduces | exited with code 1 |" in report
    assert _commands(report)[0].startswith("python files/program/train.py --config files/program/configs/small.yaml")
    assert "Expected: exited with code 1" in report


def test_a_run_without_a_bisect_copies_its_script_found_from_the_frames(tmp_path):
    """No bisect: the script is the session's (relative, the folder it ran in not recorded); found through
    the run's own file paths; its arguments are not recorded, and the report says so."""
    proj, _ = _project(tmp_path)
    run = tmp_path / "runs" / STORED_RUN.name
    shutil.copytree(STORED_RUN, run)
    exc = {"type": "RuntimeError", "message": "boom", "origin": "compiled_code", "compile_id": "1/0",
           "in_graph": True, "file": str(proj / "train.py"), "line": 7, "call_file": str(proj / "train.py"),
           "call_line": 8, "traceback": ""}
    session = run / "timeline_events" / "session.json"
    rec = json.loads(session.read_text())
    rec["outcome"] = {"ended_by": "program", "exit_code": 1, "interrupted": False, "exception": exc,
                      "script": "train.py"}
    session.write_text(json.dumps(rec))
    out = tmp_path / "bundle"
    assert main(["report", str(run), "-o", str(out)]) == 0
    report = (out / "REPORT.md").read_text()
    assert _commands(report)[0] == "python files/program/train.py"
    assert "The arguments it ran with are not recorded" in report
    assert "Expected: it raises RuntimeError: boom (exit code 1)" in report
    assert (out / "files" / "program" / "mypkg" / "sub.py").is_file()
    assert "- the program ended: exit code 1: RuntimeError raised while compiled graph 1/0 ran" in report


def test_files_over_the_bound_are_left_out_with_a_line(tmp_path, monkeypatch):
    monkeypatch.setattr(bugreport, "MAX_COPY", 300)
    assert len(TRAIN) < 300
    proj, _ = _project(tmp_path)
    folder = _bisect_folder(proj, "exit")
    out = tmp_path / "bundle"
    assert main(["report", str(folder), "-o", str(out)]) == 0
    report = (out / "REPORT.md").read_text()
    assert not list(out.glob("files/repro_*"))  # torch's reproducer is bigger than 300 bytes
    left = report[report.index("## Left out"):]
    assert re.search(r"^- repro_1_0\.py: [\d,]+ bytes, over the 300 a copied file may have$", left, re.M), left
    assert (out / "files" / "program" / "train.py").is_file()  # small ones still copied
