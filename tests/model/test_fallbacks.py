"""Every silent fallback in one place (issue 24 item 3): programs run under the tracer in the test, each
fallback kind once, where it happened and how much. The programs' runs are made ahead, two at a time
(tests/support/ahead.py)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

from magi_tui.model.outputs.report import triage_json, triage_text
from magi_tui.model.run import RunModel
from tests.support import ahead, slow
from tests.support.traced import ROOT, traced_run

pytestmark = pytest.mark.torch

EAGER_PROGRAM = """
import sys, torch
from tracer import explain_compilation
torch._dynamo.config.recompile_limit = 2
torch._dynamo.config.suppress_errors = True
def limited(x):
    return x - 1
def stanced(x):
    return x + 2
def broken(x):
    return x * 3
def failing_backend(gm, example_inputs):
    raise RuntimeError("always fails")
cl = torch.compile(limited, backend="eager", dynamic=False)
cs = torch.compile(stanced, backend="eager", dynamic=False)
cb = torch.compile(broken, backend=failing_backend)
with explain_compilation(sys.argv[1], label="fallbacks") as run:
    for n in range(2, 7): cl(torch.ones(n))          # 2 compiles, then 3 eager calls
    cs(torch.ones(2))
    with torch.compiler.set_stance("eager_on_recompile"):
        for n in range(3, 7): cs(torch.ones(n))      # 4 eager calls: the stance never recompiles
    for _ in range(3): cb(torch.ones(2))            # the backend fails: suppressed, runs eagerly
print(run.path)
"""

BYPASS_PROGRAM = """
import sys, torch
from tracer import explain_compilation
def my_pass(graph):                                 # not a CustomGraphPass: the FX-graph cache cannot key it
    return None
torch._inductor.config.post_grad_custom_post_pass = my_pass
def f(x):
    return (x + 1).relu()
cf = torch.compile(f)
with explain_compilation(sys.argv[1], label="bypass") as run:
    cf(torch.ones(3))
print(run.path)
"""


def _run(base: Path, program: str) -> tuple[Path, str]:
    """(the run dir, what the program printed) of one of this module's programs, traced in a fresh folder."""
    pytest.importorskip("torch")
    out = Path(tempfile.mkdtemp(dir=base))
    if program != "HINT_PROGRAM":
        return traced_run(out, globals()[program]), ""
    (out / "prog.py").write_text(HINT_PROGRAM)
    proc = slow.run([sys.executable, str(out / "prog.py"), str(out)], capture_output=True,
                    text=True, timeout=600, env=dict(os.environ, PYTHONPATH=str(ROOT),
                                                     TORCHINDUCTOR_CACHE_DIR=str(out / "cold")))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return Path(proc.stdout.strip().splitlines()[-1]), proc.stderr + proc.stdout


@pytest.fixture(scope="module")
def runs(request, tmp_path_factory):
    base = tmp_path_factory.mktemp("fallbacks")
    made = ahead.start(request, lambda program: _run(base, program))
    yield made
    made.close()


@pytest.fixture
def traced(request, runs) -> tuple[Path, str]:
    """(run dir, printed) of the program the test's ahead mark names."""
    return runs.result_for(request.node)


def by_kind(out: dict) -> dict[str, list[dict]]:
    kinds: dict[str, list[dict]] = {}
    for item in out["fallbacks"]["items"]:
        kinds.setdefault(item["kind"], []).append(item)
    return kinds


@pytest.mark.ahead("EAGER_PROGRAM")
def test_each_eager_fallback_appears_once_where_it_happened(traced):
    run, _ = traced
    out = triage_json(RunModel(run).load())
    kinds = by_kind(out)
    assert sorted(kinds) == ["eager_calls", "nothing_compiled", "recompile_limit"]
    assert all(len(v) == 1 for v in kinds.values())
    (limit,) = kinds["recompile_limit"]
    assert (limit["frame"], limit["line"], limit["calls"]) == ("limited (prog.py:6)", 6, 3)
    (stance,) = kinds["eager_calls"]
    assert (stance["frame"], stance["calls"]) == ("stanced (prog.py:8)", 4)
    (nothing,) = kinds["nothing_compiled"]
    assert nothing["line"] == 10 and "failing_backend" in nothing["what"]
    # a frame with no cache entry is never looked up again: its calls are not counted (null, not 0)
    assert {f["name"]: f["eager_calls"] for f in out["frames"]} == {"limited": 3, "stanced": 4, "broken": None}
    assert out["fallbacks"]["not_recorded"] and out["runtime"]["eager_calls_unattributed"] == 0
    assert "silent fallbacks: 3" in triage_text(RunModel(run).load())


@pytest.mark.slow
@pytest.mark.ahead("BYPASS_PROGRAM")
def test_a_cache_bypass_appears_with_its_reason(traced):
    run, _ = traced
    out = triage_json(RunModel(run).load())
    bypasses = by_kind(out).get("cache_bypass", [])
    assert bypasses and all(b["frame"] == "f (prog.py:7)" and b["compile_id"] == "0/0" for b in bypasses)
    assert any("custom" in b["what"].lower() for b in bypasses)
    assert len(bypasses) == out["cache"]["counts"]["bypasses"]


HINT_PROGRAM = """
import sys, torch
from tracer import explain_compilation
def f(x):
    return torch.linalg.svdvals(x) + 1          # no Inductor lowering: a fallback kernel
cf = torch.compile(f)
with explain_compilation(sys.argv[1], label="hint") as run:
    cf(torch.ones(3, 3))
print(run.path)
"""


@pytest.mark.slow
@pytest.mark.ahead("HINT_PROGRAM")
def test_an_op_inductor_ran_as_a_fallback_kernel_appears_once_and_nothing_more_is_printed(traced):
    run, printed = traced
    assert "FallbackKernel" not in printed      # the hint is recorded, not printed
    out = triage_json(RunModel(run).load())
    (fk,) = by_kind(out)["fallback_kernel"]                         # a cold cache: Inductor lowers it
    assert "aten._linalg_svd" in fk["what"] and fk["frame"] == "f (prog.py:4)" and fk["compile_id"] == "0/0"
