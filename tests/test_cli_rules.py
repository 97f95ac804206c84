"""The checks as rules with ids (docs/HEADLESS.md, *Rule ids*): a rule id named in ``check --fail-on``,
``triage --fail-on`` or a policy's ``[checks] fail_on`` fails the exit code on a real recorded run or
log when that rule does not hold; an unknown id is exit 2 with one line; the ids are in the JSON."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from magi_tui.model import RunModel
from magi_tui.model.analysis.checks import RULE_IDS, RULES, analyse
from tests.support.cli import run_cli
from tests.support.paths import FIXTURES, ROOT, TORCH_TRACE

needs_fixtures = pytest.mark.usefixtures("fixtures_dir", "torch_trace_dir")
TOY = FIXTURES / "toy_explain"                                      # one graph break, no recompile
FAILED_LOG = TORCH_TRACE / "graph_breaks_recompiles_failure.log"   # breaks, recompiles, a failure
AUTO_LOG = TORCH_TRACE / "dynamic_shapes_backward.log"             # one automatic-dynamic recompile only


@needs_fixtures
def test_a_rule_id_in_check_fail_on_fails_the_gate_on_a_real_run(capsys):
    code, out, _ = run_cli(capsys, "check", str(TOY))
    assert code == 0 and "PASS" in out
    code, out, _ = run_cli(capsys, "check", str(TOY), "--fail-on", "graph-breaks")
    assert code == 1
    broken = [ln for ln in out.splitlines() if ln.startswith("✗")]
    assert len(broken) == 1 and broken[0].startswith("✗ fail_on.graph-breaks: 1 graph-break site(s)")
    assert "torch_compile_toy_example.py:35" in broken[0]
    code, out, _ = run_cli(capsys, "check", str(TOY), "--fail-on", "recompiles,malformed-lines")
    assert code == 0 and "✓ fail_on.recompiles: 0" in out


@needs_fixtures
def test_check_json_names_the_rule_of_every_check_and_of_the_broken_budget(capsys):
    code, out, _ = run_cli(capsys, "check", str(TOY), "--fail-on", "graph-breaks", "--json")
    obj = json.loads(out)
    assert code == 1 and obj["exit_code"] == 1 and obj["policy"]["fail_on"] == ["graph-breaks"]
    [res] = [b for b in obj["budgets"] if not b["ok"]]
    assert (res["name"], res["rule"], res["actual"]) == ("fail_on.graph-breaks", "graph-breaks", 1)
    checks = obj["checks"]
    assert {c["run"] for c in checks} == {str(TOY)}
    assert [c["rule"] for c in checks] == [c.rule for c in analyse(RunModel(TOY).load()).checks]
    gb = next(c for c in checks if c["rule"] == "graph-breaks")
    assert gb["level"] == "warn" and "graph-break site" in gb["message"]


@needs_fixtures
def test_a_rule_is_not_a_kind_on_a_real_log(capsys):
    """``recompiles`` (the rule) holds on a log whose only recompile is torch's automatic dynamic shapes;
    ``recompile`` (the older kind: any recompile) does not."""
    assert run_cli(capsys, "triage", str(AUTO_LOG), "--fail-on", "recompiles")[0] == 0
    assert run_cli(capsys, "triage", str(AUTO_LOG), "--fail-on", "recompile")[0] == 1
    assert run_cli(capsys, "check", str(AUTO_LOG), "--fail-on", "recompiles")[0] == 0
    code, out, _ = run_cli(capsys, "check", str(AUTO_LOG), "--fail-on", "recompile", "--json")
    [res] = [b for b in json.loads(out)["budgets"] if not b["ok"]]
    assert code == 1 and res["name"] == "fail_on.recompile" and res["rule"] is None


@needs_fixtures
def test_triage_fail_on_takes_rule_ids(capsys):
    assert run_cli(capsys, "triage", str(TOY), "--fail-on", "graph-breaks")[0] == 1
    assert run_cli(capsys, "triage", str(TOY), "--fail-on", "recompiles,cache-bypassed")[0] == 0


@needs_fixtures
def test_a_policy_names_rules_in_checks_fail_on(capsys, tmp_path):
    pol = tmp_path / "p.toml"
    pol.write_text('[checks]\nfail_on = ["cache-bypassed", "export-issues"]\n')
    code, out, _ = run_cli(capsys, "check", str(FAILED_LOG), "--policy", str(pol))
    assert code == 0, out  # only the named rules are in force: the log's failure is not a budget here
    pol.write_text('[checks]\nfail_on = ["graph-breaks"]\n')
    code, out, _ = run_cli(capsys, "check", str(FAILED_LOG), "--policy", str(pol), "--fail-on", "recompiles")
    broken = [ln.split(":")[0] for ln in out.splitlines() if ln.startswith("✗")]
    assert code == 1 and broken == ["✗ fail_on.graph-breaks", "✗ fail_on.recompiles"]
    assert "capture_demo.py:149" in out


@pytest.mark.parametrize("argv", [("triage",), ("check",)])
def test_an_unknown_rule_id_is_exit_2_with_one_line(capsys, tmp_path, argv):
    code, out, err = run_cli(capsys, *argv, str(tmp_path), "--fail-on", "graph-breaks,no-such-rule")
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1
    assert lines[0].startswith("magi-tui: --fail-on: unknown no-such-rule (rule ids: ") and "graph-breaks" in lines[0]


def test_an_unknown_rule_id_in_a_policy_is_exit_2(capsys, tmp_path):
    pol = tmp_path / "p.toml"
    pol.write_text('[checks]\nfail_on = ["graph-brakes"]\n')
    code, _, err = run_cli(capsys, "check", str(tmp_path), "--policy", str(pol))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "checks.fail_on: unknown graph-brakes" in err


def test_a_rule_that_only_informs_cannot_be_named(capsys, tmp_path):
    code, _, err = run_cli(capsys, "check", str(tmp_path), "--fail-on", "automatic-dynamic")
    assert code == 2 and "can never fail" in err


def test_list_rules_is_the_registry_and_the_documented_table(capsys):
    code, out, _ = run_cli(capsys, "check", "--list-rules", "--json")
    rows = json.loads(out)
    assert code == 0 and [r["id"] for r in rows if r["kind"] != "condition"] == list(RULE_IDS)
    assert len({r["id"] for r in rows}) == len(rows)
    doc = (Path(ROOT) / "docs" / "HEADLESS.md").read_text()
    table = doc[doc.index("### Rule ids"):]
    documented = re.findall(r"^\| `([a-z-]+)` \|", table, re.M)
    assert documented[:len(RULES)] == list(RULE_IDS)


@needs_fixtures
@pytest.mark.parametrize("path", [TOY, FAILED_LOG, AUTO_LOG, FIXTURES / "recompile_explain",
                                  FIXTURES / "dynamo_failure"])
def test_every_check_carries_a_registered_rule_id(path):
    checks = analyse(RunModel(path).load()).checks
    assert checks and all(c.rule in RULE_IDS for c in checks)
    order = [RULE_IDS.index(c.rule) for c in checks]
    assert order == sorted(order)  # shown in the registry's order


@needs_fixtures
def test_a_named_rule_is_a_junit_test_case(capsys, tmp_path):
    xml = tmp_path / "gate.xml"
    code, _, _ = run_cli(capsys, "check", str(TOY), "--fail-on", "graph-breaks,recompiles", "--junit", str(xml))
    cases = {c.get("name"): c for c in ET.parse(xml).getroot().iter("testcase")}
    assert code == 1 and cases["fail_on.graph-breaks"].find("failure") is not None
    assert cases["fail_on.recompiles"].find("failure") is None
    assert "torch_compile_toy_example.py:35" in cases["fail_on.graph-breaks"].find("failure").get("message")
