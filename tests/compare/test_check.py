"""The CI gate on real traced runs: a policy, a baseline, the JUnit file, exit codes 0 / 1 / 2."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from magi_tui.cli import main
from magi_tui.model.outputs.budget import BUDGET_KEYS, PolicyError, parse_policy

pytestmark = [pytest.mark.torch, pytest.mark.slow]

POLICY = """
[budget]
max_graph_breaks = 0
allowed_graph_breaks = ["GB0170"]
max_recompiles_per_frame = 0
max_compile_seconds = 600
min_cache_hit_rate = 0.5
allow_unrecovered_failures = false
allow_recompile_limit_hit = false
allow_incomplete = false
allow_nothing_recorded = false
max_compile_time_increase = 100.0
allow_new_break_ids = true
allow_new_recompile_ids = true
"""


def _check(capsys, *argv) -> tuple[int, dict, str]:
    code = main(["check", *argv, "--json"])
    out = capsys.readouterr()
    return code, json.loads(out.out) if out.out.strip() else {}, out.err


def test_policy_breaks_name_the_frame_the_id_and_the_line(traced_pair, tmp_path, capsys):
    a, b = traced_pair
    pol = tmp_path / "policy.toml"
    pol.write_text(POLICY)
    code, j, _ = _check(capsys, str(a), "--policy", str(pol))
    assert code == 0 and j["result"] == "pass" and j["broken"] == []
    code, j, _ = _check(capsys, str(b), "--policy", str(pol))
    assert code == 1 and j["exit_code"] == 1
    broken = {r["name"]: r["message"] for r in j["budgets"] if not r["ok"]}
    assert set(broken) == {"max_graph_breaks", "allowed_graph_breaks", "max_recompiles_per_frame"}
    assert "GB0059" in broken["max_graph_breaks"] and "pair.py:" in broken["max_graph_breaks"]
    assert "in h (frame h (pair.py:" in broken["max_graph_breaks"]
    assert "GB0059" in broken["allowed_graph_breaks"] and "not allowed" in broken["allowed_graph_breaks"]
    assert "frame f (pair.py:" in broken["max_recompiles_per_frame"] and "size mismatch" in broken["max_recompiles_per_frame"]
    skipped = {r["name"]: r["skipped"] for r in j["budgets"] if r["skipped"]}
    assert "min_cache_hit_rate" in skipped  # the eager backend consults no cache: measured as nothing, not failed
    # the text: one line per broken budget, then a verdict
    assert main(["check", str(b), "--policy", str(pol)]) == 1
    text = capsys.readouterr().out.splitlines()
    assert sum(1 for ln in text if ln.startswith("✗ ")) == 3 and text[-1].startswith("FAIL: 3 of")


def test_baseline_regressions_and_junit(traced_pair, tmp_path, capsys):
    a, b = traced_pair
    junit = tmp_path / "out" / "check.xml"
    junit.parent.mkdir()
    pol = tmp_path / "p.toml"
    pol.write_text("[budget]\nmax_compile_time_increase = 100.0\n")  # time is noisy on a shared machine
    code, j, _ = _check(capsys, str(b), "--baseline", str(a), "--policy", str(pol), "--junit", str(junit))
    assert code == 1
    broken = {r["name"]: r["message"] for r in j["budgets"] if not r["ok"]}
    assert set(broken) == {"baseline.no_new_graph_breaks", "baseline.no_more_recompiles"}
    assert "new GB0059 at pair.py:" in broken["baseline.no_new_graph_breaks"]
    assert "0→" in broken["baseline.no_more_recompiles"] and "frame f (pair.py:" in broken["baseline.no_more_recompiles"]
    suite = ET.parse(junit).getroot()
    assert suite.tag == "testsuites" and suite.get("failures") == "2"
    cases = suite.findall("./testsuite/testcase")
    assert [c.get("name") for c in cases] == [r["name"] for r in j["budgets"]]   # one test case per budget
    failed = {c.get("name"): c.find("failure") for c in cases if c.find("failure") is not None}
    assert set(failed) == set(broken) and "GB0059" in failed["baseline.no_new_graph_breaks"].get("message")
    # against itself: nothing regressed, and the default policy (no failures, no limit hit) holds
    code, j, _ = _check(capsys, str(a), "--baseline", str(a))
    assert code == 0 and all(r["ok"] for r in j["budgets"])
    assert {r["name"] for r in j["budgets"]} >= {"allow_unrecovered_failures", "allow_recompile_limit_hit",
                                                  "baseline.max_compile_time_increase"}


def test_unusable_input_is_exit_2(traced_pair, tmp_path, capsys):
    a, _ = traced_pair
    assert main(["check", str(tmp_path / "missing")]) == 2
    bad = tmp_path / "bad.toml"
    bad.write_text("[budget]\nmax_graph_breaks = 'zero'\n")
    assert main(["check", str(a), "--policy", str(bad)]) == 2
    assert "max_graph_breaks must be a whole number" in capsys.readouterr().err
    bad.write_text("[budget]\nmax_graph_break = 1\n")
    assert main(["check", str(a), "--policy", str(bad)]) == 2
    assert "unknown budget key 'max_graph_break'" in capsys.readouterr().err
    assert main(["check", str(a), "--policy", str(tmp_path / "none.toml")]) == 2
    assert main(["check", str(a), "--baseline", str(tmp_path)]) == 2
    capsys.readouterr()


def test_policy_parser_knows_every_issue_key():
    p = parse_policy(POLICY)
    assert set(p.budget) == set(BUDGET_KEYS)
    with pytest.raises(PolicyError):
        parse_policy("[budget]\nmin_cache_hit_rate = 1.5\n")
    with pytest.raises(PolicyError):
        parse_policy("[budget]\nallow_recompile_limit_hit = 1\n")
    with pytest.raises(PolicyError):
        parse_policy("not toml [")
