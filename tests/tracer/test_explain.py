"""Triage that is right (issue #10, tracer side): real programs under the tracer, what a user checks.

One run of ``demos/explain.py`` under ``python -m tracer`` is shared by the graph-break, recompile and
recompile-limit tests; the rest are small in-process compiles with the eager / aot_eager backends.
"""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from magi_format.torchtext import is_limit_hit
from tests.support import slow
from tracer import explain_compilation, piecewise_backend
from tracer.writer import RunWriter, TracerWarning

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "demos" / "explain.py"
ENV = dict(os.environ, PYTHONPATH=str(ROOT))
torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def events(run_path: Path) -> list[dict]:
    return [json.loads(x) for x in (run_path / "timeline_events" / "timeline.jsonl").read_text().splitlines()]


def named(evs, name):
    return [e for e in evs if e["name"] == name]


def folder(run_path: Path, ev: dict) -> Path:
    return run_path / "timeline_events" / "files" / f"{ev['index']:04d}_{ev['name']}"


def line_of(path: Path, needle: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if needle in ln)


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("explain")
    proc = slow.run([sys.executable, "-m", "tracer", "-o", str(out), str(DEMO)], cwd=out, env=ENV,
                    capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = Path(next(ln for ln in proc.stderr.splitlines() if ln.startswith("MAGI_RUN_DIR=")).split("=", 1)[1])
    return run, events(run)


# -- graph breaks ----------------------------------------------------------------------------------

def test_graph_break_worklist_names_torch_id_and_the_users_line(demo_run):
    run, evs = demo_run
    breaks = [e["attributes"] for e in named(evs, "fullgraph_graph_break")]
    printed = [b for b in breaks if b["gb_id"] == "GB0059"]
    print_line = line_of(DEMO, 'print("layer output"')
    assert len(printed) >= 3  # the same break, again on each recompile and in the helper's own frame
    for b in printed:
        assert b["user_frame"] == f"{DEMO}:{print_line}"  # innermost user frame, not tracer/runpy
        assert (b["user_file"], b["user_line"], b["user_function"]) == (str(DEMO), print_line, "log_shape")
        assert b["source_line"] == 'print("layer output", tuple(h.shape))  # graph break: builtin print'
        assert b["gb_type"] == "Failed to trace builtin operator"
        assert "builtin operator `print`" in b["explanation"]
        assert isinstance(b["hints"], list) and any("print" in h for h in b["hints"])
        assert "Explanation:" in b["reason"] and "gb0059.html" in b["reason"]  # the full cause
    # the frames it was hit from: the loop's function and the helper compiled as its own frame
    assert {b["frame"] for b in printed} >= {"layer", "log_shape"}

    branch = [b for b in breaks if b["gb_id"] != "GB0059"]
    assert len(branch) == 1
    b = branch[0]
    assert b["gb_id"] == "GB0170" and b["frame"] == "gate"
    assert b["user_frame"] == f"{DEMO}:{line_of(DEMO, 'if x.sum() > 0:')}" and b["user_function"] == "gate"
    assert b["source_line"].startswith("if x.sum() > 0:")
    assert all("tracer" not in Path(x["user_file"]).parts and "runpy" not in x["user_file"] for x in breaks)
    txt = (folder(run, named(evs, "fullgraph_graph_break")[0]) / "graph_break.txt").read_text()
    assert "User code traceback" in txt


# -- recompiles ------------------------------------------------------------------------------------

def test_recompile_is_explained_with_frame_reasons_and_limit(demo_run):
    _run, evs = demo_run
    rec = [e["attributes"] for e in named(evs, "fullgraph_recompile")]
    assert rec and all(r["frame"] for r in rec)
    scale = [r for r in rec if r["frame"] == "scale"]
    assert len(scale) == 1
    assert scale[0]["reason"] == f"{scale[0]['reasons'][0].split(':')[0]}: tensor 'x' dtype mismatch. expected Float, actual Double"
    assert scale[0]["recompile_limit"] == torch._dynamo.config.recompile_limit  # the default, 8
    layer = [r for r in rec if r["frame"] == "layer"]
    assert layer and "size mismatch" in layer[0]["reason"]
    pad = [r for r in rec if r["frame"] == "pad"]
    assert [r["recompile_limit"] for r in pad] == [2, 2]  # the limit in force, patched by the program
    assert len(pad[-1]["reasons"]) == 2  # one reason per cache entry that failed
    assert all(re.match(r"^\d+/\d+: ", x) for r in rec for x in r["reasons"])


def test_recompile_limit_hit_is_an_event_and_the_frame_falls_back_to_eager(demo_run):
    run, evs = demo_run
    hits = named(evs, "fullgraph_recompile_limit_hit")
    assert len(hits) == 1
    a = hits[0]["attributes"]
    assert a["frame"] == "pad" and a["recompile_limit"] == 2 and a["limit_type"] == "recompile_limit"
    assert a["reason"].endswith("size mismatch at index 0. expected 2, actual 3")
    assert a["fallback"] == "eager"
    metrics = json.loads((folder(run, hits[0]) / "metrics.json").read_text())
    # each release's own spelling (2.13: Unsupported / "recompile limit exceeded"; 2.10:
    # RecompileLimitExceeded / "recompile_limit reached"), all one rule: magi_format.torchtext.is_limit_hit
    assert is_limit_hit(metrics["fail_type"], metrics["fail_reason"]), metrics
    # two compiles of pad, none opened for the attempt that hit the limit; no "failed compile"
    pad_compiles = [e for e in named(evs, "fullgraph_before_compile") if e["attributes"]["frame"] == "pad"]
    assert len(pad_compiles) == 2
    assert a["compile_id"] not in {e["attributes"]["compile_id"] for e in named(evs, "fullgraph_failed_compile")}
    from magi_tui.model import RunModel

    model = RunModel(run).load()
    assert not model.open_spans and not model.malformed


# -- failures, metrics, backward, cache ----------------------------------------------------------

def test_backend_failure_keeps_the_whole_message_and_metrics(tmp_path):
    class UnsupportedOp(RuntimeError):
        pass

    def picky_backend(gm, inputs):
        raise UnsupportedOp("aten.sin is not supported\nsupported: add, mul")

    def f(x):
        return x.sin() + 1

    torch._dynamo.config.suppress_errors = True
    with explain_compilation(tmp_path) as run:
        out = torch.compile(f, backend=picky_backend)(torch.zeros(3))
    assert torch.equal(out, torch.ones(3))
    evs = events(run.path)
    failed = named(evs, "fullgraph_failed_compile")
    assert len(failed) == 1
    a = failed[0]["attributes"]
    assert a["exception_type"] == "BackendCompilerFailed"
    assert a["exception_message"] == ("backend='picky_backend' raised:\n"
                                      "UnsupportedOp: aten.sin is not supported\nsupported: add, mul")
    assert a["fail_type"] == "BackendCompilerFailed" and a["frame"] == "f"
    files = folder(run.path, failed[0])
    metrics = json.loads((files / "metrics.json").read_text())
    assert metrics["fail_type"] == "BackendCompilerFailed" and metrics["fail_reason"] == a["exception_message"]
    assert metrics["entire_frame_compile_time_s"] > 0 and metrics["co_name"] == "f"
    assert {"fail_user_frame_filename", "fail_user_frame_lineno"} <= set(metrics)
    assert "raise UnsupportedOp" in (files / "traceback.txt").read_text()
    # the compile lifecycle is closed exactly once, by the failure
    assert len(named(evs, "fullgraph_after_compile")) == 0


def test_fullgraph_error_reaches_the_program_and_is_recorded_whole(tmp_path):
    def f(x):
        print("no")
        return x + 1

    with explain_compilation(tmp_path) as run:
        with pytest.raises(torch._dynamo.exc.Unsupported) as info:
            torch.compile(f, backend="eager", fullgraph=True)(torch.ones(2))
    failed = named(events(run.path), "fullgraph_failed_compile")
    assert len(failed) == 1
    a = failed[0]["attributes"]
    assert a["exception_type"] == "Unsupported" and a["fail_type"] == "Unsupported"
    assert a["exception_message"].startswith("Failed to trace builtin operator\n  Explanation:")
    assert a["exception_message"].splitlines()[0] == str(info.value).splitlines()[0]
    assert "gb0059.html" in a["exception_message"]


def test_backward_compile_is_its_own_lifecycle_with_metrics(tmp_path):
    def f(x):
        return (x.sin() * 2).sum()

    x = torch.randn(4, requires_grad=True)
    with explain_compilation(tmp_path) as run:
        loss = torch.compile(f, backend="aot_eager")(x)
        loss.backward()
    assert torch.allclose(x.grad, 2 * x.detach().cos())
    evs = events(run.path)
    before, after = named(evs, "fullgraph_before_backward_compile"), named(evs, "fullgraph_after_backward_compile")
    assert len(before) == len(after) == 1 and before[0]["index"] < after[0]["index"]
    assert after[0]["attributes"]["backward"] is True and after[0]["attributes"]["compile_id"] == "0/0"
    assert after[0]["index"] > named(evs, "fullgraph_after_compile")[0]["index"]  # lazily, at .backward()
    metrics = json.loads((folder(run.path, after[0]) / "metrics.json").read_text())
    assert metrics["compile_id"] == "0/0" and metrics["fail_type"] is None
    assert named(evs, "fullgraph_after_aot_backward_graph")[0]["attributes"]["backward"] is True
    assert not named(evs, "fullgraph_after_aot_forward_graph")[0]["attributes"].get("backward")
    from magi_tui.model import RunModel  # the viewer pairs every before with its after

    model = RunModel(run.path).load()
    assert model.status == "ok" and not model.open_spans


def test_inductor_cache_hit_miss_bypass_are_three_states_and_backward_is_marked(tmp_path):
    import random

    k = random.randrange(1 << 30)  # a graph no earlier run has cached: the first compile misses

    def f(x):
        return (x.cos() + k).relu().sum()

    x = torch.randn(8, requires_grad=True)
    with explain_compilation(tmp_path) as run:
        torch.compile(f)(x).backward()
        torch._dynamo.reset()
        torch.compile(f)(x).backward()  # the same graphs again: FX-graph cache hits
        pw = piecewise_backend(compiler="inductor")  # a piece compiled outside Dynamo: no shape env
        torch.compile(lambda t: t * 3 + 1, backend=pw)(torch.ones(4))
    evs = events(run.path)
    states = {(e["name"], e["attributes"]["cache"], bool(e["attributes"].get("backward")))
              for e in evs if e["name"].startswith("fullgraph_cache_")}
    assert ("fullgraph_cache_miss", "fx_graph", False) in states
    assert ("fullgraph_cache_miss", "fx_graph", True) in states  # the backward graph, compiled lazily
    assert ("fullgraph_cache_hit", "fx_graph", False) in states
    assert ("fullgraph_cache_hit", "fx_graph", True) in states
    bypass = named(evs, "fullgraph_cache_bypass")
    assert bypass and all(e["attributes"]["reason"] == "No shape env" for e in bypass)
    assert not [e for e in named(evs, "fullgraph_cache_miss") if e["attributes"]["reason"] == "No shape env"]
    info = json.loads((folder(run.path, bypass[0]) / "cache_info.json").read_text())
    assert info["cache_state"] == "bypass"
    codegen = named(evs, "fullgraph_after_inductor_codegen")
    assert any(e["attributes"].get("backward") for e in codegen) and any(
        not e["attributes"].get("backward") for e in codegen)
    bwd = named(evs, "fullgraph_after_backward_compile")
    assert bwd and all(e["attributes"]["backward"] for e in bwd)
    # piece compiles after Dynamo's compile closed are not mistaken for a backward
    pieces = [e for e in evs if e["attributes"].get("compile_id") == bypass[0]["attributes"]["compile_id"]]
    assert not any(e["attributes"].get("backward") for e in pieces)


# -- guards ----------------------------------------------------------------------------------------

def test_cache_entries_are_recorded_most_recently_used_first_with_leaf_guard_counts(tmp_path):
    def f(x, y):
        return x * 2 + y.sum()

    with explain_compilation(tmp_path) as run:
        g = torch.compile(f, backend="eager", dynamic=False)
        g(torch.ones(2), torch.ones(3))                                           # compile 0/0
        g(torch.ones(2, dtype=torch.float64), torch.ones(3, dtype=torch.float64))  # compile 0/1
        g(torch.ones(2), torch.ones(3))                                           # 0/0 again: moved to the front
    fdir = run.path / "compiled_functions" / "f"
    overview = (fdir / "overview.md").read_text()
    assert "## entry\\[0\\] (compile 0/0)" in overview and "## entry\\[1\\] (compile 0/1)" in overview
    assert "float64" not in (fdir / "entry_0" / "guards.txt").read_text()
    assert "float64" in (fdir / "entry_1" / "guards.txt").read_text()
    assert "newest" not in overview
    counts = [int(n) for n in re.findall(r"guards \((\d+) leaf\)", overview)]
    built = [e["attributes"]["leaf_guard_count"] for e in named(events(run.path), "fullgraph_after_build_guards")]
    assert counts == built[::-1]  # what torch built for 0/0 and 0/1, in the entries' order
    guards = (fdir / "entry_0" / "guards.txt").read_text()
    nodes = [ln for ln in guards.splitlines() if "+- " in ln]
    managers = [ln for ln in nodes if re.search(r"\+- \w*GuardManager", ln)]
    assert managers and counts[0] < len(nodes)  # accessors / managers are not guards
    assert "TENSOR_MATCH 2" in overview  # x and y, once each
    assert guards.count("NO_TENSOR_ALIASING") == 2 and "NO_TENSOR_ALIASING 1" in overview  # one guard, shown twice
    # the viewer's compiled_functions browser counts them the same way (it said "0 guards" on torch 2.13)
    from magi_tui.model.analysis.compiled_functions import index_compiled_functions

    (fn,) = [x for x in index_compiled_functions(run.path) if x.name == "f"]
    assert [e.guard_leaves for e in fn.entries] == counts
    assert fn.entries[0].label == "entry_0 (most recently used)" and "newest" not in fn.entries[1].label


# -- the tracer stopping ---------------------------------------------------------------------------

def test_disk_full_writes_a_final_tracer_stopped_event(tmp_path, monkeypatch):
    def full(self, *a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(RunWriter, "_write_folder", full)  # the big files fail, a line still fits

    def f(x):
        return x.cos() * 2

    x = torch.randn(5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with explain_compilation(tmp_path) as run:
            g = torch.compile(f, backend="eager")
            out = g(x)
            g(torch.randn(7, 2))
    assert torch.allclose(out, f(x))
    assert len([w for w in caught if issubclass(w.category, TracerWarning)]) == 1
    evs = events(run.path)
    assert evs[-1]["name"] == "fullgraph_tracer_stopped"
    assert len(named(evs, "fullgraph_tracer_stopped")) == 1
    a = evs[-1]["attributes"]
    assert a["reason"] == "disk_full" and "No space left on device" in a["error"]


def test_a_record_the_mapping_cannot_handle_is_dropped_alone_and_counted(tmp_path, monkeypatch):
    """Issue 33.10: a tracer bug on one record (here: the mapping of every output graph raises) loses that
    record, never the recording: no warning, no ``tracer_stopped``, later compiles recorded, and the run's
    ``session.json`` counts what was dropped with the first errors."""
    from magi_format import torch_mapping as mapping

    def broken(self, r):
        raise KeyError("sizes")

    monkeypatch.setitem(mapping.KIND_HANDLERS, "dynamo_output_graph", broken)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with explain_compilation(tmp_path) as run:
            out = torch.compile(lambda t: t + 1, backend="eager")(torch.zeros(2))
            torch.compile(lambda t: t * 3, backend="eager")(torch.ones(2))
    assert torch.equal(out, torch.ones(2))
    assert not [w for w in caught if issubclass(w.category, TracerWarning)]
    names = [e["name"] for e in events(run.path)]
    assert "fullgraph_tracer_stopped" not in names
    assert names.count("fullgraph_before_compile") == 2 and names.count("fullgraph_after_compile") == 2
    rec = json.loads((run.path / "timeline_events" / "session.json").read_text())["tracer"]
    assert rec["dropped_records"] == 2
    assert rec["drop_errors"][0] == {"where": "mapping", "error": "KeyError: 'sizes'", "record": "dynamo_output_graph"}
    assert rec["not_recorded"] == [] and rec["torch"] == torch.__version__
    # and the viewer says so, in the run's checks (rule tracer-drops)
    from magi_tui.model.analysis.checks import analyse
    from magi_tui.model.run import RunModel

    said = [c for c in analyse(RunModel(run.path).load()).checks if c.rule == "tracer-drops"]
    assert len(said) == 1 and said[0].level == "warn", said
    assert said[0].message.startswith("the tracer dropped 2 record(s) it could not handle; first: mapping: "
                                      "KeyError: 'sizes' (a dynamo_output_graph record)"), said[0].message


# -- python -m tracer: the program cannot tell --------------------------------------------------------

PROG = '''\
import sys, torch
def helper(x):
    print("in helper")
    return x + 1
def f(x):
    return helper(x * 2)
print("file", __file__, "argv", sys.argv, "path0", sys.path[0])
print("main", __name__, type(__loader__).__name__, __spec__, __package__, sys.modules["__main__"].__dict__ is globals())
print(torch.compile(f, backend="eager")(torch.ones(2)).tolist())
print("to stderr", file=sys.stderr)
def fail(n):
    try:
        {}["missing"]
    except KeyError as e:
        raise ValueError(f"bad {n}") from e
fail(sys.argv[1])
'''


def _both(args, cwd):
    """(plain ``python args``, ``python -m tracer args``): the two at once, one process per core."""
    with ThreadPoolExecutor(2) as pool:
        plain = pool.submit(subprocess.run, [sys.executable, *args], cwd=cwd, env=ENV, capture_output=True,
                            timeout=300)
        traced = pool.submit(subprocess.run, [sys.executable, "-m", "tracer", "-o", str(cwd / "out"), *args],
                             cwd=cwd, env=ENV, capture_output=True, timeout=300)
        return plain.result(), traced.result()


def test_python_m_tracer_is_invisible_to_the_program(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "prog.py").write_text(PROG)
    plain, traced = _both(["./sub/prog.py", "xyz"], tmp_path)
    assert plain.returncode == traced.returncode == 1
    assert traced.stdout == plain.stdout  # byte for byte, incl. __file__ = <cwd>/./sub/prog.py
    assert f"file {tmp_path}/./sub/prog.py argv ['./sub/prog.py', 'xyz'] path0 {tmp_path.resolve()}/sub".encode() \
        in plain.stdout
    lines = traced.stderr.splitlines(keepends=True)
    announce = [ln for ln in lines if ln.startswith(b"MAGI_RUN_DIR=")]
    assert len(announce) == 1
    assert b"".join(ln for ln in lines if not ln.startswith(b"MAGI_RUN_DIR=")) == plain.stderr
    assert b"tracer/__main__.py" not in traced.stderr and b"runpy" not in traced.stderr
    assert b'line 15, in fail\n    raise ValueError(f"bad {n}") from e\nValueError: bad xyz\n' in traced.stderr
    run = Path(announce[0].decode().strip().split("=", 1)[1])
    brk = named(events(run), "fullgraph_graph_break")
    assert brk and brk[0]["attributes"]["user_frame"] == f"{tmp_path}/./sub/prog.py:3"
    assert brk[0]["attributes"]["user_function"] == "helper"


def test_python_m_tracer_dies_of_sigint_like_python(tmp_path):
    (tmp_path / "kb.py").write_text("print('started')\nraise KeyboardInterrupt\n")
    plain, traced = _both(["kb.py"], tmp_path)
    assert plain.returncode == traced.returncode == -2
    assert traced.stdout == plain.stdout == b"started\n"
    assert b"".join(ln for ln in traced.stderr.splitlines(keepends=True)
                    if not ln.startswith(b"MAGI_RUN_DIR=")) == plain.stderr


def test_graph_break_message_fields_as_torch_formats_them():
    """torch's own formatter (exc.format_graph_break_message, augment_exc_message_with_hop_name): a
    multi-line explanation and hints, and a higher-order-op line between the type and the explanation
    where the torch adds one (2.10 has no augment_exc_message_with_hop_name)."""
    from torch._dynamo import exc as torch_exc
    from torch._dynamo.exc import format_graph_break_message

    from magi_format.torchtext import parse_graph_break

    msg = format_graph_break_message("Failed to trace builtin operator", "builtin print", "first\nsecond",
                                     ["one hint", "a hint\non two lines"])

    class Hop(Exception):
        _hop_name = "torch.cond"

    augment = getattr(torch_exc, "augment_exc_message_with_hop_name", None)
    if augment is not None:
        msg = augment(Hop(), msg)
    payload = (f"Graph break in user code at /u/m.py:7\nGraph Break Reason: {msg}\n\nUser code traceback:\n"
               '  File "/u/m.py", line 7, in step\n    print(x)\n\nTraceback (most recent call last):\n')
    gb = parse_graph_break(payload)
    assert gb["gb_type"] == "Failed to trace builtin operator"
    # the id from the message's link to torch's graph-break page, where the torch writes one (2.10 does not:
    # the mapper then takes the registry's id for the type)
    assert gb.get("gb_id") == ("GB0059" if "/gb/gb0059.html" in msg else None), msg
    assert gb["explanation"] == "first\nsecond"
    assert gb["hints"] == ["one hint", "a hint\non two lines"]
    assert gb["reason"] == msg.strip()
    assert [(f.filename, f.line, f.function, f.code) for f in gb["frames"]] == [("/u/m.py", 7, "step", "print(x)")]


def test_when_not_even_the_final_event_fits_the_warning_says_so(tmp_path, monkeypatch):
    """A disk that refuses every write: the run cannot record why it stopped, so the one warning says
    that too, and the program still runs unchanged."""
    def gone(self, *a, **k):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(RunWriter, "write", gone)

    def f(x):
        return x.sin() + 1

    x = torch.randn(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with explain_compilation(tmp_path):
            out = torch.compile(f, backend="eager")(x)
    assert torch.allclose(out, f(x))
    (w,) = [w for w in caught if issubclass(w.category, TracerWarning)]
    assert "Input/output error" in str(w.message) and "final tracer_stopped event could not be written" in str(w.message)
