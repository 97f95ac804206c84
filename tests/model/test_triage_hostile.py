"""Triage never fails on what a run holds: wrong attribute types, huge or odd reasons, names with
control characters, a graph_break.txt that is not a file."""

from __future__ import annotations

import json

from magi_tui.cli import main
from magi_tui.model import RunModel
from magi_tui.model.analysis.checks import analyse
from magi_tui.model.outputs.report import triage_json, triage_text
from tests.support.timeline import ev_line, write_run


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


def test_fifos_and_links_out_are_never_opened(fx_copy, tmp_path):
    """A FIFO would block a reader forever; a link out of the run could show any file."""
    import os
    import threading

    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("co_name: STOLEN\nSECRET\n")
    cf = fx_copy("recompile_explain")
    fwd = cf / "compiled_functions" / "forward"
    (fwd / "bytecode_info.txt").unlink()
    os.mkfifo(fwd / "bytecode_info.txt")
    toy = cf / "compiled_functions" / "toy_with_break"
    (toy / "bytecode_info.txt").unlink()
    (toy / "bytecode_info.txt").symlink_to(secret)
    (toy / "entry_0" / "guards.txt").unlink()
    os.mkfifo(toy / "entry_0" / "guards.txt")
    (cf / "run.log").symlink_to(secret)
    done: list = []
    t = threading.Thread(target=lambda: done.append(analyse(RunModel(cf).load())), daemon=True)
    t.start()
    t.join(20)
    assert done, "triage blocked on a FIFO"
    a = done[0]
    assert all("STOLEN" not in f.frame for f in a.frames)
    assert a.log_tail is None
    text = triage_text(RunModel(cf).load(), show_all=True)
    assert "SECRET" not in text and "STOLEN" not in text


def test_a_run_log_that_is_a_link_is_not_shown(fx_copy, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET\n")
    root = fx_copy("dynamo_failure")
    (root.parent / "run.log").symlink_to(secret)
    from magi_tui.model.sources.discovery import find_runs

    (found,) = find_runs(root)
    a = analyse(RunModel(found.path).load())
    assert a.status == "empty" and a.log_tail is None
    (root.parent / "run.log").unlink()
    (root.parent / "run.log").write_text("the real error\n")
    a = analyse(RunModel(found.path).load())
    assert a.log_tail == ["the real error"]
