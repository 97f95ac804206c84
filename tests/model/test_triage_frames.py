"""Issue #10 items 8 and 9, the graph-break worklist and recompiles explained, on runs our tracer writes:
a real TORCH_TRACE log (``fixtures/torch_trace``) mapped by the tracer, and a real program compiled under
``explain_compilation`` with ``backend="eager"``. Frames are keyed by frame id / code object, not by name;
every reason torch gave is listed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from magi_tui.model import RunModel
from magi_tui.model.analysis.checks import analyse
from magi_tui.model.outputs.report import triage_json, triage_text
from tests.support import slow
from tests.support.paths import ROOT as REPO
from tests.support.paths import TORCH_TRACE, require
from tests.support.timeline import ev_line, write_run

TRACE_LOGS = TORCH_TRACE
_GLOG = re.compile(r"^[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^\]]*:\d+\] (\{.*\})$")


def _records(path: Path):
    md, payload = None, []
    with open(path, encoding="utf-8") as fh:
        for raw in fh:
            line = raw.rstrip("\n")
            if line.startswith("\t"):
                payload.append(line[1:])
                continue
            m = _GLOG.match(line)
            if not m:
                continue
            if md is not None:
                yield md, ("\n".join(payload) if payload else None)
            md, payload = json.loads(m.group(1)), []
    if md is not None:
        yield md, ("\n".join(payload) if payload else None)


def trace_run(log: Path, run_dir: Path) -> Path:
    """A run directory written by the tracer's own mapping and writer from a real TORCH_TRACE log."""
    pytest.importorskip("tracer.writer")
    from magi_format.torch_mapping import TraceMapper
    from tracer.writer import RunWriter

    writer, mapper = RunWriter(run_dir), TraceMapper()
    for md, payload in _records(log):
        for name, attrs, files, _ts in mapper.handle(md, payload):
            writer.write(name, attrs, files)
    for name, attrs, files, _ts in getattr(mapper, "finish", lambda: [])():
        writer.write(name, attrs, files)
    writer.close()
    return run_dir


@pytest.fixture(scope="module")
def gb_run(tmp_path_factory) -> RunModel:
    log = require(TRACE_LOGS / "graph_breaks_recompiles_failure.log")
    return RunModel(trace_run(log, tmp_path_factory.mktemp("gb") / "run")).load()


# -- the real trace log ----------------------------------------------------------------------------
def test_worklist_dedupes_by_gb_id_and_user_line(gb_run):
    a = analyse(gb_run)
    assert [(b.gb_id, b.line, b.count) for b in a.worklist] == [("GB0124", 149, 3), ("GB0059", 157, 2)]
    item = a.worklist[0]
    assert item.reason == "Unsupported Tensor.item() call with capture_scalar_outputs=False"
    assert item.function == "forward" and item.file.endswith("capture_demo.py")
    assert item.source_line == "if h.sum().item() > 0:"
    assert item.compile_ids == ["0/0", "0/1", "0/2"]
    assert "capture_scalar_outputs" in item.explanation and item.hints
    j = triage_json(gb_run)["graph_breaks"][0]
    assert {"gb_id", "reason", "explanation", "hints", "user_frame", "source_line", "count", "compile_ids"} <= set(j)
    assert j["user_frame"] == {"file": item.file, "line": 149, "function": "forward"}


def test_every_reason_torch_gave_is_listed(gb_run):
    a = analyse(gb_run)
    last = next(r for r in a.recompiles if r.compile_id == "1/4")
    assert [r.entry_compile_id for r in last.reasons] == ["1/3", "1/2", "1/1", "1/0"]
    assert (last.primary.kind, last.primary.expected, last.primary.actual) == ("dtype", "torch.float32",
                                                                               "torch.float64")
    size = next(r for r in a.recompiles if r.compile_id == "0/1")
    assert (size.primary.guard, size.primary.expected, size.primary.actual) == ("x.size()[0] == 4", "4", "6")
    assert "mark_dynamic" in size.primary.suggestion
    scalar = next(r for r in a.recompiles if r.compile_id == "1/1")
    # a float from .item() (``___stack0`` of the resume frame): capture_scalar_outputs, not specialize_int
    assert scalar.primary.kind == "float" and scalar.primary.expected == "21.666051864624023"
    assert "capture_scalar_outputs" in scalar.primary.suggestion
    assert scalar.primary.actual == "13.211282730102539"  # read off compile 1/1's guards (a log has no compiled_functions/)
    j = next(r for r in triage_json(gb_run)["recompiles"] if r["compile_id"] == "1/4")
    assert len(j["reasons"]) == 4 and j["frame"].startswith("torch_dynamo_resume_in_forward_at_149")


def test_frames_by_frame_id(gb_run):
    a = analyse(gb_run)
    rows = {f.key: f for f in a.frames}
    assert (rows["0"].name, rows["0"].compiles, rows["0"].graph_breaks) == ("forward", 3, 3)
    assert (rows["1"].name, rows["1"].compiles) == ("torch_dynamo_resume_in_forward_at_149", 5)
    assert rows["1"].line == 149 and rows["0"].line == 146
    assert all(f.compile_s and f.compile_s > 0 for f in a.frames)
    assert a.checks[0].level == "fail" and "BackendCompilerFailed" in a.checks[0].message
    assert len(a.restarts) == 5 and all(r.recovered for r in a.restarts)
    assert len(a.problems) == 1
    phases = {p["phase"]: p["seconds"] for p in a.compile_time["phases"]}
    assert phases["compile"] > phases["Inductor compile"] > 0


def test_same_name_different_frames_are_not_one_frame(tmp_path):
    """Two code objects both called ``forward`` (two modules) compiled once each: no "compiled 2×"."""
    lines = []
    for i, cid in enumerate(("0/0", "1/0")):
        lines.append(ev_line(2 * i, "fullgraph_before_compile", lifecycle_name="compile", compile_id=cid,
                             frame="forward", co_filename=f"/m{i}.py", co_firstlineno=10 + i))
        lines.append(ev_line(2 * i + 1, "fullgraph_after_compile", lifecycle_name="compile", compile_id=cid,
                             frame="forward", duration_ms=3.0))
    a = analyse(RunModel(write_run(tmp_path / "r", lines)).load())
    assert [(f.name, f.compiles, f.file) for f in a.frames] == [("forward", 1, "/m0.py"), ("forward", 1, "/m1.py")]
    assert not any("compiled 2×" in c.message for c in a.checks)
    assert any(c.message == "2 frame(s), one compile each" for c in a.checks)


# -- a real program ----------------------------------------------------------------------------------
PROGRAM = '''
import torch, torch._dynamo

def f(x, n):
    y = x * n
    print("break")
    return y + 1

def g(x):
    return torch.sin(x) + 1

def h(x):
    return x * 2

cf = torch.compile(f, backend="eager", dynamic=False)
cf(torch.randn(4), 3)
cf(torch.randn(8), 3)
cf(torch.randn(8), 4)
cg = torch.compile(g, backend="eager", dynamic=False)
cg(torch.randn(4))
cg(torch.randn(4, dtype=torch.float64))
torch._dynamo.config.recompile_limit = 2
ch = torch.compile(h, backend="eager")
for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
    ch(torch.ones(3, dtype=dt))
'''


@pytest.fixture(scope="module")
def program_run(tmp_path_factory) -> RunModel:
    pytest.importorskip("torch")
    import sys

    tmp = tmp_path_factory.mktemp("prog")
    script = tmp / "prog.py"
    script.write_text(PROGRAM)
    out = slow.run([sys.executable, "-m", "tracer", "-o", str(tmp / "runs"), str(script)], cwd=REPO,
                   capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    (run_dir,) = [p.parent for p in (tmp / "runs").rglob("timeline_events")]
    return RunModel(run_dir).load()


def test_real_program_recompiles_explained(program_run):
    a = analyse(program_run)
    by = {(r.frame.split(" ")[0], r.compile_id): r for r in a.recompiles}
    size = by[("f", "0/1")].primary
    assert (size.kind, size.subject, size.expected, size.actual) == ("size", "x", "4", "8")
    scalar = by[("f", "0/2")]
    assert (scalar.primary.kind, scalar.primary.subject, scalar.primary.expected) == ("scalar", "n", "3")
    assert len(scalar.reasons) == 2                      # one per cache entry of f
    dtype = by[("g", "2/1")].primary
    assert (dtype.kind, dtype.expected, dtype.actual) == ("dtype", "torch.float32", "torch.float64")
    # the guard diff between g's two cache entries names the dtype change
    d = by[("g", "2/1")].guard_diff                       # compiled_functions/g/entry_1 -> entry_0
    assert d is not None and by[("g", "2/1")].entries == ("compiled_functions/g/entry_1", "compiled_functions/g/entry_0")
    assert ("torch.float32", "torch.float64") in d.changes and not any("0x" in x for x in d.added)
    # torch names only the expected value of a specialised scalar; the newer entry's guard has the actual
    assert scalar.primary.actual == "4"


def test_real_program_worklist_and_limit(program_run):
    a = analyse(program_run)
    (gb,) = a.worklist
    assert (gb.line, gb.function, gb.count, gb.gb_id) == (6, "f", 3, "GB0059")
    assert gb.source_line == 'print("break")'
    rows = {f.name: f for f in a.frames}
    assert rows["f"].compiles == 3 and rows["g"].compiles == 2
    assert rows["h"].limit_hit and rows["h"].recompile_limit == 2 and rows["h"].compiles == 2
    # one verdict for a frame that fell back to eager: "ran eagerly", status degraded (exit 0)
    assert any(c.level == "warn" and c.message.startswith("1 frame(s) ran eagerly (recompile limit ×1); first: h ")
               and "recompile limit (2)" in c.message for c in a.checks)
    assert [(e.cause, e.frame.split(" ")[0]) for e in a.ran_eagerly] == [("recompile_limit", "h")]
    assert a.status == "degraded"
    text = triage_text(program_run)
    assert "refused: recompile limit reached" in text
