"""Compile info from runs the tracer records here (issue #13): dynamic shapes with the user line that
caused each, compile phases, metrics per compile id, the stack trie, and torch's runnable reproducer of
an Inductor graph — written next to the run by the model, and run."""

from __future__ import annotations

import sys

import pytest

from magi_tui.model import RunModel
from magi_tui.model.analysis.metrics import compile_infos, stack_trie, write_reproducer
from magi_tui.model.analysis.provenance import kernel_provenance
from tests.support import slow
from tracer import explain_compilation

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def shape_program(x):
    if x.shape[0] > 3:  # the shape guard's line
        return x.sin() * 2
    return x.cos()


def test_dynamic_shapes_phases_and_metrics_from_a_recorded_run(tmp_path):
    with explain_compilation(tmp_path, label="shapes") as run:
        g = torch.compile(shape_program, backend="eager", dynamic=True)
        g(torch.randn(5))
        g(torch.randn(7))   # same graph: no recompile
        g(torch.randn(2))   # s0 > 3 fails: a recompile, the other branch
    model = RunModel(run.path).load()
    infos = compile_infos(model)
    assert [i.compile_id for i in infos] == ["0/0", "0/1"]
    first, second = infos
    assert first.status == second.status == "ok" and first.frame == "shape_program"
    # the symbol, its source, its value range; the guard on it, at the `if` line of this file
    sym = first.symbols[0]
    assert sym.text.startswith(f"{sym.text.split()[0]} = 5 in [2, ") and "from L['x'].size()[0]" in sym.text
    line = shape_program.__code__.co_firstlineno + 1
    assert sym.user_frame == f"{__file__}:{line}" and sym.source_line.startswith("if x.shape[0] > 3:")
    assert any(g.text.endswith("> 3") and g.user_frame == f"{__file__}:{line}" for g in first.shape_guards)
    assert any(g.text.endswith("<= 3") for g in second.shape_guards)
    assert second.recompile_reasons and "size()[0]" in second.recompile_reasons[0]
    # metrics and phases, as torch measured them
    assert first.total_s > 0 and first.guard_count > 0 and first.graph_op_count >= 2
    names = [p.name for p in first.phases]
    assert names[0] == "entire_frame_compile" and "bytecode_tracing" in names and "backend_compile" in names
    assert abs(first.phases[0].dur_s - first.total_s) < 0.01
    # the stack trie: both compiles from this test's call lines, torch's frames left out
    at = {(n.frame.function, n.frame.line): [c.compile_id for c in n.compiles] for _d, n in stack_trie(infos).lines()}
    assert at[("shape_program", line - 1)] == ["0/0", "0/1"] or \
        sorted(sum((v for (fn, _ln), v in at.items() if fn == "shape_program"), [])) == ["0/0", "0/1"]
    assert not any("torch" in fn for (fn, _ln) in at)


def small(x):
    return x.sin().sum() + x.cos().amax()  # two reductions of one input: Inductor fuses them


def test_inductor_reproducer_provenance_and_loop_ir(tmp_path):
    from torch._inductor import config

    before = config.trace.provenance_tracking_level
    with explain_compilation(tmp_path, label="repro", provenance=True, loop_ir=True) as run, \
            config.patch(force_disable_caches=True):  # a real Inductor compile: the scheduler runs
        assert config.trace.provenance_tracking_level == 1
        torch.compile(small)(torch.randn(8))
    assert config.trace.provenance_tracking_level == before  # put back
    model = RunModel(run.path).load()
    (info,) = compile_infos(model)
    # kernel -> the post-grad nodes it fused -> pre-grad nodes -> the user line
    kernels = kernel_provenance(model, info)
    fused = next(k for k in kernels if "sin" in k.post_grad)
    assert fused.kernel.startswith(("cpp_fused", "triton_")) and {"sin", "cos"} <= set(fused.post_grad)
    assert fused.pre_grad and any("return x.sin().sum() + x.cos().amax()" in ln for ln in fused.user_lines)
    # the loop IR before and after fusion: one lifecycle, paired, so d diffs them
    pre = next(e for e in model.events if e.name == "fullgraph_before_fusion")
    post = next(e for e in model.events if e.name == "fullgraph_after_fusion")
    assert pre.span is post.span and pre.compile_id == post.compile_id == "0/0"
    pre_text = [p for n, p, _ in model.files(pre) if n == "ir_pre_fusion.txt"][0].read_text()
    post_text = [p for n, p, _ in model.files(post) if n == "ir_post_fusion.txt"][0].read_text()
    assert "SchedulerNode" in pre_text and "FusedSchedulerNode" in post_text and pre_text != post_text
    assert info.runnables and info.backend_s is not None  # (Inductor time: none on a warm FX-graph cache)
    path, cmd = write_reproducer(model, info)
    assert path is not None and path.parent == run.path.parent and path.name == "repro_0_0.py"
    assert cmd == f"python {path}"
    assert write_reproducer(model, info)[0] is None  # never over the file
    proc = slow.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300,
                    cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
