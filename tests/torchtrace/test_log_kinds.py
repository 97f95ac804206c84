"""Every record kind torch writes is known or named (issue 19.5): records without an event of ours
appear under their own name, unknown kinds are counted as tlparse counts them, payloads keep their
blank lines."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from magi_format.torch_mapping import TORCH_ARTIFACT_PREFIXES, TORCH_KINDS, is_torch_artifact
from magi_tui.model import RunModel
from tests.torchtrace.logkit import RECORDED, make_record, records, write_log
from tests.torchtrace.oracle import run_tlparse, tlparse_facts
from tests.torchtrace.torchsource import scan, torch_sources, torch_version

LOGS = sorted(RECORDED.glob("*.log"))


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_no_event_is_a_bare_trace_artifact(log):
    run = RunModel(log).load()
    names = {e.short_name for e in run.events}
    assert not names & {"trace_artifact", "trace_record", "graph_dump"}, names
    for e in run.events:  # a record shown for itself carries its name
        a = run.attributes(e)
        if "artifact" in a:
            assert e.short_name.removeprefix("trace_").startswith(re.sub(r"[^0-9a-z]+", "_", a["artifact"].lower())[:20])


def test_unknown_kinds_are_counted_as_tlparse_counts_them(tmp_path):
    recs = records(RECORDED / "jit_reset.log")
    log = write_log(tmp_path / "unknown.log", recs + [
        make_record({"future_thing": {"a": 1}}, "a payload\nof two lines"),
        make_record({"future_thing": {"a": 2}}),
        make_record({"another_kind": {}, "frame_id": 0, "frame_compile_id": 0})])
    run = RunModel(log).load()
    tl = tlparse_facts(run_tlparse(log, tmp_path / "tl"))
    assert dict(run.reader.stats) == tl.stats == {"ok": 147, "unknown": 3}
    assert dict(run.reader.unknown_types) == {"future_thing": 2, "another_kind": 1}
    shown = [e.short_name for e in run.events if run.attributes(e).get("unknown")]
    assert shown == ["future_thing", "future_thing", "another_kind"]


def test_payload_keeps_lines_after_a_blank_one(tmp_path):
    """An editor that strips trailing whitespace leaves a payload's blank lines without their tab: the
    exported program is still read whole (tlparse reads on too, and reports the md5)."""
    src = RECORDED / "export.log"
    log = write_log(tmp_path / "blank.log", [re.sub(rb"(?m)^\t[ \t]*$", b"", src.read_bytes())])
    run = RunModel(log).load()
    ev = next(e for e in run.events if e.short_name == "exported_program")
    text = Path(next(p for n, p, _ in run.files(ev) if n == "exported_program.txt")).read_text()
    assert "Graph signature:" in text and "Range constraints: {u0: VR[3, int_oo]}" in text
    assert [m.reason for m in run.malformed] == ["payload does not match its has_payload md5 (shown anyway)"]
    tl = tlparse_facts(run_tlparse(log, tmp_path / "tl"))
    assert tl.stats["fail_payload_md5"] == run.reader.stats["fail_payload_md5"] == 1
    assert run.status == "ok"


SOURCES = torch_sources()


@pytest.mark.skipif(not SOURCES, reason="no torch here to read its vocabulary from")
@pytest.mark.parametrize("src", SOURCES, ids=torch_version)
def test_vocabulary_covers_what_each_torch_writes(src):
    """Every record kind and artifact name in a torch's source is ours — the installed torch's and every
    other found (tests/torchtrace/torchsource.py: 2.4.0, 2.14.1 wheels on this machine; 2.15.0 with
    MAGI_TORCH_SOURCES), names kept in constants and passed to helpers included."""
    s = scan(src)
    assert s.kinds and s.kinds <= TORCH_KINDS, sorted(s.kinds - TORCH_KINDS)
    assert s.artifacts and not {a for a in s.artifacts if not is_torch_artifact(a)}, \
        sorted(a for a in s.artifacts if not is_torch_artifact(a))
    assert s.prefixes <= set(TORCH_ARTIFACT_PREFIXES), sorted(s.prefixes - set(TORCH_ARTIFACT_PREFIXES))


@pytest.mark.skipif(not SOURCES, reason="needs torch's source")
def test_the_scan_follows_names_not_written_at_the_call():
    s = scan(SOURCES[0])
    # torch 2.13: AOT autograd's wrappers name their artifact through a helper's argument
    # (_compile_and_exec_source(..., artifact_name="output_alias_wrapper")), the cache lookups by an f-string
    assert {"output_alias_wrapper", "compiled_fn_wrapper"} <= s.artifacts
    assert {"fx_graph_cache_", "aotautograd_cache_"} <= s.prefixes


def test_the_vocabulary_knows_torch_2_14_and_2_15():
    for name in ("compile_worker_status", "compile_worker_sidecar_death", "native_dsl_compile",
                 "aot_autograd_runtime_wrappers", "flex_gemm_lowering_plan"):
        assert is_torch_artifact(name), name
    assert not is_torch_artifact("future_thing")


@pytest.mark.parametrize("name", ["jit_reset.log", "aot_provenance.log"])
def test_recorded_logs_read_every_record_as_tlparse(name, tmp_path):
    log = RECORDED / name
    run = RunModel(log).load()
    tl = tlparse_facts(run_tlparse(log, tmp_path / "tl"))
    assert dict(run.reader.stats) == tl.stats and not run.malformed
    assert sorted(run.reader.compile_ids) == sorted(tl.compile_ids)  # tlparse's spelling: no reset generation
