"""The TORCH_TRACE reader's limits (issue 18.6, its TORCH_TRACE part): a valid record just before a line
that is too long is read (only the long one is skipped and reported), and a record does not take ~4×
its size in memory while it is read."""

from __future__ import annotations

import json
import os
import sys

from magi_tui.model import RunModel
from magi_tui.model.sources.torchtrace import reader as reader_mod
from tests.support import slow
from tests.support.paths import ROOT
from tests.torchtrace.logkit import RECORDED, make_record, records, write_log

JIT = RECORDED / "jit_reset.log"


def test_record_before_an_overlong_line_is_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(reader_mod, "MAX_RECORD_BYTES", 256 << 10)
    monkeypatch.setattr(reader_mod, "CHUNK", 16 << 10)
    before = make_record({"artifact": {"name": "just_before", "encoding": "string"}}, "kept\nwhole")
    huge = make_record({"artifact": {"name": "huge", "encoding": "string"}, "pad": "x" * (300 << 10)})
    after = make_record({"artifact": {"name": "just_after", "encoding": "string"}}, "after it")
    recs = records(JIT)
    log = write_log(tmp_path / "huge.log", recs[:10] + [before, huge, after] + recs[10:])
    run = RunModel(log).load()
    names = [run.attributes(e).get("artifact") for e in run.events]
    assert "just_before" in names and "just_after" in names and "huge" not in names
    assert [m.reason.split(":")[0] for m in run.malformed] == ["record longer than 0 MB"]  # (patched to 256 KB)
    ev = next(e for e in run.events if run.attributes(e).get("artifact") == "just_before")
    assert [p.read_text() for n, p, _ in run.files(ev) if n == "just_before.txt"] == ["kept\nwhole"]
    whole = RunModel(JIT).load()
    assert len(run.events) == len(whole.events) + 2 and run.status == whole.status


def test_a_big_record_is_not_held_four_times(tmp_path):
    line = "    buf0 = empty_strided_cpu((64, 64), (64, 1), torch.float32)  # generated code"
    payload = "\n".join([line] * ((48 << 20) // (len(line) + 2)))
    log = write_log(tmp_path / "one.log", [make_record({"inductor_output_code": {"filename": "x.py"},
                                                        "frame_id": 0, "frame_compile_id": 0}, payload)])
    size = len(payload)
    probe = "print(next(ln.split()[1] for ln in open('/proc/self/status') if ln.startswith('VmHWM')))"
    code = (f"from magi_tui.model import RunModel\nr = RunModel({str(log)!r}).load()\n"
            "assert len(r.events) == 1 and not r.malformed, (r.events, r.malformed)\n" + probe)
    base = f"import magi_tui.model\nimport magi_tui.model.sources.torchtrace.reader\n{probe}"

    def hwm(src: str) -> int:
        out = slow.run([sys.executable, "-c", src], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert out.returncode == 0, out.stderr
        return int(out.stdout.split()[-1]) * 1024

    used = hwm(code) - hwm(base)
    assert used < 3.3 * size, json.dumps({"x_record_size": round(used / size, 2)})
