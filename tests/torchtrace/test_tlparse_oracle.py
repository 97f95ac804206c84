"""The facts a user checks in tlparse's report, on the same TORCH_TRACE log, equal ours: compile ids with
attempts, graph breaks (ids and the whole reason), recompiles with every reason, failures and restarts,
cache hit/miss/bypass — in the model, and in ``magi-tui triage LOG --json``."""

from __future__ import annotations

import json
import sys

import pytest

from magi_tui.model import RunModel
from tests.support import slow
from tests.support.paths import ROOT, TORCH_TRACE
from tests.torchtrace.oracle import assert_triage_matches, event_compile_ids, model_facts, run_tlparse, tlparse_facts

#: the shared fixtures, and logs of our own recorded elsewhere: torch 2.11 with CUDA on an H200
#: (tests/torchtrace/logs/cuda_2_11/prog.py: Inductor, max-autotune, CUDA graphs, a cold and a warm cache)
OWN = sorted((ROOT / "tests" / "torchtrace" / "logs" / "cuda_2_11").glob("*.log"))
LOGS = (sorted(TORCH_TRACE.glob("*.log")) if TORCH_TRACE.is_dir() else []) + OWN


def _id_key(cid: str) -> tuple:
    body, _, attempt = cid.strip("[]").partition("_")
    return (*(int(x) if x.isdigit() else x for x in body.split("/")), int(attempt or 0))


@pytest.fixture(scope="module", params=[p.name for p in LOGS])
def pair(request, tmp_path_factory):
    log = next(p for p in LOGS if p.name == request.param)
    out = run_tlparse(log, tmp_path_factory.mktemp("tl") / "out")
    return log, tlparse_facts(out), RunModel(log).load()


def test_compile_ids_with_attempts(pair):
    log, tl, run = pair
    assert sorted(run.reader.compile_ids, key=_id_key) == tl.compile_ids
    # every compile id (attempt included) tlparse has a folder for is on an event of ours, and no other
    assert event_compile_ids(run) == set(tl.compile_ids)


def test_every_record_is_read(pair):
    log, tl, run = pair
    assert tl.stats["ok"] > 0 and not run.malformed
    assert run.reader.stats["ok"] == tl.stats["ok"]  # records read, string-table entries aside


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
    out = slow.run([sys.executable, "-m", "magi_tui", "triage", str(log), "--json"], cwd=ROOT,
                   capture_output=True, text=True, timeout=120)
    tj = json.loads(out.stdout)
    assert_triage_matches(tj, tl)
    # exit 1 for a failure nothing recovered; a frame that ran eagerly is exit 0 (docs/HEADLESS.md)
    assert out.returncode == (1 if tj["summary"]["unrecovered"] else 0), out.stderr
