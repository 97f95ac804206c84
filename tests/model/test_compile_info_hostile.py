"""Compile info on runs nobody should trust: broken or odd ``metrics.json`` / ``phases.json`` /
``user_stack.txt``, shape attributes of the wrong type, a reproducer whose target exists (or is a link):
missing numbers, never a traceback, never a write over anything."""

from __future__ import annotations

import os

from magi_format.names import lifecycle_event, point_event
from magi_tui.model import RunModel
from magi_tui.model.analysis.metrics import (
    compile_infos,
    detail_lines,
    metrics_table,
    stack_trie,
    trie_lines,
    write_reproducer,
)
from tests.support.timeline import record_run

C = {"scope": "fullgraph", "compile_id": "0/0", "attempt": 0, "frame": "f", "source": "torch_trace"}


def hostile_run(tmp_path):
    return record_run(tmp_path / "run", [
        (lifecycle_event("before", "compile"), {**C, "lifecycle_name": "compile"},
         {"user_stack.txt": 'File "x", line notanumber\n  File "/u/a.py", line 3, in main\n    f(x)\n\x1b[31m'}),
        (point_event("shape_symbol"), {**C, "symbol": ["not", "a", "str"], "vr": None, "unbacked": "yes"}),
        (point_event("shape_guard"), {**C, "expr": None, "user_frame": 12}),
        (point_event("fx_graph_runnable"), {**C}, {"fx_graph_runnable.py": "print('repro')\n"}),
        (lifecycle_event("after", "compile"), {**C, "lifecycle_name": "compile"},
         {"metrics.json": '{"entire_frame_compile_time_s": "fast", "guard_count": true, "restart_reasons": "x"',
          "phases.json": '[{"name": "a", "start_us": "0", "dur_us": 5}, 7, {"name": "b", "start_us": 0, '
                         '"dur_us": 1e400, "depth": -3}]'}),
        (lifecycle_event("after", "compile"), {**C, "compile_id": "nonsense", "lifecycle_name": "compile"}),
    ])


def test_broken_files_are_missing_numbers(tmp_path):
    run = RunModel(hostile_run(tmp_path)).load()
    (info,) = compile_infos(run)
    assert info.total_s is None and info.guard_count is None and info.status == "no metrics"
    assert [f.function for f in info.stack] == ["main"]
    assert len(info.shapes) == 2
    lines = detail_lines(info, ["guard"]) + trie_lines(stack_trie([info]))
    assert all(isinstance(t, str) for _s, t in lines)
    assert metrics_table([info])[1].startswith("[0/0]")


def test_reproducer_never_writes_over_a_file_or_through_a_link(tmp_path):
    run = RunModel(hostile_run(tmp_path)).load()
    (info,) = compile_infos(run)
    secret = tmp_path / "secret.txt"
    secret.write_text("keep")
    os.symlink(secret, tmp_path / "repro_0_0.py")
    path, why = write_reproducer(run, info)
    assert path is None and "not overwritten" in why and secret.read_text() == "keep"
    os.unlink(tmp_path / "repro_0_0.py")
    path, cmd = write_reproducer(run, info)
    assert path == tmp_path / "repro_0_0.py" and path.read_text() == "print('repro')\n"
    assert not any("repro" in p.name for p in (tmp_path / "run").rglob("*"))  # never inside the run
