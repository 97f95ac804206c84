"""An index of ``compiled_functions/`` (FORMAT.md §6, §10.11).

functions -> entries (newest first: ``entry_0`` is the most recent compile) -> guards, decompiled code,
compiled fns (and their split-graph submods), resume fns (recursive; bounded in depth and
deduplicated by name, because the writer copies each resume function's whole tree under every parent
entry). Only paths are collected here; files are read by the views on demand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from magi_format.safepath import is_inside

MAX_RESUME_DEPTH = 4
_EXTRA_SUFFIXES = ("_post_grad", "_runnable", "_split_graph")
_ENTRY_RE = re.compile(r"^entry_(\d+)$")
_SUBMOD_RE = re.compile(r"^submod_(\d+)$")


@dataclass
class CompiledFn:
    name: str
    path: Path | None                  # <cf>.py
    extras: list[Path] = field(default_factory=list)   # _post_grad.py, _runnable.py, _split_graph.py
    submods: list[tuple[str, list[Path]]] = field(default_factory=list)  # (submod_<n> + kind, files)
    is_stub: bool = False


@dataclass
class Entry:
    index: int
    path: Path
    decompiled: Path | None
    bytecode: Path | None
    guards: Path | None
    guard_leaves: int | None
    compiled_fns: list[CompiledFn] = field(default_factory=list)
    resume_fns: list["Function"] = field(default_factory=list)

    @property
    def label(self) -> str:
        newest = " (newest)" if self.index == 0 else ""
        return f"entry_{self.index}{newest}"


@dataclass
class Function:
    name: str
    path: Path
    overview: Path | None
    decompiled: Path | None
    bytecode: Path | None
    entries: list[Entry] = field(default_factory=list)
    duplicate_of: str | None = None   # a resume fn already shown elsewhere
    truncated: bool = False           # deeper resume fns not indexed (depth bound)


def _file(p: Path) -> Path | None:
    return p if p.is_file() else None


def _count_leaves(guards: Path) -> int | None:
    try:
        with guards.open("r", encoding="utf-8", errors="replace") as fh:
            return sum(1 for line in fh if line.lstrip().startswith("LEAF:"))
    except OSError:
        return None


def _listdir(d: Path, base: Path | None = None) -> list[Path]:
    """``d``'s children, or [] when it cannot be listed (a viewer never fails on one bad folder).

    With ``base``, symlinks that lead outside it are left out (a run never links outside itself).
    """
    try:
        children = list(d.iterdir())
    except OSError:
        return []
    if base is None:
        return children
    return [c for c in children if not c.is_symlink() or is_inside(base, c)]


def _compiled_fns(d: Path, base: Path | None = None) -> list[CompiledFn]:
    if not d.is_dir():
        return []
    files = sorted(p for p in _listdir(d, base) if p.is_file() and p.suffix == ".py")
    main = [p for p in files if not p.stem.endswith(_EXTRA_SUFFIXES)]
    out = []
    for p in main:
        cf = CompiledFn(p.stem, p)
        # only <cf>_post_grad / _runnable / _split_graph: another compiled fn whose name merely starts
        # with this one's (``X`` and ``X_1``) is not an extra of it
        cf.extras = [q for q in files if q.stem in {p.stem + x for x in _EXTRA_SUFFIXES}]
        sub = d / p.stem
        if sub.is_dir():
            subs = [s for s in _listdir(sub, base) if s.is_dir() and _SUBMOD_RE.match(s.name)]
            subs.sort(key=lambda s: int(_SUBMOD_RE.match(s.name).group(1)))  # numeric, not string
            for s in subs:
                kind = ""
                readme = s / "README.txt"
                if readme.is_file():
                    try:
                        with readme.open("r", encoding="utf-8", errors="replace") as fh:
                            first = [fh.readline(500).rstrip("\n")]
                    except OSError:
                        first = []
                    if first and "(" in first[0]:
                        kind = first[0][first[0].rfind("(") + 1:].rstrip(")")
                cf.submods.append((f"{s.name} ({kind})" if kind else s.name,
                                   sorted(f for f in _listdir(s, base) if f.is_file())))
        try:
            with p.open("r", encoding="utf-8", errors="replace") as fh:
                head = fh.read(300)
            cf.is_stub = head.count("\n") <= 1 and head.startswith("# ")
        except OSError:
            pass
        out.append(cf)
    return out


def _function(path: Path, depth: int, seen: set[str], base: Path | None = None) -> Function:
    fn = Function(path.name, path, _file(path / "overview.md"), _file(path / "decompiled_code.py"),
                  _file(path / "bytecode_info.txt"))
    entries = []
    for e in _listdir(path, base) if path.is_dir() else ():
        m = _ENTRY_RE.match(e.name)
        if m and e.is_dir():
            entries.append((int(m.group(1)), e))
    for idx, e in sorted(entries):
        g = _file(e / "guards.txt")
        entry = Entry(idx, e, _file(e / "decompiled_code.py"), _file(e / "bytecode_info.txt"), g,
                      _count_leaves(g) if g else None, _compiled_fns(e / "compiled_fns", base))
        rdir = e / "resume_fns"
        if rdir.is_dir():
            for r in sorted(p for p in _listdir(rdir, base) if p.is_dir()):
                if r.name in seen:
                    entry.resume_fns.append(Function(r.name, r, _file(r / "overview.md"), None, None,
                                                     duplicate_of=r.name))
                elif depth >= MAX_RESUME_DEPTH:
                    entry.resume_fns.append(Function(r.name, r, _file(r / "overview.md"),
                                                     _file(r / "decompiled_code.py"), None, truncated=True))
                else:
                    seen.add(r.name)
                    entry.resume_fns.append(_function(r, depth + 1, seen, base))
        fn.entries.append(entry)
    return fn


def index_compiled_functions(run_dir: Path) -> list[Function]:
    """All top-level functions of a run (empty when ``compiled_functions/`` is absent)."""
    run_dir = Path(run_dir)
    root = run_dir / "compiled_functions"
    if not root.is_dir():
        return []
    seen: set[str] = set()
    base = run_dir.resolve()
    return [_function(d, 0, seen, base) for d in sorted(_listdir(root, base)) if d.is_dir()]
