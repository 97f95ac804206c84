"""Compile info (issue #13, "what tlparse shows that we don't") on the shared TORCH_TRACE logs: the
per-compile metrics table, dynamic shapes with their user lines, compile phases, the stack trie and the
runnable reproducer — the facts against tlparse's own (``raw.jsonl``, ``chromium_events.json``), the
screen as a user sees it at 80×24, and ``magi-tui metrics``."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from collections import defaultdict

import pytest

from magi_tui.cli import main
from magi_tui.model import RunModel
from magi_tui.model.analysis.metrics import compile_infos, stack_trie, write_reproducer
from magi_tui.ui.app import MagiApp
from magi_tui.ui.screens.compile_info import CompileInfoScreen
from magi_tui.ui.screens.run import RunScreen
from tests.support.pilot import loaded_run_screen, screen_text, unsafe_on_screen, wait_for
from tests.torchtrace.logkit import BREAKS_LOG, DYNAMIC_LOG
from tests.torchtrace.oracle import run_tlparse

pytestmark = pytest.mark.usefixtures("torch_trace_dir")
_tl: dict = {}


def tlparse_out(log, tmp_path_factory):
    if log not in _tl:
        _tl[log] = run_tlparse(log, tmp_path_factory.mktemp("tl") / "out")
    return _tl[log]


def tl_records(out) -> list[dict]:
    return [json.loads(x) for x in (out / "raw.jsonl").read_text(encoding="utf-8").splitlines()[1:]]


def tl_key(rec: dict) -> str:
    return f"{rec['frame_id']}/{rec['frame_compile_id']}"


@pytest.mark.parametrize("log", [BREAKS_LOG, DYNAMIC_LOG], ids=["breaks", "dynamic"])
def test_metrics_per_compile_equal_tlparse(log, tmp_path_factory):
    out = tlparse_out(log, tmp_path_factory)
    theirs = {}
    for rec in tl_records(out):
        m = rec.get("compilation_metrics")
        if isinstance(m, dict):
            att = rec.get("attempt") or 0
            theirs[f"[{tl_key(rec)}{'_' + str(att) if att else ''}]"] = (
                m.get("entire_frame_compile_time_s"), m.get("backend_compile_time_s"),
                m.get("inductor_compile_time_s"), m.get("code_gen_time_s"), m.get("guard_count"),
                m.get("graph_op_count"), m.get("graph_node_count"), m.get("fail_type"),
                sorted(m.get("restart_reasons") or []))
    infos = compile_infos(RunModel(log).load())
    ours = {i.tlparse_id: (i.total_s, i.backend_s, i.inductor_s, i.codegen_s, i.guard_count, i.graph_op_count,
                           i.graph_node_count, i.fail_type, sorted(i.restart_reasons)) for i in infos}
    assert ours == theirs
    # tlparse's stack-trie colours, in words
    if log == BREAKS_LOG:
        status = {i.tlparse_id: i.status for i in infos}
        assert status["[0/0_1]"] == status["[3/0_1]"] == "restarted"
        assert status["[2/0]"] == "failed" and status["[4/0_1]"] == "empty" and status["[1/0]"] == "ok"


def test_dynamic_shapes_with_their_user_lines_equal_tlparse(tmp_path_factory):
    out = tlparse_out(DYNAMIC_LOG, tmp_path_factory)
    guards, symbols = defaultdict(list), defaultdict(list)
    for rec in tl_records(out):
        if "guard_added_fast" in rec:
            guards[tl_key(rec)].append(rec["guard_added_fast"]["expr"])
        if "create_symbol" in rec:  # tlparse 0.4.3 counts it as unknown, but raw.jsonl keeps it
            symbols[tl_key(rec)].append((rec["create_symbol"]["symbol"], rec["create_symbol"]["source"]))
    infos = {i.compile_id: i for i in compile_infos(RunModel(DYNAMIC_LOG).load())}
    assert {k: [g.text for g in i.shape_guards] for k, i in infos.items() if i.shape_guards} == dict(guards)
    first = infos["0/0"].symbols
    assert [s.text for s in first] == ["s77 = 5 in [2, int_oo] from L['x'].size()[0]"]
    assert {k: len(i.symbols) for k, i in infos.items() if i.symbols} == {k: len(v) for k, v in symbols.items()}
    # the user line that caused each: the `if` on the size, not torch's frames
    assert first[0].user_frame.endswith("extra_events_demo.py:14")
    assert first[0].source_line.startswith("if x.shape[0] > 3:")
    assert infos["0/1"].recompile_reasons and "x.size()[0]" in infos["0/1"].recompile_reasons[0]


@pytest.mark.parametrize("log", [BREAKS_LOG, DYNAMIC_LOG], ids=["breaks", "dynamic"])
def test_compile_phases_equal_tlparse_chromium_events(log, tmp_path_factory):
    out = tlparse_out(log, tmp_path_factory)
    opened, spans = {}, defaultdict(list)
    for ev in json.loads((out / "chromium_events.json").read_text()):
        cid = (ev.get("args") or {}).get("compile_id")
        if ev.get("ph") == "B":
            opened[(cid, ev["name"])] = ev["ts"]
        elif ev.get("ph") == "E" and (cid, ev["name"]) in opened:
            spans[cid].append((ev["name"], ev["ts"] - opened.pop((cid, ev["name"]))))
    infos = compile_infos(RunModel(log).load())
    assert infos and all(i.phases for i in infos)
    for i in infos:
        ours = sorted((p.name, p.dur_s * 1e6) for p in i.phases)
        theirs = sorted((n, d) for n, d in spans[i.compile_id] if n != "dynamo")  # dynamo closes after the metrics
        assert [n for n, _ in ours] == [n for n, _ in theirs], i.compile_id
        assert all(abs(a - b) <= 1 for (_, a), (_, b) in zip(ours, theirs)), i.compile_id  # µs, as torch wrote
        whole = next(p for p in i.phases if p.name == "entire_frame_compile")
        assert whole.start_s == 0 and abs(whole.dur_s - i.total_s) < 0.01


def test_stack_trie_hangs_each_compile_on_its_user_stack():
    infos = compile_infos(RunModel(BREAKS_LOG).load())
    root = stack_trie(infos)
    at = defaultdict(list)
    for _d, n in root.lines():
        at[(n.frame.function, n.frame.line)] += [c.tlparse_id for c in n.compiles]
    # the three calls of the module (three run_workload lines) each hang their forward compile
    assert at[("forward", 146)] == ["[0/0_1]", "[0/1_1]", "[0/2_1]"]
    assert [d for d, n in root.lines() if n.frame.function == "forward"] == [3, 3, 3]
    assert at[("always_fails", 175)] == ["[2/0]"]
    # torch's frames are not in the trie; every compile is hung somewhere
    assert not any("site-packages/torch" in n.frame.filename for _d, n in root.lines())
    assert sorted(c.tlparse_id for _d, n in root.lines() for c in n.compiles) == sorted(i.tlparse_id for i in infos)


def test_reproducer_written_next_to_the_log_never_over_a_file(tmp_path):
    log = tmp_path / DYNAMIC_LOG.name
    shutil.copy(DYNAMIC_LOG, log)
    run = RunModel(log).load()
    infos = {i.compile_id: i for i in compile_infos(run)}
    path, cmd = write_reproducer(run, infos["0/0"])
    assert path == tmp_path / "repro_0_0.py" and cmd == f"python {path}"
    text = path.read_text()
    compile(text, str(path), "exec")  # a Python program
    assert "class Repro" in text or "run_repro" in text
    again, why = write_reproducer(run, infos["0/0"])
    assert again is None and "exists already" in why and path.read_text() == text
    # the backward's reproducer of frame 1 is its own file; nothing went into the log's own folders
    bw = next(e for e in infos["1/0"].runnables if run.attributes(e).get("backward"))
    p2, _ = write_reproducer(run, infos["1/0"], bw)
    assert p2.name == "repro_1_0_backward_1.py"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([log.name, "repro_0_0.py", p2.name])


async def test_i_opens_compile_info_at_80x24(tmp_path):
    log = tmp_path / DYNAMIC_LOG.name
    shutil.copy(DYNAMIC_LOG, log)
    app = MagiApp(log)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded_run_screen(pilot)
        await pilot.press("i")
        await wait_for(pilot, lambda: isinstance(app.screen, CompileInfoScreen) and app.screen.loaded,
                       what="the compile info screen")
        await wait_for(pilot, lambda: "s77 = 5 in [2, int_oo] from L['x'].size()[0]" in screen_text(app),
                       what="the symbol of [0/0]")
        text = screen_text(app)
        for want in ("[0/0]", "[0/1]", "[1/0]", "total", "guard", "2.23", "at extra_events_demo.py:14",
                     "guard       s77 > 3"):
            assert want in text, want
        assert not unsafe_on_screen(app)
        await pilot.press("j")  # the recompile: why, and its own symbol
        await wait_for(pilot, lambda: "s77 = 2" in screen_text(app), what="the detail of [0/1]")
        assert "recompile: 0/0:" in screen_text(app)
        await pilot.press("s")  # the stack trie
        await wait_for(pilot, lambda: "stack trie" in screen_text(app), what="the stack trie")
        assert "extra_events_demo.py:13 f  [0/0] [0/1]" in screen_text(app)
        await pilot.press("s", "k", "r")  # back to the detail; write [0/0]'s reproducer
        await wait_for(pilot, lambda: (tmp_path / "repro_0_0.py").is_file(), what="the reproducer")
        await pilot.press("r")  # never over the file
        await pilot.pause(0.3)
        assert (tmp_path / "repro_0_0.py").stat().st_size > 0
        await pilot.press("q")
        assert isinstance(app.screen, RunScreen)
        # P: back to the run on the compile's post-grad graph (what its kernels fused)
        await pilot.press("i")
        await wait_for(pilot, lambda: isinstance(app.screen, CompileInfoScreen) and app.screen.loaded,
                       what="the compile info screen again")
        await pilot.press("P")
        await wait_for(pilot, lambda: isinstance(app.screen, RunScreen), what="the run screen")
        await wait_for(pilot, lambda: "post_grad_graph.py" in screen_text(app), what="the post-grad graph")


def test_cli_metrics_text_and_json():
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["metrics", str(BREAKS_LOG), "--json"]) == 0
    obj = json.loads(buf.getvalue())
    by_id = {c["tlparse_id"]: c for c in obj["compiles"]}
    assert by_id["[2/0]"]["status"] == "failed" and by_id["[2/0]"]["fail_type"].endswith("BackendCompilerFailed")
    assert by_id["[0/0_1]"]["guard_count"] == 33 and by_id["[0/0_1]"]["times_s"]["inductor"] > 0
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["metrics", str(DYNAMIC_LOG)]) == 0
    assert "symbol: s77 = 5 in [2, int_oo] from L['x'].size()[0]" in buf.getvalue()
    with contextlib.redirect_stderr(io.StringIO()):
        assert main(["metrics", "/no/such/path"]) == 2
