"""A run with more compile ids than a tree should show at once (issue #21: a service recompiling for
dynamic shapes, a fuzz harness): the model finds a compile by its id, the tree cuts a session's compiles
into buckets of ``BUCKET`` made on demand, and reading, showing, revealing and folding stay whole."""

from __future__ import annotations

import sys
from pathlib import Path

from magi_tui.model import RunModel
from magi_tui.ui.widgets.event_tree import BUCKET, EventTree
from tests.support.pilot import TreeApp

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from synth import write_trace_log  # noqa: E402

FRAMES = 2 * BUCKET + 150  # three compile buckets


def _nodes(tree: EventTree, kind: str) -> list:
    out, stack = [], [tree.root]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.data is not None and node.data.kind == kind:
            out.append(node)
    return out


def test_the_model_indexes_compiles_by_session_and_id(tmp_path):
    log = write_trace_log(tmp_path / "dedicated_log_torch_trace_rank_0_a.log", 50)
    run = RunModel(log).load()
    tree = run.tree
    assert tree.has_compile_ids
    comps = tree.sessions[0].compiles
    assert [c.compile_id for c in comps] == [f"{i}/0" for i in range(50)]
    assert all(tree.compile_node(0, c.compile_id) is c and c.pos == i for i, c in enumerate(comps))
    assert tree.compile_node(0, "no/such") is None


async def test_compiles_past_a_bucket_are_cut_into_buckets_made_on_demand(tmp_path):
    log = write_trace_log(tmp_path / "dedicated_log_torch_trace_rank_0_a.log", FRAMES, fail_every=97)
    run = RunModel(log)
    run.update(max_bytes=1 << 16)  # a first read: fewer compiles than a bucket
    app = TreeApp(run)
    async with app.run_test(size=(100, 30)) as pilot:
        tree = app.query_one(EventTree)
        tree.rebuild()
        assert len(run.tree.sessions[0].compiles) < BUCKET
        assert not _nodes(tree, "cbucket") and _nodes(tree, "compile")
        while True:  # the rest, shown as the app shows a load: the session crosses BUCKET compiles
            up = run.update(max_bytes=1 << 17)
            if not up:
                break
            tree.apply(up)
            await pilot.pause()
        buckets = _nodes(tree, "cbucket")
        labels = sorted(b.label.plain for b in buckets)
        assert len(buckets) == 3
        assert labels[0].startswith(f"compile 0/0 … {BUCKET - 1}/0  ({BUCKET} compiles)")
        assert any("(150 compiles)" in lb for lb in labels)
        assert any("with failures" in lb for lb in labels)  # frame 96 failed
        # only the first bucket was opened: its compiles have nodes, the others none yet
        assert len(_nodes(tree, "compile")) == BUCKET
        # revealing an event of the last compile opens its bucket and lands on it
        last = run.events[-1]
        node = tree.reveal(last)
        assert node is not None and tree.cursor_node is node
        assert len(_nodes(tree, "compile")) == BUCKET + 150
        up = node
        while up.data.kind != "compile":
            up = up.parent
        assert up.label.plain.startswith(f"compile {FRAMES - 1}/0  fn_{FRAMES - 1}")
        # folding gives back the nodes of buckets the cursor is not in (except the newest)
        tree.move_cursor(node)
        tree.fold_stale_buckets()
        await pilot.pause()
        assert len(_nodes(tree, "compile")) == 150
        # every compile is still reachable
        first = run.events[0]
        assert tree.reveal(first) is not None
        assert len(_nodes(tree, "compile")) == BUCKET + 150


def test_the_analysis_reads_a_bounded_number_of_event_files_listed_but_missing(tmp_path, monkeypatch):
    """A run dir whose events list files that are not there (copied without ``files/``) or are not
    files: each try to read one costs a path walk, so tries, not finds, are what the budget counts,
    and a file that is simply absent costs one lstat."""
    from synth import write_run_from_log

    from magi_tui.model.analysis import checks
    from magi_tui.model.outputs.report import triage_json
    from magi_tui.model.sources.layout import event_folder_rel

    log = write_trace_log(tmp_path / "dedicated_log_torch_trace_rank_0_a.log", 300)
    run_dir = write_run_from_log(log, tmp_path / "model_1_Fuzz_rank_0")
    assert not (run_dir / "timeline_events" / "files").exists()
    monkeypatch.setattr(checks.evidence, "MAX_FILE_READS", 50)
    calls = []
    real = RunModel.files
    monkeypatch.setattr(RunModel, "files", lambda self, ev: calls.append(ev) or real(self, ev))
    out = triage_json(RunModel(run_dir).load())
    assert len(out["frames"]) == 300 and not calls  # absent: no walk at all
    for ev in RunModel(run_dir).load().events:  # there, but folders: each try walks the path
        if "metrics.json" in ev.files:
            (run_dir / event_folder_rel(ev) / "metrics.json").mkdir(parents=True)
    out = triage_json(RunModel(run_dir).load())
    assert len(out["frames"]) == 300
    assert 0 < len(calls) <= 50


def test_a_logs_frames_have_their_file_and_line_from_metrics_without_copies_written(tmp_path, monkeypatch):
    from magi_tui.model.outputs.report import triage_json
    from magi_tui.model.sources.torchtrace.reader import TraceLogReader

    log = write_trace_log(tmp_path / "dedicated_log_torch_trace_rank_0_a.log", 20)
    monkeypatch.setattr(TraceLogReader, "_write_copy", lambda *a: (_ for _ in ()).throw(AssertionError("copy")))
    frames = triage_json(RunModel(log).load())["frames"]
    assert [(f["frame"], f["file"], f["line"]) for f in frames[:2]] == [
        ("fn_0 (fuzz_harness.py:100)", "/home/user/project/fuzz_harness.py", 100),
        ("fn_1 (fuzz_harness.py:101)", "/home/user/project/fuzz_harness.py", 101)]


def test_a_long_logs_lines_and_small_files_read_back_from_compressed_blocks(tmp_path, monkeypatch):
    """The log reader keeps its events' lines and small files (short graphs) in zlib blocks: every one reads
    back; metrics.json and the stacks are made from their record, re-read from the log, when opened."""
    import json

    from magi_tui.model.sources.torchtrace.reader import _LineStore

    monkeypatch.setattr(_LineStore, "BLOCK", 4 << 10)  # the small files of 1500 frames fill a few
    log = write_trace_log(tmp_path / "dedicated_log_torch_trace_rank_0_a.log", 1500)
    run = RunModel(log).load()
    reader = run.reader
    assert len(reader._store._blocks) > 3 and len(reader._texts._blocks) > 1  # blocks were sealed
    graphs = [ev for ev in run.events if "captured_graph.py" in ev.files]
    assert len(graphs) > 100
    for ev in graphs[::10]:
        assert "class GraphModule(torch.nn.Module):" in run.file_text(ev, "captured_graph.py", 1 << 16)
    for ev in run.events[::7] + run.events[-3:]:
        obj = run.line(ev)
        assert obj["name"] == ev.name and obj["index"] == ev.index
        assert obj["attributes"]["compile_id"] == ev.compile_id
    closes = [ev for ev in run.events if ev.name == "fullgraph_after_compile"]
    for ev in (closes[0], closes[len(closes) // 2], closes[-1]):
        metrics = json.loads(run.file_text(ev, "metrics.json", 1 << 16))
        assert metrics["compile_id"] == ev.compile_id and metrics["co_name"] == f"fn_{metrics['compile_id'][:-2]}"
        (name, path, problem), *_ = [f for f in run.files(ev) if f[0] == "metrics.json"]
        assert problem is None and json.loads(path.read_text()) == metrics
    starts = [ev for ev in run.events if ev.name == "fullgraph_before_compile"]
    for ev in (starts[0], starts[len(starts) // 2], starts[-1]):
        fn = ev.compile_id.split("/")[0]
        assert run.file_text(ev, "user_stack.txt", 1 << 16).endswith(f", in fn_{fn}\n")
