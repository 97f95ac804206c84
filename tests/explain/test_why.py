"""``magi-tui why -- python prog.py``: the program runs traced, its output passes through, then its triage is
printed with triage's exit code (issue 32.10): one command for people who read TORCH_LOGS today."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.explain.realrun import PROGRAMS, _env
from tests.support import slow

pytest.importorskip("torch")
pytestmark = [pytest.mark.torch, pytest.mark.slow]


def why(tmp_path, mode: str, *flags: str) -> subprocess.CompletedProcess:
    return slow.run([sys.executable, "-m", "magi_tui", "why", "-o", str(tmp_path), *flags, "--", "python",
                     str(PROGRAMS / "verdicts.py")], cwd=tmp_path, env=_env({"VERDICT_MODE": mode}),
                    capture_output=True, text=True, timeout=300)


def test_why_prints_the_triage_with_its_exit_code(tmp_path):
    proc = why(tmp_path, "fullgraph", "--json")
    assert proc.returncode == 1, proc.stderr[-2000:]  # torch raised into the program: triage's 1
    j = json.loads(proc.stdout)  # stdout is one JSON document: the program's output went to stderr
    assert j["status"] == "failed" and j["outcome"]["exception"]["origin"] == "compile"
    assert "done fullgraph" not in proc.stderr  # the program died of it, as without magi-tui
    assert "Unsupported" in proc.stderr  # its own traceback passes through
    assert "magi-tui why: the program exited 1" in proc.stderr


def test_why_on_a_program_whose_own_code_failed_is_triage_0(tmp_path):
    proc = why(tmp_path, "outside")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "status: ok" in proc.stdout and "raised ValueError outside compiled code" in proc.stdout


def test_why_refuses_what_is_not_a_python_script(tmp_path):
    proc = slow.run([sys.executable, "-m", "magi_tui", "why", "--", "ls"], capture_output=True, text=True,
                    env=_env(None), timeout=60)
    assert proc.returncode == 2 and "runs a Python script" in proc.stderr
