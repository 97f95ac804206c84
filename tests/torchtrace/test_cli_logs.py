"""``magi-tui runs`` / ``triage`` on TORCH_TRACE logs: a log file, any file in that format, a
``TORCH_TRACE=<dir>`` folder with one log per rank — and nothing else in that folder taken for a log."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from magi_tui.model import RunModel, find_runs
from magi_tui.model.outputs.report import triage_json
from tests.support import slow
from tests.support.paths import COLD, ROOT
from tests.torchtrace.logkit import BREAKS_LOG, DYNAMIC_LOG

pytestmark = pytest.mark.usefixtures("torch_trace_dir")


def cli(*args: str) -> subprocess.CompletedProcess:
    return slow.run([sys.executable, "-m", "magi_tui", *args], cwd=ROOT, capture_output=True, text=True,
                    timeout=120)


@pytest.fixture
def trace_dir(tmp_path):
    """What ``TORCH_TRACE=<dir>`` leaves for a 2-rank job, plus things that are not logs."""
    d = tmp_path / "trace"
    d.mkdir()
    shutil.copy(BREAKS_LOG, d / "dedicated_log_torch_trace_rank_0_k2j3h4.log")
    shutil.copy(DYNAMIC_LOG, d / "dedicated_log_torch_trace_rank_1_q8w7e6.log")
    (d / "notes.log").write_text("just a program's output\n")
    (d / "dedicated_log_torch_trace_rank_7_dir.log").mkdir()
    os.symlink(BREAKS_LOG, d / "dedicated_log_torch_trace_rank_8_link.log")
    os.mkfifo(d / "dedicated_log_torch_trace_rank_9_fifo.log")
    return d


def test_runs_lists_one_run_per_rank_log(trace_dir):
    out = cli("runs", str(trace_dir), "--json")
    assert out.returncode == 0, out.stderr
    rows = sorted(json.loads(out.stdout), key=lambda r: r["rank"])
    assert [(r["rank"], os.path.basename(r["path"])) for r in rows] == [
        (0, "dedicated_log_torch_trace_rank_0_k2j3h4.log"), (1, "dedicated_log_torch_trace_rank_1_q8w7e6.log")]
    assert [r["events"] for r in rows] == [len(RunModel(BREAKS_LOG).load().events),
                                           len(RunModel(DYNAMIC_LOG).load().events)]
    assert [r["status"] for r in rows] == ["failed", "ok"]


def test_any_file_in_the_format_is_a_run(tmp_path):
    f = tmp_path / "what_my_colleague_sent.txt"
    shutil.copy(DYNAMIC_LOG, f)
    (tmp_path / "other.txt").write_text("V1122 this is not a record\n")
    assert [r.path for r in find_runs(f)] == [f]
    assert find_runs(tmp_path / "other.txt") == []
    out = cli("triage", str(f), "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["status"] == "ok"


@pytest.mark.usefixtures("fixtures_dir")
def test_triage_json_has_the_run_dir_contract():
    out = cli("triage", str(BREAKS_LOG), "--json")
    assert out.returncode == 1, out.stderr  # an unrecovered failure, as for a run dir
    got = json.loads(out.stdout)
    want = triage_json(RunModel(COLD).load())
    assert set(got) == set(want)
    assert set(got["summary"]) == set(want["summary"])
    assert got["run"] == str(BREAKS_LOG) and got["error"] is None
    assert got["first_failure"]["exception_type"] == "BackendCompilerFailed"
    # a failure points at the log line of the record that said so
    line = BREAKS_LOG.read_text(encoding="utf-8").splitlines()[got["first_failure"]["line"] - 1]
    assert '"compilation_metrics"' in line and '"frame_id": 2' in line


def test_triage_of_a_trace_dir_reports_every_rank(trace_dir):
    out = cli("triage", str(trace_dir), "--json")
    assert out.returncode == 1, out.stderr
    objs = json.loads(out.stdout)
    assert sorted(o["status"] for o in objs) == ["failed", "ok"]
    text = cli("triage", str(trace_dir))
    assert "BackendCompilerFailed" in text.stdout and "Traceback" not in text.stderr


def test_a_headless_command_ends_quickly_yet_cleans_up(tmp_path):
    """``python -m magi_tui triage`` ends with ``os._exit`` (cli.run: no teardown of what it built), after
    its output is flushed and its atexit handlers ran: the JSON is whole, the exit code the command's, and
    the private folder a ``.log.gz`` was unpacked into is gone."""
    import gzip

    log = tmp_path / "rank0.log.gz"
    log.write_bytes(gzip.compress(BREAKS_LOG.read_bytes()))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = slow.run([sys.executable, "-m", "magi_tui", "triage", "--json", str(log)], cwd=ROOT,
                    capture_output=True, text=True, timeout=120, env={**os.environ, "TMPDIR": str(tmp)})
    doc = json.loads(proc.stdout)
    assert proc.returncode == (1 if doc["status"] in ("failed", "incomplete") else 0)
    assert doc["events"] > 100
    assert not list(tmp.glob("magi-tui-trace-*")), "the unpacked copy outlived the process"
