"""A module compiled by Inductor, recorded cold and then warm (issue 33 item 6): frames named after the user's
function (``forward`` and its resume), never torch's call wrappers, in the stack shape torch 2.13 writes and in
the one older torch writes (its ``dynamo_start`` stack ends at ``_wrapped_call_impl`` / ``_call_impl``); the
warm run, whose compiles load from the AOT autograd and FX graph caches (no backward compile, no
``bwd_compilation_metrics``), counts its frames, compile ids and cache lookups as tlparse and torch's counters
do.

The logs are ``tests/torchtrace/logs/warm_cache_{cold,warm}.log`` (``record.py warm_cache``: the program run
twice in fresh processes with one ``TORCHINDUCTOR_CACHE_DIR``), each with the counters its program printed
(``<log>.counters.json``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from magi_tui.model import RunModel
from tests.support import slow
from tests.support.paths import ROOT
from tests.torchtrace.logkit import RECORDED, records, write_log
from tests.torchtrace.oracle import (
    assert_triage_matches,
    model_facts,
    run_tlparse,
    tlparse_compiled_frames,
    tlparse_facts,
)

LOGS = {run: RECORDED / f"warm_cache_{run}.log" for run in ("cold", "warm")}
WRAPPERS = {"_call_impl", "_wrapped_call_impl", "__call__", "compile_wrapper"}


def _counters(log: Path) -> dict:
    return json.loads(log.with_name(log.name + ".counters.json").read_text())


def _triage(log: Path) -> tuple[dict, int]:
    out = slow.run([sys.executable, "-m", "magi_tui", "triage", str(log), "--json"], cwd=ROOT,
                   capture_output=True, text=True, timeout=120)
    assert "Traceback" not in out.stderr, out.stderr
    return json.loads(out.stdout), out.returncode


def _older_torch(log: Path, tmp_path: Path) -> Path:
    """The same log as older torch writes it: each ``dynamo_start`` stack ends at the module's call wrapper
    (the frames after the last ``_call_impl`` / ``_wrapped_call_impl`` dropped), nothing else changed."""
    out = []
    for r in records(log):
        head, nl, rest = r.partition(b"\n")
        if b'] {"dynamo_start"' in head:
            prefix, _, md = head.partition(b"] ")
            obj = json.loads(md)
            stack = obj["dynamo_start"]["stack"]
            last = max(i for i, fr in enumerate(stack) if fr["name"] in ("_call_impl", "_wrapped_call_impl"))
            obj["dynamo_start"]["stack"] = stack[:last + 1]
            head = prefix + b"] " + json.dumps(obj).encode()
        out.append(head + nl + rest)
    return write_log(tmp_path / f"older_{log.name}", out)


@pytest.fixture(scope="module", params=sorted(LOGS))
def recorded(request, tmp_path_factory):
    log = LOGS[request.param]
    out = run_tlparse(log, tmp_path_factory.mktemp("tl") / "out")
    return request.param, log, out, tlparse_facts(out)


def test_frames_compile_ids_and_cache_as_tlparse_and_torch_count_them(recorded):
    run, log, out, tl = recorded
    tj, rc = _triage(log)
    c = _counters(log)
    assert rc == 0 and tj["status"] == "recovered"  # one graph break torch resumed after
    # frames: torch's counters (Dynamo was called on 2 frames, both compiled), tlparse's compile ids
    assert tj["summary"]["frames"] == c["frames"]["ok"] == c["frames"]["total"] == 2
    assert {cid.strip("[]").split("/")[0] for cid in tl.compile_ids} == {f["key"] for f in tj["frames"]}
    assert sorted(RunModel(log).load().reader.compile_ids) == sorted(tl.compile_ids)  # [0/0], [0/0_1], [1/0]
    assert sum(f["compiles"] for f in tj["frames"]) == c["stats"]["unique_graphs"] == 2
    assert_triage_matches(tj, tl)
    # the cache, per torch's counters: AOT autograd's entries (one per graph) and the FX graph cache's
    # (a forward and a backward per graph)
    hits = c["aot_autograd"].get("autograd_cache_hit", 0) + c["inductor"].get("fxgraph_cache_hit", 0)
    misses = c["aot_autograd"].get("autograd_cache_miss", 0) + c["inductor"].get("fxgraph_cache_miss", 0)
    counts = tj["cache"]["counts"]
    assert (counts["hits"], counts["misses"]) == (hits, misses) == ((6, 0) if run == "warm" else (0, 6))
    assert tj["cache"]["state"] == run


def test_frames_are_named_after_the_users_function(recorded):
    run, log, out, tl = recorded
    tj, _ = _triage(log)
    names = sorted(f["name"] for f in tj["frames"])
    assert names == ["forward", "torch_dynamo_resume_in_forward_at_15"]
    # tlparse's stack trie, torch's own frames aside (the wrappers a module call goes through), holds the
    # same functions, file and line
    trie = {f for f in tlparse_compiled_frames(out) if "/site-packages/torch/" not in f[1]}
    assert {(f["name"], f["file"], f["line"]) for f in tj["frames"]} == trie
    assert _counters(log)["resumes"] == {"torch_dynamo_resume_in_forward_at_15": 1}


@pytest.mark.parametrize("run", sorted(LOGS))
def test_older_torch_stacks_ending_at_the_wrapper_keep_the_users_names(run, tmp_path):
    log = LOGS[run]
    older = _older_torch(log, tmp_path)
    assert b'"name": "_call_impl", "filename": ' in older.read_bytes()
    tj, rc = _triage(older)
    new, _ = _triage(log)
    assert rc == 0
    assert [(f["name"], f["file"], f["line"], f["key"], f["compiles"]) for f in tj["frames"]] == \
        [(f["name"], f["file"], f["line"], f["key"], f["compiles"]) for f in new["frames"]]
    assert tj["summary"] == new["summary"]
    assert not {f["name"] for f in tj["frames"]} & WRAPPERS
    # nor on any event (a break's, a compile's): the frame is the user's everywhere
    model = RunModel(older).load()
    assert not {model.attributes(e).get("frame") for e in model.events} & WRAPPERS
    assert model_facts(model).compile_ids == model_facts(RunModel(log).load()).compile_ids


# -- torch 2.4.0, the oldest the tracer claims: its stacks end at torch's wrappers ------------------------
OLD = RECORDED / "module_call_2_4.log"


def test_torch_2_4_module_frames_are_the_users_functions_as_tlparse_and_torch_count_them(tmp_path):
    """``Module.compile()`` and ``torch.compile(module)`` on torch 2.4.0 (``record.py module_call_2_4``, run
    with that torch): every ``dynamo_start`` stack ends at a torch wrapper, not at the compiled frame."""
    ends = []
    for r in records(OLD):
        head = r.partition(b"\n")[0]
        if b'] {"dynamo_start"' in head:
            ends.append(json.loads(head.partition(b"] ")[2])["dynamo_start"]["stack"][-1]["name"])
    assert ends and set(ends) <= WRAPPERS
    tl = tlparse_facts(run_tlparse(OLD, tmp_path / "tl"))
    tj, rc = _triage(OLD)
    c = _counters(OLD)
    assert rc == 0
    assert [(f["name"], f["key"], f["compiles"]) for f in tj["frames"]] == [
        ("forward", "0", 2), ("torch_dynamo_resume_in_forward_at_15", "1", 1)]
    # torch counts a frame per compile (frames.ok, unique_graphs): forward twice (a second instance), its resume
    assert sum(f["compiles"] for f in tj["frames"]) == c["frames"]["ok"] == c["stats"]["unique_graphs"] == 3
    assert tj["summary"]["frames"] == len({cid.strip("[]").split("/")[0] for cid in tl.compile_ids}) == 2
    assert sorted(RunModel(OLD).load().reader.compile_ids) == tl.compile_ids  # with the restarts' attempts
    assert_triage_matches(tj, tl)
