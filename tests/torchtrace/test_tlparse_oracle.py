"""The facts a user checks in tlparse's report, on the same TORCH_TRACE log, equal ours: compile ids with
attempts, graph breaks (ids and the whole reason), recompiles with every reason, failures and restarts,
cache hit/miss/bypass — in the model, and in ``magi-tui triage LOG --json``."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest

from magi_tui.model import RunModel
from tests.support.paths import ROOT, TORCH_TRACE
from tests.torchtrace.oracle import event_compile_ids, model_facts, run_tlparse, tlparse_facts

LOGS = sorted(TORCH_TRACE.glob("*.log")) if TORCH_TRACE.is_dir() else []
pytestmark = pytest.mark.skipif(not LOGS, reason=f"no shared TORCH_TRACE fixtures at {TORCH_TRACE}")


def _id_key(cid: str) -> tuple:
    body, _, attempt = cid.strip("[]").partition("_")
    return (*(int(x) if x.isdigit() else x for x in body.split("/")), int(attempt or 0))


@pytest.fixture(scope="module", params=[p.name for p in LOGS])
def pair(request, tmp_path_factory):
    log = TORCH_TRACE / request.param
    out = run_tlparse(log, tmp_path_factory.mktemp("tl") / "out")
    return log, tlparse_facts(out), RunModel(log).load()


def test_compile_ids_with_attempts(pair):
    log, tl, run = pair
    assert sorted(run.reader.compile_ids, key=_id_key) == tl.compile_ids
    # every compile id (attempt included) tlparse has a folder for is on an event of ours, and no other
    assert event_compile_ids(run) == set(tl.compile_ids)


def test_graph_breaks_with_ids_and_reasons(pair):
    log, tl, run = pair
    ours = model_facts(run)
    assert ours.graph_breaks == tl.graph_breaks
    assert ours.break_texts == tl.break_texts  # the file a user opens is tlparse's, byte for byte


def test_recompiles_with_every_reason(pair):
    log, tl, run = pair
    assert model_facts(run).recompiles == tl.recompiles


def test_failures_and_restarts(pair):
    log, tl, run = pair
    ours = model_facts(run)
    assert ours.restarts == tl.restarts
    assert ours.failures == tl.failures


def test_cache_hits_misses_bypasses(pair):
    log, tl, run = pair
    assert model_facts(run).cache == tl.cache


def test_triage_json_counts_equal_tlparse(pair):
    log, tl, run = pair
    out = subprocess.run([sys.executable, "-m", "magi_tui", "triage", str(log), "--json"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == (1 if tl.failures else 0), out.stderr
    tj = json.loads(out.stdout)
    s = tj["summary"]
    assert s["graph_breaks"] == sum(tl.graph_breaks.values())
    assert s["restarts"] == sum(tl.restarts.values())
    assert s["recompiles"] == len(tl.recompiles)
    assert s["unrecovered"] == sum(tl.failures.values())
    # graph-break ids (torch writes them in the message) and their compile ids, per site
    sites = Counter()
    for b in tj["graph_breaks"]:
        for cid in b["compile_ids"]:
            sites[(f"[{cid}]", b["gb_id"])] += 1
    assert sites == tl.graph_breaks
    assert sorted(r["compile_id"] for r in tj["recompiles"]) == sorted(c.strip("[]") for c in tl.recompiles)
    assert [(f"[{f['compile_id']}]", f["exception_type"]) for f in tj["failures"]] == \
        [(c, t) for (c, t, _), n in tl.failures.items() for _ in range(n)]
    cache = tj["cache"]["counts"]
    for result, key in (("hit", "hits"), ("miss", "misses"), ("bypass", "bypasses")):
        assert cache[key] == sum(n for (_, _, r), n in tl.cache.items() if r == result)
