"""``TORCH_COMPILE_DEBUG=1`` output opens as a run: recorded here from a tiny Inductor program with one
graph break (two graphs, so two model folders), shared by the module. One compile per model folder, its
files as events in pipeline order, every pair closed and diffable with ``d``; found from any path in or
above it; read incrementally while torch writes it; ``runs`` and ``triage`` accept it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from magi_tui.model import RunModel, find_runs
from tests.support import ahead, slow
from tests.support.paths import ROOT

pytestmark = [pytest.mark.torch, pytest.mark.slow]
pytest.importorskip("torch")

PROGRAM = """
import torch

def f(x, y):
    z = torch.relu(x @ y + 1.0)
    torch._dynamo.graph_break()
    a = z.sin()
    return (a.cos() * 2).sum(dim=0) + a.mean()  # two reductions over one input: fused into one loop

torch.compile(f)(torch.randn(8, 8), torch.randn(8, 8))
"""
PIPELINE = ["fullgraph_before_compile", "fullgraph_before_post_grad_passes", "fullgraph_fx_graph_runnable",
            "fullgraph_after_post_grad_passes", "fullgraph_before_inductor_fusion",
            "fullgraph_after_inductor_fusion", "fullgraph_after_inductor_codegen"]


@pytest.fixture(scope="module")
def debug_root(tmp_path_factory) -> Path:
    return ahead.early_result("debug_root", tmp_path_factory)


@ahead.early("debug_root")
def _record(d: Path) -> Path:
    """torch_compile_debug/ of PROGRAM (started early: tests/support/ahead.py)"""
    (d / "prog.py").write_text(PROGRAM)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_LOGS", "TORCH_TRACE", "TORCHDYNAMO"))}
    env["TORCH_COMPILE_DEBUG"] = "1"
    # a warm FX-graph / AOT cache compiles nothing and torch then writes no model folder at all
    env.update(TORCHINDUCTOR_FX_GRAPH_CACHE="0", TORCHINDUCTOR_AUTOGRAD_CACHE="0")
    proc = slow.run([sys.executable, "prog.py"], cwd=d, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return d / "torch_compile_debug"


def run_dir(root: Path) -> Path:
    (only,) = root.glob("run_*")
    return only


def test_one_compile_per_model_folder_in_pipeline_order(debug_root):
    run_path = run_dir(debug_root)
    folders = sorted(p.name for p in (run_path / "torchinductor").iterdir() if p.is_dir())
    assert len(folders) == 2, folders  # what torch 2.13 wrote: one folder per graph around the break
    found = {f.path for f in find_runs(debug_root)}
    assert run_path in found  # (and torch's own TORCH_TRACE log under tlparse/, a run of its own)
    for inside in (run_path / "torchinductor", run_path / "torchinductor" / folders[1] / "output_code.py"):
        assert [f.path for f in find_runs(inside)] == [run_path]
        assert RunModel(inside).path == run_path
    run = RunModel(run_path).load()
    assert run.status == "ok" and not run.open_spans and not run.malformed
    assert [c.compile_id for s in run.tree.sessions for c in s.compiles] == folders
    for cid in folders:
        names = [e.name for e in run.events if e.compile_id == cid]
        # then torch's other files (its provenance mappings, written after the code) as debug_file events
        assert names[:len(PIPELINE) + 1] == PIPELINE + ["fullgraph_after_compile"], names
    after = [e for e in run.events if e.name == "fullgraph_after_inductor_fusion"][0]
    files = {e.name: [n for n, p, problem in run.files(e) if p is not None and problem is None]
             for e in after.span.events}
    assert files == {"fullgraph_before_inductor_fusion": ["ir_pre_fusion.txt"],
                     "fullgraph_after_inductor_fusion": ["ir_post_fusion.txt"]}


def test_read_while_torch_writes_each_event_once_and_no_link_followed(debug_root, tmp_path):
    src = run_dir(debug_root)
    live = tmp_path / src.name
    (live / "torchinductor").mkdir(parents=True)
    run = RunModel(live)
    assert run.reader.__class__.__name__ == "DebugDirReader"
    (live / "torchinductor" / "model__9_inference_9.9").mkdir()
    os.symlink("/etc/passwd", live / "torchinductor" / "model__9_inference_9.9" / "output_code.py")
    order = ["fx_graph_readable.py", "fx_graph_runnable.py", "fx_graph_transformed.py", "ir_pre_fusion.txt",
             "ir_post_fusion.txt", "output_code.py"]
    for folder in sorted((src / "torchinductor").iterdir()):
        if folder.is_dir():
            (live / "torchinductor" / folder.name).mkdir()
            for name in order + sorted(set(os.listdir(folder)) - set(order)):
                shutil.copy2(folder / name, live / "torchinductor" / folder.name / name)
                run.update()
    run.update()
    fresh = RunModel(live).load()
    assert [(e.name, e.compile_id, e.files) for e in run.events] == \
           [(e.name, e.compile_id, e.files) for e in fresh.events]
    assert len(run.events) == len(RunModel(src).load().events)  # the link is never an event nor a file
    assert not any(e.compile_id == "model__9_inference_9.9" for e in run.events)


def test_runs_and_triage_accept_it(debug_root):
    def cli(*args: str) -> subprocess.CompletedProcess:
        return slow.run([sys.executable, "-m", "magi_tui", *args], cwd=ROOT, capture_output=True, text=True,
                        timeout=120)

    run_path = run_dir(debug_root)
    out = cli("runs", str(debug_root), "--json")
    assert out.returncode == 0, out.stderr
    row = next(r for r in json.loads(out.stdout) if r["path"] == str(run_path))
    assert row["status"] == "ok" and row["events"] >= 2 * len(PIPELINE) and row["failures"] == 0
    tri = cli("triage", str(run_path))
    assert tri.returncode == 0, tri.stdout + tri.stderr
    assert "status: ok" in tri.stdout and "inductor_fusion" in tri.stdout


async def test_d_on_an_after_event_diffs_before_to_after(debug_root):
    from magi_tui.ui.app import MagiApp
    from magi_tui.ui.screens.diff import DiffScreen
    from magi_tui.ui.screens.run import RunScreen
    from tests.support.pilot import loaded_run_screen, screen_text, wait_for

    app = MagiApp(run_dir(debug_root))
    async with app.run_test(size=(140, 42)) as pilot:
        screen = await loaded_run_screen(pilot)
        for after, left, right in (("fullgraph_after_post_grad_passes", "fx_graph_readable.py",
                                    "fx_graph_transformed.py"),
                                   ("fullgraph_after_inductor_fusion", "ir_pre_fusion.txt", "ir_post_fusion.txt")):
            # the second graph's: its two reductions are fused, so the pair differs
            screen.jump_to([e for e in screen.run.events if e.name == after][-1])
            await pilot.pause()
            t0 = time.monotonic()
            await pilot.press("d")
            await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen) and app.screen.diff is not None,
                           what=f"the diff of {after}")
            assert time.monotonic() - t0 < slow.limit(10)
            assert left in app.screen.left_title and right in app.screen.right_title
            if after.endswith("fusion"):
                assert not app.screen.diff.identical and app.screen.diff.hunks
            await wait_for(pilot, lambda: right in screen_text(app), what="the diff titles on screen")
            await pilot.press("q")
            assert isinstance(app.screen, RunScreen)


def test_what_is_refused_or_left_out_is_said(debug_root, tmp_path, monkeypatch):
    """Hostile round 3, item 6: a linked ``torchinductor/`` listed the outside folder's names, a stage file
    that is a link and the folders past the cap were dropped without a word."""
    from magi_tui.model.sources.debugdir import reader as debug_reader

    src = run_dir(debug_root)
    outside = tmp_path / "outside"
    shutil.copytree(src / "torchinductor", outside)
    (outside / "model__7_inference_7.7").mkdir()
    (outside / "model__7_inference_7.7" / "output_code.py").write_text("SECRET = 1\n")
    linked = tmp_path / "linked" / src.name
    shutil.copytree(src, linked)
    shutil.rmtree(linked / "torchinductor")
    os.symlink(outside, linked / "torchinductor")
    run = RunModel(linked).load()
    assert not any("model__7" in (e.compile_id or "") for e in run.events)  # the outside names are not listed
    assert any("torchinductor/ is a link" in m.reason for m in run.malformed), run.malformed

    copy = tmp_path / "copy" / src.name
    shutil.copytree(src, copy)
    folders = sorted(p for p in (copy / "torchinductor").iterdir() if p.is_dir())
    (folders[0] / "output_code.py").unlink()
    os.symlink("/etc/passwd", folders[0] / "output_code.py")
    monkeypatch.setattr(debug_reader, "MAX_FOLDERS", 1)
    run = RunModel(copy).load()
    reasons = [m.reason for m in run.malformed]
    assert any(f"{folders[0].name}/output_code.py is a link: not read" in r for r in reasons), reasons
    assert any("holds 2 model folders: only the first 1 are read" in r for r in reasons), reasons
    assert len({e.compile_id for e in run.events if e.compile_id}) == 1
    assert len([r for r in reasons if "is a link" in r]) == 1  # said once, not on every read
    run.update()
    assert len(run.malformed) == len(reasons)


def test_what_a_debug_dir_cannot_know_is_not_recorded_never_zero(debug_root):
    """The program broke once; a debug dir does not record graph breaks, so no green "no graph breaks"
    (issue 20.10): "not recorded here", null counts, and the TORCH_TRACE log of the same run named."""
    from magi_tui.model.outputs.report import triage_json

    j = triage_json(RunModel(run_dir(debug_root)).load())
    assert not any(c["level"] == "ok" and "graph break" in c["message"] for c in j["checks"])
    unknown = next(c["message"] for c in j["checks"] if c["level"] == "unknown")
    assert unknown.startswith("graph breaks, recompiles, restarts, cache: not recorded here")
    assert j["summary"]["graph_breaks"] is None and j["summary"]["recompiles"] is None
    assert set(j["not_recorded"]) == {"graph_breaks", "recompiles", "restarts", "cache"}
    log = Path(j["companion_log"])
    assert log.parent == debug_root / "tlparse" and str(log) in unknown
    assert triage_json(RunModel(log).load())["summary"]["graph_breaks"] == 1  # where the break is recorded


def test_an_empty_debug_dir_says_why(tmp_path):
    prog = "import torch\nprint(torch.compile(lambda x: x + 1, backend='eager')(torch.ones(2)))\n"
    (tmp_path / "prog.py").write_text(prog)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_LOGS", "TORCH_TRACE", "TORCHDYNAMO"))}
    env["TORCH_COMPILE_DEBUG"] = "1"
    proc = slow.run([sys.executable, "prog.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                    timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    from magi_tui.model.outputs.report import triage_json, triage_text

    run = RunModel(run_dir(tmp_path / "torch_compile_debug")).load()
    j = triage_json(run)
    assert j["status"] == "empty" and "warm cache" in j["empty"]["note"] and "timeline_events" not in j["empty"]["note"]
    assert "rerun the program" not in triage_text(run)
