"""Cudagraph skips where a log records them (issue 24.3): torch writes ``cudagraph_skip_reason`` into a
compile's ``compilation_metrics`` when Inductor gives up CUDA graphs for a graph while compiling it. The
log here is a real recorded one (``logs/jit_reset.log``) whose first ``compilation_metrics`` record carries
the reason torch would write (metadata only: no payload, so no md5 to recompute); no GPU needed."""

from __future__ import annotations

import json

from magi_tui.model import RunModel
from magi_tui.model.outputs.report import triage_json, triage_text
from tests.torchtrace.logkit import RECORDED, kind, records, retag, write_log

REASON = "skipping cudagraphs due to mutated inputs (1 instances). Found from : \n   File \"jit_reset.py\", line 6"


def skip_log(tmp_path, reason: str | None):
    recs = records(RECORDED / "jit_reset.log")
    i = next(i for i, r in enumerate(recs) if kind(r) == "compilation_metrics")
    assert b'"cudagraph_skip_reason": null' in recs[i]
    if reason is not None:
        recs[i] = retag(recs[i], b'"cudagraph_skip_reason": null',
                        b'"cudagraph_skip_reason": ' + json.dumps(reason).encode())
    return write_log(tmp_path / "dedicated_log_torch_trace_cg.log", recs)


def test_a_cudagraph_skip_in_the_metrics_is_a_silent_fallback_where_it_happened(tmp_path):
    run = RunModel(skip_log(tmp_path, REASON)).load()
    out = triage_json(run)
    items = [i for i in out["fallbacks"]["items"] if i["kind"] == "cudagraph_skip"]
    assert [(i["compile_id"], i["frame"].split(" ")[0], i["line"], i["what"]) for i in items] == [
        ("0/0", "first", 5, "ran without CUDA graphs: skipping cudagraphs due to mutated inputs (1 instances). "
                            "Found from : ")]
    assert items[0]["file"].endswith("jit_reset.py")
    assert out["fallbacks"]["counts"]["cudagraph_skip"] == 1
    assert "cudagraph_skip: ran without CUDA graphs" in triage_text(run)


def test_no_reason_no_item(tmp_path):
    out = triage_json(RunModel(skip_log(tmp_path, None)).load())
    assert "cudagraph_skip" not in out["fallbacks"]["counts"]
