"""Issue 14, holes 2-4 at the model level: every reader the UI calls stays inside the run, never hangs
on a FIFO, never raises, and reads a huge one-line file in bounded pieces."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from magi_format.safepath import UnsafePath, is_inside, safe_join
from magi_tui.model.analysis.compiled_functions import compiled_functions_problem, index_compiled_functions
from magi_tui.model.analysis.diff import diff_files, read_side
from magi_tui.model.run import RunModel
from magi_tui.model.sources import files
from magi_tui.model.sources.layout import event_files, event_folder
from magi_tui.model.sources.textfile import MAX_LINE_BYTES, MAX_LINE_CHARS, TextFile
from tests.hostile.hostile_run import LONG, SECRET, build_hostile_run, build_linked_cf_run, outside_dir


@pytest.fixture
def hostile(tmp_path):
    outside = outside_dir(tmp_path)
    return build_hostile_run(tmp_path / "run", outside, bytecode_hazards=True), outside


def _walk_cf(fns):
    for fn in fns:
        yield fn.overview
        yield fn.decompiled
        yield fn.bytecode
        for e in fn.entries:
            yield e.guards
            yield e.decompiled
            yield e.bytecode
            for cf in e.compiled_fns:
                yield cf.path
                yield from cf.extras
                for _, fl in cf.submods:
                    yield from fl
            yield from _walk_cf(e.resume_fns)


# -- hole 2: reads outside the run ---------------------------------------------------------------
def test_compiled_functions_links_out_are_refused_with_a_message(hostile):
    run, outside = hostile
    fns = index_compiled_functions(run)
    names = [f.name for f in fns]
    assert "evil" not in names  # a linked function dir is not indexed
    fwd = next(f for f in fns if f.name.startswith("forward"))
    assert [e.index for e in fwd.entries] == [0, 1]  # entry_2 links out: left out
    e0 = fwd.entries[0]
    assert e0.guards is None and e0.guard_leaves is None  # guards.txt links out: not even counted
    assert e0.resume_fns == []  # resume_fns/__resume_at_1 links out
    assert fwd.entries[1].guard_leaves == 1
    # fixed-name files that link out / are FIFOs / dirs are no paths (no consumer of the index can
    # read them) but are named with the reason, for the browser to show
    assert fwd.decompiled is None and fwd.bytecode is None and e0.bytecode is None
    why = dict(fwd.refused)
    assert "outside the run" in why["decompiled_code.py"] and "FIFO" in why["bytecode_info.txt"]
    why = dict(e0.refused)
    assert "outside the run" in why["guards.txt"] and "directory" in why["bytecode_info.txt"]
    assert all(SECRET not in p for _, p in fwd.refused + e0.refused)
    # and the readers refuse them too, given the root
    for p, what in ((fwd.path / "decompiled_code.py", "outside the run"),
                    (e0.path / "guards.txt", "outside the run"), (fwd.path / "bytecode_info.txt", "FIFO")):
        tf = files.open_for_view(p, run)
        assert tf.error and what in tf.error
        assert SECRET not in "".join(tf.lines(0, 10))
        text, problem = files.markdown_text(p, run)
        assert text is None and problem
    submod_files = [f.name for cf in e0.compiled_fns for _, fl in cf.submods for f in fl]
    assert "leak.py" not in submod_files and "graph_module.py" in submod_files
    for p in _walk_cf(fns):
        if p is None:
            continue
        tf = files.open_for_view(p, run)
        assert SECRET not in "\n".join(tf.lines(0, 100))


def test_a_linked_compiled_functions_dir_is_not_indexed(tmp_path):
    outside = outside_dir(tmp_path)
    run = build_linked_cf_run(tmp_path / "run", outside)
    assert index_compiled_functions(run) == []
    assert "outside the run" in compiled_functions_problem(run)
    assert RunModel(run).has_compiled_functions  # (run.py) -- the screen then says it was refused


def test_event_files_refuse_links_fifos_dirs(hostile):
    run, _ = hostile
    model = RunModel(run).load()
    got = {name: (p, problem) for name, p, problem in event_files(run, model.events[0])}
    assert got["before_compiler_compile_graph_module.py"][0] is not None
    assert got["leak.py"][0] is None and got["leak.py"][1].startswith("refused")
    assert got["fifo.py"][0] is None and "FIFO" in got["fifo.py"][1]
    assert got["dir.py"][0] is None and "directory" in got["dir.py"][1]
    linked = next(e for e in model.events if e.name == "fullgraph_after_link_folder")
    assert all(p is None for _, p, _ in event_files(run, linked))
    attrs_link = next(e for e in model.events if e.name == "fullgraph_after_attrs_link")
    assert all(p is None for _, p, _ in event_files(run, attrs_link))


def test_open_regular_refuses_without_hanging(tmp_path):
    os.mkfifo(tmp_path / "fifo")  # no writer: a blocking open would hang forever
    (tmp_path / "d").mkdir()
    t = time.monotonic()
    for p in (tmp_path / "fifo", tmp_path / "d", Path("/dev/zero"), tmp_path / "missing",
              tmp_path / "\ud800", tmp_path / LONG, tmp_path / ("x/" * 3000)):
        with pytest.raises(files.FileProblem):
            files.open_regular(p)
        assert files.check(p) is not None
        assert TextFile(p).error
        lines, problem = read_side(p)
        assert lines == [] and problem
    assert time.monotonic() - t < 5


def test_open_regular_refuses_a_link_out_given_the_root(tmp_path):
    outside = outside_dir(tmp_path)
    run = tmp_path / "run"
    run.mkdir()
    (run / "link").symlink_to(outside / "secret.txt")
    (run / "inside.txt").write_text("ok\n")
    (run / "ok_link").symlink_to(run / "inside.txt")
    assert "outside the run" in files.check(run / "link", run)
    assert files.check(run / "ok_link", run) is None  # a link inside the run is fine
    assert files.open_document(run / "ok_link", run).lines(0, 1) == ["ok"]
    diff, problem = diff_files(run / "inside.txt", run / "link", left_root=run, right_root=run)
    assert diff is None and "outside the run" in problem


# -- hole 3: crashes -------------------------------------------------------------------------------
def test_path_helpers_are_total():
    root = Path("/tmp")
    for bad in ("\ud800", LONG, "x/" * 3000 + "y"):
        try:
            safe_join(root, bad)
        except UnsafePath:
            pass
        assert is_inside(root, root / bad) in (True, False)


def test_surrogate_and_long_event_names_give_problems_not_exceptions(hostile):
    run, _ = hostile
    model = RunModel(run).load()
    for ev in model.events:
        event_folder(run, ev)
        for name, p, problem in event_files(run, ev):
            assert (p is None) == (problem is not None)
            if p is not None:
                files.open_for_view(p, run).lines(0, 50)
        model.attributes(ev)
        model.line(ev)
    sur = next(e for e in model.events if "\ud800" in e.name)
    assert all(p is None for _, p, _ in event_files(run, sur))
    long_ev = next(e for e in model.events if LONG in e.name)
    assert all(p is None for _, p, _ in event_files(run, long_ev))


# -- hole 4: one huge line ---------------------------------------------------------------------------
def _rss_kb() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_a_one_gb_single_line_is_read_in_bounded_pieces(tmp_path):
    p = tmp_path / "huge.txt"
    with open(p, "wb") as fh:
        fh.write(b"head\x1b[31m")
        fh.truncate(1 << 30)
    rss0 = _rss_kb()
    t = time.monotonic()
    tf = files.open_for_view(p, tmp_path)  # the worker's part: indexing (bounded chunks)
    index_s = time.monotonic() - t
    assert tf.error is None and tf.line_count == 1
    assert tf.notice and "showing the first" in tf.notice  # only MAX_INDEX_BYTES are indexed
    show_s = float("inf")
    for _ in range(3):  # the best of three: a read, not a pause of a shared machine's scheduler, is timed
        t = time.monotonic()
        (line,) = tf.lines(0, 400)  # the UI thread's part: what is on screen (read each time, never kept)
        show_s = min(show_s, time.monotonic() - t)
    assert line.startswith("head\x1b[31m")
    assert "line cut at" in line and len(line) < MAX_LINE_CHARS + 100
    assert tf.line(0) == line and tf.raw_line(0) == line
    assert show_s < 0.05, show_s
    assert _rss_kb() - rss0 < 64 * 1024  # not the 1 GB line (nor 8 GB of str)
    print(f"1 GB one-line file: index {index_s:.2f}s (worker), first screen {show_s * 1000:.2f} ms, "
          f"RSS +{(_rss_kb() - rss0) / 1024:.1f} MB")
    lines, problem = read_side(p, tmp_path)
    assert problem is None and len(lines) == 1 and len(lines[0]) < MAX_LINE_CHARS + 100
    assert MAX_LINE_BYTES >= MAX_LINE_CHARS


def test_many_long_lines_are_read_line_by_line_and_bounded(tmp_path):
    p = tmp_path / "wide.py"
    p.write_bytes((b"y" * 300_000 + b"\n") * 40)
    tf = TextFile(p)
    assert tf.line_count == 40
    out = tf.lines(0, 40)
    assert all("line cut at" in s and len(s) < MAX_LINE_CHARS + 100 for s in out)
    assert tf.search("yyy", 0) == 1


def test_diff_reads_each_side_once(tmp_path, monkeypatch):
    a = tmp_path / "a.py"
    b = tmp_path / "b.py"
    a.write_text("".join(f"line {i}\n" for i in range(20_000)))
    b.write_text("".join(f"line {i}{'!' if i % 1000 == 0 else ''}\n" for i in range(20_000)))
    opens: list[str] = []
    real_open = os.open

    def spy(path, *args, **kwargs):
        opens.append(os.fspath(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", spy)
    diff, problem = diff_files(a, b, left_root=tmp_path, right_root=tmp_path)
    assert problem is None and diff.removed == 20 and diff.added == 20
    assert len(opens) == 2, opens
    # the screen's current reader (TextFile + line(i) per line) opens once too
    opens.clear()
    tf = TextFile(a)
    assert [tf.line(i) for i in range(tf.line_count)][-1] == "line 19999"
    assert len(opens) == 1


def test_pretty_json_and_markdown_are_model_functions(tmp_path):
    j = tmp_path / "attributes.json"
    j.write_text('{"a": "\\u001b[31m\\ud800", "b": [1, 2]}')
    tf = files.pretty_json(j, tmp_path)
    text = "\n".join(tf.lines(0, 100))
    assert '"b": [' in text and "\x1b" not in text and "\\u001b" in text and "\\ud800" in text
    bad = tmp_path / "bad.json"
    bad.write_text("{not json\n")
    assert files.pretty_json(bad, tmp_path).lines(0, 5) == ["{not json"]
    md = tmp_path / "overview.md"
    md.write_text("# t\x1b[2J\u202e\n")
    text, problem = files.markdown_text(md, tmp_path)
    assert problem is None and text == "# t\\x1b[2J\\u202e\n"
    md.write_text("x" * (files.MAX_MARKDOWN_BYTES + 1))
    assert files.markdown_text(md, tmp_path) == (None, None)


def test_a_timeline_linked_out_of_the_run_is_not_read(tmp_path):
    outside = outside_dir(tmp_path)
    (outside / "timeline.jsonl").write_text(json.dumps(
        {"index": 0, "name": SECRET, "relative_time": "0.0ms", "files": [],
         "attributes": {"scope": "fullgraph"}, "datetime": "x", "timestamp": 1.0}) + "\n")
    run = tmp_path / "run"
    (run / "timeline_events").mkdir(parents=True)
    (run / "timeline_events" / "timeline.jsonl").symlink_to(outside / "timeline.jsonl")
    model = RunModel(run).load()
    assert [e.name for e in model.events] == [] and model.error


def test_a_timeline_swapped_for_a_link_out_of_the_run_is_refused_on_the_next_read(tmp_path):
    """The reader checks where the timeline leads only when it leads to another file than last time: a
    timeline read once, then replaced by a link leading outside, is refused at the next read."""
    from magi_tui.model.sources.reader import TimelineReader

    line = {"index": 0, "name": "fullgraph_before_x", "relative_time": "0.0ms", "files": [],
            "attributes": {"scope": "fullgraph"}, "datetime": "x", "timestamp": 1.0}
    outside = outside_dir(tmp_path)
    (outside / "timeline.jsonl").write_text(json.dumps(dict(line, name=SECRET)) + "\n" * 1)
    run = tmp_path / "run"
    (run / "timeline_events").mkdir(parents=True)
    timeline = run / "timeline_events" / "timeline.jsonl"
    timeline.write_text(json.dumps(line) + "\n")
    reader = TimelineReader(timeline, root=run)
    assert [e.name for e in reader.read().events] == ["fullgraph_before_x"] and reader.error is None
    assert reader.read().events == [] and reader.error is None  # the same file again: nothing new
    timeline.unlink()
    timeline.symlink_to(outside / "timeline.jsonl")
    res = reader.read()
    assert SECRET not in [e.name for e in res.events] and "outside the run directory" in (reader.error or "")


def test_diff_marks_changes_in_the_shown_text():
    from magi_tui.model.analysis.diff import Row
    from magi_tui.ui.widgets.diff_view import DiffView, _display

    row = Row("replace", 1, "\tx = \x1b[31m1", 1, "\tx = \x1b[31m2")
    (left,), (right,) = DiffView._spans(row)
    assert _display(row.left)[left[0]:left[1]] == "1" and _display(row.right)[right[0]:right[1]] == "2"
