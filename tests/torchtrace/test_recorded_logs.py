"""Logs recorded here with ``TORCH_TRACE=<dir>`` (tiny programs, ``eager`` / ``aot_eager`` and a failing
backend, CPU): followed while torch writes them, as ``attach`` does, then checked against tlparse on the
same file."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from magi_tui.model import RunModel, find_runs
from tests.support import slow
from tests.support.paths import ROOT
from tests.torchtrace.oracle import assert_triage_matches, event_compile_ids, model_facts, run_tlparse, tlparse_facts

pytestmark = [pytest.mark.torch, pytest.mark.slow,
              pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch (the tracer extra)")]

PROGRAM = textwrap.dedent('''
    import time
    import torch
    import torch._dynamo

    torch._dynamo.config.suppress_errors = True
    torch._dynamo.config.recompile_limit = 3


    def failing_backend(gm, example_inputs):
        raise RuntimeError("deliberate backend failure")


    def helper(x):
        print("side effect")  # a graph break inside an inlined frame
        return x * 2


    @torch.compile(backend="eager", dynamic=False)
    def with_break(x):
        y = torch.sin(x)
        if y.sum().item() > 0:  # a graph break: Tensor.item()
            return helper(y) + 1
        return y - 1


    @torch.compile(backend=failing_backend)
    def fails(x):
        return torch.cos(x) + 1


    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, x):
            return torch.relu(self.lin(x))


    @torch.compile(backend="eager", dynamic=False)
    def many(x):
        return x + 1


    with_break(torch.ones(3))
    time.sleep(0.3)
    with_break(torch.ones(5))                        # recompile: a new size
    time.sleep(0.3)
    with_break(torch.ones(5, dtype=torch.float64))   # recompile: a new dtype
    time.sleep(0.3)
    fails(torch.ones(2))                             # the backend raises: falls back to eager
    time.sleep(0.3)
    m = torch.compile(M(), backend="aot_eager")
    m(torch.randn(2, 4, requires_grad=True)).sum().backward()
    time.sleep(0.3)
    for n in range(1, 7):                            # the recompile limit (3) is hit
        many(torch.ones(n))
''')


def snapshot(run: RunModel) -> list[tuple]:
    return [(e.index, e.name, e.line_no, json.dumps(run.attributes(e), sort_keys=True)) for e in run.events]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    d = tmp_path_factory.mktemp("recorded")
    (d / "prog.py").write_text(PROGRAM)
    trace = d / "trace"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_LOGS", "TORCH_COMPILE", "TORCHDYNAMO"))}
    env["TORCH_TRACE"] = str(trace)
    with open(d / "out.txt", "wb") as out:
        proc = subprocess.Popen([sys.executable, str(d / "prog.py")], cwd=d, env=env, stdout=out, stderr=out)
        run, sizes, deadline = None, [], time.monotonic() + slow.limit(300)
        while proc.poll() is None and time.monotonic() < deadline:  # follow the log as attach does
            if run is None and trace.is_dir():
                found = find_runs(trace)
                run = RunModel(found[0].path) if found else None
            if run is not None:
                run.update()
                sizes.append(len(run.events))
            time.sleep(0.05)
        if proc.poll() is None:
            proc.kill()
        assert proc.wait() == 0, (d / "out.txt").read_text()[-3000:]
    assert run is not None, "torch wrote no trace log"
    run.update()
    return run, sorted(set(sizes)), d


def test_following_a_log_while_torch_writes_it_reads_each_event_once(recorded):
    run, sizes, _ = recorded
    assert len(sizes) > 3, f"the log grew while followed: {sizes}"
    assert snapshot(run) == snapshot(RunModel(run.path).load())
    assert not run.malformed and not run.partial_line


def test_recorded_log_facts_equal_tlparse(recorded):
    run, _, d = recorded
    tl = tlparse_facts(run_tlparse(run.path, d / "tl"))
    # what the program did, so the comparison below is about something
    assert {gb for _, gb in tl.graph_breaks} == {"GB0124", "GB0059"}
    reasons = " ".join(r for rs in tl.recompiles.values() for r in rs)
    assert "size mismatch" in reasons and "dtype mismatch" in reasons
    assert {t for _, t, _ in tl.failures} == {"BackendCompilerFailed", "Unsupported"} and tl.restarts
    ours = model_facts(run)
    assert run.reader.stats["ok"] == tl.stats["ok"]
    assert sorted(ours.compile_ids) == sorted(tl.compile_ids) and event_compile_ids(run) == set(tl.compile_ids)
    assert ours.graph_breaks == tl.graph_breaks and ours.break_texts == tl.break_texts
    assert ours.recompiles == tl.recompiles
    assert ours.restarts == tl.restarts and ours.failures == tl.failures
    assert ours.cache == tl.cache
    out = slow.run([sys.executable, "-m", "magi_tui", "triage", str(run.path), "--json"], cwd=ROOT,
                   capture_output=True, text=True, timeout=120)
    assert out.returncode == 1, out.stderr
    tj = json.loads(out.stdout)
    assert_triage_matches(tj, tl)
    assert any(run.attributes(e).get("backward") for e in run.events)  # aot_eager's backward compile
