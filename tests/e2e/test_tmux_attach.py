"""The real ``magi-tui attach`` in a real terminal (tmux) while another process writes a run.

The writer is a plain Python process appending events in the FORMAT (no torch). When the tracer and
torch are importable, a second test traces a real demo compile (marked slow)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.e2e.tmux import MAGI, Tmux
from tests.support import slow

pytestmark = [pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]

REPO = Path(__file__).resolve().parents[2]

WRITER = textwrap.dedent('''
    import json, os, sys, time
    run = sys.argv[1]
    os.makedirs(os.path.join(run, "timeline_events"), exist_ok=True)
    path = os.path.join(run, "timeline_events", "timeline.jsonl")
    t0 = time.time()
    def emit(i, name, **attrs):
        now = time.time()
        line = {"index": i, "name": name, "relative_time": "%.1fms" % ((now - t0) * 1000), "files": [],
                "attributes": {"scope": "fullgraph", **attrs},
                "datetime": time.strftime("%Y-%m-%d %H:%M:%S.000"), "timestamp": now}
        with open(path, "a") as fh:
            fh.write(json.dumps(line) + "\\n")
    i = 0
    for lc in ["dynamo_capture", "aot_dispatch", "e2e_marker_pass"]:
        emit(i, "fullgraph_before_" + lc, lifecycle_name=lc); i += 1
        time.sleep(0.3)
        emit(i, "fullgraph_after_" + lc, lifecycle_name=lc, duration_ms=300.0); i += 1
    emit(i, "fullgraph_before_inductor", lifecycle_name="inductor"); i += 1
    time.sleep(0.3)
    emit(i, "fullgraph_failed_inductor", lifecycle_name="inductor", exception_type="E2EBoom",
         exception_message="[bold]x[/]"); i += 1
''')


def test_attach_shows_events_as_they_are_written(tmp_path):
    root = tmp_path / "runs"
    root.mkdir()
    writer = tmp_path / "writer.py"
    writer.write_text(WRITER)
    run = root / "magi_depyf" / "run_20261122_120000" / "model_0_e2e_rank_0"
    t = Tmux(100, 30, f"{MAGI} attach {root}; sleep 30")
    proc = None
    try:
        t.wait_for("waiting for a run under")
        proc = subprocess.Popen([sys.executable, str(writer), str(run)])
        screen = t.wait_for("LIVE", "dynamo_capture")  # the run opened live, first events on screen
        assert "model_0_e2e_rank_0" in screen
        screen = t.wait_for("e2e_marker_pass", "inductor")
        screen = t.wait_for("E2EBoom", "failed")  # the live failure (tree label / notification)
        assert slow.wait(proc, timeout=20, what="the writer") == 0
        t.keys("F")  # follow off, then f: the failure is selected and shown in the detail
        t.keys("f")
        t.wait_for("fullgraph_failed_inductor")
        t.keys("Escape")
        screen = t.wait_for("1 run(s)", " live ")  # the runs list of the root, the run marked live
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
        t.kill()


@pytest.mark.slow
@pytest.mark.torch
def test_attach_to_a_real_traced_compile(tmp_path):
    if importlib.util.find_spec("torch") is None or not (REPO / "tracer" / "__main__.py").is_file():
        pytest.skip("needs torch and the tracer (python -m tracer)")
    demo = REPO / "demos" / "slow_compile.py"  # events keep arriving for a few seconds
    if not demo.is_file():
        pytest.skip("demos/slow_compile.py is missing")
    root = tmp_path / "runs"
    root.mkdir()
    t = Tmux(100, 30, f"{MAGI} attach {root}; sleep 60")
    proc = None
    try:
        t.wait_for("waiting for a run under")
        # the demo paces its events (one pass step each); on a busy machine it paces them further apart, so
        # that the app, as starved as the demo, still sees them while the program runs
        step = 0.4 * slow.factor()
        proc = subprocess.Popen([sys.executable, "-m", "tracer", "-o", str(root), str(demo)], cwd=REPO,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=dict(os.environ, SLOW_COMPILE_STEP_S=f"{step:.2f}"))
        t.wait_for("LIVE", "events", timeout=120)
        t.wait_for("compile ", timeout=120)  # a compile-id node of the tree, while the program runs
        if proc.poll() is not None:
            pytest.fail(f"the demo ended (exit {proc.returncode}) before the app showed its events live: the "
                        f"app lagged the program (machine busy? load {slow.load_per_core():.1f} per core; "
                        "MAGI_TEST_SLOW=<n> paces the demo n times slower)", pytrace=False)
        t.wait_for("piecewise_backend", timeout=120)
        slow.wait(proc, timeout=300, what="the traced demo (demos/slow_compile.py)")
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
        t.kill()
