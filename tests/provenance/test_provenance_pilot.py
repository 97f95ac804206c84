"""Provenance in the terminal, driven as a user would (Textual's Pilot) on a real run recorded with
``python -m tracer --provenance``: the output code's kernel -> ``P`` -> the post-grad graph with the
cursor on a node that kernel fused (all of them marked) -> ``P`` -> the pre-grad node -> backspace,
backspace -> the same line of the output code; ``K`` from a node back to its kernel."""

from __future__ import annotations

import re

import pytest

from magi_tui.model.analysis import provenance as pv
from magi_tui.ui.app import MagiApp
from magi_tui.ui.widgets.detail import EventDetail
from magi_tui.ui.widgets.file_view import FileLines, FileView
from tests.support.pilot import loaded_run_screen, notes, screen_text, selected_event, wait_for

pytestmark = [pytest.mark.torch, pytest.mark.slow]


def _state(screen):
    """(event, file name, cursor line) of the file the detail pane shows."""
    detail = screen.query_one(EventDetail)
    fv = screen.query_one("#detail-file", FileView)
    ref = next((r for r in detail.refs if r.path is not None and r.path == fv.path), None)
    return (ref.event if ref else None, ref.name if ref else None, fv.cursor_line)


async def _at(pilot, screen, name, what):
    fv = screen.query_one("#detail-file", FileView)
    await wait_for(pilot, lambda: _state(screen)[1] == name and fv.lines.file is not None
                   and fv.path is not None and fv.path.name == name and fv.cursor_line >= 0, what=what)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_kernel_to_post_grad_to_pre_grad_and_back(provenance_run, size):
    app = MagiApp(provenance_run)
    async with app.run_test(size=size) as pilot:
        screen = await loaded_run_screen(pilot)
        out = next(e for e in screen.run.events if "inductor_output.py" in (e.files or ()))
        # the timeline: to the output-code event, Enter shows it in the tree and its file on the right
        await pilot.press("t", "g", *["j"] * out.seq, "enter")
        await wait_for(pilot, lambda: selected_event(screen) is out or getattr(selected_event(screen), "end", None)
                       is out, what="the output code event")
        fv = screen.query_one("#detail-file", FileView)
        await wait_for(pilot, lambda: _state(screen)[:2] == (out, "inductor_output.py") and fv.lines.file,
                       what="the output code file")
        # the cursor onto the kernel that fused sin and cos: search its name
        await pilot.press("slash", *"cpp_fused_add_cos", "enter")
        await wait_for(pilot, lambda: fv.cursor_line >= 0, what="the search to put the cursor on the kernel")
        start = fv.cursor_line
        code = fv.lines.file
        assert code.line(start).startswith("cpp_fused_add_cos_mul_relu_sin_0 = async_compile")
        await pilot.press("j", "j")   # into the kernel's C++ body: still that kernel
        assert fv.cursor_line == start + 2 and screen.query_one(FileLines).has_focus
        await pilot.press("P")
        await _at(pilot, screen, "post_grad_graph.py", "P to open the post-grad graph")
        pg_ev, _name, line = _state(screen)
        assert pg_ev.name == "fullgraph_after_post_grad_passes" and selected_event(screen) in (pg_ev, pg_ev.span)
        graph = fv.lines.file
        node = re.match(r"\s+(\w+): ", graph.line(line)).group(1)
        fused = {"relu", "sin", "cos", "mul", "add", "add_1"}
        assert node in fused and {re.match(r"\s+(\w+): ", graph.line(i)).group(1) for i in fv.lines.marked} == fused
        text = screen_text(app)
        assert "post_grad_graph.py" in text and "▶" in text   # the marks show without colour too
        assert any("cpp_fused_add_cos_mul_relu_sin_0 fused 6 post-grad node(s)" in n for n in notes(app))
        assert screen.query_one(FileLines).has_focus
        # on to the pre-grad graph: the node the post-grad one came from
        await pilot.press("P")
        await _at(pilot, screen, "pre_grad_graph.py", "P to open the pre-grad graph")
        pre_ev, _name, pre_line = _state(screen)
        assert pre_ev.name == "fullgraph_after_pre_grad_passes"
        pre_node = re.match(r"\s+(\w+): ", fv.lines.file.line(pre_line)).group(1)
        post_to_pre = {"relu": "y", "add_1": "add_1"}
        assert pre_node == post_to_pre.get(node, node)
        # back, back: the post-grad node, then the same line of the output code
        await pilot.press("backspace")
        await _at(pilot, screen, "post_grad_graph.py", "backspace to the post-grad graph")
        assert _state(screen) == (pg_ev, "post_grad_graph.py", line) and fv.lines.marked
        await pilot.press("backspace")
        await _at(pilot, screen, "inductor_output.py", "backspace to the output code")
        assert _state(screen) == (out, "inductor_output.py", start + 2)
        assert str(start + 3) in screen_text(app)   # that line is on screen (1-based gutter)
        await pilot.press("backspace")
        assert any("No provenance jump to come back from" in n for n in notes(app))


async def test_node_to_its_kernel_and_lines_that_lead_nowhere(provenance_run):
    app = MagiApp(provenance_run)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await loaded_run_screen(pilot)
        pg = next(e for e in screen.run.events if e.name == "fullgraph_after_post_grad_passes")
        await pilot.press("t", "g", *["j"] * pg.seq, "enter")
        fv = screen.query_one("#detail-file", FileView)
        await wait_for(pilot, lambda: _state(screen)[1] == "post_grad_graph.py" and fv.lines.file,
                       what="the post-grad graph")
        await pilot.press("P")   # no cursor yet: says how to get one
        await wait_for(pilot, lambda: any("Put the cursor on a line" in n for n in notes(app)), what="the hint")
        await pilot.press("slash", *"tanh: ", "enter")
        await wait_for(pilot, lambda: fv.cursor_line >= 0, what="the cursor on tanh")
        await pilot.press("K")
        await _at(pilot, screen, "inductor_output.py", "K to the kernel computing tanh")
        code = fv.lines.file
        assert code.line(fv.cursor_line).startswith("cpp_fused_amax_mul_sum_tanh_1 = async_compile")
        calls = [i for i in fv.lines.marked if i != fv.cursor_line]
        assert len(calls) == 1 and code.line(calls[0]).strip().startswith("cpp_fused_amax_mul_sum_tanh_1(")
        await pilot.press("g", "P")   # line 1 of the output code: no kernel there, said in one line
        await wait_for(pilot, lambda: any("no kernel on this line" in n for n in notes(app)), what="why not")
        assert _state(screen)[1] == "inductor_output.py"
        await pilot.press("backspace")
        await _at(pilot, screen, "post_grad_graph.py", "back to the node")
        assert "tanh" in fv.lines.file.line(fv.cursor_line)
        assert pv.NOT_RECORDED  # (the run without provenance: tests/provenance/test_provenance_model.py)
