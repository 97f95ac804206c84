"""A compiler bug report, bundled: ``REPORT.md`` plus the files it links to, copied from one run.

What someone filing a torch.compile bug is asked for, from what the run (and a bisect of it) recorded:
the minimal reproducer torch wrote (``fx_graph_runnable.py`` of the culprit graph, else of the failed
compile, else of the first), the versions (torch's, from that reproducer; Python and the platform from
the bisect's probe when there is one), the backend and the configs that differ from the defaults (the
``torch.*.config`` lines of the reproducer), the failing event with its exception and files, the graph
break and recompile findings, the environment's torch / Triton / CUDA settings (other variables by name
only), and the bisect result. Only regular files inside the run directory are copied (never through a
symlink); the report names them by paths relative to itself.

Nothing secret leaves with it (issue 32): every byte written -- REPORT.md, ``files/bisect.json``, each
copied file -- passes through :class:`magi_tui.model.redact.Redactor` (credentials on the command line,
in settings, URLs and files become ``[redacted]``; the home folder ``~``), and REPORT.md says under its
title what was redacted, by kind and count.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from magi_format.safepath import is_inside
from magi_tui.model import RunModel, find_runs
from magi_tui.model.checks import analyse
from magi_tui.model.metrics import compile_infos
from magi_tui.model.redact import Redactor

__all__ = ["ReportError", "Report", "build_report", "write_report", "write_report_beside", "find_bisect"]

REPORT_FILE = "REPORT.md"
MAX_COPY = 16 << 20
_CONFIG_LINE = re.compile(r"^(torch\.[\w.]*config\.[\w.]+ = .+)$", re.MULTILINE)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAME = re.compile(r"[\w.\-]+")
_VERSION_LINE = re.compile(r"^# (torch (?:cuda |git )?version): (.+)$", re.MULTILINE)


class ReportError(ValueError):
    """Unusable input, in words."""


class Report(Struct):
    name: str
    text: str = ""
    #: (path inside the run, name in the bundle's files/ folder)
    files: list[tuple[Path, str]] = field(default_factory=list)
    #: (name in files/, text) written as they are (the bisect result, its paths made relative)
    texts: list[tuple[str, str]] = field(default_factory=list)
    #: what every written byte passes through; its counts say what was redacted (:func:`write_report`)
    redactor: Redactor = field(default_factory=Redactor)


def find_bisect(path: Path) -> tuple[Path | None, dict | None]:
    """The ``bisect.json`` at ``path`` or in one of its three parents (a run made by a bisect lies at
    ``bisect_<ts>/magi_depyf/run_<ts>/model_<...>``)."""
    p = path.resolve()
    for d in [p, *list(p.parents)[:3]]:
        f = d / "bisect.json"
        if f.is_file() and not f.is_symlink():
            try:
                obj = json.loads(f.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return None, None
            return (f, obj) if isinstance(obj, dict) else (None, None)
    return None, None


def _culprit_run(bisect: dict) -> str | None:
    c = bisect.get("culprit") or {}
    g = c.get("graph") or {}
    return g.get("run") or c.get("run")


def _fence(text: str) -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}\n{text.rstrip()}\n{ticks}"


def _md(text: object) -> str:
    """One line of run text, inert in Markdown (no markup, no HTML, no control characters)."""
    s = re.sub(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]", " ", str(text))
    return re.sub(r"([\\`*\[\]<>|])", r"\\\1", s)


def build_report(path: Path) -> Report:
    if not path.exists():
        raise ReportError(f"no such file or directory: {path}")
    bisect_file, bisect = find_bisect(path)
    run_path: Path | None = None
    if bisect is not None and bisect_file is not None and path.resolve() == bisect_file.parent:
        cr = _culprit_run(bisect)
        if cr and Path(cr).is_dir() and is_inside(bisect_file.parent, Path(cr)):
            run_path = Path(cr)
        else:
            steps = [s.get("run") for s in bisect.get("steps") or [] if s.get("run")]
            run_path = Path(steps[-1]) if steps else None
    if run_path is None:
        found = find_runs(path)
        if not found:
            raise ReportError(f"no run under {path} (a run directory, or a bisect folder with bisect.json)")
        if len(found) > 1:
            raise ReportError(f"{len(found)} runs under {path}: name one run directory (magi-tui runs {path})")
        run_path = Path(found[0].path)
    run = RunModel(run_path).load(keep=True)
    if run.error and not run.event_count:
        raise ReportError(f"{run_path}: {run.error}")
    rep = Report(name=run.path.name)
    a = analyse(run)
    infos = compile_infos(run)
    lines: list[str] = [f"# torch.compile bug report: {_md(run.path.name)}", ""]

    culprit = (bisect or {}).get("culprit") or {}
    culprit_cid = (culprit.get("graph") or {}).get("compile_id")
    failing = next((c for c in a.problems if not c.recovered), None)
    fail_cid = failing.head.event.compile_id if failing is not None else None

    # -- summary ------------------------------------------------------------------------------
    lines += ["## Summary", ""]
    lines.append(f"- run status: **{_md(a.status)}** ({run.event_count} events, {len(a.frames)} frame(s))")
    if bisect is not None:
        if bisect.get("error"):
            lines.append(f"- bisect: could not run: {_md(bisect['error'])}")
        elif not bisect.get("reproduced"):
            lines.append("- bisect: **not reproduced**")
        else:
            lines.append(f"- bisect culprit: **{_md(culprit.get('layer') or culprit.get('backend'))}**"
                         + (f", stage `{_md(culprit['subsystem'])}`" if culprit.get("subsystem") else "")
                         + (f" application #{culprit['bisect_number']}" if culprit.get("applications") else "")
                         + (f" ({_md(culprit['debug_info'])})" if culprit.get("debug_info") else "")
                         + (f", graph {_md(culprit_cid)}" if culprit_cid else ""))
    bad_step = next((st for st in (bisect or {}).get("steps") or [] if st.get("verdict") == "reproduces"), None)
    if bad_step is not None:
        lines.append(f"- the program, when the bug shows: {_md(bad_step.get('why'))}")
    if failing is not None:
        h = failing.head
        lines.append(f"- failure: {_md(h.exception_type or h.event.name)} in compile {_md(fail_cid)}: "
                     f"{_md(h.message.splitlines()[0] if h.message else '')}")
    lines.append("")

    # -- reproducer ---------------------------------------------------------------------------
    lines += ["## Reproduce", ""]
    if bisect is not None and bisect.get("command"):
        command = rep.redactor.argv(str(c) for c in bisect["command"])
        lines += ["The program, as bisected:", "", _fence(" ".join(command)), ""]
    wanted = [c for c in (culprit_cid, fail_cid) if c] + [i.compile_id for i in infos]
    runnable_text = None
    for cid in wanted:
        info = next((i for i in infos if i.compile_id == cid and i.runnables), None)
        if info is None:
            continue
        ev = next((e for e in info.runnables if not run.attributes(e).get("backward")), info.runnables[0])
        src = next((p for n, p, _why in run.files(ev) if n == "fx_graph_runnable.py" and p is not None), None)
        if src is None:
            continue
        name = f"repro_{cid.replace('/', '_').replace('!', 'ca')}.py"
        rep.files.append((src, name))
        try:
            runnable_text = src.read_text(encoding="utf-8", errors="replace")[:400_000]
        except OSError:
            runnable_text = None
        lines += [f"Minimal reproducer torch wrote for compile {_md(cid)} (`fx_graph_runnable`): "
                  f"[files/{name}](files/{name}) — `python files/{name}`", ""]
        break
    else:
        lines += ["No `fx_graph_runnable` in this run (Inductor compiled no graph of it): the program above "
                  "is the reproducer.", ""]

    # -- versions and configs -----------------------------------------------------------------
    lines += ["## Versions and settings", ""]
    versions = dict((bisect or {}).get("versions") or {})
    if runnable_text:
        for m in _VERSION_LINE.finditer(runnable_text):
            key = {"torch version": "torch", "torch cuda version": "cuda"}.get(m.group(1), "torch_git")
            if versions.get(key) is None:
                versions[key] = m.group(2).strip()
    if versions:
        lines += [f"- {_md(k)}: {_md(v)}" for k, v in versions.items() if v is not None]
    else:
        lines.append("- versions: not recorded in this run (no reproducer, no bisect)")
    if culprit.get("backend") or bisect is not None:
        lines.append(f"- backend at fault: {_md(culprit.get('backend') or 'none found')}")
    configs = _CONFIG_LINE.findall(runnable_text or "")
    if configs:
        lines += ["", "Settings that differ from the defaults (from the reproducer):", "", _fence("\n".join(configs))]
    lines.append("")
    lines += _environment(rep.redactor)

    # -- the failure --------------------------------------------------------------------------
    if failing is not None:
        h = failing.head
        lines += ["## The failure", "",
                  f"- event: `{_md(h.event.name)}` (index {h.event.index}), compile {_md(fail_cid)}",
                  f"- exception: {_md(h.exception_type)}", ""]
        if h.message:
            lines += [_fence(h.message[:20_000]), ""]
        for n, p, _why in run.files(h.event):
            if p is not None:
                dest = f"failure_{h.event.index}_{n}"
                rep.files.append((p, dest))
                lines.append(f"- [files/{dest}](files/{dest})")
        lines.append("")

    # -- the culprit graph's stage diff -------------------------------------------------------
    g = culprit.get("graph") or {}
    if g.get("before") and g.get("after") and g.get("run"):
        base = Path(g["run"])
        for key in ("before", "after"):
            rel = Path(g[key])
            src = base / rel
            if src.is_file() and not src.is_symlink() and is_inside(run.path, src):
                rep.files.append((src, f"{key}_{culprit.get('subsystem')}_{rel.name}"))
        lines += [f"## {_md(culprit.get('subsystem'))} of graph {_md(g.get('compile_id'))}", "",
                  f"Before / after: [files/before_{culprit.get('subsystem')}_{Path(g['before']).name}]"
                  f"(files/before_{culprit.get('subsystem')}_{Path(g['before']).name}), "
                  f"[files/after_{culprit.get('subsystem')}_{Path(g['after']).name}]"
                  f"(files/after_{culprit.get('subsystem')}_{Path(g['after']).name})", ""]

    # -- graph breaks and recompiles ----------------------------------------------------------
    lines += ["## Graph breaks and recompiles", ""]
    if not a.worklist and not a.recompiles:
        lines.append("None recorded.")
    for b in a.worklist[:20]:
        j = b.as_json()
        lines.append(f"- graph break ×{j.get('count', 1)}: {_md(j.get('reason') or j.get('gb_type') or '')} "
                     f"at {_md(b.where)}")
    for r in a.recompiles[:20]:
        j = r.as_json()
        lines.append(f"- recompile of {_md(j.get('frame'))}: {_md(j.get('reason') or '')}")
    lines.append("")

    # -- bisect steps -------------------------------------------------------------------------
    if bisect is not None and bisect_file is not None:  # found together
        prefix = str(bisect_file.parent) + os.sep

        def relative(v: Any) -> Any:
            if isinstance(v, str):
                return "." if v == prefix[:-1] else (v[len(prefix):] if v.startswith(prefix) else v)
            if isinstance(v, list):
                return [relative(x) for x in v]
            if isinstance(v, dict):
                return {k: relative(x) for k, x in v.items()}
            return v

        rep.texts.append(("bisect.json", json.dumps(rep.redactor.json(relative(bisect)), indent=2,
                                                    ensure_ascii=False)))
        lines += ["## Bisect", "",
                  f"{bisect.get('runs')} run(s) (torch's compiler bisector: "
                  f"{bisect.get('torch_bisector_runs') if bisect.get('torch_bisector_runs') is not None else 'n/a'}); "
                  "the whole result: [files/bisect.json](files/bisect.json)", "",
                  "| # | change | verdict | why | s |", "|---|---|---|---|---|"]
        for i, s in enumerate(bisect.get("steps") or [], 1):
            lines.append(f"| {i} | {_md(s.get('change'))} | {_md(s.get('verdict'))} | {_md(s.get('why'))} | "
                         f"{s.get('seconds')} |")
        for n in bisect.get("notes") or []:
            lines.append(f"\n- note: {_md(n)}")
        lines.append("")
    rep.text = "\n".join(lines)
    return rep


def _environment(redactor: Redactor, env: dict[str, str] | None = None) -> list[str]:
    """The Environment section: torch / Triton / CUDA settings with their (redacted) values, every other
    variable by name only."""
    shown, hidden = redactor.environment(dict(os.environ) if env is None else env)
    lines = ["## Environment", "",
             "Where this report was written: torch, Triton, CUDA, NCCL and OpenMP settings with their values; "
             "other variables by name only.", ""]
    if shown:
        lines += [_fence("\n".join(f"{k}={_CONTROL.sub(' ', v)}" for k, v in shown)), ""]
    else:
        lines += ["No torch, Triton or CUDA setting is set.", ""]
    if hidden:
        lines += ["Also set (values not shown): "
                  + ", ".join(f"`{n}`" if _NAME.fullmatch(n) else _md(n) for n in hidden), ""]
    return lines


def write_report(rep: Report, out: Path) -> Path:
    """Write ``out/REPORT.md`` and ``out/files/``; ``out`` must not exist or be empty (nothing is
    overwritten). Every byte goes through ``rep.redactor`` (files first, REPORT.md last: the line under its
    title says what was redacted in all of them). Returns the report's path."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ReportError(f"{out} exists and is not an empty folder: not overwritten")
    redactor = rep.redactor
    try:
        (out / "files").mkdir(parents=True, exist_ok=True)
        for src, name in rep.files:
            if src.is_symlink() or not src.is_file() or src.stat().st_size > MAX_COPY:
                continue
            fd = os.open(src, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as f:
                data = f.read(MAX_COPY)
            (out / "files" / Path(name).name).write_bytes(redactor.bytes(data))
        for name, text in rep.texts:
            (out / "files" / Path(name).name).write_text(redactor.text(text) + "\n", encoding="utf-8")
        title, _, body = redactor.text(rep.text).partition("\n")
        target = out / REPORT_FILE
        target.write_text(f"{title}\n\n> **Redaction:** {redactor.summary()}\n{body}\n", encoding="utf-8")
    except OSError as exc:
        raise ReportError(f"cannot write {out}: {exc.strerror or exc}") from None
    return target


def write_report_beside(path: Path) -> Path:
    """Build the report of ``path`` and write it beside the run as ``bug_report_<name>[_<n>]`` (what the
    app's key does: never over an existing folder). Returns the report's path; :class:`ReportError`."""
    rep = build_report(Path(path))
    base = Path(path).resolve().parent
    for n in range(1000):
        out = base / (f"bug_report_{rep.name}" + (f"_{n}" if n else ""))
        if not out.exists():
            return write_report(rep, out)
    raise ReportError(f"no free bug_report_{rep.name}_<n> folder in {base}")
