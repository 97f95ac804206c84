"""The provenance model on a real run (``python -m tracer --provenance``, Inductor on CPU): which kernel
a line of the output code belongs to, the post-grad nodes it fused and where they are in the recorded
post-grad graph, on to the pre-grad graph, and back from a node to its kernel."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from magi_tui.model import RunModel
from magi_tui.model.analysis import provenance as pv
from magi_tui.model.analysis.metrics import compile_infos
from magi_tui.model.analysis.provenance import kernel_provenance

pytestmark = [pytest.mark.torch, pytest.mark.slow]
PROGRAM = Path(__file__).with_name("fused_program.py").read_text().splitlines()


def _src(code):
    """``fused_program.py:N`` of the user line holding ``code``."""
    return f"fused_program.py:{next(i for i, s in enumerate(PROGRAM, 1) if code in s)}"


def _one(run, name, cid="0/0", backward=False):
    """The one event of compile ``cid`` with the file ``name`` (an after-passes graph), and its lines."""
    (ev,) = [e for e in run.events if name in (e.files or ()) and e.phase != "before" and e.compile_id == cid
             and bool(run.attributes(e).get("backward")) == backward]
    return ev, pv.read_lines(run, ev, name)


def _defined_at(lines, node):
    """The line a test finds by reading the graph file itself: ``node: "..." = torch.ops...``."""
    return next(i for i, s in enumerate(lines) if re.match(rf'^\s+{node}: "', s))


@pytest.fixture(scope="module")
def run(provenance_run):
    return RunModel(provenance_run).load()


def test_kernel_at_definition_and_call_lines(run):
    ev, code = _one(run, "inductor_output.py")
    idx = pv.index_output_code(code)
    assert set(idx.definitions) == {n for n in idx.definitions if n.startswith("cpp_fused_")} and \
        len(idx.definitions) == 2
    for name, (first, last) in idx.definitions.items():
        assert code[first].startswith(f"{name} = async_compile.cpp_pybinding(")
        assert code[last].startswith("'''")
        mid = (first + last) // 2   # a line of the kernel's C++ body
        assert idx.at(mid) == pv.KernelSite(name, None, first, "definition")
        (call,) = [i for i, s in enumerate(code) if s.strip().startswith(f"{name}(")]
        handle = code[call - 1].strip()
        assert handle.startswith(f"# [Provenance debug handles] {name}:")
        site = idx.at(call)
        assert site.kind == "call" and site.line == call and site.key == handle.rsplit(" ", 1)[1]
        assert idx.at(call - 1) == site   # the handle comment belongs to its call
    mm = [i for i, s in enumerate(code) if s.strip().startswith("extern_kernels.mm(")]
    assert len(mm) == 2 and all(idx.at(i).name == "extern_kernels.mm" for i in mm)
    assert idx.at(0) is None and idx.at(mm[0] + 1) is None   # the header; `del arg1_1` after the call


def test_from_a_kernel_to_its_post_grad_nodes_and_on_to_pre_grad(run):
    ev, code = _one(run, "inductor_output.py")
    idx = pv.index_output_code(code)
    name = next(n for n in idx.definitions if "sin" in n)   # cpp_fused_add_cos_mul_relu_sin_0
    first, last = idx.definitions[name]
    jump = pv.follow(run, ev, "inductor_output.py", first + 3)
    assert isinstance(jump, pv.Jump), jump
    pg_ev, pg = _one(run, "post_grad_graph.py")
    assert jump.event is pg_ev and jump.file == "post_grad_graph.py"
    fused = {"relu", "sin", "cos", "mul", "add", "add_1"}   # what the kernel's name says it fused
    assert jump.lines == sorted(_defined_at(pg, n) for n in fused)
    assert jump.line == jump.lines[0] and name in jump.note
    assert "mm" not in jump.note.split(": ", 1)[1].split(", ")   # the matmul is an extern kernel
    # the post-grad `relu` came from the pre-grad `y = torch.relu(...)`
    step = pv.follow(run, pg_ev, "post_grad_graph.py", _defined_at(pg, "relu"))
    pre_ev, pre = _one(run, "pre_grad_graph.py")
    assert isinstance(step, pv.Jump) and step.event is pre_ev
    assert step.lines == [_defined_at(pre, "y")] and "torch.relu(add)" in pre[step.line]
    # the pre-grad graph is the start: P says which user line it came from
    said = pv.follow(run, pre_ev, "pre_grad_graph.py", step.line)
    assert isinstance(said, str) and _src("y = torch.relu(x @ w + 1.0)") in said and "torch.relu(x @ w + 1.0)" in said


def test_back_from_a_node_to_the_kernel_that_computes_it(run):
    ev, code = _one(run, "inductor_output.py")
    idx = pv.index_output_code(code)
    pg_ev, pg = _one(run, "post_grad_graph.py")
    jump = pv.reverse(run, pg_ev, "post_grad_graph.py", _defined_at(pg, "tanh"))
    assert isinstance(jump, pv.Jump) and jump.event is ev and jump.file == "inductor_output.py"
    name = next(n for n in idx.definitions if "tanh" in n)
    call = next(i for i, s in enumerate(code) if s.strip().startswith(f"{name}("))
    assert jump.line == idx.definitions[name][0] and jump.lines == [idx.definitions[name][0], call]
    # the second matmul: an extern kernel, no definition: its call line, by its own debug handle
    mm1 = pv.reverse(run, pg_ev, "post_grad_graph.py", _defined_at(pg, "mm_1"))
    calls = [i for i, s in enumerate(code) if s.strip().startswith("extern_kernels.mm(")]
    assert isinstance(mm1, pv.Jump) and mm1.lines == [calls[1]] and mm1.line == calls[1]
    # pre-grad -> post-grad: `z` (the second matmul) became `mm_1`
    pre_ev, pre = _one(run, "pre_grad_graph.py")
    back = pv.reverse(run, pre_ev, "pre_grad_graph.py", _defined_at(pre, "z"))
    assert isinstance(back, pv.Jump) and back.lines == [_defined_at(pg, "mm_1")]
    # a graph input is computed by no kernel: said, not jumped
    said = pv.reverse(run, pg_ev, "post_grad_graph.py", next(i for i, s in enumerate(pg) if "def forward" in s))
    assert isinstance(said, str) and "arg0_1" in said


def test_lines_that_lead_nowhere_say_why(run):
    ev, code = _one(run, "inductor_output.py")
    assert "no kernel on this line" in pv.follow(run, ev, "inductor_output.py", 0)
    assert "output code" in pv.reverse(run, ev, "inductor_output.py", 0)
    guards = next(e for e in run.events if "guards.txt" in (e.files or ()))
    assert "open one of them" in pv.follow(run, guards, "guards.txt", 0)


def test_compile_info_listing_reads_the_same_mapping(run):
    info, _trained = compile_infos(run)
    kernels = {k.kernel.split(":")[0]: k for k in kernel_provenance(run, info)}
    fused = kernels[next(n for n in kernels if "tanh" in n)]
    assert set(fused.post_grad) == {"sum_1", "tanh", "amax", "mul_1"}
    assert any(_src("return z.tanh().sum(dim=1)") in ln for ln in fused.user_lines)


def test_an_inductor_run_recorded_without_provenance_says_how_to_record_it(fixtures_dir):
    run = RunModel(fixtures_dir / "recompile_explain").load()
    ev = next(e for e in run.events if "inductor_output.py" in (e.files or ()))
    code = pv.read_lines(run, ev, "inductor_output.py")
    first, _last = next(iter(pv.index_output_code(code).definitions.values()))
    said = pv.follow(run, ev, "inductor_output.py", first)
    assert isinstance(said, str) and said.endswith(pv.NOT_RECORDED)


def test_the_same_steps_on_the_torch_trace_log_of_that_run(provenance_run):
    """tlparse's input, read by magi-tui's log reader: the same kernel, nodes and lines."""
    log = RunModel(provenance_run / "timeline_events" / "torch_trace.log").load()
    assert not log.has_event_folders
    ev, code = _one(log, "inductor_output.py")
    idx = pv.index_output_code(code)
    name = next(n for n in idx.definitions if "tanh" in n)
    call = next(i for i, s in enumerate(code) if s.strip().startswith(f"{name}("))
    jump = pv.follow(log, ev, "inductor_output.py", call)
    pg_ev, pg = _one(log, "post_grad_graph.py")
    assert isinstance(jump, pv.Jump) and jump.event is pg_ev
    assert jump.lines == sorted(_defined_at(pg, n) for n in ("tanh", "sum_1", "mul_1", "amax"))
    step = pv.follow(log, pg_ev, "post_grad_graph.py", _defined_at(pg, "amax"))
    pre_ev, pre = _one(log, "pre_grad_graph.py")
    assert isinstance(step, pv.Jump) and step.event is pre_ev and step.lines == [_defined_at(pre, "amax")]
    back = pv.reverse(log, pg_ev, "post_grad_graph.py", _defined_at(pg, "amax"))
    assert isinstance(back, pv.Jump) and back.event is ev and back.line == idx.definitions[name][0]


def test_a_backward_graph_says_torch_mapped_none_of_its_kernels(run):
    """torch 2.13 writes ``{"version": 2.0}`` as a backward graph's node mapping: no step, but why, and
    the user line its kernel stack traces name."""
    ev, code = _one(run, "inductor_output.py", cid="1/0", backward=True)
    idx = pv.index_output_code(code)
    name = next(n for n in idx.definitions if "backward" in n)
    said = pv.follow(run, ev, "inductor_output.py", idx.definitions[name][0])
    assert isinstance(said, str) and said.startswith(f"{name}: torch recorded no node mapping for this backward")
    assert _src("return (torch.relu(x @ w).sin() * 2).sum()") + "  return (torch.relu(x @ w)" in said
    # its forward is mapped: the same steps work there
    fwd, fcode = _one(run, "inductor_output.py", cid="1/0")
    fidx = pv.index_output_code(fcode)
    jump = pv.follow(run, fwd, "inductor_output.py", next(iter(fidx.definitions.values()))[0])
    assert isinstance(jump, pv.Jump) and jump.event.compile_id == "1/0" and "relu" in jump.note


def test_a_cut_mapping_file_is_named_not_taken_for_no_mapping(provenance_run, tmp_path):
    """A copy of the run whose provenance.json was cut short (a disk that filled up): said, never raised."""
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(provenance_run, copy)
    (mapping,) = [p for p in copy.rglob("provenance.json") if "0/0" in (p.parent / "attributes.json").read_text()]
    mapping.write_text(mapping.read_text()[:200])
    run = RunModel(copy).load()
    ev, code = _one(run, "inductor_output.py")
    first = next(iter(pv.index_output_code(code).definitions.values()))[0]
    said = pv.follow(run, ev, "inductor_output.py", first)
    assert isinstance(said, str) and "torch's node mapping (provenance.json) cannot be read" in said
