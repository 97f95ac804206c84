"""The triage findings are built once (model/outputs/triage_sections.py) and the panel, the text report and
``triage --json`` show that one structure: the same sections in the same order with the same counts,
the rows' jump targets are the events n / p step through, and names stay literal in every span."""

from __future__ import annotations

import json

import pytest

from magi_tui.model import RunModel
from magi_tui.model.analysis.checks import analyse
from magi_tui.model.outputs.report import triage_json, triage_text
from magi_tui.model.outputs.triage_sections import ROLES, triage_sections
from tests.support.cli import run_cli
from tests.support.paths import FIXTURES, TORCH_TRACE
from tests.support.timeline import ev_line, write_run

INPUTS = [FIXTURES / "toy_explain", FIXTURES / "recompile_explain", FIXTURES / "dynamo_failure",
          FIXTURES / "compile_sizes", FIXTURES / "aot", TORCH_TRACE / "graph_breaks_recompiles_failure.log",
          TORCH_TRACE / "dynamic_shapes_backward.log"]


def _at(obj, path: str):
    for k in path.split("."):
        obj = obj[k]
    return obj


@pytest.mark.usefixtures("fixtures_dir", "torch_trace_dir")
@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
def test_panel_text_and_json_show_the_same_sections(path):
    run = RunModel(path).load()
    a = analyse(run)
    panel = [s for s in triage_sections(run, a, cap=50) if s.panel]
    report = triage_sections(run, a, panel=False, report=True)
    j = triage_json(run)
    assert [(s.id, s.title, s.count) for s in panel] == [(s["id"], s["title"], s["count"]) for s in j["sections"]]
    assert panel or a.status == "empty"  # nothing recorded: no section, in the panel as in the JSON
    for s in j["sections"]:  # each section's count is the length of its list in the JSON
        if s["json"] is not None:
            assert len(_at(j, s["json"])) == s["count"], s
    # the report prints the same sections in the same order (plus its cache summary), each as its lines
    ids = [s.id for s in report if s.lines]
    assert [i for i in ids if i != "cache"] == [s.id for s in panel if s.id in ids]
    text = triage_text(run)
    at = [text.index("".join(sp.text for sp in s.lines[0])) for s in report if s.lines]
    assert at == sorted(at)
    for s in panel:
        assert all(sp.role in ROLES for r in s.rows for sp in r.spans)
        assert len({id(r) for r in s.rows}) == len(s.rows)


@pytest.mark.usefixtures("torch_trace_dir")
def test_the_failure_and_restart_rows_are_where_n_and_p_stop():
    run = RunModel(TORCH_TRACE / "graph_breaks_recompiles_failure.log").load()
    secs = triage_sections(run, analyse(run), cap=50)
    targets = {(r.nav, r.target.seq) for s in secs for r in s.rows if r.target is not None}
    stops = run.triage.stops
    assert len(stops) == 6  # the backend failure and five restarts
    for ev, _what, _recovered in stops:
        assert ("fail", ev.seq) in targets or ("restart", ev.seq) in targets


def test_a_section_over_the_cap_says_how_many_it_left_and_builds_them_when_expanded(tmp_path):
    lines = []
    for k in range(12):  # twelve frames, each one compile
        lines.append(ev_line(2 * k, "fullgraph_before_compile", lifecycle_name="compile", compile_id=f"{k}/0",
                             frame=f"f{k}"))
        lines.append(ev_line(2 * k + 1, "fullgraph_after_compile", lifecycle_name="compile", compile_id=f"{k}/0",
                             frame=f"f{k}", duration_ms=5.0))
    run = RunModel(write_run(tmp_path / "r", lines)).load()
    a = analyse(run)
    [frames] = [s for s in triage_sections(run, a, cap=5) if s.id == "frames"]
    assert (frames.count, len(frames.rows), frames.left) == (12, 5, 7)
    [frames] = [s for s in triage_sections(run, a, cap=5, expanded={"Frames"}) if s.id == "frames"]
    assert (len(frames.rows), frames.left) == (12, 0)
    assert "    ... 4 more (--all)" in triage_text(run)  # the report's own cap: 8 frames


def test_names_with_markup_and_escapes_stay_literal_in_every_span(tmp_path, capsys):
    name = "[bold red]boom[/]\x1b[2J\u202e"
    run_dir = write_run(tmp_path / "r", [
        ev_line(0, "fullgraph_before_compile", lifecycle_name="compile", compile_id="0/0", frame=name),
        ev_line(1, "fullgraph_graph_break", compile_id="0/0", frame=name, reason=name, gb_id="GB0001",
                user_file=f"{name}.py", user_line=3),
        ev_line(2, "fullgraph_after_compile", lifecycle_name="compile", compile_id="0/0", frame=name,
                duration_ms=3.0)])
    run = RunModel(run_dir).load()
    secs = triage_sections(run, analyse(run), cap=50, report=True)
    spans = [sp.text for s in secs for r in s.rows for sp in r.spans]
    assert any("[bold red]boom[/]" in t for t in spans)  # markup kept as text, for the panel to show as is
    assert not any("\x1b" in t or "\u202e" in t for t in spans)
    code, out, _ = run_cli(capsys, "triage", str(run_dir))
    assert code == 0 and "[bold red]boom[/]" in out and "\x1b" not in out and "\u202e" not in out
    code, out, _ = run_cli(capsys, "triage", str(run_dir), "--json")
    assert json.loads(out)["sections"][0]["id"] == "graph_breaks"


def test_the_panel_names_only_the_frames_it_shows_in_the_order_a_full_sort_gives():
    """The compile-time section of 100k frames: the panel's rows are the slowest frames in the order sorting
    all of them gives (ties in the frames' order), and the count is every timed frame, named or not."""
    from magi_tui.model.outputs.triage_sections.build import _UNRANKED, _frames_ranked

    per_frame = {f"f{i}": float((i * 7919) % 13) for i in range(500)}  # many ties, some zero (not timed)
    full = [(f"frame {n}", s) for n, s in sorted(per_frame.items(), key=lambda kv: -kv[1]) if s]
    capped = _frames_ranked(per_frame, 50)
    assert capped[:50] == full[:50]
    assert len(capped) == len(full) and capped[50:] == [_UNRANKED] * (len(full) - 50)
    assert _frames_ranked(per_frame, None) == full
    assert _frames_ranked({"a": 1.0, "b": 0.0, "c": None}, 50) == [("frame a", 1.0)]
