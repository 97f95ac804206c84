"""Calls per compiled entry (issue 24 item 1, tracer side): real compiles, counted while they run.

The counts are exact (each call of an entry's code is one call); they are checked against what the test
itself did and against torch's own counters. The tracer must not change the program: same values, same
exceptions and tracebacks, torch's guard-complete hook handed back as it was.
"""

from __future__ import annotations

import json
import time
import traceback
from pathlib import Path

import pytest

from tracer import explain_compilation

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


@pytest.fixture(autouse=True)
def fresh_counters():
    """torch's counters live for the process (torch._dynamo.reset() keeps them): each test reads its own."""
    torch._dynamo.utils.counters.clear()
    yield


def runtime_of(run_path: Path) -> dict:
    return json.loads((run_path / "runtime.json").read_text())


def by_cid(data: dict) -> dict[str, dict]:
    return {e["compile_id"]: e for e in data["entries"]}


def test_30_calls_at_one_shape_and_20_at_another_give_two_entries_of_30_and_20(tmp_path):
    def f(x):
        return x * 2 + 1

    cf = torch.compile(f, backend="eager", dynamic=False)
    with explain_compilation(tmp_path, label="calls") as run:
        t0 = time.perf_counter()
        for _ in range(30):
            cf(torch.ones(3))
        for _ in range(20):
            cf(torch.ones(4))
        wall = time.perf_counter() - t0
    data = runtime_of(run.path)
    entries = by_cid(data)
    assert {cid: e["calls"] for cid, e in entries.items()} == {"0/0": 30, "0/1": 20}
    assert all(e["name"] == "f" and e["frame_key"] == "0" for e in entries.values())
    assert all(e["seconds"] > 0 for e in entries.values())
    assert sum(e["seconds"] for e in entries.values()) <= wall       # inside the calls the test timed
    assert data["eager_calls"] == {}
    # compiled_functions/ shows Dynamo's code, not the tracer's counting copy of it
    entry_files = list((run.path / "compiled_functions" / "f").glob("entry_*/*.*"))
    assert len(entry_files) >= 4
    assert not any("_enter_fn" in p.read_text() or "_leave_fn" in p.read_text() for p in entry_files)
    # torch's view of the same program: one miss (the recompile), 48 hits; two graphs compiled
    assert data["cache_lookups"] == {"hits": 48, "misses": 1}
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] == 2


def test_a_frame_past_its_recompile_limit_reports_its_eager_calls(tmp_path, monkeypatch):
    monkeypatch.setattr(torch._dynamo.config, "recompile_limit", 2)

    def f(x):
        return x - 1

    cf = torch.compile(f, backend="eager", dynamic=False)
    with explain_compilation(tmp_path, label="limit") as run:
        for n in (2, 3):
            cf(torch.ones(n))
        for n in range(4, 11):        # 7 calls at shapes no entry holds: each runs eagerly
            cf(torch.ones(n))
        cf(torch.ones(2))             # an entry still serves its own shape
    data = runtime_of(run.path)
    assert {cid: e["calls"] for cid, e in by_cid(data).items()} == {"0/0": 2, "0/1": 1}
    assert data["eager_calls"] == {"0": 7}
    assert data["eager_calls_unattributed"] == 0
    hit = sum(torch._dynamo.utils.counters["unimplemented"].values())
    assert hit == 1          # torch counted the limit hit once (the first eager call), we count every call


def test_graph_break_resume_functions_are_entries_of_their_own_frames(tmp_path):
    def f(x):
        y = x + 1
        torch._dynamo.graph_break()
        return y * 2

    cf = torch.compile(f, backend="eager")
    with explain_compilation(tmp_path, label="resume") as run:
        for _ in range(5):
            out = cf(torch.ones(2))
    assert torch.equal(out, (torch.ones(2) + 1) * 2)
    data = runtime_of(run.path)
    names = {e["name"]: e["calls"] for e in data["entries"]}
    assert names["f"] == 5
    assert [c for n, c in names.items() if n.startswith("torch_dynamo_resume_in_f")] == [5]


def test_the_program_is_unchanged_values_exceptions_tracebacks_and_the_hook(tmp_path):
    from torch._C._dynamo.eval_frame import set_guard_complete_hook

    def f(x, fail):
        y = x.cos()
        if fail:
            raise ValueError("boom")
        return y

    def tb_lines(exc):
        return [(fs.name, fs.lineno) for fs in traceback.extract_tb(exc.__traceback__) if fs.name == "f"]

    cf = torch.compile(f, backend="eager")
    plain = cf(torch.ones(3), False)
    with pytest.raises(ValueError) as plain_exc:
        cf(torch.ones(3), True)
    torch._dynamo.reset()

    seen: list[bool] = []

    def theirs(hit: bool) -> bool:
        seen.append(hit)
        return hit

    set_guard_complete_hook(theirs)
    try:
        with explain_compilation(tmp_path, label="same") as run:
            traced = cf(torch.ones(3), False)
            traced = cf(torch.ones(3), False)
            with pytest.raises(ValueError) as traced_exc:
                cf(torch.ones(3), True)
        assert set_guard_complete_hook(None) is theirs     # handed back as it was
    finally:
        set_guard_complete_hook(None)
    assert torch.equal(plain, traced)
    assert str(traced_exc.value) == "boom" and tb_lines(traced_exc.value) == tb_lines(plain_exc.value)
    assert seen and seen[0] is True                        # the hook that was there still ran
    assert sum(e["calls"] for e in runtime_of(run.path)["entries"] if e["name"] == "f") >= 2
