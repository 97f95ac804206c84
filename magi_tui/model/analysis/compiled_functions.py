"""An index of ``compiled_functions/`` (FORMAT.md §6, §10.11).

functions -> entries (in Dynamo's cache order, most recently *used* first) -> guards, decompiled code,
compiled fns (and their split-graph submods), resume fns (recursive; bounded in depth and
deduplicated by name, because the writer copies each resume function's whole tree under every parent
entry). Only paths are collected here; files are read by the views on demand, through
:mod:`magi_tui.model.sources.files` (inside the run, regular files only, bounded).

Nothing outside the run is indexed or read: a ``compiled_functions/`` that is itself a link out of the
run gives no functions (:func:`compiled_functions_problem` says why), links out of the run in a listing
are left out, and a fixed-name file (``guards.txt``, ``overview.md``, ...) that is a link out, a FIFO
or a device is not indexed as a path (so no consumer of the index can read it) but named in
``refused`` with the reason, for the view to show.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from msgspec import Struct, field

from magi_format.guards import count_leaf_guards
from magi_format.layout import COMPILED_FUNCTIONS_DIR
from magi_format.lazyre import lazy_re
from magi_format.safepath import is_inside
from magi_tui.model.sources import files as _files

MAX_RESUME_DEPTH = 4
_EXTRA_SUFFIXES = ("_post_grad", "_runnable", "_split_graph")
_ENTRY_RE = lazy_re(r"^entry_(\d+)$")
_SUBMOD_RE = lazy_re(r"^submod_(\d+)$")


class CompiledFn(Struct):
    name: str
    path: Path | None                  # <cf>.py
    extras: list[Path] = field(default_factory=list)   # _post_grad.py, _runnable.py, _split_graph.py
    submods: list[tuple[str, list[Path]]] = field(default_factory=list)  # (submod_<n> + kind, files)
    is_stub: bool = False


class Entry(Struct):
    index: int
    path: Path
    decompiled: Path | None
    bytecode: Path | None
    guards: Path | None
    guard_leaves: int | None
    compiled_fns: list[CompiledFn] = field(default_factory=list)
    resume_fns: list["Function"] = field(default_factory=list)
    #: fixed-name files that are there but refused: (file name, why)
    refused: list[tuple[str, str]] = field(default_factory=list)
    #: the compile that made this entry, as the function's overview.md names it (our tracer's runs)
    compile_id: str | None = None

    @property
    def label(self) -> str:
        # Dynamo's cache list is most recently *used* first: entry_0 is not necessarily the newest compile
        mru = " (most recently used)" if self.index == 0 else ""
        return f"entry_{self.index}{mru}"


class Function(Struct):
    name: str
    path: Path
    overview: Path | None
    decompiled: Path | None
    bytecode: Path | None
    entries: list[Entry] = field(default_factory=list)
    duplicate_of: str | None = None   # a resume fn already shown elsewhere
    truncated: bool = False           # deeper resume fns not indexed (depth bound)
    problem: str | None = None        # indexing stopped here (a hostile or broken tree)
    #: fixed-name files that are there but refused: (file name, why)
    refused: list[tuple[str, str]] = field(default_factory=list)


#: bytes of guards.txt read to count its leaves
MAX_GUARDS_BYTES = 64 << 20


def _file(p: Path, base: Path | None = None, refused: list | None = None) -> Path | None:
    """``p`` if it is a regular file inside ``base``; None if nothing is there. Something else there
    (a link out of the run, a FIFO, a device, a directory) is None too, and named in ``refused``."""
    try:
        if not (p.is_symlink() or p.exists()):
            return None
    except (OSError, ValueError):
        return None
    problem = _files.problem_of(p, base)
    if problem is None:
        return p
    if refused is not None:
        refused.append((p.name, problem))
    return None


def _count_leaves(guards: Path, base: Path | None = None) -> int | None:
    try:
        fd, _ = _files.open_regular(guards, base)
    except _files.FileProblem:
        return None
    try:
        data = os.pread(fd, MAX_GUARDS_BYTES, 0)
    except OSError:
        return None
    finally:
        os.close(fd)
    # torch 2.13's tree (``+- TENSOR_MATCH: …``) and upstream's ``LEAF: …`` lines: one rule for both
    return count_leaf_guards(data.decode("utf-8", "replace"))


def _listdir(d: Path, base: Path | None = None) -> list[Path]:
    """``d``'s children, or [] when it cannot be listed (a viewer never fails on one bad folder).

    With ``base``, symlinks that lead outside it are left out (a run never links outside itself).
    """
    try:
        children = list(d.iterdir())
    except (OSError, ValueError):
        return []
    if base is None:
        return children
    return [c for c in children if not _is_link(c) or is_inside(base, c)]


def _is_link(p: Path) -> bool:
    try:
        return p.is_symlink()
    except (OSError, ValueError):
        return True


def _is_dir(p: Path) -> bool:
    try:
        return p.is_dir()
    except (OSError, ValueError):
        return False


def _is_file(p: Path) -> bool:
    try:
        return p.is_file()
    except (OSError, ValueError):
        return False


def _compiled_fns(d: Path, base: Path | None = None) -> list[CompiledFn]:
    if not _is_dir(d):
        return []
    files = sorted(p for p in _listdir(d, base) if _is_file(p) and p.suffix == ".py")
    main = [p for p in files if not p.stem.endswith(_EXTRA_SUFFIXES)]
    out = []
    for p in main:
        cf = CompiledFn(p.stem, p)
        # only <cf>_post_grad / _runnable / _split_graph: another compiled fn whose name merely starts
        # with this one's (``X`` and ``X_1``) is not an extra of it
        cf.extras = [q for q in files if q.stem in {p.stem + x for x in _EXTRA_SUFFIXES}]
        sub = d / p.stem
        if _is_dir(sub) and (base is None or is_inside(base, sub)):
            subs = [s for s in _listdir(sub, base) if _is_dir(s) and _SUBMOD_RE.match(s.name)]
            subs.sort(key=lambda s: int(_SUBMOD_RE.match(s.name).group(1)))  # type: ignore[union-attr]  # numeric
            for s in subs:
                kind = ""
                text, _ = _files.read_head(s / "README.txt", 500, base)
                first = [text.split("\n", 1)[0]] if text else []
                if first and "(" in first[0]:
                        kind = first[0][first[0].rfind("(") + 1:].rstrip(")")
                cf.submods.append((f"{s.name} ({kind})" if kind else s.name,
                                   sorted(f for f in _listdir(s, base) if _is_file(f))))
        head, _ = _files.read_head(p, 300, base)
        if head is not None:
            cf.is_stub = head.count("\n") <= 1 and head.startswith("# ")
        out.append(cf)
    return out


#: ``## entry\\[1\\] (compile 0/0)`` in the tracer's overview.md
_OVERVIEW_ENTRY_RE = lazy_re(r"^## entry\\\[(\d+)\\\] \(compile ([!\d/_]{3,40})\)$", re.M)


def _function(path: Path, depth: int, seen: set[str], base: Path | None = None) -> Function:
    refused: list[tuple[str, str]] = []
    fn = Function(path.name, path, _file(path / "overview.md", base, refused),
                  _file(path / "decompiled_code.py", base, refused),
                  _file(path / "bytecode_info.txt", base, refused), refused=refused)
    try:
        _entries(fn, path, depth, seen, base)
    except Exception as exc:  # a hostile tree: keep what was indexed, say where it stopped
        fn.problem = f"indexing stopped: {type(exc).__name__}"
    if fn.overview is not None and fn.entries:
        text, _ = _files.read_head(fn.overview, 65536, base)
        ids = {int(m.group(1)): m.group(2) for m in _OVERVIEW_ENTRY_RE.finditer(text or "")}
        for e in fn.entries:
            e.compile_id = ids.get(e.index)
    return fn


def _entries(fn: Function, path: Path, depth: int, seen: set[str], base: Path | None) -> None:
    entries = []
    for e in _listdir(path, base) if _is_dir(path) else ():
        m = _ENTRY_RE.match(e.name)
        if m and _is_dir(e):
            entries.append((int(m.group(1)), e))
    for idx, e in sorted(entries):
        refused: list[tuple[str, str]] = []
        g = _file(e / "guards.txt", base, refused)
        entry = Entry(idx, e, _file(e / "decompiled_code.py", base, refused),
                      _file(e / "bytecode_info.txt", base, refused), g,
                      _count_leaves(g, base) if g else None, _compiled_fns(e / "compiled_fns", base),
                      refused=refused)
        rdir = e / "resume_fns"
        if _is_dir(rdir) and (base is None or is_inside(base, rdir)):
            for r in sorted(p for p in _listdir(rdir, base) if _is_dir(p)):
                if r.name in seen:
                    entry.resume_fns.append(Function(r.name, r, _file(r / "overview.md", base), None, None,
                                                     duplicate_of=r.name))
                elif depth >= MAX_RESUME_DEPTH:
                    entry.resume_fns.append(Function(r.name, r, _file(r / "overview.md", base),
                                                     _file(r / "decompiled_code.py", base), None,
                                                     truncated=True))
                else:
                    seen.add(r.name)
                    entry.resume_fns.append(_function(r, depth + 1, seen, base))
        fn.entries.append(entry)


def compiled_functions_problem(run_dir: Path) -> str | None:
    """Why ``compiled_functions/`` is not indexed (absent, a link out of the run, unreadable), or None."""
    try:
        root = Path(run_dir) / COMPILED_FUNCTIONS_DIR
        if not root.exists() and not root.is_symlink():
            return "this run has no compiled_functions/"
        if not is_inside(Path(run_dir), root):
            return "refused: compiled_functions/ leads outside the run directory (a link)"
        if not root.is_dir():
            return "compiled_functions/ is not a directory"
        os.listdir(root)
    except (OSError, ValueError) as exc:
        return f"cannot read compiled_functions/: {getattr(exc, 'strerror', None) or type(exc).__name__}"
    return None


def index_compiled_functions(run_dir: Path) -> list[Function]:
    """All top-level functions of a run (empty when ``compiled_functions/`` is absent, is a link
    out of the run, or cannot be read: :func:`compiled_functions_problem` says which). Never raises."""
    try:
        run_dir = Path(run_dir)
        if compiled_functions_problem(run_dir) is not None:
            return []
        root = run_dir / COMPILED_FUNCTIONS_DIR
        seen: set[str] = set()
        base = run_dir.resolve()
        return [_function(d, 0, seen, base) for d in sorted(_listdir(root, base)) if _is_dir(d)]
    except Exception:
        return []
