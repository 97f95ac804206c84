"""Torch 2.14+'s compile-worker records (issue 33.8): ``compile_worker_sidecar_death`` is a finding with the
tail of the worker's output; ``compile_worker_status`` is shown under its own name. The payloads are in the
shape torch 2.14.1's ``torch/_inductor/compile_worker/subproc_pool.py`` writes them
(``f"sidecar pid={pid} returncode={returncode}\\n\\n{tail}"``; the status a JSON object), added to a real log."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from magi_tui.model import RunModel
from tests.support import slow
from tests.support.paths import ROOT
from tests.torchtrace.logkit import RECORDED, make_record, records, write_log
from tests.torchtrace.oracle import run_tlparse, tlparse_facts

TAIL = "[worker 3] compiling kernel triton_poi_fused_0\nKilled: out of memory\n"


def _log(tmp_path: Path) -> Path:
    return write_log(tmp_path / "worker.log", records(RECORDED / "reset_same_function.log") + [
        make_record({"artifact": {"name": "compile_worker_status", "encoding": "json"}},
                    json.dumps({"busy": 2, "idle": 6, "compile_id": "0/0"})),
        make_record({"artifact": {"name": "compile_worker_sidecar_death", "encoding": "string"}},
                    f"sidecar pid=4242 returncode=-9\n\n{TAIL}")])


def test_a_dead_compile_worker_is_a_finding_with_its_output(tmp_path):
    log = _log(tmp_path)
    run = RunModel(log).load()
    tl = tlparse_facts(run_tlparse(log, tmp_path / "tl"))
    assert dict(run.reader.stats) == tl.stats  # both known to us, read as tlparse reads them
    (ev,) = [e for e in run.events if e.short_name == "compile_worker_died"]
    a = run.attributes(ev)
    assert (a["pid"], a["returncode"], a["reason"]) == (4242, -9, "Killed: out of memory")
    text = Path(next(p for n, p, _ in run.files(ev) if n == "worker_output.txt")).read_text()
    assert text.endswith(TAIL)
    assert [e.short_name for e in run.events if "compile_worker_status" in e.short_name] == ["compile_worker_status"]
    out = slow.run([sys.executable, "-m", "magi_tui", "triage", str(log), "--json"], cwd=ROOT,
                   capture_output=True, text=True, timeout=120)
    check = next(c for c in json.loads(out.stdout)["checks"] if c["rule"] == "compile-worker")
    assert check["level"] == "fail"
    assert check["message"] == ("Inductor's compile worker died 1× (pid 4242, returncode -9); its output ended: "
                                "Killed: out of memory")


def test_a_live_worker_is_no_finding():
    run = slow.run([sys.executable, "-m", "magi_tui", "triage", str(RECORDED / "reset_same_function.log"), "--json"],
                   cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert not [c for c in json.loads(run.stdout)["checks"] if c["rule"] == "compile-worker"]
