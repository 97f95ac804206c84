"""A hostile TORCH_TRACE log (escapes, bidi, path-like names, wrong types, deep JSON, bad UTF-8): read
without a traceback, files kept in the reader's own folder under safe names, nothing obeyed on screen."""

from __future__ import annotations

import json
from pathlib import Path

from magi_tui.model import RunModel
from magi_tui.model.outputs.report import triage_json
from magi_tui.ui.app import MagiApp
from tests.support.pilot import loaded_run_screen, screen_text, unsafe_on_screen, wait_for
from tests.torchtrace.logkit import make_record

EVIL = "../../etc/passwd\x1b[31mRED\u202eevil\x07"
CTX = {"frame_id": 0, "frame_compile_id": 0, "attempt": 0}


def hostile_log(path: Path) -> Path:
    recs = [
        make_record({"artifact": {"name": EVIL, "encoding": "string"}, **CTX}, "payload \x1b[2J\u202e text"),
        make_record({"\x1b]0;pwned\x07": {"x": EVIL}, **CTX}, "unknown kind's payload"),
        make_record({"dynamo_start": {"stack": "not a list"}, "frame_id": "zero", "frame_compile_id": [], "attempt": "x"}),
        make_record({"compilation_metrics": {"restart_reasons": EVIL, "fail_type": 3, "co_name": {"a": 1}}, **CTX}),
        make_record({"artifact": "not an object", **CTX}, "x"),
        make_record({"dynamo_output_graph": [1, 2], **CTX}, "graph"),
        make_record({"artifact": {"name": "recompile_reasons", "encoding": "json"}, **CTX}, "[1, {\"a\": null}]"),
        b"V1122 11:12:39.772000 5512 torch/x.py:1] " + b"[" * 5000 + b"\n",
        b"V1122 11:12:39.772000 5512 torch/x.py:1] {\"str\": [\"\xff\xfe\", 0]}\n",
        make_record({"artifact": {"name": "dynamo_graph_break_reason", "encoding": "string"}, **CTX}, "x" * 300_000),
        b"\x00\x01garbage \xff\n",
    ]
    path.write_bytes(b"".join(recs))
    return path


def test_hostile_log_reads_without_a_traceback(tmp_path):
    run = RunModel(hostile_log(tmp_path / "dedicated_log_torch_trace_evil.log")).load()
    assert run.error is None
    # the deep JSON, the bad UTF-8 and the garbage line, each with its line number
    assert [(m.line_no, m.reason) for m in run.malformed] == [
        (13, "invalid JSON: RecursionError"), (14, "metadata is not valid UTF-8"),
        (17, "not a TORCH_TRACE record line")]
    assert dict(run.reader.unknown_types) == {"\x1b]0;pwned\x07": 1}
    kinds = {e.name for e in run.events}
    assert {"fullgraph_graph_break", "fullgraph_recompile", "fullgraph_after_dynamo_capture",
            "fullgraph_failed_compile"} <= kinds
    # records without an event of ours are named after themselves, made safe: letters, digits and _
    assert [e.name for e in run.events[:2]] == ["fullgraph_etc_passwd_31mred_evil", "fullgraph_0_pwned"]
    art = run.events[0]
    assert run.attributes(art)["artifact"] == EVIL  # kept as data; the screen shows it escaped
    folder = None
    for ev in run.events:
        for name, path, problem in run.files(ev):
            assert path is not None, problem
            assert "/" not in path.name and not path.is_symlink()
            folder = folder or path.parent.parent
            assert path.parent.parent == folder  # every file in the reader's own folder
    assert folder is not None and not str(folder).startswith(str(tmp_path))
    json.dumps(triage_json(run))  # the headless report is plain JSON


async def test_hostile_log_on_screen_is_shown_not_obeyed(tmp_path):
    log = hostile_log(tmp_path / "dedicated_log_torch_trace_evil.log")
    app = MagiApp(log)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await loaded_run_screen(pilot)
        for ev in screen.run.events:
            screen.jump_to(ev)
            await pilot.pause()
            assert unsafe_on_screen(app) == [], ev.name
        art = next(e for e in screen.run.events if screen.run.attributes(e).get("artifact") == EVIL)
        screen.jump_to(art)
        await wait_for(pilot, lambda: "payload" in screen_text(app), what="the artifact's payload")
        assert unsafe_on_screen(app) == []
