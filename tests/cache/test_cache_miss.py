"""Issue 34: the second run's triage alone says why the cache missed, in the user's terms, from run dirs
and from TORCH_TRACE logs (fixtures: tests/cache/fixtures/README.md); the controls name nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from magi_tui.model.analysis.cache_verdict import cache_miss
from magi_tui.model.analysis.checks import TimelineFold, analyse
from magi_tui.model.run import RunModel

#: run number (README.md's table) -> (state, the first factor's text, or None: names nothing)
EXPECTED = {
    1: ("cold", None),
    2: ("warm", None),
    3: ("missed", "Inductor config max_fusion_size: 64 → 32"),
    5: ("missed", "TORCH_COMPILE_CACHE_KEY_TAG changed (value not shown)"),
    7: ("missed", "the graph changed: relu → sigmoid (prog.py:37)"),
    9: ("missed", "inputs self.lin.weight, self.lin.bias, x: dtype float32 → float64"),
    11: ("missed", "input x: shape (4, 16) → (8, 16)"),
    13: ("missed", "AOTAutograd config (torch._functorch.config) changed, past what torch recorded (the "
                   "recorded text is the same on both sides: cut at 1,024 characters)"),
    15: ("missed", "the compile mode changed (torch.compile(mode=...): max_autotune False → True, "
                   "coordinate_descent_tuning False → True)"),
    17: ("missed", "custom pass post_grad_custom_post_pass: None → count-nodes-v1"),
    19: ("bypassed", None),
    21: ("missed", "Inductor config deterministic: False → True"),
    23: ("cold", None),
    24: ("disabled", None),
}


def _runs(root: Path, source: str) -> list[Path]:
    if source == "runs":
        return sorted((root / "runs" / "magi_depyf").glob("run_*/model_1_seeded_rank_0"))
    return sorted((root / "tt").glob("*.log"))


@pytest.mark.parametrize("source", ["runs", "tt"])
def test_the_second_run_alone_names_what_changed(seeded, source):
    paths = _runs(seeded, source)
    assert len(paths) == 24
    for n, (state, first) in EXPECTED.items():
        v = cache_miss(RunModel(paths[n - 1]).load(fold=TimelineFold()))
        assert v.state == state, (n, v.text)
        if first is None:
            assert v.factor_texts == [], (n, v.factor_texts)
        else:
            assert v.factor_texts[0] == first, (n, v.factor_texts)
            assert v.baseline is not None and v.baseline.run is not None
            # the baseline is the warm rerun just before (the last earlier run with this cache dir)
            assert v.baseline.run.path == paths[n - 2]
        for f in v.factor_texts:    # never the same text on both sides of an arrow
            if " → " in f:
                left, right = f.split(" → ", 1)
                assert left.rsplit(" ", 1)[-1] != right.split(" ", 1)[0].rstrip(")"), f


def test_cold_disabled_and_bypassed_say_so(seeded):
    paths = _runs(seeded, "tt")
    cold = cache_miss(RunModel(paths[22]).load(fold=TimelineFold()))
    assert cold.text.startswith("cache cold: no earlier run of this program used /tmp/c34/seed/out/cache_other")
    off = cache_miss(RunModel(paths[23]).load(fold=TimelineFold()))
    assert off.text.startswith("caches disabled (TORCHINDUCTOR_FORCE_DISABLE_CACHES=1)")
    frozen = cache_miss(RunModel(paths[18]).load(fold=TimelineFold()))
    assert "Cannot cache a graph with freezing enabled" in frozen.text   # torch's own words


def test_the_rule_warns_on_a_changed_key_and_not_on_a_control(seeded):
    paths = _runs(seeded, "runs")
    rule = {n: next(c for c in analyse(RunModel(paths[n - 1]).load(fold=TimelineFold())).checks
                    if c.rule == "cache-misses") for n in (1, 2, 3, 23)}
    assert rule[3].level == "warn" and "max_fusion_size: 64 → 32" in rule[3].message
    assert all(rule[n].level == "ok" for n in (1, 2, 23))
    assert "cache cold" in rule[1].message and "cache warm" in rule[2].message


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "magi_tui", *args], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[2])


def test_triage_json_cache_miss_and_against(seeded, tmp_path):
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "07_op.log").write_bytes((seeded / "tt" / "07_op.log").read_bytes())
    out = json.loads(_cli("triage", str(alone / "07_op.log"), "--json").stdout)
    assert out["cache_miss"]["state"] == "cold" and out["cache_miss"]["factors"] == []
    proc = _cli("triage", str(alone / "07_op.log"), "--json", "--against", str(seeded / "tt"))
    cm = json.loads(proc.stdout)["cache_miss"]
    assert cm["state"] == "missed" and cm["baseline"]["found"] == "against"
    assert cm["baseline"]["run"].endswith("06_base.log")
    assert cm["factors"] == ["the graph changed: relu → sigmoid (prog.py:37)"]
    assert {m["cache"] for m in cm["misses"]} == {"aotautograd", "fx_graph"}
    text = _cli("triage", str(alone / "07_op.log"), "--against", str(seeded / "tt")).stdout
    assert "cache missed: the graph changed: relu → sigmoid (prog.py:37)" in text
    bad = _cli("triage", str(alone), "--against", str(tmp_path / "nowhere"))
    assert bad.returncode == 2 and "--against: no such file or directory" in bad.stderr


def test_a_miss_row_carries_its_factor(seeded):
    from magi_tui.model.outputs.triage_sections import triage_sections

    run = RunModel(_runs(seeded, "runs")[10]).load()
    secs = {s.id: s for s in triage_sections(run, analyse(run), panel=True)}
    rows = [r.text for r in secs["cache_misses"].rows]
    assert rows and all("because input x: shape (4, 16) → (8, 16)" in t for t in rows)
    assert secs["cache_why"].rows[0].text.startswith("cache missed: input x: shape (4, 16) → (8, 16)")


def test_a_log_without_lookups_or_repro_ends_the_env_scan(tmp_path):
    """A log under the scan's bound with no fx_graph_runnable (no Inductor compile) reads as no env, at once
    (the scan read its last chunk again and again: triage --json of such a log never ended)."""
    import threading

    from magi_tui.model.sources.cache_dir import compile_env

    log = Path(__file__).resolve().parents[1] / "torchtrace" / "logs" / "jit_reset.log"
    got: list = []
    t = threading.Thread(target=lambda: got.append(compile_env(log, None)), daemon=True)
    t.start()
    t.join(10)
    assert got == [{}], "compile_env did not return on a log with no repro script"
    out = json.loads(_cli("triage", str(log), "--json").stdout)
    assert out["cache_miss"]["state"] == "none"
