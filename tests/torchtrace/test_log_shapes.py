"""Finished logs in the shapes other tools and older torch leave them read as finished (issue 19.2):
no final newline, CRLF line endings, a byte-order mark, a wrong md5 on the last record, older torch's
post-grad records. Each variant is made from a log recorded from a real program and compared with the
original and with what tlparse reports on the same bytes."""

from __future__ import annotations

import json
import sys

import pytest

from magi_tui.model import RunModel, find_runs
from tests.support import slow
from tests.support.paths import ROOT
from tests.torchtrace.logkit import RECORDED, make_record, records, retag, write_log
from tests.torchtrace.oracle import run_tlparse, tlparse_facts

JIT = RECORDED / "jit_reset.log"
AOT = RECORDED / "aot_provenance.log"


def facts(run: RunModel) -> tuple:
    return (run.status, len(run.events), [e.name for e in run.events], dict(run.reader.stats),
            list(run.reader.compile_ids))


@pytest.fixture(scope="module")
def original() -> RunModel:
    return RunModel(JIT).load()


def _triage_json(path) -> tuple[int, dict]:
    out = slow.run([sys.executable, "-m", "magi_tui", "triage", str(path), "--json"], cwd=ROOT,
                   capture_output=True, text=True, timeout=120)
    assert "Traceback" not in out.stderr, out.stderr
    return out.returncode, json.loads(out.stdout)


def test_no_final_newline_is_finished_once_the_writer_has_gone(tmp_path, original):
    log = write_log(tmp_path / "nonl.log", [JIT.read_bytes()[:-1]])
    run = RunModel(log).load()
    assert not run.partial_line and not run.malformed
    assert facts(run) == facts(original) and run.status == "recovered"
    tl = tlparse_facts(run_tlparse(log, tmp_path / "tl"))
    assert run.reader.stats["ok"] == tl.stats["ok"] and sorted(run.reader.compile_ids) == sorted(tl.compile_ids)
    # the run list and triage agree
    rc, tj = _triage_json(log)
    assert (rc, tj["status"], tj["partial_last_line"]) == (0, "recovered", False)


def test_no_final_newline_while_written_stays_pending_and_names_the_log(tmp_path):
    log = tmp_path / "dedicated_log_torch_trace_live.log"
    with open(log, "ab") as writer:  # a process still writing it: the last record may not be whole yet
        writer.write(JIT.read_bytes()[:-1])
        writer.flush()
        run = RunModel(log).load()
        assert run.partial_line and run.status == "incomplete"
        why = " ".join(run.status_why()[1])
        assert "dedicated_log_torch_trace_live.log" in why and "timeline.jsonl" not in why
    # the writer closed it: final at once, without waiting for the file to be quiet (a log just cut or copied)
    again = RunModel(log).load()
    assert not again.partial_line and again.status == "recovered"


def test_a_log_just_written_and_closed_is_final_at_once(tmp_path, original):
    """What a user does right after a log is copied or cut by hand (the before-stop check: ``head -c -1 log``
    then ``triage``): no process holds it for writing, so its last record is whole though its mtime is new."""
    log = write_log(tmp_path / "cut.log", [JIT.read_bytes()[:-1]], settled=False)
    rc, tj = _triage_json(log)
    assert (rc, tj["status"], tj["partial_last_line"]) == (0, facts(original)[0], False)


def test_crlf_reads_as_tlparse_reads_it(tmp_path, original):
    log = write_log(tmp_path / "crlf.log", [JIT.read_bytes().replace(b"\n", b"\r\n")])
    run = RunModel(log).load()
    assert not run.malformed and not run.partial_line
    assert facts(run) == facts(original)
    tl = tlparse_facts(run_tlparse(log, tmp_path / "tl"))
    assert tl.stats == {"ok": run.reader.stats["ok"]}
    # a payload opens without the carriage returns (tlparse's payload files have none either)
    ev = next(e for e in run.events if e.name.endswith("after_dynamo_capture") or "captured_graph.py" in e.files)
    path = next(p for n, p, _ in run.files(ev) if n == "captured_graph.py")
    assert b"\r" not in path.read_bytes()


def test_byte_order_mark_before_the_first_record(tmp_path, original):
    log = write_log(tmp_path / "bom.log", [b"\xef\xbb\xbf" + JIT.read_bytes()])
    assert [r.path for r in find_runs(log)] == [log]
    run = RunModel(log).load()
    assert not run.malformed and facts(run) == facts(original)
    assert tlparse_facts(run_tlparse(log, tmp_path / "tl")).stats == {"ok": run.reader.stats["ok"]}


def test_wrong_md5_on_the_last_record_is_malformed_and_kept(tmp_path, original):
    bad = make_record({"artifact": {"name": "fx_graph_runnable", "encoding": "string"}},
                      "def forward(self):\n    pass", md5="0" * 32)
    log = write_log(tmp_path / "md5.log", [JIT.read_bytes(), bad])
    run = RunModel(log).load()
    assert not run.partial_line and run.status == original.status
    assert [m.reason for m in run.malformed] == ["payload does not match its has_payload md5 (shown anyway)"]
    assert len(run.events) == len(original.events) + 1 and run.events[-1].name.endswith("fx_graph_runnable")
    tl = tlparse_facts(run_tlparse(log, tmp_path / "tl"))
    assert tl.stats.get("fail_payload_md5") == run.reader.stats["fail_payload_md5"] == 1


def _aot_variant(tmp_path, transform) -> RunModel:
    recs = [transform(r) if b'"inductor_post_grad_graph"' in r.split(b"\n", 1)[0] else r for r in records(AOT)]
    return RunModel(write_log(tmp_path / "aot.log", recs)).load()


def test_older_after_post_grad_graph_closes_the_post_grad_passes(tmp_path):
    for name in (b"after_post_grad_graph", b"after_recompile_post_grad"):
        run = _aot_variant(tmp_path, lambda r: retag(r, b'"inductor_post_grad_graph"', b'"' + name + b'"'))
        assert run.status == "ok" and not run.open_spans, run.status_why()
        post = [e for e in run.events if e.lifecycle == "post_grad_passes"]
        assert [e.phase for e in post] == ["before", "after"]


def test_top_level_post_grad_graph_after_the_passes_is_not_a_cache_hit(tmp_path):
    # older torch wrote the post-grad graph as a top-level record at the end of the passes it opened
    run = _aot_variant(tmp_path, lambda r: retag(r, b'{"artifact": {"name": "inductor_post_grad_graph", '
                                                    b'"encoding": "string"}', b'{"inductor_post_grad_graph": {}'))
    post = [e for e in run.events if e.lifecycle == "post_grad_passes"]
    assert [e.phase for e in post] == ["before", "after"]
    assert all(run.attributes(e).get("cache") is None for e in post)
    assert run.status == "ok" and not run.open_spans


def test_recorded_aot_log_closes_every_lifecycle():
    run = RunModel(AOT).load()
    assert run.status == "ok" and not run.open_spans and not run.malformed


def test_an_empty_log_is_named_in_the_report(tmp_path):
    log = write_log(tmp_path / "dedicated_log_torch_trace_empty.log", records(JIT)[:1])  # torch_version only
    out = slow.run([sys.executable, "-m", "magi_tui", "triage", str(log)], cwd=ROOT, capture_output=True,
                   text=True, timeout=120)
    assert "Nothing was recorded in dedicated_log_torch_trace_empty.log" in out.stdout, out.stdout
    assert "timeline" not in out.stdout
