"""Pairing, sessions, triage recovery and status rules (FORMAT.md §10.6, §10.8; issue 2), on small
hand-written timelines in the writer's exact shape."""

from __future__ import annotations

from magi_tui.model import RunModel
from magi_tui.model.outputs.report import triage_json
from magi_tui.model.sources.layout import event_files, event_folder, event_folder_rel, list_event_folders
from tests.support.timeline import ev_line, lc, write_run


def model(tmp_path, lines) -> RunModel:
    return RunModel(write_run(tmp_path / "run", lines)).load()


def idx(run, i, session=0):
    return next(e for e in run.events if e.index == i and e.session == session)


# -- pairing ---------------------------------------------------------------------------------------
def test_pairing_is_lifo_for_nested_same_lifecycle(tmp_path):
    run = model(tmp_path, [lc(0, "before", "rec"), lc(1, "before", "rec"), lc(2, "after", "rec"),
                           lc(3, "after", "rec")])
    assert run.span_of(idx(run, 1)).end.index == 2
    assert run.span_of(idx(run, 0)).end.index == 3
    assert run.span_of(idx(run, 1)).depth == 1 and run.span_of(idx(run, 0)).depth == 0
    assert run.status == "ok"


def test_pairing_by_subgraph_and_graph_index(tmp_path):
    run = model(tmp_path, [
        lc(0, "before", "pass_context", sub=0), lc(1, "before", "pass_context", sub=1),
        lc(2, "after", "pass_context", sub=0), lc(3, "after", "pass_context", sub=1),
        lc(4, "before", "cc", graph_index=0), lc(5, "before", "cc", graph_index=1),
        lc(6, "after", "cc", graph_index=0), lc(7, "after", "cc", graph_index=1),
    ])
    assert [run.span_of(idx(run, i)).end.index for i in (0, 1, 4, 5)] == [2, 3, 6, 7]


def test_graph_index_missing_on_one_side_still_pairs(tmp_path):
    # compiler_manager_compile never carries graph_index; other lifecycles may carry it on one side only
    run = model(tmp_path, [lc(0, "before", "cmc"), lc(1, "after", "cmc", graph_index=3),
                           lc(2, "before", "cc", graph_index=1), lc(3, "after", "cc")])
    assert run.span_of(idx(run, 0)).end.index == 1
    assert run.span_of(idx(run, 2)).end.index == 3
    assert run.open_spans == []


def test_orphan_end_and_point_events(tmp_path):
    run = model(tmp_path, [lc(0, "after", "x"), ev_line(1, "fullgraph_after_inductor_schedule"),
                           lc(2, "skip", "removeitempass")])
    s0 = run.span_of(idx(run, 0))
    assert s0.before is None and s0.end.index == 0 and s0.status == "ok"
    assert run.span_of(idx(run, 1)) is None
    assert run.span_of(idx(run, 2)).status == "skip"


def test_event_names_parse(tmp_path):
    run = model(tmp_path, [lc(0, "before", "PostCleanupPass", sub=12, frag="postcleanuppass"),
                           ev_line(1, "fullgraph_after_dynamo_bytecode_transform"),
                           ev_line(2, "something_else_entirely")])
    e0, e1, e2 = run.events
    assert (e0.scope, e0.subgraph_index, e0.phase, e0.lifecycle, e0.frag) == (
        "subgraph_12", 12, "before", "PostCleanupPass", "postcleanuppass")
    assert e0.short_name == "before_postcleanuppass"
    assert (e1.phase, e1.scope, e1.short_name) == (None, "fullgraph", "after_dynamo_bytecode_transform")
    assert not e1.is_lifecycle  # no lifecycle_name: a point event, whatever the name says
    assert (e2.phase, e2.scope, e2.short_name) == (None, "fullgraph", "something_else_entirely")


# -- sessions --------------------------------------------------------------------------------------
def test_a_session_left_open_stays_open(tmp_path):
    # session 0 is cut off inside a lifecycle; session 1 (index drops) runs fine
    run = model(tmp_path, [lc(0, "before", "magi_backend_call"), lc(1, "before", "cc"),
                           lc(0, "before", "magi_backend_call"), lc(1, "after", "magi_backend_call")])
    assert [e.session for e in run.events] == [0, 0, 1, 1]
    # the new session's after does not close the old session's before
    assert run.span_of(idx(run, 0, session=1)).end.index == 1
    assert run.span_of(idx(run, 0, session=0)).end is None
    assert [(s.first.session, s.first.index) for s in run.open_spans] == [(0, 0), (0, 1)]
    assert run.status == "incomplete"
    assert [o["index"] for o in triage_json(run)["open"]] == [0, 1]
    # and the new session's spans are not nested under the dead ones
    assert run.span_of(idx(run, 0, session=1)).depth == 0


def test_failure_is_not_recovered_by_another_session(tmp_path):
    run = model(tmp_path, [lc(0, "before", "x"), lc(1, "failed", "x"),
                           lc(0, "before", "x"), lc(1, "after", "x")])
    assert not run.triage.failures[0].recovered
    assert run.status == "failed"


# -- triage recovery -------------------------------------------------------------------------------
def test_retry_of_the_same_step_recovers(tmp_path):
    run = model(tmp_path, [lc(0, "before", "cc", graph_index=0), lc(1, "failed", "cc", graph_index=0),
                           lc(2, "before", "cc", graph_index=0), lc(3, "after", "cc", graph_index=0)])
    (f,) = run.triage.failures
    assert f.recovered_by.index == 3 and run.status == "recovered"


def test_another_graphs_success_does_not_recover(tmp_path):
    run = model(tmp_path, [lc(0, "before", "cc", graph_index=0), lc(1, "failed", "cc", graph_index=0),
                           lc(2, "before", "cc", graph_index=1), lc(3, "after", "cc", graph_index=1)])
    assert not run.triage.failures[0].recovered
    assert run.status == "failed"


def test_recovery_tolerates_graph_index_missing_on_the_failed_event(tmp_path):
    # the before carries graph_index, the failed event does not: the retry (graph 0) still recovers it
    run = model(tmp_path, [lc(0, "before", "cc", graph_index=0), lc(1, "failed", "cc"),
                           lc(2, "before", "cc", graph_index=0), lc(3, "after", "cc", graph_index=0)])
    assert run.triage.failures[0].recovered_by.index == 3


def test_restart_cascade_recovered_through_cache_load(tmp_path):
    # the warm transformer's shape: compiler_compile fails, the cascade reaches magi_backend_call, the
    # retry never runs compiler_compile again (cache hit), and magi_backend_call completes
    run = model(tmp_path, [
        lc(0, "before", "magi_backend_call"), lc(1, "before", "cmc"),
        lc(2, "before", "cc", graph_index=0),
        lc(3, "failed", "cc", graph_index=0, exception_type="TensorifyScalarRestartAnalysis", exception_message=""),
        lc(4, "failed", "cmc", exception_type="TensorifyScalarRestartAnalysis"),
        lc(5, "failed", "magi_backend_call", exception_type="TensorifyScalarRestartAnalysis"),
        lc(6, "before", "magi_backend_call"), lc(7, "before", "cml", graph_index=0),
        lc(8, "after", "cml", graph_index=0, load_result="hit", reason="cache_hit"),
        lc(9, "after", "magi_backend_call"),
    ])
    t = run.triage
    assert [f.recovered_by.index for f in t.failures] == [9, 9, 9]
    assert [i.event.index for i in t.restarts] == [3]  # one restart, not one per cascaded failure
    assert [i.event.index for i in t.cache_hits] == [8]
    assert run.status == "recovered"


def test_unrecovered_cascade_is_failed_and_first_failure_is_the_head(tmp_path):
    run = model(tmp_path, [lc(0, "before", "outer"), lc(1, "before", "inner", files=["before_inner_graph.txt"]),
                           lc(2, "failed", "inner"), lc(3, "failed", "outer")])
    t = run.triage
    assert t.first_failure.event.index == 2
    assert t.first_failure.folder == "timeline_events/files/0001_fullgraph_before_inner"  # its before's files
    assert all(f.cascade_head.index == 2 for f in t.failures)
    assert run.status == "failed"


# -- status rules ----------------------------------------------------------------------------------
def test_status_rules(tmp_path):
    def status(lines, name):
        return RunModel(write_run(tmp_path / name, lines)).load().status

    assert status([lc(0, "before", "x"), lc(1, "after", "x")], "ok") == "ok"
    assert status([lc(0, "before", "x")], "open") == "incomplete"
    assert status(lc(0, "before", "x")[:30], "partial-only") == "incomplete"
    assert status([lc(0, "before", "x"), lc(1, "after", "x")[:20]], "partial") == "incomplete"
    assert status([lc(0, "before", "x"), lc(1, "failed", "x")], "failed") == "failed"
    # failures all recovered, but something still open (killed, or still running after its retry):
    # incomplete, so a CI script sees it (issues 10 and 14 changed issue 2's rule on purpose: HEADLESS.md)
    assert status([lc(0, "before", "o"), lc(1, "before", "x"), lc(2, "failed", "x"),
                   lc(3, "before", "x"), lc(4, "after", "x")], "rec-open") == "incomplete"
    assert status([lc(0, "before", "x"), lc(1, "failed", "x"), lc(2, "before", "x"), lc(3, "after", "x")],
                  "rec") == "recovered"
    assert status([], "empty") == "empty"
    assert status("garbage\n", "garbage") == "empty"


def test_failed_beats_partial_line(tmp_path):
    run = RunModel(write_run(tmp_path / "r", [lc(0, "before", "x"), lc(1, "failed", "x"), "{\"ind"])).load()
    assert run.partial_line and run.status == "failed"


# -- folders ---------------------------------------------------------------------------------------
def test_folder_width_grows_past_9999(tmp_path):
    run_dir = tmp_path / "run"
    lines = [ev_line(9999, "fullgraph_before_a", files=["a.txt"]), ev_line(10000, "fullgraph_after_b", files=["b.txt"]),
             ev_line(10001, "subgraph_3_after_c", files=["c.txt"], subgraph="submod_3", subgraph_index=3)]
    write_run(run_dir, lines)
    files = run_dir / "timeline_events" / "files"
    for name, sub, f in (("9999_fullgraph_before_a", "", "a.txt"), ("10000_fullgraph_after_b", "", "b.txt"),
                         ("10001_subgraph_3_after_c", "submod_3", "c.txt")):
        d = files / name / sub if sub else files / name
        d.mkdir(parents=True)
        (d / f).write_text("x")
        (d / "attributes.json").write_text("{}")
    (files / "0002_fullgraph_early").mkdir()
    run = RunModel(run_dir).load()
    e9999, e10000, e10001 = run.events
    assert event_folder_rel(e9999) == "timeline_events/files/9999_fullgraph_before_a"
    assert event_folder_rel(e10000) == "timeline_events/files/10000_fullgraph_after_b"
    assert event_folder(run.path, e10001) == (files / "10001_subgraph_3_after_c" / "submod_3").resolve()
    for ev in run.events:
        assert all(problem is None for _, _, problem in event_files(run.path, ev))
    # numeric order, not string order ("10000" < "2" as strings)
    assert [i for i, _, _ in list_event_folders(run_dir)] == [2, 9999, 10000, 10001]


def test_folder_not_written_yet(tmp_path):
    run = model(tmp_path, [ev_line(0, "fullgraph_after_inductor_schedule", files=["inductor_output.py"])])
    assert event_files(run.path, run.events[0]) == [
        ("inductor_output.py", None, "not written (yet)"), ("attributes.json", None, "not written (yet)")]


# -- odd values that once escaped as exceptions -----------------------------------------------------
def test_non_finite_and_huge_numbers_are_not_times(tmp_path):
    from magi_tui.model.outputs.report import fmt_duration, fmt_time, run_row

    run_dir = write_run(tmp_path / "r", [
        '{"index": 0, "name": "fullgraph_before_x", "attributes": {"lifecycle_name": "x"}, "timestamp": Infinity}\n',
        '{"index": 1, "name": "fullgraph_after_x", "attributes": {"lifecycle_name": "x", "duration_ms": NaN},'
        ' "timestamp": ' + "9" * 400 + "}\n",
        '{"index": 2, "name": "fullgraph_after_y", "timestamp": 1e300}\n',
    ])
    run = RunModel(run_dir).load()
    assert [e.timestamp for e in run.events] == [None, None, 1e300]
    assert run.events[1].duration_ms is None
    row = run_row(run)  # 1e300 is finite but no clock can show it
    assert row["started_text"] == "-"
    assert fmt_time(float("inf")) == "-" and fmt_duration(float("nan")) == "-"


def test_subgraph_number_with_thousands_of_digits(tmp_path):
    run = model(tmp_path, [ev_line(0, "subgraph_" + "1" * 5000 + "_before_x", lifecycle_name="x")])
    (ev,) = run.events
    assert ev.subgraph_index is None and ev.scope == "fullgraph"


def test_span_left_open_inside_a_closed_one_does_not_deepen_later_spans(tmp_path):
    # B never closes before A does: B is reported open, and C (after A) is back at depth 0
    run = model(tmp_path, [lc(0, "before", "a"), lc(1, "before", "b"), lc(2, "after", "a"),
                           lc(3, "before", "c"), lc(4, "after", "c")])
    assert run.span_of(idx(run, 3)).depth == 0
    assert [s.first.index for s in run.open_spans] == [1]
    assert run.status == "incomplete"


def test_interleaved_lifecycles_still_pair(tmp_path):
    run = model(tmp_path, [lc(0, "before", "a"), lc(1, "before", "b"), lc(2, "after", "a"), lc(3, "after", "b")])
    assert run.span_of(idx(run, 1)).end.index == 3
    assert run.open_spans == [] and run.status == "ok"


def test_late_ends_close_the_last_matching_set_aside_span_among_many(tmp_path):
    # every compile leaves ``b`` open inside its ``a`` (set aside), then the ``b`` ends come late, last compile
    # first, two of them for the same compile id (the last set aside that matches closes first); the set-aside
    # spans are looked up by what an end must share with its before (issue #21: not by scanning them all)
    n = 300
    lines, i = [], 0
    for c in range(n):
        for args in (("before", "a"), ("before", "b"), ("after", "a")):
            lines.append(lc(i, *args, compile_id=f"{c}/0"))
            i += 1
    lines.append(lc(i, "before", "b", compile_id="7/0", graph_index=2))  # set aside by the next "a" close
    lines.append(lc(i + 1, "before", "a", compile_id="7/0"))
    lines.append(lc(i + 2, "before", "b", compile_id="9/0"))
    lines.append(lc(i + 3, "after", "a", compile_id="7/0"))
    late = i + 4
    for k, c in enumerate([*range(n - 1, -1, -1), 7]):
        lines.append(lc(late + k, "after", "b", compile_id=f"{c}/0"))
    run = model(tmp_path, lines)
    assert run.span_of(idx(run, late)).before.index == (n - 1) * 3 + 1
    assert run.span_of(idx(run, late + n - 1 - 7)).before.index == i   # compile 7's newest b first
    assert run.span_of(idx(run, late + n)).before.index == 7 * 3 + 1   # then its older one
    assert run.span_of(idx(run, late + n - 1 - 9)).before.index == i + 2
    assert [s.first.index for s in run.open_spans] == [9 * 3 + 1]       # compile 9's older b: no end left
    assert len(run.pairer._by_key) == 1                                 # closed spans are not kept
