"""The real upstream run directories (tests/fixtures/magi_depyf) through the model.

These are the compatibility contract: every one is found, read and triaged, and the specifics a user
would check by hand (first failure of the cold transformer run, the warm run's cache hits, ...) hold.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from magi_tui.model import RunModel, find_runs, index_compiled_functions
from magi_tui.model.sources.discovery import SKIP_DIRS
from magi_tui.model.sources.layout import event_files, event_folder, list_event_folders
from tests.support.paths import COLD, WARM

# fixture dir -> (number of runs, statuses)
EXPECTED = {
    "toy_explain": ["ok"],
    "toy_explain_warm_cache": ["empty"],
    "recompile_explain": ["ok"],
    "transformer": ["recovered", "recovered"],
    "dynamo_failure": ["empty"],
    "two_models": ["ok", "ok"],
    "compile_sizes": ["ok"],
    "compile_sizes_manual_explain": ["ok", "ok"],
    "eager_nocache": ["ok"],
    "aot": ["failed"],
    "append_same_dir": ["ok"],
}


def load(path: Path) -> RunModel:
    return RunModel(path).load()


def by_index(run: RunModel, index: int, session: int = 0):
    return next(e for e in run.events if e.index == index and e.session == session)


# -- every fixture ---------------------------------------------------------------------------------
def test_every_fixture_dir_is_covered(fx):
    assert sorted(p.name for p in fx.iterdir() if p.is_dir()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_fixture_is_found_and_triaged(fx, name):
    runs = find_runs(fx / name)
    assert len(runs) == len(EXPECTED[name])
    statuses = []
    for r in runs:
        run = load(r.path)
        assert run.malformed == []
        assert not run.partial_line
        statuses.append(run.status)
        # every failure names a lifecycle and an exception
        for f in run.triage.failures:
            assert f.event.lifecycle and f.exception_type
    assert sorted(statuses) == sorted(EXPECTED[name])


def test_whole_fixture_tree_in_one_walk(fx):
    runs = find_runs(fx)
    assert len(runs) == sum(len(v) for v in EXPECTED.values()) == 14
    assert all(r.has_timeline_dir or r.has_compiled_functions for r in runs)


# -- the transformer runs --------------------------------------------------------------------------
def test_cold_transformer_first_failure(fx):
    run = load(fx / COLD)
    assert len(run.events) == 72
    ff = run.triage.first_failure
    assert ff is not None
    assert (ff.event.index, ff.event.name) == (13, "fullgraph_failed_compiler_compile")
    assert ff.exception_type == "TensorifyScalarRestartAnalysis"
    assert ff.message == ""
    assert ff.event.lifecycle == "compiler_compile"
    assert ff.folder == "timeline_events/files/0013_fullgraph_failed_compiler_compile"
    assert (fx / COLD / ff.folder / "failed_lifecycle_graph_module.py").is_file()
    # the compile step itself is retried and succeeds (#34)
    assert ff.recovered and ff.recovered_by.index == 34
    assert ff.recovered_by.name == "fullgraph_after_compiler_compile"
    assert run.status == "recovered"


def test_cold_transformer_failure_cascade(fx):
    run = load(fx / COLD)
    t = run.triage
    assert [f.event.index for f in t.failures] == [13, 14, 15, 16, 17]
    assert [f.event.lifecycle for f in t.failures] == [
        "compiler_compile", "pass_context", "compiler_manager_compile", "piecewise_compile", "magi_backend_call"]
    assert all(f.cascade_head.index == 13 for f in t.failures)
    assert all(f.recovered for f in t.failures)
    # the outermost lifecycle completes at the end of the retry
    assert t.failures[-1].recovered_by.name == "fullgraph_after_magi_backend_call"
    assert [(i.event.index, i.reason) for i in t.restarts] == [(13, "TensorifyScalarRestartAnalysis")]
    assert [i.event.index for i in t.cache_misses] == [10, 26, 41, 56]
    assert {i.reason for i in t.cache_misses} == {"entry_not_found"}
    assert len(t.cache_stores) == 3 and t.cache_hits == []
    assert run.open_spans == []


def test_warm_transformer_recovers_through_cache_hits(fx):
    run = load(fx / WARM)
    t = run.triage
    assert len(run.events) == 39
    assert run.status == "recovered"
    ff = t.first_failure
    assert (ff.event.index, ff.exception_type) == (13, "TensorifyScalarRestartAnalysis")
    # compiler_compile never runs again: the retry loads every piece from the cache
    assert not any(e.name == "fullgraph_after_compiler_compile" for e in run.events)
    assert len(t.cache_hits) == 3
    assert [i.event.index for i in t.cache_hits] == [26, 30, 34]
    assert {i.reason for i in t.cache_hits} == {"cache_hit"}
    assert [(i.event.index, i.reason) for i in t.cache_misses] == [(10, "cache_entry_load_miss")]
    assert all(f.recovered for f in t.failures)
    assert ff.recovered_by.name == "fullgraph_after_magi_backend_call"


def test_before_after_pairs_are_spans(fx):
    run = load(fx / COLD)
    before, after = by_index(run, 29), by_index(run, 30)
    assert before.name == "subgraph_0_before_postcleanuppass"
    assert after.name == "subgraph_0_after_postcleanuppass"
    span = run.span_of(before)
    assert span is run.span_of(after)
    assert (span.before, span.end, span.status) == (before, after, "ok")
    assert span.lifecycle == "PostCleanupPass"
    assert span.duration_ms == after.duration_ms and span.duration_ms > 0
    assert before.scope == "subgraph_0" and before.subgraph_index == 0
    for ev, fname in ((before, "before_postcleanuppass_graph.txt"), (after, "after_lifecycle_graph.txt")):
        folder = event_folder(run.path, ev)
        assert folder.parent.name == f"{ev.index:04d}_{ev.name}"
        assert folder.name == "submod_0"
        files = dict((n, p) for n, p, _ in event_files(run.path, ev))
        assert files[fname] == folder / fname and files[fname].is_file()
        assert files["attributes.json"].is_file()


def test_nesting_and_graph_index_pairing(fx):
    run = load(fx / COLD)
    # before_compiler_compile #28 (graph 0) closes with #34; the next piece's #43 with #49
    assert run.span_of(by_index(run, 28)).end.index == 34
    assert run.span_of(by_index(run, 43)).end.index == 49
    # pass_context of subgraph 0 encloses compiler_compile: deeper nesting
    pc = run.span_of(by_index(run, 27))
    assert pc.lifecycle == "pass_context" and pc.end.index == 35
    assert run.span_of(by_index(run, 28)).depth == pc.depth + 1
    # a failed event closes its own before (LIFO)
    assert run.span_of(by_index(run, 12)).end.index == 13
    assert run.span_of(by_index(run, 12)).status == "failed"
    # point events have no span
    assert run.span_of(by_index(run, 33)) is None


def test_layout_resolves_submod_folders_for_every_event(fx):
    for rel in (COLD, WARM):
        run = load(fx / rel)
        for ev in run.events:
            for name, path, problem in event_files(run.path, ev):
                assert problem is None, (ev, name, problem)
                assert path.is_file()
                if ev.subgraph:
                    assert path.parent.name == ev.subgraph


def test_event_folders_sort_numerically(fx):
    folders = list_event_folders(fx / COLD)
    assert [i for i, _, _ in folders] == sorted(i for i, _, _ in folders)
    assert folders[0][:2] == (0, "fullgraph_before_magi_backend_call")
    # folders exist only for events with files: numbering has gaps (no 0007, no 0011)
    assert 7 not in {i for i, _, _ in folders} and 11 not in {i for i, _, _ in folders}


# -- other fixtures --------------------------------------------------------------------------------
def test_aot_is_failed(fx):
    (r,) = find_runs(fx / "aot")
    run = load(r.path)
    assert run.status == "failed"
    t = run.triage
    assert len(t.failures) == 1
    f = t.first_failure
    assert (f.event.index, f.event.name) == (39, "fullgraph_failed_aot_compile")
    assert (f.exception_type, f.message) == ("ValueError", "tuple.index(x): x not in tuple")
    assert not f.recovered
    assert f.folder is None  # neither the failed event nor its before has files
    assert not run.has_compiled_functions


def test_eager_nocache_skipped_stores(fx):
    (r,) = find_runs(fx / "eager_nocache")
    run = load(r.path)
    t = run.triage
    assert run.status == "ok"
    assert t.cache_skipped_stores, "expected skipped cache stores"
    assert {i.reason for i in t.cache_skipped_stores} == {"cache_disabled"}
    assert 14 in [i.event.index for i in t.cache_skipped_stores]
    assert t.cache_stores == []


@pytest.mark.parametrize("name", ["toy_explain_warm_cache", "dynamo_failure"])
def test_empty_timelines(fx, name):
    (r,) = find_runs(fx / name)
    run = load(r.path)
    assert run.status == "empty"
    assert run.events == [] and not run.has_timeline
    assert r.has_timeline_dir


def test_append_same_dir_has_two_sessions(fx):
    run = load(fx / "append_same_dir")
    assert [e.index for e in run.events] == [0, 0]
    assert [e.session for e in run.events] == [0, 1]
    assert [e.seq for e in run.events] == [0, 1]
    assert len(run.tree.sessions) == 2
    assert run.status == "ok"


def test_two_models_two_runs_with_tags(fx):
    runs = find_runs(fx / "two_models")
    assert [(r.name.run_id, r.name.model_index, r.name.tag, r.name.rank) for r in runs] == [
        ("run_20261122_112142", 1, "Tiny", 0),
        ("run_20261122_112205", 2, "second_tag", 0),
    ]
    assert all(r.name.run_time is not None for r in runs)


def test_compile_sizes_integer_runtime_shape(fx):
    run = load(fx / "compile_sizes_manual_explain" / "manual_explain_bs4")
    ev = by_index(run, 4)
    assert ev.name == "fullgraph_before_compiler_compile"
    assert run.attributes(ev)["runtime_shape"] == 4


def test_toy_point_events_only(fx):
    run = load(fx / "toy_explain")
    assert [e.name for e in run.events] == ["fullgraph_after_inductor_schedule"] * 3
    assert all(not e.is_lifecycle for e in run.events)
    assert run.status == "ok"


def test_attributes_reread_on_demand(fx):
    run = load(fx / COLD)
    ev = by_index(run, 6)
    assert ev.attrs is None  # not kept in memory
    assert run.attributes(ev)["num_subgraphs"] == 5


# -- compiled_functions ----------------------------------------------------------------------------
def test_compiled_functions_recompile_entries_newest_first(fx):
    fns = {f.name: f for f in index_compiled_functions(fx / "recompile_explain")}
    assert set(fns) == {"forward", "toy_with_break"}
    twb = fns["toy_with_break"]
    assert [e.index for e in twb.entries] == [0, 1, 2]
    assert twb.entries[0].label == "entry_0 (most recently used)"  # Dynamo keeps its cache MRU-first
    # entry_0 is the newest compile: the dtype recompile (float64 guards)
    assert "float64" in twb.entries[0].guards.read_text()
    assert all(e.guard_leaves and e.guard_leaves > 0 for e in twb.entries)
    assert [e.index for e in fns["forward"].entries] == [0, 1]


def _walk(fn, depth=0):
    yield fn, depth
    for e in fn.entries:
        for r in e.resume_fns:
            yield from _walk(r, depth + 1)


def test_compiled_functions_resume_fns_deduplicated_and_bounded(fx):
    from magi_tui.model.analysis.compiled_functions import MAX_RESUME_DEPTH

    fns = {f.name: f for f in index_compiled_functions(fx / "recompile_explain")}
    walked = list(_walk(fns["toy_with_break"]))
    assert max(d for _, d in walked) <= MAX_RESUME_DEPTH + 1
    full = [f.name for f, _ in walked if f.duplicate_of is None and not f.truncated and f.entries]
    assert len(full) == len(set(full)), "a resume fn was indexed twice"
    dups = [f for f, _ in walked if f.duplicate_of]
    assert dups, "the fixture repeats resume fns under several parents"
    assert all(d.entries == [] for d in dups)
    assert any(f.name.startswith("__resume_at_112_") for f, _ in walked)
    assert any(f.name.startswith("__resume_at_222_") for f, _ in walked)


def test_compiled_functions_transformer_forward(fx):
    (fn,) = index_compiled_functions(fx / COLD)
    assert fn.name == "forward"
    e0 = fn.entries[0]
    assert e0.index == 0 and e0.guards is not None
    (cf,) = e0.compiled_fns
    assert cf.name.startswith("__compiled_fn_3_")
    assert [p.name for p in cf.extras] == [f"{cf.name}_split_graph.py"]
    assert [s.split()[0] for s, _ in cf.submods] == [f"submod_{i}" for i in range(5)]
    kinds = {s.split()[0]: s for s, _ in cf.submods}
    assert kinds["submod_0"] == "submod_0 (compiled)"
    assert kinds["submod_1"] == "submod_1 (splitting_op)"
    files0 = {p.name for p in cf.submods[0][1]}
    assert {"README.txt", "graph_module.py", "inductor_output.py"} <= files0
    assert "inductor_output.py" not in {p.name for p in cf.submods[1][1]}


def test_compiled_fn_stubs_and_missing_tree(fx):
    (fn,) = index_compiled_functions(fx / "toy_explain")
    assert fn.name == "toy_example"
    assert all(cf.is_stub for e in fn.entries for cf in e.compiled_fns)
    assert index_compiled_functions(fx / "aot" / "magi_depyf" / "run_20261122_112225" / "model_1_Tiny_rank_0") == []


def test_submods_sort_numerically(tmp_path):
    cfs = tmp_path / "compiled_functions" / "f" / "entry_0" / "compiled_fns"
    (cfs / "__compiled_fn_1").mkdir(parents=True)
    (cfs / "__compiled_fn_1.py").write_text("# stub\n")
    (cfs / "__compiled_fn_1_1.py").write_text("# another fn whose name extends the first\n")
    (cfs / "__compiled_fn_1_split_graph.py").write_text("x = 1\n")
    for n in (10, 2, 1, 0):
        (cfs / "__compiled_fn_1" / f"submod_{n}").mkdir()
    (fn,) = index_compiled_functions(tmp_path)
    cf = {c.name: c for c in fn.entries[0].compiled_fns}
    assert [s for s, _ in cf["__compiled_fn_1"].submods] == ["submod_0", "submod_1", "submod_2", "submod_10"]
    assert [p.name for p in cf["__compiled_fn_1"].extras] == ["__compiled_fn_1_split_graph.py"]
    assert set(cf) == {"__compiled_fn_1", "__compiled_fn_1_1"}


# -- discovery -------------------------------------------------------------------------------------
def test_discovery_from_every_kind_of_path(fx):
    cold = fx / COLD
    expect_one = [cold, cold / "timeline_events", cold / "timeline_events" / "timeline.jsonl",
                  fx / "toy_explain", fx / "toy_explain" / "timeline_events"]
    for p in expect_one:
        runs = find_runs(p)
        assert len(runs) == 1, p
        assert runs[0].path in (cold, fx / "toy_explain")
    # a magi_depyf root, a cache root holding magi_depyf/, a folder of runs
    assert len(find_runs(fx / "transformer" / "magi_depyf")) == 2
    assert len(find_runs(fx / "transformer")) == 2
    assert len(find_runs(fx / "transformer" / "magi_depyf" / "run_20261122_111900")) == 1
    run = find_runs(fx / "transformer")[0]
    assert (run.name.run_id, run.name.model_index, run.name.tag, run.name.rank) == (
        "run_20261122_111900", 1, "TwoLayerTransformer", 0)
    # a path deep inside a run
    deep = [cold / "timeline_events" / "files" / "0029_subgraph_0_before_postcleanuppass" / "submod_0",
            cold / "compiled_functions" / "forward" / "entry_0" / "compiled_fns"]
    for p in deep:
        assert [r.path for r in find_runs(p)] == [cold], p
    assert find_runs(fx / "does-not-exist") == []
    assert find_runs(fx / "run.log") == []


def test_discovery_skips_cache_siblings(tmp_path, fx):
    root = tmp_path / "cache"
    run = root / "magi_depyf" / "run_20261122_111900" / "model_1_X_rank_0"
    (run / "timeline_events").mkdir(parents=True)
    # things that look like runs but live where runs never are
    for skip in ("magi_depyf/visualizations", "magi_cache/model_1_X_rank_0", "inductor_cache/ab",
                 "torch_aot_compile/model_1_X_rank_0/h"):
        (root / skip / "timeline_events").mkdir(parents=True)
    assert {"visualizations", "magi_cache", "inductor_cache"} <= SKIP_DIRS
    assert [r.path for r in find_runs(root)] == [run]


def test_discovery_never_walks_into_runs_or_caches(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    n_runs = 20
    for i in range(n_runs):
        run = root / "magi_depyf" / f"run_20261122_1119{i:02d}" / "model_1_T_rank_0"
        files = run / "timeline_events" / "files"
        for k in range(100):  # a run's own folders are never walked
            (files / f"{k:04d}_fullgraph_before_x").mkdir(parents=True)
    for h in range(50):
        d = root / "inductor_cache" / f"{h:02x}"
        d.mkdir(parents=True)
        for k in range(80):
            (d / f"k{k}.py").write_text("")
        mc = root / "magi_cache" / "model_1_T_rank_0" / f"h{h}" / "artifact_shape_None_subgraph_0"
        mc.mkdir(parents=True)
        (mc / "a.bin").write_text("")
    n_files = sum(len(fs) + len(ds) for _, ds, fs in os.walk(root))
    assert n_files > 5000
    import magi_tui.model.sources.discovery as discovery

    listed: list[str] = []
    real_scandir = os.scandir

    def counting_scandir(path):
        listed.append(str(path))
        return real_scandir(path)

    monkeypatch.setattr(discovery.os, "scandir", counting_scandir)
    runs = find_runs(root)
    assert len(runs) == n_runs
    # the cost does not grow with what is inside runs and caches: only the path down to each run is listed
    assert not [p for p in listed if "inductor_cache" in p or "magi_cache" in p or "timeline_events" in p]
    assert len(listed) <= 2 + 2 * n_runs, len(listed)
