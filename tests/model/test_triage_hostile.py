"""Triage never fails on what a run holds: wrong attribute types, huge or odd reasons, names with
control characters, a graph_break.txt that is not a file."""

from __future__ import annotations

import json

from magi_model_helpers import ev_line, write_run

from magi_tui.cli import main
from magi_tui.model import RunModel
from magi_tui.model.checks import analyse
from magi_tui.model.report import triage_json, triage_text


def test_wrong_types_everywhere(tmp_path, capsys):
    odd = [None, 7, 1.5, True, [], {}, "", "x" * 100_000, "\x1b[2J", "0/0/0/0", "!1/", "12/x"]
    lines = []
    for i, v in enumerate(odd):
        lines.append(ev_line(5 * i, "fullgraph_before_compile", lifecycle_name="compile", compile_id=v, frame=v,
                             co_filename=v, co_firstlineno=v))
        lines.append(ev_line(5 * i + 1, "fullgraph_recompile", compile_id=v, frame=v, reason=v, reasons=v,
                             recompile_limit=v))
        lines.append(ev_line(5 * i + 2, "fullgraph_graph_break", files=["graph_break.txt"], compile_id=v, reason=v,
                             gb_id=v, hints=v, user_frame=v, user_file=v, user_line=v, explanation=v))
        lines.append(ev_line(5 * i + 3, "fullgraph_cache_bypass", compile_id=v, reason=v, cache=v))
        lines.append(ev_line(5 * i + 4, "fullgraph_recompile_limit_hit", compile_id=v, frame=v, recompile_limit=v))
    run_dir = write_run(tmp_path / "r", lines)
    (run_dir / "timeline_events" / "files" / "0002_fullgraph_graph_break" / "graph_break.txt").mkdir(parents=True)
    run = RunModel(run_dir).load()
    a = analyse(run)
    assert a.status in ("incomplete", "ok", "recovered")
    json.dumps(triage_json(run))
    triage_text(run, show_all=True)
    assert main(["triage", str(run_dir)]) in (0, 1)
    out, err = capsys.readouterr()
    assert "\x1b" not in out and "Traceback" not in out + err


def test_guard_files_unreadable(fx_copy):
    cf = fx_copy("recompile_explain")
    g = cf / "compiled_functions" / "toy_with_break" / "entry_0" / "guards.txt"
    g.unlink()
    g.mkdir()
    (cf / "compiled_functions" / "forward" / "bytecode_info.txt").write_bytes(b"\xff\xfe co_name:\x00\n")
    a = analyse(RunModel(cf).load())
    assert len(a.recompiles) == 6
    toy = [r for r in a.recompiles if r.frame.startswith("toy_with_break ")]
    assert toy[-1].guard_diff is None  # entry_0's guards cannot be read: no diff, no crash
