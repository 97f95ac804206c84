"""MagiCompiler's 2026 run dirs (issue 33, items 1-3), on the fixtures beside this file (README.md says how
each was made): topology suffixes, a two-rank job, new, unknown and failing lifecycles, the cache sidecars."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from magi_format.runname import RunName, model_dir_name, parse_run_name
from magi_tui.model.analysis.cache_explain import run_misses_explained
from magi_tui.model.analysis.checks import analyse
from magi_tui.model.outputs.ranks import find_jobs, ranks_json
from magi_tui.model.outputs.report import run_label, run_row, triage_json
from magi_tui.model.run import RunModel
from magi_tui.model.sources.discovery import find_runs
from magi_tui.model.sources.magi_cache import parse_host_slots, parse_indices, read_sidecars
from tests.support import slow

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
WS1 = HERE / "ws1_restart_cache" / "magi_depyf"
COLD = WS1 / "run_20261128_043804" / "model_1_TinyBlock_rank_0_ws1"
WARM = WS1 / "run_20261128_043828" / "model_1_TinyBlock_rank_0_ws1"
ASSERTED = WS1 / "run_20261128_043847" / "model_1_TinyBlock_rank_0_ep2_cp1_dp1"
TWO = HERE / "two_rank_no_split"
VENDOR = HERE / "vendor_passes" / "magi_depyf" / "run_20261128_044016" / "model_1_acme_moe_v2_rank_0_ep6_cp2_dp1"
HEAD = HERE / "vendor_passes" / "magi_depyf" / "run_20261128_044026" / "model_2_AcmeHead_rank_0_ep6_cp2_dp1"
FAILING = HERE / "failing_vendor_pass"
SIDECARS = HERE / "offload_sidecars"


def _load(path: Path) -> RunModel:
    return RunModel(path).load()


def _spans(run: RunModel) -> list:
    return list(dict.fromkeys(ev.span for ev in run.events if ev.span is not None))


def _cli(*args: str) -> subprocess.CompletedProcess:
    return slow.run([sys.executable, "-m", "magi_tui", *args], cwd=ROOT, capture_output=True, text=True,
                    timeout=120)


# -- 1. folder names: index, tag, rank, topology ------------------------------------------------------------

@pytest.mark.parametrize("name, want", [
    ("model_1_TwoLayerTransformer_rank_0", (1, "TwoLayerTransformer", 0, None)),       # the older form
    ("model_2_second_tag_rank_0", (2, "second_tag", 0, None)),
    ("model_1_rank_3", (1, None, 3, None)),
    ("model_0_rank_0_ws1", (0, None, 0, "ws1")),                                        # no tag
    ("model_1_TwoLayerTransformer_rank_0_ws1", (1, "TwoLayerTransformer", 0, "ws1")),
    ("model_1_TwoLayerTransformer_rank_12_ws16", (1, "TwoLayerTransformer", 12, "ws16")),
    ("model_3_acme_moe_v2_rank_5_ep6_cp2_dp1", (3, "acme_moe_v2", 5, "ep6_cp2_dp1")),   # MAGI_COMPILE_TOPOLOGY_KEY
    ("model_1_rank_1_expert_rank_0_ws2", (1, "rank_1_expert", 0, "ws2")),               # a tag holding _rank_<n>
    ("model_1_x_rank_1_rank_0", (1, "x_rank_1", 0, None)),
    ("model_1_TwoLayerTransformer_rank_x", (None, None, None, None)),                   # not a model folder
])
def test_a_folder_name_is_read_from_the_right(name, want):
    n = parse_run_name(Path("/c/magi_depyf/run_20261128_043804") / name)
    assert (n.model_index, n.tag, n.rank, n.topology) == want
    assert n.run_id == ("run_20261128_043804" if want[0] is not None else None)


def test_names_round_trip_and_the_older_form_is_unchanged():
    assert model_dir_name(1, "Tiny Block", 2) == "model_1_Tiny_Block_rank_2"
    assert model_dir_name(1, "Tiny", 2, "ws4") == "model_1_Tiny_rank_2_ws4"
    n = parse_run_name(Path("/x") / model_dir_name(4, "acme_moe_v2", 7, "ep6_cp2_dp1"))
    assert (n.model_index, n.tag, n.rank, n.topology) == (4, "acme_moe_v2", 7, "ep6_cp2_dp1")
    old = RunName(None, None, "t", 0, None)
    assert old.topology is None and repr(old) == "RunName(run_id=None, model_index=None, tag='t', rank=0, run_time=None)"
    assert RunName(None, 1, "t", 0, None, "ws2") != RunName(None, 1, "t", 0, None)


def test_every_fixture_run_is_found_with_its_index_tag_rank_and_topology():
    got = {f.path.relative_to(HERE).parts[0] + "/" + f.path.name: (f.name.model_index, f.name.tag, f.name.rank,
                                                                   f.name.topology) for f in find_runs(HERE)}
    assert got == {
        "ws1_restart_cache/model_1_TinyBlock_rank_0_ws1": (1, "TinyBlock", 0, "ws1"),  # cold and warm: one key
        "ws1_restart_cache/model_1_TinyBlock_rank_0_ep2_cp1_dp1": (1, "TinyBlock", 0, "ep2_cp1_dp1"),
        "two_rank_no_split/model_1_TinyBlock_rank_0_ws2": (1, "TinyBlock", 0, "ws2"),
        "two_rank_no_split/model_1_TinyBlock_rank_1_ws2": (1, "TinyBlock", 1, "ws2"),
        "vendor_passes/model_1_acme_moe_v2_rank_0_ep6_cp2_dp1": (1, "acme_moe_v2", 0, "ep6_cp2_dp1"),
        "vendor_passes/model_2_AcmeHead_rank_0_ep6_cp2_dp1": (2, "AcmeHead", 0, "ep6_cp2_dp1"),
        "failing_vendor_pass/model_1_acme_moe_v2_rank_0_ep6_cp2_dp1": (1, "acme_moe_v2", 0, "ep6_cp2_dp1"),
        "offload_sidecars/model_1_TinyBlock_rank_0_ws1": (1, "TinyBlock", 0, "ws1"),
    }
    assert len(find_runs(HERE)) == 9
    # the walk does not go into the sidecars (magi_cache/, triton_cache/)
    assert [f.path for f in find_runs(SIDECARS)] == [SIDECARS / "magi_depyf" / WARM.parent.name / WARM.name]


def test_runs_rows_and_labels_carry_the_topology():
    row = run_row(_load(TWO / "magi_depyf" / "run_20261128_043859" / "model_1_TinyBlock_rank_1_ws2"))
    assert (row["model_index"], row["tag"], row["rank"], row["topology"]) == (1, "TinyBlock", 1, "ws2")
    assert row["label"] == "model_1 TinyBlock · ws2" and row["run_id"] == "run_20261128_043859"
    out = _cli("runs", "--json", str(HERE))
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert {(r["rank"], r["topology"]) for r in rows} == {(0, "ws1"), (0, "ep2_cp1_dp1"), (0, "ws2"), (1, "ws2"),
                                                         (0, "ep6_cp2_dp1")}
    assert all(r["model_index"] in (1, 2) and r["tag"] for r in rows)


def test_the_suffix_changes_nothing_but_the_name(tmp_path):
    """The same run dir renamed to the older form reads the same: status, events, failures, every key of triage."""
    for src, older in ((COLD, "model_1_TinyBlock_rank_0"),
                       (FAILING / "magi_depyf" / "run_20261128_043949" / "model_1_acme_moe_v2_rank_0_ep6_cp2_dp1",
                        "model_1_acme_moe_v2_rank_0")):
        old = tmp_path / src.parent.name / older
        shutil.copytree(src, old)
        a, b = _load(src), _load(old)
        assert run_label(b) == run_label(a).split(" · ")[0] and b.name_info.topology is None
        assert [(e.name, e.kind, e.lifecycle, e.phase, e.scope) for e in a.events] == \
            [(e.name, e.kind, e.lifecycle, e.phase, e.scope) for e in b.events]
        ja, jb = triage_json(a), triage_json(b)
        for k in ("status", "events", "summary", "failures", "restarts", "checks"):
            assert json.dumps(ja[k]).replace(str(src), "P") == json.dumps(jb[k]).replace(str(old), "P"), k


# -- 1. ranks of one job --------------------------------------------------------------------------------------

def test_the_two_ranks_form_a_job():
    jobs, loners = find_jobs(TWO)
    assert loners == [] and len(jobs) == 1
    j = jobs[0]
    assert (j.label, j.model_index, j.topology, [r.rank for r in j.ranks]) == ("TinyBlock", 1, "ws2", [0, 1])
    assert not j.diverged
    doc = ranks_json(jobs)
    assert doc["jobs"][0]["topology"] == "ws2" and doc["jobs"][0]["status"] == "consistent"
    out = _cli("ranks", str(TWO))
    assert out.returncode == 0, out.stderr
    assert "TinyBlock (model 1, topology ws2) · 2 ranks · consistent" in out.stdout


def test_another_topology_of_the_same_model_is_another_job(tmp_path):
    """A ws1 run and a ep2_cp1_dp1 run of model_1 rank 0 beside the ws2 job: neither joins it."""
    root = tmp_path / "root"
    shutil.copytree(TWO, root)
    shutil.copytree(COLD, root / "magi_depyf" / COLD.parent.name / COLD.name)
    shutil.copytree(ASSERTED, root / "magi_depyf" / ASSERTED.parent.name / ASSERTED.name)
    jobs, loners = find_jobs(root)
    assert [(j.topology, [r.rank for r in j.ranks]) for j in jobs] == [("ws2", [0, 1])]
    assert sorted(Path(p).name for p in loners) == [ASSERTED.name, COLD.name]
    assert jobs[0].superseded == []


# -- 2. new and unknown lifecycles pair, nest, skip and fail ------------------------------------------------

def test_new_passes_and_lifecycles_pair_in_every_subgraph():
    run = _load(VENDOR)
    spans = _spans(run)
    assert not [s for s in spans if s.status == "open" or s.before is None and s.status != "skip"]
    by = {}
    for s in spans:
        by.setdefault((s.lifecycle, s.first.scope), []).append(s.status)
    for scope in ("subgraph_0", "subgraph_1"):
        for lc in ("ConvChannelsLastPass", "ND_TilingWorkaroundPass", "PostCleanupPass", "pass_context"):
            assert "ok" in by[(lc, scope)], (lc, scope)
    for lc in ("weight_pipeline", "FoldPythonScalarConstantsPass", "EliminateIdentityViewCastPass",
               "acme.quantize-weights", "AcmeQuantStubPass"):
        assert by[(lc, "fullgraph")] == ["ok", "ok"], lc  # the first try and the retry after the restart
    assert by[("AcmeRopeFusionPass", "subgraph_0")] == ["skip"]
    assert by[("AcmeRopeFusionPass", "subgraph_1")] == ["ok"]
    assert by[("RemoveItemPass", "fullgraph")] == ["ok", "skip"]
    # the vendor's lifecycle nests inside the full-graph manager and holds its pass
    quant = next(s for s in spans if s.lifecycle == "acme.quantize-weights")
    stub = next(s for s in spans if s.lifecycle == "AcmeQuantStubPass")
    mgr = next(s for s in spans if s.lifecycle == "full_graph_manager")
    assert mgr.depth < quant.depth < stub.depth
    assert quant.first.frag == "acme_quantize_weights" and quant.first.name == "fullgraph_before_acme_quantize_weights"
    assert run.status == "recovered" and not [c for c in run.triage.problems if not c.recovered]
    assert len(run.triage.restarts) == 1 and run.triage.restarts[0].recovered
    head = _load(HEAD)
    assert [s.lifecycle for s in _spans(head) if s.status == "skip"] == [
        "RemoveItemPass", "FoldPythonScalarConstantsPass", "EliminateIdentityViewCastPass", "AcmeRopeFusionPass"]
    assert head.status == "ok"
    assert {ev.kind for ev in head.events if ev.phase == "skip"} == {"skip"}


def test_graph_splitting_disabled_compiles_subgraph_0_only():
    for rank in (0, 1):
        run = _load(TWO / "magi_depyf" / "run_20261128_043859" / f"model_1_TinyBlock_rank_{rank}_ws2")
        assert {ev.scope for ev in run.events} == {"fullgraph", "subgraph_0"}
        split = [ev for ev in run.events if ev.name == "fullgraph_after_graph_split"]
        assert [run.attributes(ev)["num_subgraphs"] for ev in split] == [1, 1]
        assert run.status == "recovered"


def test_a_failing_unknown_pass_is_an_unrecovered_failure_with_its_exception():
    (found,) = find_runs(FAILING)
    run = _load(found.path)
    assert run.status == "failed"
    first = next(c for c in run.triage.cascades if not c.recovered and not c.restart)
    assert first.head.event.name == "subgraph_1_failed_acmeropefusionpass"
    assert first.head.event.lifecycle == "AcmeRopeFusionPass" and first.head.event.subgraph_index == 1
    assert first.head.exception_type == "ValueError"
    assert first.head.message.startswith("rope pattern matched a mul whose input has stride (96, 1)")
    assert [m.event.lifecycle for m in first.members[1:]] == [
        "compiler_compile", "pass_context", "compiler_manager_compile", "piecewise_compile", "magi_backend_call"]
    doc = triage_json(run)
    assert doc["status"] == "failed"
    (f,) = doc["failures"]  # (first_failure is the first cascade, the restart before it included)
    assert (f["name"], f["exception_type"], f["recovered"], len(f["cascade"])) == \
        ("subgraph_1_failed_acmeropefusionpass", "ValueError", False, 5)
    assert doc["checks"][0]["level"] == "fail" and "#75 AcmeRopeFusionPass: ValueError" in doc["checks"][0]["message"]
    out = _cli("triage", str(FAILING))
    assert out.returncode == 1
    assert "AcmeRopeFusionPass: ValueError: rope pattern matched" in out.stdout


def test_a_lifecycle_name_never_gives_a_kind(tmp_path):
    """Unknown lifecycle names that look like torch's point events (a ``restart`` in them, ``cache_hit_…``,
    ``…graph_break``, ``…recompile``) pair like any other and count as no restart, hit, break or recompile:
    the vendor run with its lifecycles renamed so reads as it did."""
    renames = {"AcmeRopeFusionPass": "RestartSafeRopePass", "acme.quantize-weights": "cache_hit_probe",
               "AcmeQuantStubPass": "fix_graph_break", "ND_TilingWorkaroundPass": "maybe_recompile"}
    frags = {"acmeropefusionpass": "restartsaferopepass", "acme_quantize_weights": "cache_hit_probe",
             "acmequantstubpass": "fix_graph_break", "nd_tilingworkaroundpass": "maybe_recompile"}
    dst = tmp_path / "magi_depyf" / VENDOR.parent.name / VENDOR.name
    shutil.copytree(VENDOR / "compiled_functions", dst / "compiled_functions")
    (dst / "timeline_events").mkdir(parents=True)
    lines = []
    for line in (VENDOR / "timeline_events" / "timeline.jsonl").read_text().splitlines():
        o = json.loads(line)
        a = o["attributes"]
        if a.get("lifecycle_name") in renames:
            a["lifecycle_name"] = renames[a["lifecycle_name"]]
            for old, new in frags.items():
                if o["name"].endswith("_" + old):
                    o["name"] = o["name"][: -len(old)] + new
        lines.append(json.dumps(o))
    (dst / "timeline_events" / "timeline.jsonl").write_text("\n".join(lines) + "\n")
    a, b = _load(VENDOR), _load(dst)
    assert any(ev.name == "fullgraph_before_cache_hit_probe" for ev in b.events)
    assert [e.kind for e in a.events] == [e.kind for e in b.events]
    assert [(s.status, s.depth) for s in _spans(a)] == [(s.status, s.depth) for s in _spans(b)]
    ta, tb = a.triage, b.triage
    for k in ("cache_hits", "cache_misses", "graph_breaks", "recompiles", "restarts", "failures"):
        assert len(getattr(ta, k)) == len(getattr(tb, k)), k
    assert b.status == a.status == "recovered"


# -- 3. the cache sidecars feed the cache section -----------------------------------------------------------

def test_subgraph_indices_and_host_slots_are_read_without_ast():
    text = ("{   (None, 0, 'inductor_standalone'): (   'artifact_shape_None_subgraph_0',\n"
            "                                          '/h/magi_cache/m/abc/artifact_shape_None_subgraph_0',\n"
            "                                          2),\n"
            "    (4, 1, 'eager', 's4x32'): (None, \"/h/it's/artifact_shape_4_subgraph_1\", 0),\n"
            "    (8, 2, 'inductor_standalone'): ('artifact_shape_8_subgraph_2', '/h/artifact_shape_8_subgraph_2')}")
    got = [(e.runtime_shape, e.graph_index, e.backend, e.key, e.artifact, e.restart_count)
           for e in parse_indices(text)]
    assert got == [(None, 0, "inductor_standalone", "artifact_shape_None_subgraph_0", "artifact_shape_None_subgraph_0", 2),
                   (4, 1, "eager", None, "artifact_shape_4_subgraph_1", 0),
                   (8, 2, "inductor_standalone", "artifact_shape_8_subgraph_2", "artifact_shape_8_subgraph_2", 0)]
    hs = parse_host_slots((next((SIDECARS / "magi_cache").glob("*/*/host_slots.py"))).read_text())
    assert (hs.slots, hs.resident, hs.nbytes) == (4, 1, 12288 + 4096 + 8192 + 8192)
    assert hs.names == ["qkv.weight", "out.weight", "fc1.weight", "fc2.weight"]


def test_sidecars_of_a_run():
    sc = read_sidecars(COLD)
    assert sc is not None and sc.own is not None and sc.triton_kernels is None
    (h,) = sc.own.hashes
    assert h.name == "6b351ccf21" and [(e.graph_index, e.restart_count, e.present) for e in h.entries or ()] == \
        [(0, 1, True), (1, 0, True)]
    assert [o.name for o in sc.others] == ["model_1_TinyBlock_rank_0_ep2_cp1_dp1"]
    assert read_sidecars(HERE / "nowhere" / "model_1_x_rank_0") is None  # not in a cache root
    side = read_sidecars(SIDECARS / "magi_depyf" / WARM.parent.name / WARM.name)
    assert side is not None and side.triton_kernels == 2 and side.host_slots is not None


def test_cold_warm_and_asserted_misses_are_explained():
    cold = run_misses_explained(_load(COLD))
    assert [m.line() for m in cold] == [
        "magi miss #16 (subgraph 0, dynamic shape): first compile of this piece: stored by this run (#53)",
        "magi miss #38 (subgraph 0, dynamic shape): first compile of this piece: stored by this run (#53)",
        "magi miss #57 (subgraph 1, dynamic shape): first compile of this piece: stored by this run (#72)"]
    assert [d["change"] for d in cold[0].differs] == [
        "1 recorded: a warm run skips 1 load(s) of it to replay the restart"]
    (warm,) = run_misses_explained(_load(WARM))
    assert warm.reason == "cache_entry_load_miss"
    assert "load skipped on purpose, to replay a Dynamo restart its bake saw (restart count 1)" in warm.line()
    (asserted,) = run_misses_explained(_load(ASSERTED))
    assert asserted.assert_index == 17 and asserted.assert_error.startswith(
        "MAGI_COMPILE_ASSERT_CACHE_HIT: cache miss for runtime_shape=None graph_index=0.")
    assert asserted.line() == ("magi miss #16 (subgraph 0, dynamic shape): MAGI_COMPILE_ASSERT_CACHE_HIT (#17): "
                               "baked for topology ws1 only, not ep2_cp1_dp1 (a cache per topology)")
    assert [d["component"] for d in asserted.differs] == ["MAGI_COMPILE_ASSERT_CACHE_HIT", "magi_cache",
                                                          "other topology"]


def test_the_cache_section_and_json_say_it():
    out = _cli("triage", str(ASSERTED))
    assert out.returncode == 1
    section = out.stdout.split("  cache:", 1)[1].split("  compile time", 1)[0]
    assert "MAGI_COMPILE_ASSERT_CACHE_HIT (#17): baked for topology ws1 only" in section
    assert "other topology: magi_cache/model_1_TinyBlock_rank_0_ws1/6b351ccf21 has artifact_shape_None_subgraph_0" \
        in section
    doc = json.loads(_cli("triage", "--json", str(SIDECARS)).stdout)
    (m,) = doc["cache"]["misses_explained"]
    assert m["cache"] == "magi" and m["reason"] == "cache_entry_load_miss" and m["graph_index"] == 0
    assert [d["component"] for d in m["differs"]] == ["restart count", "host_slots.py", "triton_cache"]
    assert m["magi_cache"]["triton_cache"] == {"kernels": 2, "capped": False}
    (h,) = m["magi_cache"]["own"]["hashes"]
    assert h["host_slots"]["slots"] == 4 and [e["restart_count"] for e in h["entries"]] == [1, 0]
    text = _cli("triage", str(SIDECARS)).stdout
    assert "host_slots.py: 4 weight(s) baked into host slots (32.0 KiB, 1 kept resident)" in text
    assert "triton_cache: 2 Triton kernel folder(s) in" in text


def test_a_magi_run_without_sidecars_is_explained_by_its_events(tmp_path):
    """A run copied out of its cache root: its misses still read from its own events, no sidecar row."""
    dst = tmp_path / "model_1_TinyBlock_rank_0_ws1"
    shutil.copytree(COLD, dst)
    ms = run_misses_explained(_load(dst))
    assert [m.summary for m in ms][:1] == ["first compile of this piece: stored by this run (#53)"]
    assert all(not m.differs and m.sidecars is None for m in ms)
    a = analyse(_load(dst))
    assert a.cache["counts"]["misses"] == 3
