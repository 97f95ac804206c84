"""Issue 31 (8): the culprit step shows its own diff, the lines the culprit application changed (the runs with
applications ``0..N-1`` and ``0..N``, both made by the bisection), not the whole stage's before/after.

No torch: the bisect runs in a world of fake trials (``run_trial`` replaced) whose run directories are
written by the tracer's own writer. Three post-grad applications in compile 0/0: #0 rewrites ``relu`` as
``clamp_min`` (harmless), #1 turns the ``add`` into a ``sub`` (the bug), #2 renames a node (harmless). The
whole stage's diff shows all three; the culprit's own shows only #1's line. The real-torch bisects in
test_bisect.py check the same on a post-grad pass and a decomposition."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from magi_tui.bisect_cli import result_text
from magi_tui.live import bisect as bisect_module
from magi_tui.live.bisect import Bisector
from magi_tui.live.trial import Application, Overrides, TrialResult
from magi_tui.model.outputs.bisect_view import culprit_diff, culprit_lines, culprit_pass_diff, graph_diff_lines
from tests.support.timeline import record_run

BASE = """\
def forward(self, arg0_1, arg1_1):
    relu = torch.ops.aten.relu.default(arg0_1)
    add = torch.ops.aten.add.Tensor(relu, arg1_1)
    sin = torch.ops.aten.sin.default(add)
    return (sin,)
"""

#: what each application does to the graph's text
APPLY = [
    ("relu.default(arg0_1)", "clamp_min.default(arg0_1, 0)"),
    ("add.Tensor(relu, arg1_1)", "sub.Tensor(relu, arg1_1)"),
    ("sin = torch.ops.aten.sin.default(add)", "sin_1 = torch.ops.aten.sin.default(add)"),
]
CULPRIT = 1


def _graph(applied: int) -> str:
    """The graph after applications 0..applied (-1: none)."""
    text = BASE
    for old, new in APPLY[: applied + 1]:
        text = text.replace(old, new)
    return text


class World:
    """Fake trials: the program fails (exit 1) when application #1 is applied, and only on Inductor."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.made: list[Overrides] = []

    def run_dir(self, applied: int) -> Path:
        cid = {"compile_id": "0/0", "frame": "f", "scope": "fullgraph"}
        return record_run(self.root / f"run_{len(self.made)}", [
            ("fullgraph_before_compile", {**cid, "lifecycle_name": "compile"}),
            ("fullgraph_before_post_grad_passes", {**cid, "lifecycle_name": "post_grad_passes"},
             {"post_grad_graph.py": _graph(-1)}),
            ("fullgraph_after_post_grad_passes", {**cid, "lifecycle_name": "post_grad_passes", "duration_ms": 1.0},
             {"post_grad_graph.py": _graph(applied)}),
            ("fullgraph_after_inductor_codegen", cid, {"inductor_output.py": f"# code of {applied}\n"}),
            ("fullgraph_after_compile", {**cid, "lifecycle_name": "compile", "duration_ms": 2.0}),
        ])

    def __call__(self, command, ov: Overrides = Overrides(), **_kw) -> TrialResult:
        self.made.append(ov)
        if ov.no_compile or ov.backend in ("eager", "aot_eager", "aot_eager_decomp_partition"):
            return TrialResult(ov, list(command), 0, 0.01, stdout="1.0\n")
        applied = len(APPLY) - 1
        if ov.bisect is not None:
            assert ov.bisect[:2] == ("inductor", "post_grad_passes")
            applied = min(applied, ov.bisect[2])
        if ov.inductor_config:
            applied = len(APPLY) - 1
        bad = applied >= CULPRIT
        apps = [Application("inductor", "post_grad_passes", n, f"pass_{n}", "0/0") for n in range(len(APPLY))]
        return TrialResult(ov, list(command), 1 if bad else 0, 0.01, stdout="1.0\n" if not bad else "-1.0\n",
                           stderr="ValueError: wrong" if bad else "", run_dir=self.run_dir(applied),
                           applications=apps)


@pytest.fixture
def bisected(tmp_path, monkeypatch):
    world = World(tmp_path / "runs")
    monkeypatch.setattr(bisect_module, "run_trial", world)
    res = Bisector(["python", "prog.py"], tmp_path, cancel=threading.Event()).run()
    return res, world


def test_the_culprit_application_shows_its_own_diff_not_the_stage(bisected):
    res, world = bisected
    assert res.error is None and res.verdict == "culprit"
    c = res.culprit
    assert (c["backend"], c["subsystem"], c["bisect_number"], c["applications"]) == (
        "inductor", "post_grad_passes", CULPRIT, 3)
    g = c["graph"]
    own = g["pass_diff"]
    assert (own["application"], own["event"], own["file"]) == (CULPRIT, "fullgraph_after_post_grad_passes",
                                                               "post_grad_graph.py")
    assert (own["removed"], own["added"]) == (1, 1)
    changed = [ln for ln in own["lines"] if ln[:2] in ("- ", "+ ")]
    assert changed == ["-     add = torch.ops.aten.add.Tensor(relu, arg1_1)",
                       "+     add = torch.ops.aten.sub.Tensor(relu, arg1_1)"]
    # the runs with 0..0 (it passed) and 0..1 (it reproduced): both made by the bisection, none more
    assert (own["before"]["limit"], own["after"]["limit"]) == (CULPRIT - 1, CULPRIT)
    before = Path(own["before"]["run"]) / own["before"]["file"]
    after = Path(own["after"]["run"]) / own["after"]["file"]
    assert before.read_text() == _graph(CULPRIT - 1) and after.read_text() == _graph(CULPRIT)
    assert len(world.made) == res.runs
    # the whole stage's diff is still named (all three applications' lines)
    stage = graph_diff_lines(Path(g["run"]), g["before"], Path(g["run"]), g["after"])
    assert not isinstance(stage, str) and (stage[1], stage[2]) == (3, 3)
    saved = json.loads((Path(res.directory) / "bisect.json").read_text())
    assert saved["culprit"]["graph"]["pass_diff"] == own


def test_the_text_and_the_screen_lines_show_it(bisected):
    res, _world = bisected
    text = result_text(res)
    assert "  its diff:  what application #1 alone changed in post_grad_graph.py (-1 +1;" in text
    assert "      -     add = torch.ops.aten.add.Tensor(relu, arg1_1)" in text
    assert "      +     add = torch.ops.aten.sub.Tensor(relu, arg1_1)" in text
    own = text.split("  its diff:")[1].split("  diff:")[0].splitlines()[1:]
    changed = [ln.strip() for ln in own if ln.startswith(("      - ", "      + "))]
    assert len(changed) == 2 and not any("clamp_min" in ln or "sin_1" in ln for ln in changed)
    assert "  diff:      timeline_events/files/0001_fullgraph_before_post_grad_passes/post_grad_graph.py  ->  " \
           "timeline_events/files/0002_fullgraph_after_post_grad_passes/post_grad_graph.py  (the whole stage)" in text
    lines = culprit_lines(res.as_json())
    assert "its own diff: post_grad_graph.py -1 +1 line(s) (application #1 alone; d shows it)" in lines
    assert len(lines) <= 10


def test_d_opens_the_culprit_applications_own_diff(bisected):
    res, _world = bisected
    obj = res.as_json()
    found = culprit_pass_diff(obj)
    assert not isinstance(found, str)
    before, after, left_run, right_run = found
    own = obj["culprit"]["graph"]["pass_diff"]
    assert left_run == Path(own["before"]["run"]) and right_run == Path(own["after"]["run"]) != left_run
    assert before.path.read_text() == _graph(CULPRIT - 1) and after.path.read_text() == _graph(CULPRIT)
    assert "post_grad_passes applications 0..0" in before.title and "0..1" in after.title
    # a bisect.json without it (or from before): the stage's diff, as before
    del obj["culprit"]["graph"]["pass_diff"]
    assert isinstance(culprit_pass_diff(obj), str)
    assert not isinstance(culprit_diff(obj), str)


def test_a_path_leaving_its_run_is_refused(bisected):
    res, _world = bisected
    obj = res.as_json()
    obj["culprit"]["graph"]["pass_diff"]["after"]["file"] = "../../../etc/passwd"
    assert "cannot open" in culprit_pass_diff(obj)
    assert "cannot open" in graph_diff_lines(Path(obj["culprit"]["graph"]["run"]), "../../x", Path("/"), "y")


async def test_the_bisect_screen_d_shows_the_own_diff(bisected):
    from magi_tui.ui.app import MagiApp
    from magi_tui.ui.screens.bisect import BisectScreen
    from magi_tui.ui.screens.diff import DiffScreen
    from tests.support.pilot import screen_text, wait_for

    res, _world = bisected
    app = MagiApp(Path(res.directory))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BisectScreen) and app.screen.result is not None,
                       what="the bisect screen")
        await wait_for(pilot, lambda: "its own diff: post_grad_graph.py -1 +1" in screen_text(app),
                       what="the culprit's lines on screen")
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen) and app.screen.diff is not None,
                       what="the diff")
        d = app.screen.diff
        assert (d.added, d.removed) == (1, 1)
        assert "sub.Tensor" in screen_text(app)
