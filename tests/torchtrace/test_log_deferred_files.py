"""A log's ``metrics.json`` and ``user_stack.txt`` are made when opened, from the record re-read from the
log (not for every compile as it is read): the texts are the mapping's own, made at the time, even where a
``str`` record later redefines a file id the stack names, or defines one the stack named before it existed."""

from __future__ import annotations

import json

from magi_format.torch_mapping import TraceMapper
from magi_tui.model import RunModel
from tests.torchtrace.logkit import make_record, write_log


def _start(fid: int, stack: list[dict]) -> bytes:
    return make_record({"dynamo_start": {"stack": stack}, "frame_id": fid, "frame_compile_id": 0, "attempt": 0})


def _metrics(fid: int, name: str) -> bytes:
    return make_record({"compilation_metrics": {"compile_id": f"{fid}/0", "co_name": name, "co_filename": "/a.py",
                                                "co_firstlineno": 10 + fid, "guard_count": 2, "extra": [1, 2]},
                        "frame_id": fid, "frame_compile_id": 0, "attempt": 0})


def _eager_texts(recs: list[bytes]) -> list[tuple[str, str, str]]:
    """(event name, file, text) of what the mapping makes of the records, texts made at once (the tracer's way)."""
    m = TraceMapper()
    out = []
    for rec in recs:
        line = rec.split(b"] ", 1)[1].split(b"\n", 1)[0]
        for name, _attrs, files, *_ in m.handle(json.loads(line), None):
            out += [(name, f, t) for f, t in files.items()]
    return out


def test_deferred_texts_are_the_mappings_own_as_of_their_record(tmp_path):
    frame = {"line": 5, "name": "fn", "filename": 0}
    later = {"line": 7, "name": "g", "filename": 1}  # id 1 is defined only after the first compile
    recs = [make_record({"str": ["/first.py", 0]}),
            _start(0, [frame, later]), _metrics(0, "fn"),
            make_record({"str": ["/second.py", 1]}),
            make_record({"str": ["/redefined.py", 0]}),  # id 0 named again: later stacks read the new name
            _start(1, [frame, later]), _metrics(1, "fn")]
    log = write_log(tmp_path / "dedicated_log_torch_trace_rank_0_x.log", recs)
    want = _eager_texts(recs)
    assert ('/first.py"' in want[0][2] and '"1"' in want[0][2]) and '/redefined.py"' in want[2][2]

    run = RunModel(log).load()
    got = [(ev.name, f, run.file_text(ev, f, 1 << 20)) for ev in run.events for f in ev.files]
    assert got == want
    for ev in run.events:  # and the copies the app opens
        for name, path, problem in run.files(ev):
            if name in ev.files:
                assert problem is None and path.read_text() == run.file_text(ev, name, 1 << 20)


def test_a_deferred_text_of_a_log_replaced_since_is_not_shown(tmp_path):
    log = write_log(tmp_path / "dedicated_log_torch_trace_rank_0_x.log",
                    [make_record({"str": ["/a.py", 0]}), _start(0, [{"line": 5, "name": "fn", "filename": 0}]),
                     _metrics(0, "fn")])
    run = RunModel(log).load()
    end = next(ev for ev in run.events if "metrics.json" in ev.files)
    log.unlink()
    log.write_bytes(b"")
    assert run.file_text(end, "metrics.json", 1 << 20) is None
