"""Issue 14: a fuzz over mutated timelines (a real fixture's lines + hostile ones, then mutated) that
drives the model and every file / detail accessor the UI calls. No exception may escape.

Deterministic (``derandomize``) and quick: the whole module runs in well under 30 s.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from magi_format.text import literal
from magi_tui.model.analysis.compiled_functions import compiled_functions_problem, index_compiled_functions
from magi_tui.model.analysis.diff import compute_diff, diff_files, read_side
from magi_tui.model.run import RunModel
from magi_tui.model.sources import files
from magi_tui.model.sources.discovery import find_runs, normalise
from magi_tui.model.sources.layout import event_folder, event_folder_rel, list_event_folders
from tests.hostile.hostile_run import ESC, HOSTILE, LONG, SECRET, build_hostile_run, outside_dir
from tests.support.paths import COLD

pytestmark = pytest.mark.usefixtures("fixtures_dir")

WEIRD_VALUES = [None, True, -1, 2**70, 1.5, float("nan"), "", "x" * 5000, [], {}, ["a", 1], {"a": 1},
                HOSTILE, "\ud800", "../../../etc/passwd", "/etc/passwd", LONG, "a/b", ".", "..", "\x00"]
WEIRD_NAMES = [HOSTILE, "\ud800", LONG, "fullgraph_failed_x", "fullgraph_before_x", "subgraph_0_after_x",
               "../..", "a/b", "", "fullgraph_failed_" + ESC, "subgraph_99_failed_" + LONG]
KEYS = ["index", "name", "relative_time", "files", "attributes", "datetime", "timestamp"]
ATTR_KEYS = ["scope", "lifecycle_name", "compile_id", "subgraph", "subgraph_index", "exception_type",
             "exception_message", "graph_index", "runtime_shape", HOSTILE, "\ud800"]


@pytest.fixture(scope="module")
def base_run(tmp_path_factory):
    """A copy of the cold transformer run (its real files) plus the hostile run's links / FIFOs."""
    tmp = tmp_path_factory.mktemp("fuzz")
    outside = outside_dir(tmp)
    run = tmp / "run"
    shutil.copytree(COLD, run)
    for p in run.rglob("*"):
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    hostile = build_hostile_run(tmp / "hostile", outside, bytecode_hazards=True)
    # graft the hostile run's files folders and compiled_functions next to the real ones
    for d in (hostile / "timeline_events" / "files").iterdir():
        os.rename(d, run / "timeline_events" / "files" / d.name)
    for d in (hostile / "compiled_functions").iterdir():
        os.rename(d, run / "compiled_functions" / d.name)
    lines = (run / "timeline_events" / "timeline.jsonl").read_text().splitlines()
    lines += (hostile / "timeline_events" / "timeline.jsonl").read_text(encoding="utf-8",
                                                                          errors="surrogateescape").splitlines()
    return run, outside, lines


def _mutate_obj(rng: random.Random, obj: dict) -> dict:
    for _ in range(rng.randint(1, 3)):
        what = rng.random()
        key = rng.choice(KEYS)
        if what < 0.25:
            obj[key] = rng.choice(WEIRD_VALUES)
        elif what < 0.35:
            obj.pop(key, None)
        elif what < 0.5:
            obj["name"] = rng.choice(WEIRD_NAMES)
        elif what < 0.65:
            attrs = obj.get("attributes")
            if not isinstance(attrs, dict):
                attrs = obj["attributes"] = {}
            attrs[rng.choice(ATTR_KEYS)] = rng.choice(WEIRD_VALUES + WEIRD_NAMES)
        elif what < 0.8:
            obj["files"] = rng.sample(["leak.py", "fifo.py", "dir.py", "huge.txt", "x.py", LONG, "\ud800",
                                       "../../outside/secret.txt", "attributes.json", HOSTILE,
                                       "before_magi_backend_call_graph_module.py"], rng.randint(0, 4))
        else:
            obj["index"] = rng.choice([0, 1, 5, 13, -3, 10_000, 2**63, "7", 1.0])
    return obj


def _mutate(rng: random.Random, lines: list[str]) -> bytes:
    out: list[str] = []
    for line in lines:
        r = rng.random()
        if r < 0.6:
            out.append(line)
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        if r < 0.85 and isinstance(obj, dict):
            obj = _mutate_obj(rng, obj)
            out.append(json.dumps(obj, ensure_ascii=rng.random() < 0.5, allow_nan=True))
        elif r < 0.9:
            out.append(line[: rng.randint(0, len(line))])  # cut
        elif r < 0.95:
            out.extend([line, line])  # repeated
        else:
            out.append(json.dumps(rng.choice([[], 1, "x", None, {"index": 0}])))
    if rng.random() < 0.3:
        rng.shuffle(out)
    data = "\n".join(out).encode("utf-8", "surrogatepass")
    if rng.random() < 0.3:  # byte-level damage: invalid UTF-8, NULs, a CR, no final newline
        b = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            if b:
                b[rng.randrange(len(b))] = rng.choice([0, 0x0D, 0x80, 0xFF, 0x1B, 0x0A, 0x22, 0x7B])
        data = bytes(b)
    elif rng.random() < 0.8:
        data += b"\n"
    return data


def _drive(run_dir: Path, model: RunModel, outside: Path) -> None:
    """Everything the UI asks the model for, on every event."""
    str(model.status)
    model.duration_s, model.started, model.has_timeline, model.has_compiled_functions, model.error
    model.partial_line
    t = model.triage
    for f in t.failures:
        literal(f.message), literal(f.exception_type), f.recovered, f.folder, f.event
    t.first_failure, t.unrecovered
    for s in model.open_spans:
        s.status, s.duration_ms, s.lifecycle
    list_event_folders(run_dir)
    for ev in model.events:
        literal(ev.name), literal(ev.compile_id), literal(ev.scope)
        model.span_of(ev)
        obj = model.line(ev)
        assert isinstance(obj, dict)
        attrs = model.attributes(ev)
        assert isinstance(attrs, dict)
        for k, v in attrs.items():
            literal(k), literal(json.dumps(v, ensure_ascii=False, default=str))
        model.folder_rel(ev)
        event_folder(run_dir, ev)
        event_folder_rel(ev)
        for name, path, problem in model.files(ev):
            assert (path is None) != (problem is None)
            literal(name), literal(problem or "")
            if path is not None:
                tf = files.open_for_view(path, run_dir)
                text = "\n".join(tf.lines(0, 60))
                assert SECRET not in text
                tf.search("graph", 0)
                tf.close()


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), cut=st.integers(0, 4000))
def test_mutated_timelines_never_raise(base_run, seed, cut):
    run, outside, lines = base_run
    rng = random.Random(seed)
    data = _mutate(rng, lines)
    tl = run / "timeline_events" / "timeline.jsonl"
    tl.write_bytes(data[:cut])
    model = RunModel(run)
    model.update(max_bytes=rng.choice([None, 1, 200, 1 << 15]))
    with open(tl, "ab") as fh:  # the rest arrives (a live run)
        fh.write(data[cut:])
    while model.update(max_bytes=1 << 14):
        pass
    _drive(run, model, outside)
    if rng.random() < 0.3:
        tl.write_bytes(data[: len(data) // 3])  # truncated under the reader: a reset
        model.update()
        _drive(run, model, outside)
    RunModel(run).load()


def test_compiled_functions_and_every_reader_never_raise(base_run):
    run, outside, _ = base_run
    assert compiled_functions_problem(run) is None
    fns = index_compiled_functions(run)
    seen = 0

    def walk(fns):
        for fn in fns:
            yield from (fn.overview, fn.decompiled, fn.bytecode)
            for e in fn.entries:
                yield from (e.guards, e.decompiled, e.bytecode)
                for cf in e.compiled_fns:
                    yield cf.path
                    yield from cf.extras
                    for _, fl in cf.submods:
                        yield from fl
                yield from walk(e.resume_fns)

    paths = [p for p in walk(fns) if p is not None]
    for p in paths:
        seen += 1
        for reader in (files.open_for_view, files.open_document, files.pretty_json):
            tf = reader(p, run)
            assert SECRET not in "\n".join(tf.lines(0, 200))
        text, problem = files.markdown_text(p, run)
        assert SECRET not in (text or "") and SECRET not in (problem or "")
        lines, problem = read_side(p, run)
        assert SECRET not in "\n".join(lines)
    assert seen > 20
    for a, b in zip(paths, paths[1:]):
        diff, problem = diff_files(a, b, left_root=run, right_root=run)
        assert (diff is None) != (problem is None)
    compute_diff(["\ud800" * 3000, HOSTILE], [HOSTILE, "\x00" * 3000])
    # discovery over the whole tree (with links out, FIFOs, over-long names)
    for p in (run, run / "timeline_events", run / "compiled_functions" / "evil", run.parent,
              run / LONG, run / "\ud800", run / ("x/" * 3000)):
        normalise(p)
        find_runs(p)
