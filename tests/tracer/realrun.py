"""A real program run twice as a user would run it -- ``python prog.py`` and ``python -m tracer --keep-trace
prog.py`` -- and what must hold between the two (issue 33.10, 33.11): the same stdout, the same stderr but
for the tracer's one ``MAGI_RUN_DIR=`` line, the same exit status; a run dir whose ``magi-tui triage
--json`` gives the same answers as the TORCH_TRACE log torch wrote in the same process (``--keep-trace``,
read from a copy outside the run dir), and the log read as tlparse reads it (its graph breaks, restarts,
recompiles, failures and cache counts); nothing dropped, the tracer never stopped.

Used by tests/tracer/test_real_models.py and by scripts/torch-matrix.sh (``python -m tests.tracer.realrun
PROGRAM OUT [NAME=VALUE ...]`` prints one JSON line: the checks above for that program on this torch)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tests.support import slow

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).with_name("programs")
RUN_DIR_LINE = "MAGI_RUN_DIR="
#: triage checks only one of the two sources can make (how the program ended is not in a TORCH_TRACE log)
ONE_SOURCE_RULES = {"program-end", "not-recorded"}
#: what a check adds when it knows how the program ended (a run dir does, a TORCH_TRACE log does not)
PROGRAM_END_CLAUSE = "The program finished; "
#: the folder a cache check searched for earlier runs: each source's own (the run dir's, the log copy's)
_SEARCHED = re.compile(r"\(searched [^)]*\)")
#: an event's number in a check's message (``first: #49 compile: …``): each source numbers its own events
_EVENT_NO = re.compile(r"#\d+\b")
#: a recompile's fields both sources read from torch's records (not: guard files, event indices; ``actual``
#: of a guard the log reads off the next compile's guards, which the run dir does not yet: see the report)
RECOMPILE_FIELDS = ("frame", "compile_id", "reasons", "kind", "kinds", "automatic_dynamic", "dynamic_sources",
                    "expected", "refused_by_limit")
FRAME_FIELDS = ("frame", "name", "file", "line", "compiles", "recompiles", "graph_breaks")


def env(extra: dict[str, str] | None = None) -> dict[str, str]:
    e = dict(os.environ, TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
             PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
    for k in ("TORCH_TRACE", "TORCH_LOGS", "TORCH_COMPILE_DEBUG", "MAGI_TRACER_ROOT"):
        e.pop(k, None)
    e.update(extra or {})
    return e


def run(program: Path, cwd: Path, extra: dict[str, str] | None, traced: bool,
        timeout: float = 600) -> subprocess.CompletedProcess:
    cwd.mkdir(parents=True, exist_ok=True)
    head = ["-m", "tracer", "--keep-trace", "-o", str(cwd)] if traced else []
    # each run compiles cold, in a cache of its own: an Inductor program really runs Inductor (a cache other
    # runs warmed would serve its graphs: FX graph cache hits, no codegen to record), whatever ran before
    cold = {"TORCHINDUCTOR_CACHE_DIR": str(cwd / "inductor-cache"), "TRITON_CACHE_DIR": str(cwd / "triton-cache")}
    return slow.run([sys.executable, *head, str(program)], cwd=cwd, env=env({**cold, **(extra or {})}),
                    capture_output=True, text=True, timeout=timeout)


#: lines that name the run dir: the tracer's, and the demos' own (``demos/_demo.py`` records a plain run too)
RUN_DIR_LINES = (RUN_DIR_LINE, "recording into ")


#: torch's log prefix (``W1128 07:27:28.322000 30207 file:line]``): its time and pid differ run to run
_GLOG = re.compile(r"^([IWEDC])\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ ", re.M)


#: a path in a run's own compile cache (:func:`run`): the plain and the traced run each have one
_OWN_CACHE = re.compile(r"[^\s'\"]*[/\\](?:plain|traced)[/\\](inductor|triton)-cache")


def without_run_dir_line(stderr: str) -> str:
    """stderr without the lines naming the run dir, torch's log lines without their time and pid, a path in
    the run's own compile cache as ``<inductor-cache>`` (an Inductor error quotes its generated file)."""
    text = "".join(ln for ln in stderr.splitlines(keepends=True) if not ln.startswith(RUN_DIR_LINES))
    return _OWN_CACHE.sub(r"<\1-cache>", _GLOG.sub(r"\1 ", text))


def stream_diff(plain: str, traced: str, lines: int = 40) -> str:
    """Where a program's output differs plain and traced: the first ``lines`` lines of a unified diff ("" when
    equal), so a matrix row that says "stderr differs" says how."""
    if plain == traced:
        return ""
    import difflib

    diff = difflib.unified_diff(plain.splitlines(keepends=True), traced.splitlines(keepends=True), "plain", "traced", n=1)
    return "".join(line for _, line in zip(range(lines), diff))


def triage(path: Path) -> tuple[int, dict]:
    proc = slow.run([sys.executable, "-m", "magi_tui", "triage", "--json", str(path)], env=env(),
                    capture_output=True, text=True, timeout=300)
    if "Traceback" in proc.stderr or not proc.stdout.strip():
        raise AssertionError(f"triage {path}: {proc.stderr[-3000:]}")
    return proc.returncode, json.loads(proc.stdout)


#: where a failure sits in its own source (the run dir's event folder, the line of the timeline or log)
WHERE_IN_SOURCE = ("index", "event_indices", "folder", "line")


def _strip(x: Any, drop: tuple[str, ...] = ("index", "event_indices")) -> Any:
    if isinstance(x, dict):
        return {k: _strip(v, drop) for k, v in x.items() if k not in drop}
    if isinstance(x, list):
        return [_strip(v, drop) for v in x]
    return x


def answers(j: dict) -> dict[str, Any]:
    """What a run dir and a TORCH_TRACE log of the same process must both say (``triage --json``)."""
    return {
        "status": j["status"],
        "first_failure": _strip(j.get("first_failure"), WHERE_IN_SOURCE),
        "failures": _strip(j.get("failures"), WHERE_IN_SOURCE),
        "restarts": _strip(j.get("restarts")),
        "ran_eagerly": _strip(j.get("ran_eagerly")),
        "graph_breaks": _strip(j.get("graph_breaks")),
        "recompiles": [{k: r.get(k) for k in RECOMPILE_FIELDS} for r in j.get("recompiles") or ()],
        "frames": [{k: f.get(k) for k in FRAME_FIELDS} for f in j.get("frames") or ()],
        "recompile_limit_hits": _strip(j.get("recompile_limit_hits")),
        "tracer_stopped": j.get("tracer_stopped"),
        "checks": [(c["rule"], c["level"], _EVENT_NO.sub("#N", _SEARCHED.sub("(searched its folder)", c["message"].replace(PROGRAM_END_CLAUSE, ""))))
                   for c in j.get("checks") or () if c["rule"] not in ONE_SOURCE_RULES],
    }


def same_checks(run: dict[str, Any], log: dict[str, Any]) -> dict[str, Any]:
    """``run`` with only the checks of the rules the log makes: the run dir knows more (runtime.json's calls,
    compiled functions) and may say more, but every rule both make must say the same."""
    rules = {c[0] for c in log["checks"]}
    return {**run, "checks": [c for c in run["checks"] if c[0] in rules]}


def differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    out = []
    for k in a:
        x, y = a[k], b[k]
        if x == y:
            continue
        if isinstance(x, list) and isinstance(y, list):
            only_run = [v for v in x if v not in y]
            only_log = [v for v in y if v not in x]
            out.append(f"{k}: only the run dir says {json.dumps(only_run)[:600]}; only the log {json.dumps(only_log)[:600]}")
        else:
            out.append(f"{k}: run dir {json.dumps(x)[:300]} / log {json.dumps(y)[:300]}")
    return out


def tlparse_agrees(log: Path, j_log: dict, out: Path) -> dict[str, Any]:
    """What tlparse reads in the same log against our ``triage --json`` of it (``tests/torchtrace/oracle.py``:
    graph breaks per compile id and id, restarts, recompiles, failures, recompile-limit hits, cache hits and
    misses): ``{"same": bool, "difference": str}``, or ``{"skipped": why}`` where tlparse is not installed."""
    from tests.torchtrace import oracle

    if oracle.find_tlparse() is None:
        return {"skipped": "tlparse is not installed"}
    try:
        facts = oracle.tlparse_facts(oracle.run_tlparse(log, out))
    except AssertionError as exc:
        return {"same": False, "difference": f"tlparse failed: {str(exc)[-500:]}"}
    try:
        oracle.assert_triage_matches(j_log, facts)
    except AssertionError as exc:
        return {"same": False, "difference": str(exc)[:1500] or "a count differs (no message)"}
    return {"same": True, "compile_ids": len(facts.compile_ids), "records": facts.stats.get("ok")}


def check(program: str | Path, out: Path, extra: dict[str, str] | None = None) -> dict[str, Any]:
    """Run ``program`` plain and traced (at once: two processes), and say what held (see the module)."""
    program = Path(program) if os.path.isabs(program) else PROGRAMS / program
    with ThreadPoolExecutor(2) as pool:
        plain_f = pool.submit(run, program, out / "plain", extra, False)
        traced_f = pool.submit(run, program, out / "traced", extra, True)
        plain, traced = plain_f.result(), traced_f.result()
    res: dict[str, Any] = {
        "program": program.name, "exit": [plain.returncode, traced.returncode],
        "exit_same": plain.returncode == traced.returncode,
        "stdout_same": plain.stdout == traced.stdout,
        "stderr_same": without_run_dir_line(plain.stderr) == without_run_dir_line(traced.stderr),
        "stderr_diff": stream_diff(without_run_dir_line(plain.stderr), without_run_dir_line(traced.stderr)),
        "plain_stdout": plain.stdout[-2000:], "traced_stdout": traced.stdout[-2000:],
        "plain_stderr": plain.stderr[-3000:], "traced_stderr": traced.stderr[-3000:],
    }
    line = next((ln for ln in traced.stderr.splitlines() if ln.startswith(RUN_DIR_LINE)), None)
    if line is None:
        return {**res, "triage_same": False, "notes": ["no run dir announced"]}
    run_dir = Path(line.split("=", 1)[1])
    session = json.loads((run_dir / "timeline_events" / "session.json").read_text())
    res["tracer"] = session.get("tracer")
    log = run_dir / "timeline_events" / "torch_trace.log"
    if not log.is_file():
        return {**res, "triage_same": False, "notes": ["no torch_trace.log beside the timeline"]}
    copy = out / "log" / "torch_trace.log"  # (a log inside a run dir is read as that run)
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(log, copy)
    (rc_run, j_run), (rc_log, j_log) = triage(run_dir), triage(copy)
    b = answers(j_log)
    a = same_checks(answers(j_run), b)
    res.update(run_dir=str(run_dir), status=[j_run["status"], j_log["status"]], triage_exit=[rc_run, rc_log],
               triage_same=a == b, triage_differences=differences(a, b),
               frames=len(j_run.get("frames") or ()), graph_breaks=len(j_run.get("graph_breaks") or ()),
               recompiles=len(j_run.get("recompiles") or ()), tlparse=tlparse_agrees(copy, j_log, out / "tlparse"))
    return res


def main(argv: list[str]) -> int:
    program, out, *pairs = argv
    extra = dict(p.split("=", 1) for p in pairs)
    print(json.dumps(check(program, Path(out), extra)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
