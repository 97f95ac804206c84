"""The headless shortcuts of issue #11 give exactly what the full paths give (no timings here).

* ``RunModel.load()`` builds no tree; the tree built on first use equals the one a view builds while
  reading (same sessions, compile nodes, groups, items in order, failed counts, ``span.group``);
* the JSON the CLI writes through msgspec is, byte for byte, the stdlib encoder's text;
* a load holds the cycle collector off and gives it back as it was.
"""

from __future__ import annotations

import gc
import json
import random
import sys
import threading
from pathlib import Path

import pytest

from magi_format.text import json_literal
from magi_tui.cli import _dump_json
from magi_tui.model import RunModel, find_runs
from magi_tui.model.events import Span
from magi_tui.model.outputs.report import triage_json

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from synth import write_synthetic_run  # noqa: E402


def _shape(run: RunModel) -> list:
    out = []
    for s in run.tree.sessions:
        for c in s.compiles:
            groups = []
            for g in c.groups:
                items = [("span", it.first.seq, it.group is g) if type(it) is Span else ("event", it.seq)
                         for it in g.items]
                groups.append((g.key, g.failed, items))
            out.append((s.session, c.compile_id, c.frame, c.failed, groups))
    return out


def _read_as_a_view(path: Path, step: int | None = None) -> RunModel:
    run = RunModel(path)
    while True:
        up = run.update(max_bytes=step)
        if not up.events and not up.malformed:
            return run


def _runs(fx: Path, tmp_path: Path) -> list[Path]:
    paths = [r.path for r in find_runs(fx)]
    for fail_last in (False, True):
        p = tmp_path / f"model_1_S{int(fail_last)}_rank_0"
        write_synthetic_run(p, 4000, fail_last=fail_last, restart_every=3)
        paths.append(p)
    return paths


def test_tree_built_on_demand_equals_the_tree_built_while_reading(fx, tmp_path):
    paths = _runs(fx, tmp_path)
    assert len(paths) > 8
    for path in paths:
        headless = RunModel(path).load()
        assert headless._tree is None  # not built by a headless load
        view = _read_as_a_view(path, step=1 << 14)
        assert _shape(headless) == _shape(view), path
        assert [f.event.seq for f in headless.triage.failures] == [f.event.seq for f in view.triage.failures]
    assert any(g[1] for p in paths for c in _shape(RunModel(p).load()) for g in c[4])  # failed groups seen


def test_a_headless_model_keeps_its_tree_up_to_date_once_asked(tmp_path):
    path = tmp_path / "model_1_S_rank_0"
    write_synthetic_run(path, 3000, fail_last=True)
    tl = path / "timeline_events" / "timeline.jsonl"
    lines = tl.read_bytes().splitlines(keepends=True)
    tl.write_bytes(b"".join(lines[:1000]))
    run = RunModel(path).load()
    assert run.tree.sessions  # built now, from the 1000 events read
    with tl.open("ab") as fh:
        fh.write(b"".join(lines[1000:]))
    up = run.update()
    assert up.groups  # from now on the tree grows with the reads
    assert _shape(run) == _shape(_read_as_a_view(path))


def _stdlib(obj) -> str:
    return json_literal(json.dumps(obj, indent=2, ensure_ascii=False))


def test_json_output_is_the_stdlib_text_on_every_fixture(fx, tmp_path):
    for path in _runs(fx, tmp_path):
        obj = triage_json(RunModel(path).load())
        assert _dump_json(obj) == _stdlib(obj), path


def test_json_output_spells_floats_and_strings_as_the_stdlib_does():
    rng = random.Random(7)
    floats = [rng.random() * 10 ** rng.randint(-30, 30) * rng.choice((1, -1)) for _ in range(5000)]
    floats += [0.0, -0.0, 1e16, 1e-5, 1e-4, 0.00011, 5e-324, 1.7976931348623157e308, 9999999999999998.0, 5.1e-05]
    # strings holding what a rewritten float looks like must stay as they are
    strings = ["a:0.00001,b", ":1e5,", 'x\\"y:0.00002]', "\\", "é\u0000\u2028\x7f\x1b[31m", "[0.00001]", "q\\"]
    obj = {"v": floats, "s": strings, "m": [{"a": f, "b": "q:0.00001,", "c": [f]} for f in floats[:300]],
           "n": [[], {}, None, True, 2 ** 70, -3, {"k": []}]}
    assert _dump_json(obj) == _stdlib(obj)
    assert "\\u001b" in _dump_json(obj)  # no raw escape reaches the terminal
    # what msgspec refuses still comes out, as the stdlib wrote it
    assert _dump_json({"x": "\ud800"}) == _stdlib({"x": "\ud800"})
    assert json.loads(_dump_json({"x": float("inf")})) == {"x": None}  # valid JSON, not ``Infinity``


def test_a_load_gives_the_collector_back_as_it_was(tmp_path):
    path = tmp_path / "model_1_S_rank_0"
    write_synthetic_run(path, 2000)
    assert gc.isenabled()
    RunModel(path).load()
    assert gc.isenabled()
    errors = []

    def load() -> None:
        try:
            for _ in range(3):
                RunModel(path).load()
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=load) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and gc.isenabled()
    gc.disable()
    try:
        RunModel(path).load()
        assert not gc.isenabled()  # a caller that turned it off keeps it off
    finally:
        gc.enable()


@pytest.fixture
def fx():
    from tests.support.paths import FIXTURES, require

    return require(FIXTURES)


def test_json_printed_as_bytes_is_the_same_text(capsys):
    from magi_tui.cli import _print_json

    for obj in ({"a": [1, 0.00001, "x"], "b": None}, {"é": "\u202e\x7f\x1b", "n": 1e-7}, {"x": "\ud800"}):
        print("before")  # what was printed before stays before
        _print_json(obj)
        assert capsys.readouterr().out == "before\n" + _stdlib(obj) + "\n"


def _streamed(path: Path) -> RunModel:
    from magi_tui.model.analysis.checks import TimelineFold

    return RunModel(path).load(fold=TimelineFold())


def _odd_runs(tmp_path: Path) -> list[Path]:
    """A run with two sessions, a half-written last line, a garbage line, and lines longer than a read."""
    out = []
    a = tmp_path / "model_1_Odd_rank_0"
    write_synthetic_run(a, 3000, fail_last=True)
    tl = a / "timeline_events" / "timeline.jsonl"
    lines = tl.read_bytes().splitlines(keepends=True)
    big = json.dumps({"index": 5000, "name": "fullgraph_after_cache_hit",
                      "attributes": {"reason": "r" * (5 << 20), "load_result": "hit"}}).encode() + b"\n"
    tl.write_bytes(b"".join(lines[:2000]) + b"not json\n" + big + b"".join(lines[:1500]) + lines[1500][:40])
    out.append(a)
    return out


def _check_answers(run: RunModel, baseline: RunModel | None = None) -> tuple[str, str, str]:
    """What ``magi-tui check`` prints of one run with every budget and --fail-on rule (against ``baseline``
    when given): JSON, text, JUnit."""
    from magi_tui.model.analysis.checks import FAIL_ON_KINDS, RULES
    from magi_tui.model.outputs.budget import check, junit_xml, load_policy

    policy = load_policy(None).with_fail_on(tuple(r.id for r in RULES) + tuple(FAIL_ON_KINDS))
    report = check([run], policy, [baseline] if baseline is not None else None)
    return _dump_json(report.as_json()), report.text(), junit_xml(report)


def _metrics_answers(run: RunModel) -> tuple[str, str]:
    """What ``magi-tui metrics`` prints of one run: the JSON (every compile, its kernels) and the table."""
    from magi_tui.model.analysis.metrics import compile_infos, metrics_table
    from magi_tui.model.analysis.provenance import kernel_provenance

    infos = compile_infos(run)
    return (_dump_json([{**i.as_json(), "provenance": [k.as_json() for k in kernel_provenance(run, i)]}
                        for i in infos]), "\n".join(metrics_table(infos)))


def _metrics_streamed(path: Path) -> RunModel:
    from magi_tui.model.analysis.metrics import CompileInfoFold

    return RunModel(path).load(fold=CompileInfoFold())


def _compare_answers(a: RunModel, b: RunModel) -> tuple[str, str]:
    """What ``magi-tui compare`` prints of two runs: the JSON and the whole text."""
    from magi_tui.model.outputs.compare import compare_runs, compare_text

    c = compare_runs(a, b)
    return _dump_json(c.as_json()), compare_text(c, show_all=True)


def _rank_answers(run: RunModel) -> tuple:
    """What the comparison of ranks reads of one rank's run (``ranks._rank_run``)."""
    from magi_tui.model.outputs.compare import _GraphReader
    from magi_tui.model.outputs.ranks import _rank_run

    rr = _rank_run(0, run, _GraphReader())
    return (rr.compile_ids, rr.graphs, rr.cache, rr.recompile_reasons, rr.aspects, rr.keys)


def _side_streamed(path: Path) -> RunModel:
    from magi_tui.model.outputs.compare.sides import SideFold

    return RunModel(path).load(fold=SideFold())


def test_a_streamed_load_gives_the_same_answer(fx, tmp_path):
    from magi_tui.model.outputs.report import run_row, triage_text

    paths = _runs(fx, tmp_path) + _odd_runs(tmp_path)
    for path in paths:
        kept, streamed = RunModel(path).load(), _streamed(path)
        assert _dump_json(triage_json(streamed)) == _dump_json(triage_json(kept)), path
        assert triage_text(streamed, show_all=True) == triage_text(kept, show_all=True), path
        assert run_row(streamed) == run_row(kept), path
        assert _check_answers(streamed) == _check_answers(kept), path  # check streams too (no baseline)
        metrics = _metrics_streamed(path)  # and metrics, through its own fold
        assert _metrics_answers(metrics) == _metrics_answers(kept) and metrics.events == [], path
        side = _side_streamed(path)  # compare and ranks: the analysis' fold and a side of a comparison
        assert side.events == [] and _rank_answers(side) == _rank_answers(kept), path
    for a, b in zip(paths, paths[1:] + paths[:1]):  # each run against the next, and itself
        for x, y in ((a, b), (a, a)):
            assert _compare_answers(_side_streamed(x), _side_streamed(y)) == \
                _compare_answers(RunModel(x).load(), RunModel(y).load()), (x, y)
        # check --baseline: the budgets against a baseline, both sides streamed
        assert _check_answers(_side_streamed(b), _side_streamed(a)) == \
            _check_answers(RunModel(b).load(), RunModel(a).load()), (a, b)
        assert streamed.event_count == len(kept.events) and streamed.events == []
    odd = _streamed(paths[-1])
    assert odd.partial_line and odd.malformed and {f.event.session for f in odd.triage.failures} == {0, 1}


def test_a_streamed_load_keeps_only_the_events_the_answer_holds(tmp_path):
    from magi_tui.model.events import Event

    path = tmp_path / "model_1_S_rank_0"
    write_synthetic_run(path, 20_000)

    def alive() -> list:  # every live Event, frozen ones too (a load, or an earlier test, may have frozen some)
        gc.unfreeze()
        return [o for o in gc.get_objects() if type(o) is Event]

    # the events alive before (other tests', caches') are held here while counting, so none of them
    # can go meanwhile and make the difference lie
    gc.collect()
    before = alive()
    kept = RunModel(path).load()
    gc.collect()
    assert len(alive()) - len(before) == 20_000
    del kept
    gc.collect()
    before = alive()
    gc.disable()  # what is dropped must go by reference counting, with no collection at all
    try:
        streamed = _streamed(path)
        held = len(alive()) - len(before)
    finally:
        gc.enable()
    del before
    assert streamed.event_count == 20_000 and held < 20_000 * 0.3  # the cache events triage lists, the failures
    assert held >= len(streamed.triage.cache_hits)


def test_a_streamed_log_gives_the_same_answer(tmp_path):
    """A TORCH_TRACE log streams too (issue #21): the answer is the one a load that keeps every event gives,
    on every recorded log and on a synthetic one of many compiles."""
    from synth import write_trace_log

    from magi_tui.model.outputs.report import run_row, triage_text
    from tests.support.paths import TORCH_TRACE

    logs = sorted((Path(__file__).resolve().parents[1] / "torchtrace" / "logs").glob("*.log"))
    logs += sorted(TORCH_TRACE.glob("*.log"))
    synth = tmp_path / "dedicated_log_torch_trace_rank_0_s.log"
    write_trace_log(synth, 3000)
    for path in [*logs, synth]:
        kept, streamed = RunModel(path).load(), _streamed(path)
        assert streamed.events == [] and streamed.event_count == len(kept.events) > 0, path
        assert _dump_json(triage_json(streamed)) == _dump_json(triage_json(kept)), path
        assert triage_text(streamed, show_all=True) == triage_text(kept, show_all=True), path
        assert run_row(streamed) == run_row(kept), path
        assert _check_answers(streamed) == _check_answers(kept), path
        metrics = _metrics_streamed(path)
        assert _metrics_answers(metrics) == _metrics_answers(kept) and metrics.events == [], path
        side = _side_streamed(path)
        assert side.events == [] and _rank_answers(side) == _rank_answers(kept), path
    for a, b in zip([*logs, synth], [synth, *logs]):
        assert _compare_answers(_side_streamed(a), _side_streamed(b)) == \
            _compare_answers(RunModel(a).load(), RunModel(b).load()), (a, b)
