"""``metrics`` printed a restarted compile's shape symbol twice (hostile round 3 papercut): Dynamo's restart
traces the frame again and torch records ``create_symbol`` again. From the tracer's run and from the
TORCH_TRACE log of the same real program alike, each symbol is listed once."""

from __future__ import annotations

import os
import sys

import pytest

from magi_tui.cli import main
from tests.support import slow
from tests.support.paths import ROOT

pytest.importorskip("torch")  # the program it traces imports torch
pytestmark = pytest.mark.slow

PROGRAM = """\
import torch
@torch.compile(backend="eager", dynamic=True)
def f(x):
    y = x.sin() * x.shape[0]
    print("graph break")  # Dynamo restarts the analysis of f: s77 is created twice
    return y + 1
f(torch.ones(3))
"""


def test_a_restarted_compiles_symbol_is_listed_once(tmp_path, capsys):
    (tmp_path / "prog.py").write_text(PROGRAM)
    out = slow.run([sys.executable, "-m", "tracer", "-o", str(tmp_path / "runs"), "prog.py"], cwd=tmp_path,
                   capture_output=True, text=True, timeout=180,
                   env=dict(os.environ, PYTHONPATH=str(ROOT), TORCH_TRACE=str(tmp_path / "trace")))
    assert out.returncode == 0, out.stderr[-2000:]
    for source in (tmp_path / "runs", tmp_path / "trace"):
        assert main(["metrics", str(source)]) == 0
        text = capsys.readouterr().out
        assert "restart" in text
        lines = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("symbol: s")]
        assert any("from L['x'].size()[0]" in ln for ln in lines), text
        assert len(lines) == len(set(lines)), text
