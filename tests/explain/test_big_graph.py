"""The check ``big-graph`` (the worked example of docs/ARCHITECTURE.md, "Add a check"): the largest graph a
compile captured, by torch's own ``graph_op_count``, read from real TORCH_TRACE logs. The oracle is the log's
``compilation_metrics`` records, read here with a plain JSON parse."""

from __future__ import annotations

import json

import pytest

from magi_tui.model.analysis.checks import analyse, rules
from magi_tui.model.run import RunModel
from tests.support.paths import TORCH_TRACE, require

LOG = TORCH_TRACE / "graph_breaks_recompiles_failure.log"


def _largest_by_torch(path):
    """(compile id, ops) of the largest graph the log's compilation_metrics records name."""
    best = None
    for line in path.read_text().splitlines():
        if '{"compilation_metrics": ' not in line:
            continue
        m = json.loads(line[line.index("{"):])["compilation_metrics"]
        n = m.get("graph_op_count")
        if isinstance(n, int) and (best is None or n > best[1]):
            best = (m["compile_id"], n)
    return best


@pytest.fixture
def run():
    return RunModel(require(LOG)).load()


def test_a_graph_over_the_bound_is_named_with_torchs_count(run, monkeypatch):
    cid, ops = _largest_by_torch(LOG)
    assert ops >= 2  # the fixture has graphs with ops
    monkeypatch.setattr(rules, "BIG_GRAPH_OPS", ops - 1)
    checks = [c for c in analyse(run).checks if c.rule == "big-graph"]
    assert len(checks) == 1 and checks[0].level == "warn", checks
    assert f"compile {cid} captured a graph of {ops:,} ops" in checks[0].message


def test_graphs_under_the_bound_say_nothing(run):
    cid, ops = _largest_by_torch(LOG)
    assert ops <= rules.BIG_GRAPH_OPS
    assert not [c for c in analyse(run).checks if c.rule == "big-graph"]


def test_check_fails_on_it_when_named(monkeypatch, capsys):
    """``magi-tui check --fail-on big-graph`` gates on it (a warn is a broken budget when named)."""
    from magi_tui.cli import main

    _cid, ops = _largest_by_torch(require(LOG))
    main(["check", str(LOG), "--fail-on", "big-graph"])
    assert "✓ fail_on.big-graph: 0" in capsys.readouterr().out
    monkeypatch.setattr(rules, "BIG_GRAPH_OPS", ops - 1)
    assert main(["check", str(LOG), "--fail-on", "big-graph"]) == 1
    out = capsys.readouterr().out
    assert f"✗ fail_on.big-graph: compile {_cid} captured a graph of {ops} ops" in out, out
