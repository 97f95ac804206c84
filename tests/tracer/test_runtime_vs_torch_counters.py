"""Issue 24's yardstick: the numbers magi-tui reports for a program agree with torch's own for the same run
(``torch._dynamo.utils.counters`` and ``compile_times()``'s ``_compile.compile_inner`` seconds) -- compiles per
frame, calls served per compiled entry, compile seconds within timing noise."""

from __future__ import annotations

import json
import os
import sys

import pytest

from magi_tui.cli import main
from tests.support import slow
from tests.support.paths import ROOT

pytest.importorskip("torch")  # the program it traces imports torch
pytestmark = pytest.mark.slow

PROGRAM = """\
import json, torch
from torch._dynamo.utils import compilation_time_metrics, counters

@torch.compile(backend="eager")
def f(x):
    return x.sin() + 1

for n in (3, 3, 3, 4, 4, 5):  # 0/0 serves 3 calls, 0/1 (automatic dynamic) the other 3
    f(torch.ones(n))
print("TORCH", json.dumps({"frames_ok": counters["frames"]["ok"], "unique_graphs": counters["stats"]["unique_graphs"],
                           "compile_inner_s": sum(compilation_time_metrics["_compile.compile_inner"])}))
"""


def test_compiles_calls_and_seconds_agree_with_torchs_counters(tmp_path, capsys):
    (tmp_path / "prog.py").write_text(PROGRAM)
    out = slow.run([sys.executable, "-m", "tracer", "-o", str(tmp_path / "runs"), "prog.py"], cwd=tmp_path,
                   capture_output=True, text=True, timeout=180, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert out.returncode == 0, out.stderr[-2000:]
    torch_says = json.loads(out.stdout.split("TORCH ", 1)[1])
    assert main(["triage", str(tmp_path / "runs"), "--json"]) == 0
    t = json.loads(capsys.readouterr().out)
    t = t[0] if isinstance(t, list) else t
    (frame,) = [f for f in t["frames"] if f["name"] == "f"]
    assert frame["compiles"] == torch_says["frames_ok"] == torch_says["unique_graphs"] == 2
    assert [e["calls"] for e in frame["entries"]] == [3, 3] and frame["eager_calls"] == 0
    ours, theirs = frame["compile_s"], torch_says["compile_inner_s"]
    assert abs(ours - theirs) <= max(0.05, 0.25 * theirs), (ours, theirs)  # timing noise on a shared machine
