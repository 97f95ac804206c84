"""Each piece of recompile advice is right for torch 2.13: following it on the program that recompiled
removes the recompile (issue 20.7); every cache entry's reason is tallied, not the first only (20.2)."""

from __future__ import annotations

import pytest

from magi_tui.model.analysis.checks import analyse
from magi_tui.model.analysis.checks.tallies import frame_seconds
from magi_tui.model.outputs.report import triage_json
from magi_tui.model.run import RunModel

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.torch, pytest.mark.slow]

from tracer import explain_compilation  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def recompiles_of(tmp_path, fn, calls, **config):
    torch._dynamo.reset()
    with torch._dynamo.config.patch(**config.get("dynamo", {})), \
            torch.compiler.config.patch(**config.get("compiler", {})):
        with explain_compilation(tmp_path) as run:
            c = torch.compile(fn, backend="eager")
            for args in calls:
                c(*args)
    model = RunModel(run.path).load()
    return analyse(model), triage_json(model)


def scale(x, n):
    return x * n


def times_item(x, t):
    return x * t.item()


def plus_one(x):
    return x + 1


def test_int_scalar_advice_dynamic_sources_removes_the_recompile(tmp_path):
    x = torch.randn(4)
    a, _ = recompiles_of(tmp_path / "a", scale, [(x, 3), (x, 5)])
    (rc,) = a.recompiles
    p = rc.primary
    assert (p.kind, p.subject, p.expected, p.actual) == ("scalar", "n", "3", None)  # actual: not recorded
    assert "specialize_int" not in p.suggestion
    env = p.suggestion.split('TORCH_COMPILE_DYNAMIC_SOURCES="', 1)[1].split('"', 1)[0]
    assert env.startswith("L['n']")
    b, _ = recompiles_of(tmp_path / "b", scale, [(x, 3), (x, 5)], compiler={"dynamic_sources": env})
    assert b.recompiles == []


def test_float_from_item_advice_capture_scalar_outputs_removes_the_recompile(tmp_path):
    x = torch.randn(4)
    calls = [(x, torch.tensor(0.5)), (x, torch.tensor(1.5))]
    a, _ = recompiles_of(tmp_path / "a", times_item, calls)
    (rc,) = a.recompiles
    p = rc.primary
    assert p.kind == "float" and p.subject.startswith("___stack")
    assert "capture_scalar_outputs" in p.suggestion and "specialize_int" not in p.suggestion
    b, _ = recompiles_of(tmp_path / "b", times_item, calls, dynamo={"capture_scalar_outputs": True})
    assert b.recompiles == [] and b.worklist == []  # no break, no guard on the value


def test_every_reason_is_tallied_not_the_first_only(tmp_path):
    x = torch.randn(4)
    # entry 0/0: float32; 0/1: float64; the third call is float32 with requires_grad: against 0/1 the dtype
    # differs, against 0/0 only requires_grad does
    a, j = recompiles_of(tmp_path, plus_one, [(x,), (x.double(),), (x.clone().requires_grad_(),)])
    last = a.recompiles[-1]
    assert [r.kind for r in last.reasons] == ["dtype", "requires_grad"]
    assert j["recompiles"][-1]["kinds"] == ["dtype", "requires_grad"]
    warn = next(c.message for c in a.checks if "recompile(s) in" in c.message)
    assert "requires_grad ×1" in warn and "dtype ×2" in warn


def test_per_frame_time_includes_backend_work_after_dynamo_returns(tmp_path):
    """A piecewise backend compiles its pieces at the first call, after Dynamo's compile closed: that time
    is the frame's too, and the frames add up to the total (issue 20.9)."""
    from tracer import piecewise_backend

    def two_pieces(x):
        y = torch.relu(x) + 1
        y = torch.softmax(y, dim=-1)
        return y * 2

    with explain_compilation(tmp_path) as run:
        torch.compile(two_pieces, backend=piecewise_backend([torch.softmax], compiler="eager"))(torch.randn(4, 4))
    model = RunModel(run.path).load()
    a = analyse(model)
    (frame,) = a.frames
    ct = a.compile_time
    compile_only = sum(p["seconds"] for p in ct["phases"] if p["phase"] == "compile")
    assert frame.compile_s > compile_only  # the pieces' compiles, which ran after Dynamo returned, count
    per_frame, _ = frame_seconds(a.frames_found)
    assert abs(sum(per_frame.values()) + ct["unattributed_s"] - ct["total_s"]) < 1e-6
    from magi_tui.model.analysis.metrics import compile_infos

    (info,) = compile_infos(model)  # compile info says it too (torch's metrics end when Dynamo returns)
    assert info.after_return_s and abs(info.after_return_s - (frame.compile_s - compile_only)) < 1e-6
