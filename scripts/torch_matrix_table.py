"""docs/TORCH_MATRIX.md from scripts/torch-matrix.sh's results (one ``<version>.jsonl`` per torch): per torch
version, how it was installed and how tests/tracer went; per version x program, whether the program's output
and exit were unchanged under the tracer and whether the run dir's triage equals the TORCH_TRACE log's
(tests/tracer/realrun.py), whether tlparse reads the same log as we do, with what the run said it dropped or
lacked. A program run again for a version (``MATRIX_APPEND=1``) replaces its earlier row."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _key(v: str) -> tuple:
    return tuple(int(p) if p.isdigit() else 0 for p in v.split("."))


def _yes(b: object) -> str:
    return "yes" if b is True else ("**no**" if b is False else "-")


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")[:400]


def _last_line(text: str) -> str:
    """A traceback's last line (the exception and its message), or the text when it has no other line."""
    lines = [ln for ln in str(text).splitlines() if ln.strip()]
    return lines[-1] if lines else "(no output)"


def _latest(recs: list[dict]) -> list[dict]:
    """Each program's last record (a re-run replaces its earlier row), in the order programs first ran."""
    last: dict[str, dict] = {}
    for r in recs:
        if "program" in r:
            last[r.get("path", r["program"])] = r
    return list(last.values())


def _tlparse(r: dict) -> str:
    t = r.get("tlparse")
    if not isinstance(t, dict):
        return "-"
    return "skipped" if "skipped" in t else _yes(t.get("same"))


def table(results: Path, notes: list[str] | None = None) -> str:
    runs: dict[str, list[dict]] = {}
    for f in sorted(results.glob("*.jsonl"), key=lambda p: _key(p.stem)):
        runs[f.stem] = [json.loads(ln) for ln in f.read_text().splitlines() if ln.strip()]
    out = ["# The tracer on each torch (issue 33.11)", ""]
    for n in notes or ():
        out += [f"> {n}", ""]
    out += [
           "Made by `bash scripts/torch-matrix.sh` (a venv per torch version, everything else pinned as in `.venv`;",
           "the table by `scripts/torch_matrix_table.py`). Each program runs twice, as a user runs it: `python",
           "prog.py` and `python -m tracer --keep-trace prog.py` (`tests/tracer/realrun.py`). **output**: the same",
           "stdout and stderr (but the lines naming the run dir); **exit**: the same exit status; **triage**:",
           "`magi-tui triage --json` of the run dir gives the same answers (status, failures, restarts, graph",
           "breaks, recompiles, frames, checks) as of the TORCH_TRACE log torch wrote in the same process;",
           "**log = tlparse**: tlparse (the PyPI wheel) reads that log as our triage does: graph breaks per compile",
           "id and graph-break id, restarts, recompiles, failures, recompile-limit hits, cache hits and misses",
           "(`tests/torchtrace/oracle.py`; `-`: a row recorded before this column). Notes:",
           "the run's `session.json` `tracer` object (records dropped, what this torch lacks) and any difference.",
           "Programs: `demos/` (`transformer.py` compiles with Inductor) and `tests/tracer/programs/` (BERT and",
           "Llama with Inductor; GPT-2 `generate()`, the diffusers UNet with aot_eager).", "",
           "| torch | installed from | tests/tracer |", "|---|---|---|"]
    for v, recs in runs.items():
        inst: dict = next((r for r in recs if "installed" in r or "install" in r), {})
        tests = next((r for r in reversed(recs) if "tests" in r), None)
        src = inst.get("source", inst.get("install", "?"))
        src = "PyPI (CUDA build, run on CPU)" if src == f"torch=={v}" else Path(src.split()[0]).name if "/" in src else src
        if tests is None:
            t = "not run"
        else:
            lines = [ln for ln in tests["summary"].splitlines() if ln.strip()]
            t = _cell(lines[-1] if lines else f"rc {tests['rc']}") + f" ({tests['seconds']} s)"
            fails = [ln for ln in lines if ln.startswith(("FAILED", "ERROR"))]
            if fails:
                t += "; " + _cell("; ".join(fails))
        out.append(f"| {inst.get('installed', v)} | {_cell(src)} | {t} |")
    out += ["", "| torch | program | output unchanged | exit unchanged | run dir triage = TORCH_TRACE triage "
                "| log = tlparse | notes |", "|---|---|---|---|---|---|---|"]
    for v, recs in runs.items():
        for r in _latest(recs):
            notes = []
            if "error" in r:
                out.append(f"| {v} | `{r.get('path', r['program'])}` | - | - | - | - | did not run: {_cell(_last_line(r['error']))} |")
                continue
            tr = r.get("tracer") or {}
            if tr.get("dropped_records"):
                notes.append(f"{tr['dropped_records']} record(s) dropped: "
                             + "; ".join(f"{e['where']}: {e['error']}" for e in tr.get("drop_errors", [])))
            if tr.get("not_recorded"):
                notes.append("not recorded on this torch: " + "; ".join(tr["not_recorded"]))
            if r.get("exit") and r["exit"][0] != 0:
                notes.append(f"the program exits {r['exit'][0]} (plain)")
            notes += r.get("notes", [])
            notes += [f"differs: {d}" for d in r.get("triage_differences", [])[:2]]
            if isinstance(r.get("tlparse"), dict) and r["tlparse"].get("difference"):
                notes.append(f"tlparse differs: {r['tlparse']['difference']}")
            if not r.get("stdout_same") or not r.get("stderr_same"):
                first = next((ln for ln in r.get("stderr_diff", "").splitlines()[2:] if ln[:1] in "+-"), "")
                notes.append(("stdout" if not r.get("stdout_same") else "stderr") + " differs"
                             + (f" (first: {first[:200]})" if first else ""))
            status = r.get("status")
            if status:
                notes.insert(0, f"status {status[0]}, {r.get('frames')} frame(s), {r.get('graph_breaks')} break "
                                f"site(s), {r.get('recompiles')} recompile(s); {r.get('seconds')} s")
            out.append(f"| {v} | `{r.get('path', r['program'])}` | {_yes(r.get('stdout_same') and r.get('stderr_same'))}"
                       f" | {_yes(r.get('exit_same'))} | {_yes(r.get('triage_same'))} | {_tlparse(r)} | {_cell('; '.join(notes))} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    # scripts/torch_matrix_table.py RESULTS [NOTE ...]: each NOTE a paragraph under the title (e.g. which
    # versions did not finish, and why)
    sys.stdout.write(table(Path(sys.argv[1]), sys.argv[2:]))
