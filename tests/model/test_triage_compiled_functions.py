"""Issue #10 item 7 and the guard diff: upstream runs keep their evidence in ``compiled_functions/`` only
(cache entries, resume functions); recompiles are counted from cache entries, graph breaks from resume
functions, and consecutive entries' guards are compared with addresses and generated names masked."""

from __future__ import annotations

from magi_tui.model import RunModel
from magi_tui.model.analysis.checks import analyse
from magi_tui.model.analysis.frames import analyse_compiled_functions
from magi_tui.model.analysis.guards import diff_guards, normalise_guard_line, read_guards
from magi_tui.model.outputs.report import triage_json, triage_text


def test_recompile_explain_counts_from_cache_entries_and_resume_functions(fx):
    run = RunModel(fx / "recompile_explain").load()
    assert run.triage.recompiles == [] and run.triage.graph_breaks == []   # the timeline has none
    a = analyse(run)
    by_name = {f.name: f for f in a.frames}
    assert by_name["toy_with_break"].compiles == 3 and by_name["forward"].compiles == 2
    # 2 (toy_with_break) + 2 (resume at line 13) + 1 (resume at line 15) + 1 (forward)
    assert len(a.recompiles) == 6
    sites = {(b.line, b.function): b.count for b in a.worklist}
    assert sites == {(13, "toy_with_break"): 3, (15, "toy_with_break"): 3}
    assert all(b.file.endswith("recompile_variant.py") for b in a.worklist)
    j = triage_json(run)
    assert j["summary"]["recompiles"] == 6 and j["summary"]["graph_breaks"] == 6
    text = triage_text(run)
    assert "recompiles: 6" in text and "graph breaks: 2 site(s), 6 break(s)" in text


def test_dtype_recompile_explained_by_guard_diff(fx):
    a = analyse(RunModel(fx / "recompile_explain").load())
    toy = [r for r in a.recompiles if r.frame.startswith("toy_with_break ")]
    assert [r.entries for r in toy] == [
        ("compiled_functions/toy_with_break/entry_2", "compiled_functions/toy_with_break/entry_1"),
        ("compiled_functions/toy_with_break/entry_1", "compiled_functions/toy_with_break/entry_0")]
    shape, dtype = toy
    # entry_1 -> entry_0 (the newest): the only real difference is the dtype
    assert dtype.guard_diff.changes == [("torch.float32", "torch.float64")]
    assert len(dtype.guard_diff.removed) == len(dtype.guard_diff.added) == 1
    p = dtype.primary
    assert (p.kind, p.subject, p.expected, p.actual) == ("dtype", "a", "torch.float32", "torch.float64")
    assert "cast it before the call" in p.suggestion
    # entry_2 -> entry_1 differ only in addresses / generated names (and text past the 120-char cut)
    assert shape.guard_diff.empty and shape.primary is None
    assert "no difference once addresses and generated names are masked" in triage_text(
        RunModel(fx / "recompile_explain").load())


def test_guard_noise_is_masked(fx):
    base = fx / "recompile_explain" / "compiled_functions" / "forward"
    d = diff_guards(read_guards(base / "entry_1" / "guards.txt"), read_guards(base / "entry_0" / "guards.txt"))
    assert d.empty  # raw files differ in __builtins_dict___31/29 and 0x7f… addresses only
    raw_a = (base / "entry_1" / "guards.txt").read_text()
    raw_b = (base / "entry_0" / "guards.txt").read_text()
    assert raw_a != raw_b
    assert normalise_guard_line("G['__builtins_dict___20']['getattr'] at 0x7f0de004cbf0") == \
        "G['__builtins_dict___N']['getattr'] at 0x…"
    assert normalise_guard_line("__compiled_fn_21_d76c2ede_c324_436b_b17c_b3192debf7eb") == "__compiled_fn_N"


def test_same_name_resume_functions_are_distinct_frames(fx):
    """toy_explain: two ``torch_dynamo_resume_in_toy_example_at_35`` (offsets 102 and 108) are two frames,
    one graph-break site."""
    idx = analyse_compiled_functions(fx / "toy_explain")
    names = [(f.code.name, f.code.resume_offset) for f in idx.frames]
    assert names == [("toy_example", None), ("torch_dynamo_resume_in_toy_example_at_35", 102),
                     ("torch_dynamo_resume_in_toy_example_at_35", 108)]
    a = analyse(RunModel(fx / "toy_explain").load())
    assert all(f.compiles == 1 for f in a.frames) and len(a.frames) == 3
    assert not any("compiled 2×" in c.message for c in a.checks)
    assert [(b.line, b.count) for b in a.worklist] == [(35, 1)]
