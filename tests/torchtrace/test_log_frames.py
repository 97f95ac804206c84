"""Frames from a TORCH_TRACE log read as from our own runs (issue 19.3, 19.4): ``fn (file.py:12)`` from
torch's own records, also in the shape older torch writes (the stack ends at the call site), and a
``torch._dynamo.reset()`` that makes torch count compile ids from 0/0 again keeps both compilations
apart, as tlparse's stack trie does."""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

from magi_tui.model import RunModel
from tests.support import slow
from tests.support.paths import ROOT
from tests.torchtrace.logkit import RECORDED, records, write_log
from tests.torchtrace.oracle import event_compile_ids, model_facts, run_tlparse, tlparse_compiled_frames, tlparse_facts

JIT = RECORDED / "jit_reset.log"


def frames_of(log: Path) -> list[tuple]:
    out = slow.run([sys.executable, "-m", "magi_tui", "triage", str(log), "--json"], cwd=ROOT,
                   capture_output=True, text=True, timeout=120)
    assert "Traceback" not in out.stderr, out.stderr
    return sorted((f["name"], f["file"], f["line"], f["compiles"], f["frame"]) for f in json.loads(out.stdout)["frames"])


@pytest.fixture(scope="module")
def tl(tmp_path_factory):
    out = run_tlparse(JIT, tmp_path_factory.mktemp("tl") / "out")
    return out, tlparse_facts(out)


def test_frames_carry_name_file_and_first_line_like_tlparse(tl):
    out, _ = tl
    frames = frames_of(JIT)
    assert [(n, Path(f).name, ln, c) for n, f, ln, c, _ in frames] == [
        ("first", "jit_reset.py", 5, 2), ("second", "jit_reset.py", 8, 1),
        ("torch_dynamo_resume_in_second_at_10", "jit_reset.py", 10, 1)]
    assert {label for *_, label in frames} == {"first (jit_reset.py:5)", "second (jit_reset.py:8)",
                                               "torch_dynamo_resume_in_second_at_10 (jit_reset.py:10)"}
    assert {(n, f, ln) for n, f, ln, _, _ in frames} == tlparse_compiled_frames(out)


def _older_torch(tmp_path: Path) -> Path:
    """The same log as older torch writes it: each dynamo_start stack ends at the call site."""
    caller = "/usr/lib/python3.10/site-packages/torch/nn/modules/module.py"
    recs = records(JIT)
    out = [recs[0], b"V1124 06:53:40.000000 1 torch/_logging/structured.py:28] "
           + json.dumps({"str": [caller, 900]}).encode() + b"\n"]
    for r in recs[1:]:
        head, nl, rest = r.partition(b"\n")
        if b'] {"dynamo_start"' in head:
            prefix, _, md = head.partition(b"] ")
            obj = json.loads(md)
            obj["dynamo_start"]["stack"].append({"line": 1750, "name": "_call_impl", "filename": 900,
                                                 "loc": "return forward_call(*args, **kwargs)"})
            head = prefix + b"] " + json.dumps(obj).encode()
        out.append(head + nl + rest)
    return write_log(tmp_path / "older.log", out)


def test_older_torch_stack_ending_at_the_call_site_names_the_compiled_frame(tmp_path):
    log = _older_torch(tmp_path)
    assert frames_of(log) == frames_of(JIT)
    run = RunModel(log).load()
    assert not {run.attributes(e).get("frame") for e in run.events} & {"_call_impl"}


def _strip_reset(x):
    """Our compile ids after a reset (``R1/0/0``) in tlparse's spelling (``0/0``)."""
    if isinstance(x, str):
        return re.sub(r"R\d+/", "", x)
    if isinstance(x, tuple):
        return tuple(_strip_reset(v) for v in x)
    return x


def test_reset_keeps_the_compilations_apart(tl):
    _, facts = tl
    run = RunModel(JIT).load()
    assert event_compile_ids(run) == {"[0/0]", "[0/1]", "[R1/0/0]", "[R1/0/0_1]", "[R1/1/0]"}
    assert {_strip_reset(c) for c in event_compile_ids(run)} == set(facts.compile_ids)
    ours = model_facts(run)
    for field in ("graph_breaks", "restarts", "failures", "cache"):
        assert Counter({_strip_reset(k): v for k, v in getattr(ours, field).items()}) == getattr(facts, field), field
    assert {_strip_reset(k): v for k, v in ours.recompiles.items()} == facts.recompiles
    # the second function's frame is its own, with its graph break; the first's has none
    frames = {f[0]: f for f in frames_of(JIT)}
    assert set(frames) == {"first", "second", "torch_dynamo_resume_in_second_at_10"}
    out = slow.run([sys.executable, "-m", "magi_tui", "triage", str(JIT), "--json"], cwd=ROOT,
                   capture_output=True, text=True, timeout=120)
    rows = {f["name"]: f for f in json.loads(out.stdout)["frames"]}
    assert (rows["first"]["graph_breaks"], rows["second"]["graph_breaks"]) == (0, 1)
