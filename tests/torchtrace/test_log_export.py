"""torch.export logs report their issues as findings (issue 19.6). The log is draft_export's under
``TORCH_DTRACE`` (what ``tlparse --export`` reads); torch's own report for that program (``ep._report``)
lists one issue, a data-dependent expression (``if k > 2:``) it assumed from the real tensors. tlparse 0.4
cannot parse that record (its ``fail_json``), so torch's report is the reference here."""

from __future__ import annotations

import json
import sys

from magi_tui.model import RunModel
from tests.support import slow
from tests.support.paths import ROOT
from tests.torchtrace.logkit import RECORDED, make_record, records, write_log

EXPORT = RECORDED / "export.log"


def _triage(path) -> tuple[int, dict, str]:
    js = slow.run([sys.executable, "-m", "magi_tui", "triage", str(path), "--json"], cwd=ROOT,
                  capture_output=True, text=True, timeout=120)
    text = slow.run([sys.executable, "-m", "magi_tui", "triage", str(path)], cwd=ROOT,
                    capture_output=True, text=True, timeout=120)
    assert "Traceback" not in js.stderr + text.stderr
    return js.returncode, json.loads(js.stdout), text.stdout


def test_draft_export_issue_is_a_finding():
    rc, tj, text = _triage(EXPORT)
    assert rc == 0 and tj["status"] == "ok"
    [issue] = tj["export_issues"]
    assert (issue["issue"], issue["expr"], issue["result"], issue["user_function"], issue["source_line"]) == \
        ("data_dependent", "u0 > 2", "True", "forward", "if k > 2:")
    assert issue["user_frame"].endswith("export.py:7")
    [check] = [c for c in tj["checks"] if "torch.export" in c["message"]]
    assert check["level"] == "warn" and "u0 > 2 (assumed True)" in check["message"]
    assert "1 torch.export issue(s)" in text and "export.py:7: if k > 2:" in text


def test_guards_export_added_count_as_draft_export_counts_them(tmp_path):
    stack = [{"line": 3, "name": "forward", "filename": 0, "loc": "if x.shape[0] > 2:"}]
    added = {"expr": "s0 > 2", "prefix": "guard", "user_stack": stack, "stack": stack,
             "symbol_to_sources": {"s0": ["L['x'].size()[0]"]}}
    assert_only = {**added, "prefix": "runtime_assert"}     # draft_export leaves these to the provenance record
    no_source = {**added, "symbol_to_sources": {}}           # not an input's shape
    recs = records(EXPORT) + [make_record({"guard_added": b}) for b in (added, assert_only, no_source)] + \
        [make_record({"missing_fake_kernel": {"op": "mylib::foo"}})]
    rc, tj, _ = _triage(write_log(tmp_path / "export_guards.log", recs))
    assert [(i["issue"], i["expr"] or i["op"]) for i in tj["export_issues"]] == [
        ("data_dependent", "u0 > 2"), ("guard_added", "s0 > 2"), ("missing_fake_kernel", "mylib::foo")]
    run = RunModel(tmp_path / "export_guards.log").load()
    assert run.status == "ok" and not run.malformed
