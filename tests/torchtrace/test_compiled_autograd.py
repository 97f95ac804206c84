"""Compiled autograd in a TORCH_TRACE log (issue 33.4), on logs recorded from real programs
(``tests/torchtrace/logs/record.py``: ``compiled_autograd``, ``compiled_autograd_fail``): compile ids,
graph breaks, failures and cache read as tlparse reads them, and a compiled-autograd graph (``!0/1/0``) is
not a second frame of the user's (torch's counters: ``compiled_autograd.captures`` 2, one user function
with one graph break and its resume)."""

from __future__ import annotations

import json
import sys

import pytest

from magi_tui.model import RunModel
from tests.support import slow
from tests.support.paths import ROOT
from tests.torchtrace.logkit import RECORDED
from tests.torchtrace.oracle import assert_triage_matches, event_compile_ids, model_facts, run_tlparse, tlparse_facts

LOGS = ["compiled_autograd.log", "compiled_autograd_fail.log", "reset_same_function.log"]


def _triage(log) -> tuple[dict, int]:
    out = slow.run([sys.executable, "-m", "magi_tui", "triage", str(log), "--json"], cwd=ROOT,
                   capture_output=True, text=True, timeout=120)
    return json.loads(out.stdout), out.returncode


@pytest.mark.parametrize("name", LOGS)
def test_reads_as_tlparse_reads_it(name, tmp_path):
    log = RECORDED / name
    tl = tlparse_facts(run_tlparse(log, tmp_path / "tl"))
    run = RunModel(log).load()
    # tlparse's compile ids, compiled autograd's own capture (!0/-/-) included, on our events too
    assert sorted(run.reader.compile_ids) == sorted(tl.compile_ids)
    assert {c for c in event_compile_ids(run) if not c.startswith("[R")} == set(tl.compile_ids)
    ours = model_facts(run)
    assert (ours.graph_breaks, ours.failures, ours.restarts, ours.cache) == \
        (tl.graph_breaks, tl.failures, tl.restarts, tl.cache)
    tj, rc = _triage(log)
    assert_triage_matches(tj, tl)
    assert rc == (1 if tj["summary"]["unrecovered"] else 0)


def test_a_compiled_autograd_graph_is_not_a_user_frame():
    tj, rc = _triage(RECORDED / "compiled_autograd.log")
    s = tj["summary"]
    # step() and its resume after the backward() graph break; each backward's graph apart
    assert (s["frames"], s["compiled_autograd_graphs"], s["graph_breaks"]) == (2, 2, 1)
    user = [f["name"] for f in tj["frames"] if not f["compiled_autograd"]]
    assert user == ["step", "torch_dynamo_resume_in_step_at_23"]
    ca = [f for f in tj["frames"] if f["compiled_autograd"]]
    assert [f["key"] for f in ca] == ["!0/1", "!1/3"]
    assert [f["frame"] for f in ca] == ["compiled autograd graph !0", "compiled autograd graph !1"]
    assert {"rule": "compiles-per-frame", "level": "ok",
            "message": "2 frame(s) and 2 compiled-autograd graph(s), one compile each"} in tj["checks"]
    assert (tj["status"], rc) == ("recovered", 0)


def test_unsupported_inside_compiled_autograd_is_a_failure():
    tj, rc = _triage(RECORDED / "compiled_autograd_fail.log")
    assert (tj["status"], rc) == ("failed", 1)  # tlparse lists it under failures; backward() raised
    (f,) = tj["failures"]
    assert (f["compile_id"], f["exception_type"]) == ("!0/1/0", "Unsupported")
    assert f["message"].startswith("Call to `torch._dynamo.graph_break()`")
    assert tj["ran_eagerly"] == []
    assert (tj["summary"]["frames"], tj["summary"]["compiled_autograd_graphs"]) == (1, 1)


def test_compile_time_after_a_reset_is_kept_per_frame_id():
    """The same function compiled, ``torch._dynamo.reset()``, compiled again (issue 33.9): two frames of one
    label; neither's seconds are lost to "unattributed"."""
    tj, _ = _triage(RECORDED / "reset_same_function.log")
    ct = tj["compile_time"]
    assert sorted(ct["per_frame_key"]) == ["0", "R1/0"]
    assert all(v > 0 for v in ct["per_frame_key"].values())
    assert ct["unattributed_s"] == 0
    assert ct["per_frame"] == {"f (reset_same_function.py:6)": pytest.approx(ct["total_s"], abs=2e-6)}
    assert [f["key"] for f in tj["frames"]] == ["0", "R1/0"]
