"""Issue 34.5 (the model side): a missed lookup beside the one it was compared with, key component by
component, the differing ones first in the user's terms, the same ones after (folded); real seeded runs
(tests/cache/fixtures/README.md)."""

from __future__ import annotations

from pathlib import Path

from magi_tui.model.analysis.cache_lookups import key_rows, lookups_diff
from magi_tui.model.analysis.cache_verdict import cache_miss
from magi_tui.model.run import RunModel


def _miss(seeded: Path, n: int, cache: str = "fx_graph"):
    path = sorted((seeded / "runs" / "magi_depyf").glob("run_*/model_1_seeded_rank_0"))[n - 1]
    v = cache_miss(RunModel(path).load())
    return next(m for m in v.misses if m.explained.miss.cache == cache)


def test_a_config_change_comes_first_and_the_same_components_fold(seeded):
    m = _miss(seeded, 3)
    rows = key_rows(m.explained, m.names)
    assert [r.label for r in rows if r.differs] == ["Inductor config max_fusion_size"]
    assert rows[0].old == "64" and rows[0].new == "32"
    assert len(rows) == len(m.explained.miss.components)
    d = lookups_diff(m.explained, m.names)
    first = d.unified[:3]
    assert [r.kind for r in first] == ["delete", "insert", "fold"]
    assert first[0].left == "Inductor config max_fusion_size: 64"       # the baseline's (−) first
    assert first[1].right == "Inductor config max_fusion_size: 32"      # this run's (+)
    assert first[2].folded == len(rows) - 1
    whole = lookups_diff(m.explained, m.names, fold_same=False)
    assert not any(r.kind == "fold" for r in whole.rows)
    assert [r.kind for r in whole.rows[1:]] == ["equal"] * (len(rows) - 1)
    assert "Inductor config max_fusion_size: 64" not in whole.b


def test_inputs_are_named_and_the_key_tag_value_never_shown(seeded):
    m = _miss(seeded, 9, "aotautograd")
    differing = [r.label for r in key_rows(m.explained, m.names) if r.differs]
    assert differing == ["input self.lin.weight (example_inputs[0])", "input self.lin.bias (example_inputs[1])",
                         "input x (example_inputs[2])"]
    d = lookups_diff(m.explained, m.names)
    assert len(d.hunks) == 3
    assert "dtype=torch.float32" in d.rows[0].left and "dtype=torch.float64" in d.rows[0].right
    tag = _miss(seeded, 5)
    row = next(r for r in key_rows(tag.explained, tag.names) if r.differs)
    assert row.label.startswith("TORCH_COMPILE_CACHE_KEY_TAG")
    assert row.old == row.new == "(value not shown)" and not row.same_text
    assert tag.explained.miss.components["cache_key_tag"][1] == "v2"    # recorded, and not shown
    shown = lookups_diff(tag.explained, tag.names)
    assert not any(ln.endswith(": v2") for ln in shown.b) and shown.rows[0].right.endswith("(value not shown)")


def test_a_graph_change_shows_the_code_and_a_cut_value_says_so(seeded):
    m = _miss(seeded, 7)
    d = lookups_diff(m.explained, m.names)
    assert d.rows[0].left.startswith("the graph (gm)")
    gone = [r.left for r in d.unified if r.kind == "delete"]
    came = [r.right for r in d.unified if r.kind == "insert"]
    assert any("aten.relu" in t for t in gone) and any("aten.sigmoid" in t for t in came)
    assert not any("sigmoid" in t for t in gone)
    aot = _miss(seeded, 13, "aotautograd")
    row = next(r for r in key_rows(aot.explained, aot.names) if r.differs)
    assert row.same_text and row.old == row.new
    assert "the same text, torch's hash differs: cut at 1,024 characters" in lookups_diff(aot.explained).rows[0].left
