"""A run whose program was killed after its last compile closed reads as incomplete (hostile round 3,
item 7): every lifecycle in it closed, so only the tracer's end-of-session record (written when it closes the
run, docs/FORMAT.md) can tell. A clean exit, and a program that raised, close the run: those read as before."""

from __future__ import annotations

import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from magi_tui.cli import main
from tests.support import slow
from tests.support.paths import ROOT

pytest.importorskip("torch")  # the program it traces imports torch
pytestmark = pytest.mark.slow

PROGRAM = """\
import os, signal, sys, torch
f = torch.compile(lambda x: x * 2 + 1, backend="eager")
print(f(torch.ones(3)).sum().item(), flush=True)
if sys.argv[1] == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
if sys.argv[1] == "raise":
    raise SystemExit(4)
"""


def _traced(tmp_path, how):
    script = tmp_path / "prog.py"
    out = slow.run([sys.executable, "-m", "tracer", "-o", str(tmp_path / how), str(script), how],
                   cwd=tmp_path, capture_output=True, text=True, timeout=180,
                   env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert "9.0" in out.stdout, out.stderr
    return out.returncode, tmp_path / how


def _triage(capsys, root):
    code = main(["triage", str(root), "--json"])
    data = json.loads(capsys.readouterr().out)
    return code, (data[0] if isinstance(data, list) else data)


def test_killed_program_reads_incomplete_clean_and_raised_ones_do_not(tmp_path, capsys):
    (tmp_path / "prog.py").write_text(PROGRAM)
    with ThreadPoolExecutor(2) as pool:  # the three runs two at a time: a process per core
        traced = {how: pool.submit(_traced, tmp_path, how) for how in ("kill", "clean", "raise")}
    rc, killed = traced["kill"].result()
    assert rc == -9
    code, t = _triage(capsys, killed)
    assert t["status"] == "incomplete" and code == 1
    assert any("no end-of-session record" in why for why in t["incomplete_reasons"]), t["incomplete_reasons"]
    # runs says the same
    assert main(["runs", str(killed), "--json"]) in (0, 1)
    assert json.loads(capsys.readouterr().out)[0]["status"] == "incomplete"

    for how, want_rc in (("clean", 0), ("raise", 4)):
        rc, root = traced[how].result()
        assert rc == want_rc
        code, t = _triage(capsys, root)
        assert t["status"] == "ok" and code == 0, (how, t["incomplete_reasons"])
