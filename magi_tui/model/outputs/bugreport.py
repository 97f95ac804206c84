"""A compiler bug report, bundled: ``REPORT.md`` plus the files it links to, copied from one run.

What someone filing a torch.compile bug is asked for, from what the run (and a bisect of it) recorded,
starting with a reproducer that runs from the unpacked bundle (issue 31):

* **the program**: the script the run traced (``session.json``'s ``outcome.script``, or the bisect's
  command), the modules beside it that it imports, and the config files its command line names (small,
  inside the program's folder, none named like a credential's), copied under ``files/program/`` with the
  command's paths rewritten to them; ``Reproduce:`` lines are commands that work from the bundle's folder, with what to expect (the
  exception the traced run ended with, or for wrong numbers the same command with torch.compile disabled
  to compare with);
* **the culprit graph**: torch's ``fx_graph_runnable.py`` of the culprit compile (else of the compile
  that failed or raised, else of the first), and the graph Dynamo captured for that compile, made runnable
  on random inputs of the recorded shapes (``files/graph_<id>.py``);
* the versions (the run's: torch from the reproducer, Python and the platform from the bisect's probe;
  and where the report was written, magi-tui's included), the configs that differ from the defaults,
  the failing event with its exception and files, the graph break and recompile findings, the
  environment's torch / Triton / CUDA settings (other variables by name only), and the bisect: its
  result and steps, a bisect by ``--compare-output`` worded as wrong output.

Only regular files are copied, opened with :func:`magi_tui.model.sources.files.open_regular` inside their root
(the run directory, or the program's folder: never through a symlink leading out), each at most
:data:`MAX_COPY` bytes (a bigger one is left out, with a line saying so); the report names them by paths
relative to itself.

Nothing secret leaves with it (issue 32): every byte written -- REPORT.md, ``files/bisect.json``, each
copied or generated file -- passes through :class:`magi_tui.model.outputs.redact.Redactor` (credentials on the
command line, in settings, URLs and files become ``[redacted]``; the home folder ``~``), and REPORT.md
says under its title what was redacted, by kind and count.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from magi_format.safepath import is_inside
from magi_tui.model.analysis.checks import analyse
from magi_tui.model.analysis.metrics import compile_infos
from magi_tui.model.outputs.redact import Redactor
from magi_tui.model.run import RunModel
from magi_tui.model.sources.discovery import find_runs
from magi_tui.model.sources.files import FileProblem, file_size, open_regular

__all__ = ["ReportError", "Report", "build_report", "write_report", "write_report_beside", "find_bisect"]

REPORT_FILE = "REPORT.md"
#: one copied file: a bigger one is left out, with a line in REPORT.md saying so
MAX_COPY = 4 << 20
#: all the copied files together
MAX_BUNDLE = 64 << 20
#: a file the program's command line names (a config) is copied when it is at most this big
MAX_ARG_FILE = 1 << 20
#: the program's files copied at most (the script, the modules beside it it imports, named files)
MAX_PROGRAM_FILES = 200
#: the program's folder in the bundle's ``files/``
PROGRAM_DIR = "program"
_CONFIG_LINE = re.compile(r"^(torch\.[\w.]*config\.[\w.]+ = .+)$", re.MULTILINE)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAME = re.compile(r"[\w.\-]+")
_VERSION_LINE = re.compile(r"^# (torch (?:cuda |git )?version): (.+)$", re.MULTILINE)
_PYTHON = re.compile(r"^python[\d.]*(?:\.exe)?$")
_PY_FLAGS = re.compile(r"^-[bBdEiIOqsSuvx]+$")
_TRACEBACK_FILE = re.compile(r'^\s*File "([^"\n]+)", line \d+', re.MULTILINE)
#: a file the command line names is copied when it is a config (text) of these kinds
_CONFIG_SUFFIXES = frozenset({".yaml", ".yml", ".json", ".jsonl", ".toml", ".ini", ".cfg", ".conf", ".txt", ".csv",
                              ".py"})
#: ... and neither its name nor its option's reads like a credential's (a key file, a token, .netrc, .env)
_CREDENTIAL_FILE = re.compile(r"(?i)secret|token|passw|credential|creds?(?![a-z])|auth|private|api[-_.]?key|"
                              r"\.pem$|\.key$|\.p12$|\.pfx$|netrc|(?:^|/)\.env|id_rsa|id_ed25519|cookie")
#: torch's backends a captured graph can be run on by name (a program's own backend cannot)
_TORCH_BACKENDS = ("eager", "aot_eager", "aot_eager_decomp_partition", "inductor")
#: the dtype abbreviations of a captured graph's annotations (``torch.utils._dtype_abbrs``)
_DTYPES = {"f16": "float16", "f32": "float32", "f64": "float64", "bf16": "bfloat16", "i8": "int8",
           "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8", "u16": "uint16", "u32": "uint32",
           "u64": "uint64", "b8": "bool", "c32": "complex32", "c64": "complex64", "c128": "complex128"}
_FORWARD = re.compile(r"^    def forward\(self(?P<params>[^)]*)\):", re.MULTILINE)
_PARAM = re.compile(r'(\w+)(?:\s*:\s*"([^"]*)")?')
_TENSOR = re.compile(r"^(\w+)\[([\d, ]*)\]\[([\d, ]*)\]([a-z]+(?::\d+)?)$")


class ReportError(ValueError):
    """Unusable input, in words."""


class Report(Struct):
    name: str
    text: str = ""
    #: (path, name in the bundle's files/ folder, the folder it must lie inside: the run, the program's)
    files: list[tuple[Path, str, Path]] = field(default_factory=list)
    #: (name in files/, text) written as they are (the bisect result, its paths made relative; a graph made
    #: runnable)
    texts: list[tuple[str, str]] = field(default_factory=list)
    #: the ``Reproduce:`` commands, run from the bundle's folder (redacted)
    reproduce: list[str] = field(default_factory=list)
    #: what was not copied, and why (REPORT.md lists them at its end)
    left_out: list[str] = field(default_factory=list)
    #: how many files :func:`write_report` wrote into files/
    written: int = 0
    #: what every written byte passes through; its counts say what was redacted (:func:`write_report`)
    redactor: Redactor = field(default_factory=Redactor)

    def add(self, src: Path, name: str, root: Path) -> str | None:
        """Copy ``src`` (inside ``root``) as ``files/<name>``; returns the link, or None when it is left out
        (a line in :attr:`left_out` says why)."""
        if any(n == name for _s, n, _r in self.files) or any(n == name for n, _t in self.texts):
            return f"files/{name}"
        if not is_inside(root, src):
            self.left_out.append(f"{name}: not inside {root.name}/ (a link leading out is never followed)")
            return None
        size, problem = file_size(src, root)
        if problem is not None:
            self.left_out.append(f"{name}: {problem}")
            return None
        if size is not None and size > MAX_COPY:
            self.left_out.append(f"{name}: {size:,} bytes, over the {MAX_COPY:,} a copied file may have")
            return None
        self.files.append((src, name, root))
        return f"files/{name}"


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


def _code(text: str) -> str:
    """``text`` as Markdown inline code (one line; a backtick inside gets a longer fence)."""
    t = _CONTROL.sub(" ", text)
    ticks = "`"
    while ticks in t:
        ticks += "`"
    pad = " " if t.startswith("`") or t.endswith("`") else ""
    return f"{ticks}{pad}{t}{pad}{ticks}"


# -- the program ------------------------------------------------------------------------------------------

class _Program(Struct):
    """The program a run traced, as found on this machine."""

    recorded: str | None = None          # the script as the run or the bisect recorded it
    script: Path | None = None           # found here
    flags: list[str] = field(default_factory=list)   # the interpreter's (-u, -O)
    args: list[str] | None = None        # its arguments (a bisect's command); None: not recorded
    cwd: Path | None = None              # the folder it ran in, when the recorded script tells it
    command: list[str] | None = None     # a bisect's command that is not ``python script.py`` (torchrun ...)


def _python_command(command: list[str]) -> tuple[list[str], str, list[str]] | None:
    """``python [flags] script.py args`` -> (flags, script, args); None for another command."""
    if not command or not _PYTHON.match(os.path.basename(command[0])):
        return None
    i = 1
    while i < len(command) and _PY_FLAGS.match(command[i]):
        i += 1
    if i >= len(command) or command[i].startswith("-"):
        return None  # -m / -c / -W ...: no script
    return list(command[1:i]), command[i], list(command[i + 1:])


def _is_file(p: Path) -> bool:
    try:
        return p.is_file()
    except (OSError, ValueError):
        return False


def _locate(recorded: str, hints: list[str], bases: list[Path]) -> tuple[Path | None, Path | None]:
    """(the script, the folder it ran in) for the script ``recorded`` (as typed: relative to a folder the run
    does not record): absolute as it is; else the recorded file paths of the run (``hints``: its frames, the
    exception's) that end with it, then ``bases`` joined with it."""
    try:
        p = Path(recorded)
        norm = os.path.normpath(recorded)
    except (TypeError, ValueError):
        return None, None
    if p.is_absolute():
        return (p, None) if _is_file(p) else (None, None)
    if norm.startswith(".."):
        cands = [Path(b) / norm for b in bases]
    else:
        tail = os.sep + norm
        cands = [Path(h) for h in dict.fromkeys(hints) if h and os.path.isabs(h) and h.endswith(tail)]
        cands += [Path(b) / norm for b in bases]
    for c in cands:
        if _is_file(c) and not str(c).startswith("<"):
            cwd = Path(os.path.normpath(str(c)[:-len(norm)] or os.sep))
            return c, cwd
    return None, None


def _find_program(run: RunModel, a: Any, bisect: dict | None, bisect_file: Path | None) -> _Program:
    outcome = run.outcome  # session.json's outcome (model/session.read_session)
    prog = _Program(recorded=outcome.script if outcome is not None else None)
    command = [str(c) for c in (bisect or {}).get("command") or []]
    parsed = _python_command(command)
    if parsed is not None:
        flags, script, args = parsed
        if prog.recorded is None or os.path.normpath(prog.recorded) == os.path.normpath(script):
            prog.recorded, prog.flags, prog.args = script, flags, args
    elif command:
        prog.command = command
    if not prog.recorded:
        return prog
    hints: list[str] = []
    exc = outcome.exception if outcome is not None else None
    if exc is not None:
        hints += [h for h in (exc.call_file, exc.file) if h]
        hints += _TRACEBACK_FILE.findall(exc.traceback or "")
    hints += [f.file for f in getattr(a, "frames", ()) if getattr(f, "file", None)]
    bases = list(run.path.resolve().parents)[:6]
    if bisect_file is not None:
        bases = [*list(bisect_file.parent.parents)[:3], *bases]
    prog.script, prog.cwd = _locate(prog.recorded, hints, list(dict.fromkeys(bases)))
    return prog


def _imports(text: str) -> set[str]:
    """The top-level names a module imports (absolute imports; nothing when it does not parse)."""
    import ast  # here: only a report parses a program

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(n.name.split(".")[0] for n in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return names


def _read_small(path: Path, root: Path, limit: int = MAX_COPY) -> str | None:
    try:
        fd, st = open_regular(path, root)
    except FileProblem:
        return None
    try:
        if st.st_size > limit:
            return None
        return os.read(fd, limit).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def _local_modules(script: Path, root: Path, text: str) -> list[Path]:
    """The modules beside the script that it imports (``name.py``, or a package's ``.py`` files), and the
    ones those import, in order; at most :data:`MAX_PROGRAM_FILES`."""
    out: list[Path] = []
    seen = {script}
    queue = [text]
    while queue and len(out) < MAX_PROGRAM_FILES:
        for name in sorted(_imports(queue.pop(0))):
            if not name.isidentifier():
                continue
            found: list[Path] = []
            mod = root / f"{name}.py"
            if _is_file(mod):
                found = [mod]  # (a link leading out is refused when it is copied, with a line saying so)
            elif _is_file(root / name / "__init__.py") and is_inside(root, root / name):
                for d, dirs, files in os.walk(root / name):  # never into a linked folder
                    dirs[:] = sorted(x for x in dirs if x != "__pycache__" and not x.startswith("."))
                    found += [Path(d) / f for f in sorted(files) if f.endswith(".py")]
                    if len(found) > MAX_PROGRAM_FILES:
                        break
            for f in found:
                if f in seen or len(out) >= MAX_PROGRAM_FILES:
                    continue
                seen.add(f)
                out.append(f)
                t = _read_small(f, root)
                if t:
                    queue.append(t)
    return out


def _program_section(rep: Report, prog: _Program, expect: str | None, wrong_output: bool) -> list[str]:
    """Copy the program into ``files/program/`` and say how to run it from the bundle; the ``Reproduce:``
    command goes to ``rep.reproduce``."""
    lines: list[str] = []
    if prog.script is None:
        if prog.recorded:
            lines += [f"The program `{_md(os.path.basename(prog.recorded))}` was not found here (the run recorded "
                      f"{_code(prog.recorded)}, relative to the folder it ran in): not copied.", ""]
        elif prog.command:
            lines += ["The command is not `python script.py`: its program is not copied.", ""]
        else:
            lines += ["The program is not recorded here (no `session.json` script, no bisect command): "
                      "not copied.", ""]
        return lines
    script, root = prog.script, prog.script.parent
    base = f"{PROGRAM_DIR}/{script.name}"
    link = rep.add(script, base, root)
    if link is None:
        lines += [f"The program {_code(str(script))} could not be copied: {_md(rep.left_out[-1])}.", ""]
        return lines
    text = _read_small(script, root) or ""
    modules = []
    for f in _local_modules(script, root, text):
        rel = f.relative_to(root).as_posix()
        if rep.add(f, f"{PROGRAM_DIR}/{rel}", root):
            modules.append(rel)
    named: list[str] = []
    args: list[str] = []
    cwd = prog.cwd or root
    option = ""
    for arg in prog.args or []:
        opt, eq, val = arg.partition("=") if arg.startswith("-") else (option, "", arg)
        if arg.startswith("-") and not eq:
            args.append(arg)
            option = arg
            continue
        option = ""
        new = _named_file(rep, val, opt, cwd, root, script, named)
        args.append((f"{opt}{eq}{new}" if eq else new) if new is not None else arg)
    argv = ["python", *prog.flags, f"files/{base}", *rep.redactor.argv(args)]
    command = shlex.join(argv)
    rep.reproduce.append(command)
    lines += [f"Reproduce: {_code(command)}", ""]
    what = [f"[{base}]({link}) (the script the run traced)"]
    if modules:
        what.append(f"{len(modules)} module(s) beside it that it imports ("
                    + ", ".join(_code(m) for m in modules[:10]) + (", …" if len(modules) > 10 else "") + ")")
    if named:
        what.append("the file(s) its command line names (" + ", ".join(_code(m) for m in named) + ")")
    lines.append("From this folder: the program, copied into `files/program/`: " + "; ".join(what) + ".")
    if prog.args is None:
        lines.append("The arguments it ran with are not recorded (the tracer keeps the script alone: arguments "
                     "may hold secrets): add them if it needs any.")
    elif any("[redacted]" in a for a in argv):
        lines.append("Some arguments were redacted: put your own values in place of `[redacted]`.")
    if wrong_output:
        ref = shlex.join(["env", "TORCH_COMPILE_DISABLE=1", *argv])
        rep.reproduce.append(ref)
        lines.append(f"The numbers it prints are wrong: compare them with the program's in plain eager PyTorch, "
                     f"Reproduce: {_code(ref)}")
    if expect:
        lines.append(f"Expected: {_md(expect)}")
    lines.append("")
    return lines


def _named_file(rep: Report, val: str, option: str, cwd: Path, root: Path, script: Path,
                named: list[str]) -> str | None:
    """A command-line value (of ``option``, if any) naming a file: its path in the bundle (copied when it is a
    small config inside the program's folder, and neither it nor its option is named like a credential), or
    None to keep the value as it is."""
    if not val or len(val) > 4096 or "\x00" in val or val.startswith("-") or "://" in val:
        return None
    try:
        p = Path(val) if os.path.isabs(val) else cwd / val
        if not p.exists():
            return None
        real, real_root = p.resolve(), root.resolve()
    except (OSError, ValueError, RuntimeError):
        return None
    if real == script.resolve():
        return f"files/{PROGRAM_DIR}/{script.name}"
    if not real.is_file():
        rep.left_out.append(f"the command line names the folder {val}: not copied")
        return None
    if not is_inside(root, p):
        rep.left_out.append(f"the command line names {val}: outside the program's folder, not copied")
        return None
    if _CREDENTIAL_FILE.search(option) or _CREDENTIAL_FILE.search(real.name) or _CREDENTIAL_FILE.search(p.name):
        rep.left_out.append(f"the command line names {val}: named like a credential's file, not copied")
        return None
    if real.suffix.lower() not in _CONFIG_SUFFIXES:
        rep.left_out.append(f"the command line names {val}: not a config file ({real.suffix or 'no suffix'}), "
                            "not copied")
        return None
    size, problem = file_size(p, root)
    if problem is not None or size is None:
        rep.left_out.append(f"the command line names {val}: {problem}")
        return None
    if size > MAX_ARG_FILE:
        rep.left_out.append(f"the command line names {val}: {size:,} bytes, over the {MAX_ARG_FILE:,} a named "
                            "file may have, not copied")
        return None
    rel = real.relative_to(real_root).as_posix()
    if rep.add(real, f"{PROGRAM_DIR}/{rel}", root) is None:
        return None
    named.append(rel)
    return f"files/{PROGRAM_DIR}/{rel}"


# -- the graph Dynamo captured, runnable --------------------------------------------------------------------

def _captured_runnable(text: str, cid: str, frame: str | None, backend: str) -> str | None:
    """Dynamo's captured graph (``captured_graph.py``: ``GraphModule.forward`` annotated with each input's
    dtype, sizes, strides and device) as a script that runs it on random inputs of those through
    ``torch.compile(backend=...)``; None when an input is not a tensor of known sizes (a SymInt, a symbolic
    size)."""
    m = _FORWARD.search(text)
    if m is None or "class GraphModule(" not in text:
        return None
    inputs: list[str] = []
    for pm in _PARAM.finditer(m.group("params")):
        tm = _TENSOR.match(pm.group(2)) if pm.group(2) is not None else None
        if tm is None or tm.group(1) not in _DTYPES:
            return None
        size = [x.strip() for x in tm.group(2).split(",") if x.strip()]
        stride = [x.strip() for x in tm.group(3).split(",") if x.strip()]
        if len(size) != len(stride):
            return None
        inputs.append(f"        rand_strided(({''.join(x + ', ' for x in size)}), "
                      f"({''.join(x + ', ' for x in stride)}), torch.{_DTYPES[tm.group(1)]}, {tm.group(4)!r}),"
                      f"  # {pm.group(1)}")
    where = f" ({frame})" if frame else ""
    return f"""# The graph Dynamo captured for compile {cid}{where}, made runnable by `magi-tui report`: its inputs are
# random, of the recorded dtypes, sizes, strides and devices (integers are zeros), and it runs through
# torch.compile with the backend named on the command line.
#
#   python {{this file}} [BACKEND]      (default: {backend}; torch's: eager, aot_eager, inductor, ...)
import sys
from math import inf, nan  # noqa: F401  (the graph's code may name them)

import torch
from torch import device  # noqa: F401

{text.rstrip()}


def make_inputs():
    from torch._dynamo.testing import rand_strided

    return [
{chr(10).join(inputs)}
    ]


def build(cls=None):
    \"\"\"The captured module, its nested graphs (a higher-order op's body) made submodules.\"\"\"
    cls = cls or GraphModule
    mod = cls()
    for name, sub in vars(cls).items():
        if isinstance(sub, type) and issubclass(sub, torch.nn.Module):
            setattr(mod, name, build(sub))
    return mod


if __name__ == "__main__":
    backend = sys.argv[1] if len(sys.argv) > 1 else {backend!r}
    torch.compile(build(), backend=backend)(*make_inputs())
    print("compile {cid}'s captured graph ran on", backend)
"""


def _graph_section(rep: Report, run: RunModel, cid: str, backend: str) -> list[str]:
    """The graph Dynamo captured for compile ``cid``: ``files/graph_<id>.py``, runnable when its inputs are
    plain tensors (else copied as it is)."""
    ev = next((e for e in run.events if e.compile_id == cid and e.name.endswith("after_dynamo_capture")), None)
    if ev is None:
        return []
    src = next((p for n, p, _why in run.files(ev) if n == "captured_graph.py" and p is not None), None)
    if src is None:
        return []
    name = f"graph_{_cid_name(cid)}.py"
    text = _read_small(src, run.files_root)
    script = _captured_runnable(text, cid, run.attributes(ev).get("frame"), backend) if text else None
    if script is not None:
        rep.texts.append((name, script))
        command = f"python files/{name}"
        rep.reproduce.append(command)
        return [f"The graph Dynamo captured for compile {_md(cid)}, runnable on random inputs of its recorded "
                f"shapes: [files/{name}](files/{name}) — Reproduce: {_code(command)} "
                f"(`{backend}`; name another backend after it).", ""]
    if rep.add(src, name, run.files_root) is None:
        return []
    return [f"The graph Dynamo captured for compile {_md(cid)}: [files/{name}](files/{name}) (its inputs are "
            "not all tensors of known sizes: not made runnable).", ""]


def _cid_name(cid: str) -> str:
    return re.sub(r"[^\w.\-]", "_", cid.replace("/", "_").replace("!", "ca"))


def _versions_here() -> list[str]:
    """Where the report is written: magi-tui's version, Python's, the platform, torch's if installed (its
    metadata: torch is not imported)."""
    import platform
    from importlib import metadata

    from magi_tui import __version__

    try:
        torch = metadata.version("torch")
    except (metadata.PackageNotFoundError, ValueError):
        torch = "not installed"
    return [f"- magi-tui: {__version__} (wrote this report)",
            f"- where this report was written: python {platform.python_version()}, {_md(platform.platform())}, "
            f"torch {_md(torch)}"]


def _expectation(outcome: Any, bad_step: dict | None) -> str | None:
    """What the program does when the bug shows, in words: the exception the traced run ended with, or the
    bisect's reproducing run's exit."""
    exc = outcome.exception if outcome is not None else None
    if exc is not None:
        msg = (exc.message or "").strip().splitlines()
        return f"it raises {exc.short_type}" + (f": {msg[0][:300]}" if msg else "") + \
            (f" (exit code {outcome.exit_code})" if outcome.exit_code is not None else "")
    if bad_step is not None and bad_step.get("why"):
        return str(bad_step["why"])[:300]
    if outcome is not None and outcome.exit_code:
        return f"it exits with code {outcome.exit_code}"
    return None


def _ended(outcome: Any) -> str | None:
    """How the traced program ended, one line (session.json's outcome)."""
    if outcome is None:
        return None
    if outcome.interrupted:
        return "interrupted (Ctrl-C)"
    exc = outcome.exception
    code = f"exit code {outcome.exit_code}" if outcome.exit_code is not None else "its block ended"
    if exc is None:
        return code
    where = {"compile": f"by torch.compile while it compiled {exc.compile_id or 'a frame'}",
             "compiled_code": f"while compiled graph {exc.compile_id or '?'} ran"
                              + (" (inside torch's compiled code)" if exc.in_graph else ""),
             }.get(exc.origin, "by the program's own code")
    at = (f" at {os.path.basename(exc.call_file)}:{exc.call_line}" if exc.call_file and exc.call_line
          else f" at {os.path.basename(exc.file)}:{exc.line}" if exc.file and exc.line else "")
    msg = (exc.message or "").strip().splitlines()
    return f"{code}: {exc.short_type} raised {where}{at}" + (f": {msg[0][:300]}" if msg else "")


def _verdict(step: dict, mode: str | None) -> str:
    v = str(step.get("verdict") or "")
    if mode == "output":  # (bisect.json's verdicts, as the numbers printed make them)
        return {"reproduces": "wrong output", "passes": "right output"}.get(v, v)
    return v


def _same_path(a: object, b: Path) -> bool:
    try:
        return isinstance(a, str) and bool(a) and Path(a).resolve() == b.resolve()
    except (OSError, ValueError, RuntimeError):
        return False


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
    run = RunModel(run_path).load()
    if run.error and not run.event_count:
        raise ReportError(f"{run_path}: {run.error}")
    rep = Report(name=run.path.name)
    a = analyse(run)
    infos = compile_infos(run)
    outcome = run.outcome
    lines: list[str] = [f"# torch.compile bug report: {_md(run.path.name)}", ""]

    culprit = (bisect or {}).get("culprit") or {}
    culprit_cid = (culprit.get("graph") or {}).get("compile_id")
    failing = next((c for c in a.problems if not c.recovered), None)
    fail_cid = failing.head.event.compile_id if failing is not None else None
    exc = outcome.exception if outcome is not None else None
    crash_cid = exc.compile_id if exc is not None and exc.origin in ("compile", "compiled_code") else None
    mode = (bisect or {}).get("mode")
    steps = [st for st in (bisect or {}).get("steps") or [] if isinstance(st, dict)]
    own_step = next((st for st in steps if _same_path(st.get("run"), run.path)), None)
    bad_step = next((st for st in steps if st.get("verdict") == "reproduces"), None)
    if own_step is not None and own_step.get("verdict") == "reproduces":
        bad_step = own_step
    # a run of a bisect is judged as the bisect judged it: by the numbers it printed (--compare-output) or
    # by its exit, not by its compiles alone (a trace that reads ok / recovered of a run that was wrong)
    here = own_step if own_step is not None else (
        bad_step if bisect is not None and bisect.get("reproduced") and _same_path(culprit.get("run"), run.path)
        else None)
    verdict: str | None = None
    if here is not None and mode == "output":
        verdict = _verdict(here, mode)
    elif here is not None and here.get("verdict") == "reproduces" and a.status in ("ok", "recovered", "degraded"):
        verdict = "fails"
    wrong_output = verdict == "wrong output"

    # -- summary ------------------------------------------------------------------------------
    lines += ["## Summary", ""]
    trace = f"{run.event_count} events, {len(a.frames)} frame(s)"
    said = {"wrong output": " — the numbers it printed differ from the program's with torch.compile disabled",
            "right output": " — a run of the bisect that printed the reference's numbers",
            "fails": " — the bug shows in this run (the bisect judged it by its exit)"}
    if here is not None and verdict in said:
        why = here.get("change") if verdict == "right output" else here.get("why")
        lines.append(f"- run status: **{verdict}**" + (f" ({_md(why)})" if why else "") + said[verdict]
                     + f"; the trace alone reads {_md(a.status)} ({trace})")
    else:
        lines.append(f"- run status: **{_md(a.status)}** ({trace})")
    ended = _ended(outcome)
    if ended:
        lines.append(f"- the program ended: {_md(ended)}")
    if bisect is not None:
        how = ("by the numbers it prints, against torch.compile disabled" if mode == "output"
               else "by its exit code" if mode == "exit" else "")
        if bisect.get("error"):
            lines.append(f"- bisect: could not run: {_md(bisect['error'])}")
        elif not bisect.get("reproduced"):
            lines.append(f"- bisect{f' ({how})' if how else ''}: **not reproduced**")
        else:
            lines.append(f"- bisect{f' ({how})' if how else ''} culprit: "
                         f"**{_md(culprit.get('layer') or culprit.get('backend'))}**"
                         + (f", stage `{_md(culprit['subsystem'])}`" if culprit.get("subsystem") else "")
                         + (f" application #{culprit['bisect_number']}" if culprit.get("applications") else "")
                         + (f" ({_md(culprit['debug_info'])})" if culprit.get("debug_info") else "")
                         + (f", graph {_md(culprit_cid)}" if culprit_cid else ""))
    if bad_step is not None:
        lines.append(f"- the program, when the bug shows: "
                     f"{'wrong output: ' if mode == 'output' else ''}{_md(bad_step.get('why'))}")
    if failing is not None:
        h = failing.head
        lines.append(f"- failure: {_md(h.exception_type or h.event.name)} in compile {_md(fail_cid)}: "
                     f"{_md(h.message.splitlines()[0] if h.message else '')}")
    lines.append("")

    # -- reproducer ---------------------------------------------------------------------------
    lines += ["## Reproduce", "", "Each `Reproduce:` command runs from this folder (the unpacked bundle).", ""]
    prog = _find_program(run, a, bisect, bisect_file)
    lines += _program_section(rep, prog, None if wrong_output else _expectation(outcome, bad_step), wrong_output)
    if bisect is not None and bisect.get("command"):
        bisected = rep.redactor.argv(str(c) for c in bisect["command"])
        lines += ["The program, as bisected:", "", _fence(" ".join(bisected)), ""]
    wanted = [c for c in (culprit_cid, fail_cid, crash_cid) if c] + [i.compile_id for i in infos]
    runnable_text = None
    runnable_cid = None
    for cid in wanted:
        info = next((i for i in infos if i.compile_id == cid and i.runnables), None)
        if info is None:
            continue
        ev = next((e for e in info.runnables if not run.attributes(e).get("backward")), info.runnables[0])
        src = next((p for n, p, _why in run.files(ev) if n == "fx_graph_runnable.py" and p is not None), None)
        if src is None:
            continue
        name = f"repro_{cid.replace('/', '_').replace('!', 'ca')}.py"
        if rep.add(src, name, run.files_root) is None:
            lines += [f"The reproducer torch wrote for compile {_md(cid)} is left out: {_md(rep.left_out[-1])}", ""]
            break
        runnable_text = _read_small(src, run.files_root, 400_000) or ""
        runnable_cid = cid
        command = f"python files/{name}"
        rep.reproduce.append(command)
        lines += [f"Reproduce the graph alone: {_code(command)} — the minimal reproducer torch wrote for compile "
                  f"{_md(cid)} (`fx_graph_runnable`): [files/{name}](files/{name}). Its inputs are random, of the "
                  "recorded shapes: a bug that depends on the values (an index out of range) may not show.", ""]
        break
    else:
        lines += ["No `fx_graph_runnable` in this run (Inductor compiled no graph of it).", ""]
    graph_cid = next((c for c in (culprit_cid, fail_cid, crash_cid) if c), None)
    if graph_cid:
        backend = culprit.get("backend") if culprit.get("backend") in _TORCH_BACKENDS else (
            "inductor" if runnable_cid == graph_cid else "eager")
        lines += _graph_section(rep, run, str(graph_cid), str(backend))

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
    if "python" not in versions:
        lines.append("- python, platform: not recorded in this run (a bisect's probe records them)")
    lines += _versions_here()
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
                link = rep.add(p, f"failure_{h.event.index}_{n}", run.files_root)
                if link:
                    lines.append(f"- [{link}]({link})")
        lines.append("")
    elif exc is not None and exc.traceback:
        lines += ["## How the program ended", "", f"- {_md(_ended(outcome))}", "",
                  _fence(exc.traceback[-20_000:]), ""]

    # -- the culprit graph's stage diff -------------------------------------------------------
    g = culprit.get("graph") or {}
    if g.get("before") and g.get("after") and g.get("run"):
        base = Path(g["run"])
        stage = _cid_name(str(culprit.get("subsystem")))
        links = []
        for key in ("before", "after"):
            rel = Path(g[key])
            links.append(rep.add(base / rel, f"{key}_{stage}_{rel.name}", run.path))
        lines += [f"## {_md(culprit.get('subsystem'))} of graph {_md(g.get('compile_id'))}", "",
                  "Before / after: " + ", ".join(f"[{x}]({x})" for x in links if x), ""]

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
                  f"{bisect.get('runs')} run(s) "
                  + ("by the numbers printed, against torch.compile disabled " if mode == "output" else "")
                  + "(torch's compiler bisector: "
                  f"{bisect.get('torch_bisector_runs') if bisect.get('torch_bisector_runs') is not None else 'n/a'}); "
                  "the whole result: [files/bisect.json](files/bisect.json)", "",
                  "| # | change | verdict | why | s |", "|---|---|---|---|---|"]
        for i, st in enumerate(steps, 1):
            lines.append(f"| {i} | {_md(st.get('change'))} | {_md(_verdict(st, mode))} | {_md(st.get('why'))} | "
                         f"{st.get('seconds')} |")
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


def _bundle_path(files_dir: Path, name: str) -> Path | None:
    """``files_dir / name`` for a relative name with no ``..`` (None else)."""
    parts = Path(name).parts
    if not parts or Path(name).is_absolute() or any(x in ("..", ".", "") for x in parts):
        return None
    return files_dir.joinpath(*parts)


def write_report(rep: Report, out: Path) -> Path:
    """Write ``out/REPORT.md`` and ``out/files/``; ``out`` must not exist or be empty (nothing is
    overwritten). Every byte goes through ``rep.redactor`` (files first, REPORT.md last: the line under its
    title says what was redacted in all of them, and a last section what was left out). Each file is opened
    inside its root (never through a link leading out) and copied when it is at most :data:`MAX_COPY`
    bytes, all of them together at most :data:`MAX_BUNDLE`. Returns the report's path."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ReportError(f"{out} exists and is not an empty folder: not overwritten")
    redactor = rep.redactor
    left_out = list(rep.left_out)
    rep.written = 0
    total = 0
    try:
        files_dir = out / "files"
        files_dir.mkdir(parents=True, exist_ok=True)
        for src, name, root in rep.files:
            dest = _bundle_path(files_dir, name)
            if dest is None:
                continue
            try:
                fd, st = open_regular(src, root)
            except FileProblem as exc:
                left_out.append(f"{name}: {exc}")
                continue
            try:
                data = os.read(fd, MAX_COPY + 1) if st.st_size <= MAX_COPY else b""
            finally:
                os.close(fd)
            if st.st_size > MAX_COPY or len(data) > MAX_COPY:
                left_out.append(f"{name}: over the {MAX_COPY:,} bytes a copied file may have")
                continue
            if total + len(data) > MAX_BUNDLE:
                left_out.append(f"{name}: the bundle already holds {total:,} bytes (at most {MAX_BUNDLE:,})")
                continue
            total += len(data)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(redactor.bytes(data))
            rep.written += 1
        for name, text in rep.texts:
            dest = _bundle_path(files_dir, name)
            if dest is None:
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(redactor.text(text) + "\n", encoding="utf-8")
            rep.written += 1
        body_text = rep.text
        if left_out:
            body_text += "\n## Left out\n\n" + "\n".join(f"- {_md(x)}" for x in left_out) + "\n"
        title, _, body = redactor.text(body_text).partition("\n")
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
