"""No traceback on any log (issue 19 "Done when"): every recorded log and every shape made from them
(older torch, CRLF, BOM, no final newline, gzip, a cut gzip, a reset) goes through ``runs``, ``triage``,
``check``, ``compare`` and ``metrics`` without one, ``runs`` and ``triage`` agree on the status, and the
app opens each on its run screen."""

from __future__ import annotations

import gzip
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from magi_tui.ui.app import MagiApp
from tests.support import slow
from tests.support.paths import ROOT
from tests.support.pilot import loaded_run_screen, screen_text
from tests.torchtrace.logkit import RECORDED, records, retag, settle, write_log

LOGS = sorted(RECORDED.glob("*.log"))


@pytest.fixture(scope="module")
def shapes(tmp_path_factory) -> list[Path]:
    d = tmp_path_factory.mktemp("shapes")
    out = list(LOGS)
    for log in LOGS:
        data = log.read_bytes()
        out.append(write_log(d / f"{log.stem}_crlf.log", [data.replace(b"\n", b"\r\n")]))
        out.append(write_log(d / f"{log.stem}_bom_nonl.log", [b"\xef\xbb\xbf" + data[:-1]]))
        out.append(write_log(d / f"{log.stem}_cut.log", [data[: len(data) * 2 // 3]]))
        gz = d / f"{log.stem}.log.gz"
        gz.write_bytes(gzip.compress(data))
        cut = d / f"{log.stem}_cutgz.log.gz"
        cut.write_bytes(gzip.compress(data)[:5000])
        out += [settle(gz), settle(cut)]
    recs = records(RECORDED / "aot_provenance.log")
    out.append(write_log(d / "aot_older.log", [retag(r, b'"inductor_post_grad_graph"', b'"after_post_grad_graph"')
                                              if b'"inductor_post_grad_graph"' in r.split(b"\n", 1)[0] else r
                                              for r in recs]))
    return out


def _cli(*args: str) -> tuple[int, str, str]:
    p = slow.run([sys.executable, "-m", "magi_tui", *args], cwd=ROOT, capture_output=True, text=True,
                 timeout=120)
    assert "Traceback" not in p.stdout + p.stderr, (args, p.stderr[-3000:])
    return p.returncode, p.stdout, p.stderr


def _sweep(log: Path) -> None:
    """Every command on one log: no traceback, and ``runs`` and ``triage`` agree on its status."""
    rc, out, _ = _cli("runs", str(log), "--json")
    runs = json.loads(out)
    rc_t, out_t, _ = _cli("triage", str(log), "--json")
    assert rc_t in (0, 1, 2), log
    if runs and rc_t != 2:
        assert runs[0]["status"] == json.loads(out_t)["status"], log.name
    _cli("triage", str(log))
    _cli("check", str(log))
    _cli("metrics", str(log), "--json")
    _cli("compare", str(log), str(LOGS[0]))


@pytest.mark.slow
def test_every_command_on_every_shape(shapes):
    # two logs at a time: each command is a process of its own, one per core
    with ThreadPoolExecutor(2) as pool:
        for done in [pool.submit(_sweep, log) for log in shapes]:
            done.result()  # a failed assertion is raised here, naming its log


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
async def test_app_opens_every_recorded_log(log):
    app = MagiApp(log)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await loaded_run_screen(pilot)
        assert screen.run.path == log and screen.run.events
        assert log.name in screen_text(app) and "Traceback" not in screen_text(app)
