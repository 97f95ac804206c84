"""The tracer on real compiles: what a user of the run directory would check."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from magi_tui.model import RunModel
from tests.support import slow
from tracer import explain_compilation, observe_lifecycle, piecewise_backend
from tracer.writer import RunWriter, TracerWarning

ROOT = Path(__file__).resolve().parents[2]
torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def events(run_path: Path) -> list[dict]:
    lines = (run_path / "timeline_events" / "timeline.jsonl").read_text().splitlines()
    return [json.loads(x) for x in lines]


def named(evs, suffix):
    return [e for e in evs if e["name"].endswith(suffix)]


def test_graph_break_event_has_the_reason(tmp_path):
    def f(x):
        y = x.sin()
        if y.sum().item() > 0:
            return y.cos()
        return y

    with explain_compilation(tmp_path, label="gb") as run:
        torch.compile(f, backend="eager")(torch.randn(4))
    evs = events(run.path)
    breaks = named(evs, "_graph_break")
    assert breaks, [e["name"] for e in evs]
    assert "item()" in breaks[0]["attributes"]["reason"]
    folder = run.path / "timeline_events" / "files" / f"{breaks[0]['index']:04d}_fullgraph_graph_break"
    assert "Graph Break Reason" in (folder / "graph_break.txt").read_text()
    # every event carries the compile id, frame and attempt; the compile lifecycle closes
    assert all({"compile_id", "attempt", "source"} <= set(e["attributes"]) for e in evs)
    model = RunModel(run.path).load()
    assert model.status == "recovered" and not model.open_spans  # the break restarted analysis: a restart, recovered (issue 10)
    assert len(model.triage.graph_breaks) >= 1 and len(model.triage.restarts) >= 1


def test_recompile_reasons_name_size_and_dtype(tmp_path):
    def f(x):
        return x * 2 + 1

    with explain_compilation(tmp_path) as run:
        g = torch.compile(f, backend="eager", dynamic=False)
        g(torch.randn(4))
        g(torch.randn(6))
        g(torch.randn(6, dtype=torch.float64))
    reasons = [e["attributes"]["reason"] for e in named(events(run.path), "_recompile")]
    assert any("size mismatch" in r for r in reasons), reasons
    assert any("dtype mismatch" in r for r in reasons), reasons
    # compiled_functions: one function, three cache entries, each with guards
    fdir = run.path / "compiled_functions" / "f"
    assert (fdir / "overview.md").is_file()
    entries = sorted(p.name for p in fdir.glob("entry_*"))
    assert entries == ["entry_0", "entry_1", "entry_2"]
    assert "TENSOR_MATCH" in (fdir / "entry_0" / "guards.txt").read_text()
    assert "float64" in (fdir / "entry_0" / "guards.txt").read_text()  # entry_0: the most recently used


def test_failing_backend_is_a_failed_event_and_program_still_works(tmp_path):
    class BackendBoom(RuntimeError):
        pass

    def boom(gm, inputs):
        raise BackendBoom("no")

    def f(x):
        return x + 1

    torch._dynamo.config.suppress_errors = True
    with explain_compilation(tmp_path) as run:
        out = torch.compile(f, backend=boom)(torch.ones(3))
    assert torch.equal(out, torch.full((3,), 2.0))
    failed = named(events(run.path), "_failed_compile")
    assert failed and failed[0]["attributes"]["exception_type"] == "BackendCompilerFailed"
    assert failed[0]["attributes"]["exception_message"] == "backend='boom' raised:\nBackendBoom: no"
    model = RunModel(run.path).load()
    assert model.status == "failed"
    assert model.triage.first_failure.event.name == "fullgraph_failed_compile"


def test_piecewise_passes_record_before_and_after_graphs(tmp_path):
    def double_relu(graph):
        for node in list(graph.nodes):
            if node.op == "call_function" and node.target is torch.relu:
                with graph.inserting_after(node):
                    new = graph.call_function(torch.mul, (node, 2.0))
                node.replace_all_uses_with(new)
                new.update_arg(0, node)

    def f(x):
        return torch.softmax(torch.relu(x), dim=-1) + torch.relu(x).sum()

    backend = piecewise_backend(split_ops=[torch.softmax], passes=[double_relu], compiler="eager")
    with explain_compilation(tmp_path) as run:
        out = torch.compile(f, backend=backend)(torch.ones(2, 3))
    assert torch.allclose(out, torch.softmax(torch.ones(2, 3) * 2, dim=-1) + 12.0)
    evs = events(run.path)
    names = [e["name"] for e in evs]
    assert "subgraph_0_before_double_relu" in names and "subgraph_0_after_double_relu" in names
    assert "subgraph_1_before_double_relu" in names
    before = next(e for e in evs if e["name"] == "subgraph_0_before_double_relu")
    after = next(e for e in evs if e["name"] == "subgraph_0_after_double_relu")
    base = run.path / "timeline_events" / "files"
    b = (base / f"{before['index']:04d}_{before['name']}" / "submod_0" / "before_double_relu_graph.txt").read_text()
    a = (base / f"{after['index']:04d}_{after['name']}" / "submod_0" / "after_lifecycle_graph.txt").read_text()
    assert "mul" not in b and "mul" in a
    model = RunModel(run.path).load()
    span = model.span_of(model.events[after["index"]])
    assert span.before.index == before["index"] and span.status == "ok"


def test_inductor_compile_records_aot_post_grad_and_output_code(tmp_path):
    def f(x):
        return (x.sin() + 1).relu()

    with explain_compilation(tmp_path) as run:
        torch.compile(f)(torch.randn(8))
    names = [e["name"] for e in events(run.path)]
    for expected in ("fullgraph_before_compile", "fullgraph_after_dynamo_capture",
                     "fullgraph_after_inductor_codegen", "fullgraph_after_build_guards", "fullgraph_after_compile"):
        assert expected in names, names
    assert any(n.startswith("fullgraph_after_aot_") for n in names)
    assert any(n.startswith("fullgraph_cache_") for n in names)
    model = RunModel(run.path).load()
    assert model.status == "ok", [(s.first.name) for s in model.open_spans]


def test_events_stream_before_the_block_ends(tmp_path):
    with explain_compilation(tmp_path) as run:
        torch.compile(lambda x: x * 3, backend="eager")(torch.ones(2))
        run.flush()
        model = RunModel(run.path).load()
        assert len(model.events) >= 3  # visible to a reader while the program still runs
        with observe_lifecycle("my_step", subgraph_index=2, note="hi"):
            run.flush()
            model.update()
            assert model.events[-1].name == "subgraph_2_before_my_step"
            assert model.open_spans
    model.update()
    assert model.events[-1].name == "subgraph_2_after_my_step" or any(
        e.name == "subgraph_2_after_my_step" for e in model.events)


def test_tracer_writer_failure_is_one_warning_and_results_are_unchanged(tmp_path, monkeypatch):
    def broken(self, *a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(RunWriter, "write", broken)

    def f(x):
        return x.cos() * 2

    x = torch.randn(5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with explain_compilation(tmp_path):
            g = torch.compile(f, backend="eager")
            out1 = g(x)
            out2 = g(torch.randn(7))
    ours = [w for w in caught if issubclass(w.category, TracerWarning)]
    assert len(ours) == 1 and "No space left" in str(ours[0].message)
    assert torch.allclose(out1, f(x))
    assert out2.shape == (7,)


def test_unwritable_root_is_one_warning(tmp_path):
    root = tmp_path / "ro"
    root.write_text("a file, not a directory")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with explain_compilation(root) as run:
            out = torch.compile(lambda x: x + 1, backend="eager")(torch.zeros(2))
    assert torch.equal(out, torch.ones(2))
    assert len([w for w in caught if issubclass(w.category, TracerWarning)]) == 1
    assert run.path is None


def test_detach_restores_torch_trace_handlers(tmp_path):
    log = logging.getLogger("torch.__trace")
    before = list(log.handlers)
    with explain_compilation(tmp_path) as outer:
        with explain_compilation(tmp_path / "inner") as inner:  # nested: same run
            assert inner is outer
        assert len(log.handlers) == len(before) + 1
    assert log.handlers == before


def _run_module(args, cwd, timeout=120):
    return slow.run([sys.executable, "-m", "tracer", *args], cwd=cwd, capture_output=True, text=True,
                    timeout=timeout, env=dict(os.environ, PYTHONPATH=str(ROOT)))


def test_python_m_tracer_keeps_argv_and_exit_code(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text("import sys, torch\n"
                      "torch.compile(lambda x: x - 1, backend='eager')(torch.ones(2))\n"
                      "print('ARGV', sys.argv[1:])\n"
                      "sys.exit(3)\n")
    proc = _run_module(["-o", str(tmp_path / "out"), str(script), "a", "--flag"], cwd=tmp_path)
    assert proc.returncode == 3, proc.stderr
    assert "ARGV ['a', '--flag']" in proc.stdout
    line = next(ln for ln in proc.stderr.splitlines() if ln.startswith("MAGI_RUN_DIR="))
    run = Path(line.split("=", 1)[1])
    assert run.name == "model_1_prog_rank_0" and run.parent.name.startswith("run_")
    assert RunModel(run).load().events


def test_killed_mid_compile_leaves_a_valid_prefix(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), SLOW_COMPILE_STEP_S="0.3")
    proc = subprocess.Popen([sys.executable, "-m", "tracer", "-o", str(tmp_path), str(ROOT / "demos" / "slow_compile.py")],
                            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        timeline = None
        end = time.monotonic() + slow.limit(90)
        while time.monotonic() < end:
            found = list(tmp_path.glob("magi_depyf/run_*/*/timeline_events/timeline.jsonl"))
            if found and found[0].read_text().count("\n") >= 12:
                timeline = found[0]
                break
            time.sleep(0.05)
        assert timeline is not None, "no events appeared"
        proc.send_signal(signal.SIGKILL)
        slow.wait(proc, timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    data = timeline.read_bytes()
    complete = data[: data.rfind(b"\n") + 1].splitlines()
    assert all(json.loads(line)["name"] for line in complete)  # every complete line is valid JSON
    assert len(data) - len(b"\n".join(complete)) <= 1 + max(len(x) for x in complete)  # at most one partial
    model = RunModel(timeline.parent.parent).load()
    assert not model.malformed and model.status in ("incomplete", "ok")


def test_triage_names_the_failing_pass_of_the_demo(tmp_path):
    proc = _run_module(["-o", str(tmp_path), str(ROOT / "demos" / "failing_pass.py")], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    from magi_tui.cli import main

    run = next(tmp_path.glob("magi_depyf/run_*/*"))
    model = RunModel(run).load()
    ff = model.triage.first_failure
    assert ff.event.name == "subgraph_1_failed_checknofp64pass"
    assert ff.exception_type == "ValueError"
    assert main(["triage", str(run)]) == 1


def test_keep_trace_writes_a_torch_trace_log_beside_the_timeline(tmp_path):
    with explain_compilation(tmp_path, keep_trace=True) as run:
        torch.compile(lambda x: x.exp(), backend="eager")(torch.ones(2))
    log = run.path / "timeline_events" / "torch_trace.log"
    text = log.read_text()
    assert '"dynamo_start"' in text and '"compilation_metrics"' in text
    assert text.splitlines()[0].startswith("V")  # glog prefix, as tlparse expects
