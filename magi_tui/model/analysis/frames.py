"""Frames: which code object a compile was for, from compile ids (our tracer) or ``compiled_functions/``.

A *frame* is one Python code object Dynamo compiled. Two functions may share a name (several
``forward``s, or two ``torch_dynamo_resume_in_forward_at_24`` continuation functions at different
bytecode offsets), so a frame is keyed by torch's frame id when compile ids are recorded
(``"<frame_id>/<frame_compile_id>"``), else by its code object: ``co_name`` + ``co_filename`` +
``co_firstlineno`` (+ the resume offset for continuation functions).

``compiled_functions/`` (upstream runs and ours) holds one ``entry_<i>`` per cache entry (newest first)
and, under an entry, the resume functions of the graph breaks that compile hit. From it this module
counts compiles per frame and graph-break sites, when the timeline has no such events.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from msgspec import Struct, field

from magi_format.lazyre import lazy_re
from magi_tui.model.analysis.compiled_functions import Entry, Function, index_compiled_functions
from magi_tui.model.sources.files import read_head

_CID = lazy_re(r"^\[?(?P<gen>R\d+/)?(?P<ca>!\d+/)?(?P<fid>\d+)/(?P<fcid>\d+)(?:_(?P<attempt>\d+))?\]?$")
_RESUME_DIR = lazy_re(r"^__resume_at_(\d+)_\d+$")
_RESUME_NAME = lazy_re(r"^torch_dynamo_resume_in_(?P<fn>.+)_at_(?P<line>\d+)$")
_MAX_FRAMES = 2000


@lru_cache(maxsize=4096)  # recent ids (a compile's events come together); a bigger cache held much of a big log's ids
def parse_compile_id(cid: str | None) -> tuple[str, int, int] | None:
    """``"0/1"`` -> ``("0", 1, 0)``; ``"!2/0/1_1"`` -> ``("!2/0", 1, 1)``; ``"R1/0/0"`` (after a
    ``torch._dynamo.reset()``) -> ``("R1/0", 0, 0)``: (frame key, frame compile id,
    attempt); None for anything else (upstream runs have no compile id)."""
    if not cid:
        return None
    fid, _, fcid = cid.partition("/")
    if fid.isdecimal() and fcid.isdecimal():  # "0/1", most ids: what _CID reads of it (\d is isdecimal's)
        return fid, int(fcid), 0
    m = _CID.match(cid.strip())
    if not m:
        return None
    fkey = (m.group("gen") or "") + (m.group("ca") or "") + m.group("fid")
    return fkey, int(m.group("fcid")), int(m.group("attempt") or 0)


def resume_site(co_name: str | None) -> tuple[str, int] | None:
    """``torch_dynamo_resume_in_forward_at_24`` -> ``("forward", 24)``: where the graph break was."""
    m = _RESUME_NAME.match(co_name or "")
    return (m.group("fn"), int(m.group("line"))) if m else None


def read_code_info(path: Path, base: Path | None = None) -> dict[str, str]:
    """``co_name``, ``co_filename``, ``co_firstlineno`` from the head of a ``bytecode_info.txt`` (a regular
    file inside ``base``, opened through :mod:`magi_tui.model.sources.files`; anything else gives ``{}``)."""
    out: dict[str, str] = {}
    text, _problem = read_head(path, 4000, base)
    for line in (text or "").splitlines()[:8]:
        k, sep, v = line.partition(":")
        if sep and k.strip() in ("co_name", "co_qualname", "co_filename", "co_firstlineno"):
            out[k.strip()] = v.strip().strip("'\"")
    return out


class CodeId(Struct):
    """A code object, as far as it is known."""

    name: str
    file: str | None = None
    line: int | None = None
    resume_offset: int | None = None

    @property
    def key(self) -> tuple:
        return (self.name, self.file, self.line, self.resume_offset)

    @property
    def label(self) -> str:
        where = ""
        if self.file:
            where = f"{Path(self.file).name}:{self.line}" if self.line is not None else Path(self.file).name
        if not where and self.resume_offset is None:
            return self.name  # the name itself, not a copy (a frame row each of 100k keeps its label)
        off = f" @{self.resume_offset}" if self.resume_offset is not None else ""
        return f"{self.name}{off}" + (f" ({where})" if where else "")


class BreakSite(Struct):
    """A graph break seen in ``compiled_functions/``: a resume function of a compiled frame."""

    function: str
    file: str | None
    line: int
    count: int = 0                      # cache entries of the parent frame that broke here
    resume_fns: list[str] = field(default_factory=list)   # paths (relative to the run) of the resume fns
    #: the frames (their folder, relative to the run) whose compiles broke here
    parents: list[str] = field(default_factory=list)


class CfFrame(Struct):
    """One compiled code object found in ``compiled_functions/``."""

    code: CodeId
    rel: str                            # its folder, relative to the run directory
    function: Function
    parent: "CfFrame | None" = None

    @property
    def entries(self) -> list[Entry]:
        return self.function.entries

    @property
    def compiles(self) -> int:
        return len(self.function.entries)


class CfIndex(Struct):
    frames: list[CfFrame] = field(default_factory=list)
    breaks: list[BreakSite] = field(default_factory=list)

    _names: dict[str, list[CfFrame]] | None = None
    _indexed: int = 0

    def by_name(self, name: str | None) -> list[CfFrame]:
        """The frames of code objects named ``name``, in order (an index: the analysis asks once per
        frame of the timeline, and both may hold 100k)."""
        if not name:
            return []
        if self._names is None or self._indexed != len(self.frames):
            names: dict[str, list[CfFrame]] = {}
            for f in self.frames:
                names.setdefault(f.code.name, []).append(f)
            self._names, self._indexed = names, len(self.frames)
        return list(self._names.get(name, ()))


def _rel(run_dir: Path, p: Path) -> str:
    try:
        return p.relative_to(run_dir).as_posix()
    except ValueError:
        return p.as_posix()


def _code_of(fn: Function, fallback: str, base: Path | None = None) -> CodeId:
    info = read_code_info(fn.path / "bytecode_info.txt", base)
    name = info.get("co_name") or fallback
    line = info.get("co_firstlineno")
    m = _RESUME_DIR.match(fn.name)
    return CodeId(name, info.get("co_filename") or None, int(line) if line and line.isdigit() else None,
                  int(m.group(1)) if m else None)


def analyse_compiled_functions(run_dir: Path) -> CfIndex:
    """Every compiled code object (deduplicated: the writer copies each resume tree under every parent
    entry) and every graph-break site, with counts."""
    run_dir = Path(run_dir)
    try:
        base: Path | None = run_dir.resolve()
    except (OSError, ValueError, RuntimeError):
        return CfIndex()
    out = CfIndex()
    seen: set[tuple] = set()
    sites: dict[tuple, BreakSite] = {}

    def visit(fn: Function, parent: CfFrame | None) -> None:
        if len(out.frames) >= _MAX_FRAMES:
            return
        code = _code_of(fn, fn.name, base)
        if code.key in seen or fn.duplicate_of is not None:
            return
        seen.add(code.key)
        frame = CfFrame(code, _rel(run_dir, fn.path), fn, parent)
        out.frames.append(frame)
        for entry in fn.entries:
            here: set[tuple] = set()
            for r in entry.resume_fns:
                rcode = _code_of(r, r.name, base)
                site = resume_site(rcode.name)
                if site is not None:
                    skey = (rcode.file or code.file, site[1], site[0])
                    bs = sites.get(skey)
                    if bs is None:
                        bs = sites[skey] = BreakSite(site[0], rcode.file or code.file, site[1])
                        out.breaks.append(bs)
                    if skey not in here:
                        here.add(skey)
                        bs.count += 1
                    if frame.rel not in bs.parents:
                        bs.parents.append(frame.rel)
                    rel = _rel(run_dir, r.path)
                    if len(bs.resume_fns) < 20 and rel not in bs.resume_fns:
                        bs.resume_fns.append(rel)
                if r.entries and r.duplicate_of is None:
                    visit(r, frame)

    for fn in index_compiled_functions(run_dir):
        visit(fn, None)
    return out


_RESUME = lazy_re(r"torch_dynamo_resume_in_(\w+?)_at_(\d+)")


def short_frame(name: str) -> str:
    """``torch_dynamo_resume_in_forward_at_149 (m.py:149)`` -> ``↪ forward@149 (m.py:149)``: resume
    functions (what runs after a graph break) told apart in a narrow column."""
    return _RESUME.sub(lambda m: f"↪ {m.group(1)}@{m.group(2)}", name)
