"""A ``TORCH_COMPILE_DEBUG`` run folder read into timeline events (the ``TimelineReader`` interface).

Each ``torchinductor/<model folder>`` is one compile (``compile_id`` = the folder name), its files the
events of that compile in pipeline order, as the tracer names torch's stages::

    before_compile
      before_post_grad_passes   fx_graph_readable.py     (the graph Inductor received)
      fx_graph_runnable         fx_graph_runnable.py     (torch's standalone reproducer)
      after_post_grad_passes    fx_graph_transformed.py  (after the post-grad passes)
      before_inductor_fusion    ir_pre_fusion.txt        (loop IR before the scheduler fuses)
      after_inductor_fusion     ir_post_fusion.txt
      after_inductor_codegen    output_code.py
    after_compile               (once output_code.py is there)
    debug_file                  anything else torch wrote there (non-empty; torch 2.13 writes its
                                provenance mappings after the code)

so ``d`` on an ``after`` shows before -> after like any pair. The non-empty ``*.log`` files of
``torchdynamo/`` and ``torchinductor/`` come first as ``debug_log`` events (without a time: a log spans the run). Other
timestamps are the files' modification times.

Like the other readers it is incremental (a later ``read()`` returns only what appeared since: a folder
being written is followed file by file; a stage whose file is missing while a later stage's file is there
is skipped for good), never raises on what it finds, refuses links and anything outside the run, starts
over when the run folder is replaced and keeps what was read when it is deleted. Events are kept as the
JSON lines the tracer would have written (``Event.offset`` points into them); files stay where torch wrote
them. Nothing here imports torch.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path
from typing import Any

from magi_format.layout import timeline_record
from magi_format.lazyre import lazy_re
from magi_format.names import (
    AFTER_INDUCTOR_CODEGEN,
    COMPILE,
    FX_GRAPH_RUNNABLE,
    POST_GRAD_PASSES,
    lifecycle_event,
    point_event,
    scope_attrs,
)
from magi_format.safepath import UnsafePath, safe_join
from magi_format.text import literal
from magi_tui.model.events import Event
from magi_tui.model.sources.debugdir import DYNAMO_DIR, INDUCTOR_DIR
from magi_tui.model.sources.layout import _classify as classify_file
from magi_tui.model.sources.reader import Malformed, Reader, ReadResult

#: the scheduler's fusion, as a lifecycle (ir_pre_fusion -> ir_post_fusion)
FUSION = "inductor_fusion"
DEBUG_FILE = "debug_file"
DEBUG_LOG = "debug_log"

#: (phase or None for a point event, lifecycle or point base, the file names torch gives it)
STAGES: tuple[tuple[str | None, str, tuple[str, ...]], ...] = (
    ("before", POST_GRAD_PASSES, ("fx_graph_readable.py",)),
    (None, FX_GRAPH_RUNNABLE, ("fx_graph_runnable.py",)),
    ("after", POST_GRAD_PASSES, ("fx_graph_transformed.py",)),
    ("before", FUSION, ("ir_pre_fusion.txt", "ir_pre_fusion.py")),
    ("after", FUSION, ("ir_post_fusion.txt", "ir_post_fusion.py")),
    (None, AFTER_INDUCTOR_CODEGEN, ("output_code.py",)),
)
_STAGE_FILES = frozenset(n for _, _, names in STAGES for n in names)
#: ``model__0_forward_1.1``: model name, AOT graph id, graph kind, nth graph, DebugContext counter
FOLDER_RE = lazy_re(r"^(.+?)__(\d+)_(inference|forward|backward)_(\d+)\.(\d+)$")
MAX_FOLDERS = 10000
MAX_FILES = 200  # per folder


def _entries(path: Path) -> list[tuple[str, os.stat_result]]:
    """``(name, lstat)`` of a folder's entries; [] when it cannot be listed."""
    out = []
    try:
        with os.scandir(path) as it:
            for e in it:
                try:
                    out.append((e.name, e.stat(follow_symlinks=False)))
                except (OSError, ValueError):
                    continue
    except (OSError, ValueError):
        return []
    return out


def _folder_key(name: str) -> tuple:
    m = FOLDER_RE.match(name)
    return (0, int(m.group(5)), name) if m else (1, 0, name)


class _Folder:
    """What was emitted for one model folder."""

    __slots__ = ("stage", "opened", "closed", "names", "attrs")

    def __init__(self, attrs: dict[str, Any]) -> None:
        self.stage = 0          # the next STAGES index to consider
        self.opened = False
        self.closed = False
        self.names: set[str] = set()  # extra files already emitted
        self.attrs = attrs


class DebugDirReader(Reader):
    """Reads a ``torch_compile_debug/run_*`` folder incrementally into :class:`Event` s."""

    holds_event_files = True  # each event's files are the folder's own (``event_files``)

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._reset_state()

    def _reset_state(self) -> None:
        # ``offset`` counts the bytes of event lines produced (moves whenever events come); never a partial
        # line: files are read only when shown
        self._reset_read_state()
        self._ino: tuple[int, int] | None = None
        self._t0: float | None = None
        self._lines = bytearray()
        self._files: dict[int, list[tuple[str, tuple[str, ...]]]] = {}
        self._folders: dict[str, _Folder] = {}
        self._logs: set[tuple[str, str]] = set()
        self._said: set[str] = set()  # what was refused or left out, each said once

    # -- the TimelineReader interface ----------------------------------------------------------
    def read(self, max_bytes: int | None = None) -> ReadResult:
        """Whatever appeared since the last call (``max_bytes`` is accepted for the interface: the events
        of a debug dir are few and small). Never raises for anything found on disk."""
        result = ReadResult()
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            if self.exists:
                self.exists = False
                self.gone = True
                result.deleted = True
            return result
        except (OSError, ValueError) as exc:
            self._error(result, f"cannot open: {getattr(exc, 'strerror', None) or exc}")
            return result
        if not stat.S_ISDIR(st.st_mode):
            self._error(result, "not a directory")
            return result
        ident = (st.st_dev, st.st_ino)
        with self._lock:
            if self._ino is not None and ident != self._ino:
                self._reset_state()
                result.reset = "replaced"
            self._ino = ident
            self.exists, self.gone, self.error = True, False, None
            try:
                self._scan(result)
            except Exception as exc:  # never a traceback for what is on disk
                self._error(result, f"cannot read: {type(exc).__name__}: {exc}")
        return result

    def event_line_bytes(self, ev: Event) -> bytes | None:
        """The event's JSON line, kept in memory (the folder has no such line)."""
        return self.read_line_bytes(ev.offset, ev.length)

    def read_line_bytes(self, offset: int, length: int) -> bytes | None:
        with self._lock:
            if offset < 0 or offset + length > len(self._lines):
                return None
            return bytes(self._lines[offset:offset + length])

    def event_files(self, ev: Event) -> list[tuple[str, Path | None, str | None]]:
        """``(name, path or None, problem or None)`` for the files of one event: torch's own files, inside
        the run (a link or a name leaving the run is refused)."""
        with self._lock:
            entries = list(self._files.get(ev.seq, ()))
        out: list[tuple[str, Path | None, str | None]] = []
        for name, parts in entries:
            try:
                full = self.path.joinpath(*parts)
                if os.path.islink(full):
                    out.append((name, None, "a link: not shown"))
                    continue
                out.append((name, *classify_file(safe_join(self.path, *parts))))
            except (UnsafePath, OSError, ValueError) as exc:
                out.append((name, None, f"refused: {exc}"))
        return out

    # -- scanning ------------------------------------------------------------------------------
    def _error(self, result: ReadResult, reason: str) -> None:
        if reason != self.error:
            self.error = reason
            self.malformed_count += 1
            result.malformed.append(Malformed(0, reason, str(self.path)[:200]))

    def _say(self, result: ReadResult, what: str) -> None:
        """What was refused or left out (a link, a cap): one problem line, once; never silent."""
        if what not in self._said:
            self._said.add(what)
            self.malformed_count += 1
            result.malformed.append(Malformed(0, what, str(self.path)[:200]))

    def _listing(self, result: ReadResult, rel: str, *, cap: int | None = None) -> list[tuple[str, os.stat_result]]:
        """The entries of the run's folder ``rel`` (never through a link), links among them said and left out."""
        folder = self.path / rel
        try:
            if stat.S_ISLNK(os.lstat(folder).st_mode):
                self._say(result, f"{rel}/ is a link: not followed (it leads outside the run)")
                return []
        except (OSError, ValueError):
            return []
        entries = _entries(folder)
        links = sorted(n for n, st in entries if stat.S_ISLNK(st.st_mode))
        for n in links[:20]:
            self._say(result, f"{literal(rel)}/{literal(n)} is a link: not read")
        if len(links) > 20:
            self._say(result, f"{rel}/: {len(links) - 20} more link(s) not read")
        entries = [(n, st) for n, st in entries if not stat.S_ISLNK(st.st_mode)]
        if cap is not None and len(entries) > cap:
            self._say(result, f"{literal(rel)}/ holds {len(entries)} entries: only the first {cap} are read")
            entries = sorted(entries)[:cap]
        return entries

    def _scan(self, result: ReadResult) -> None:
        for sub in (DYNAMO_DIR, INDUCTOR_DIR):
            for name, st in sorted(self._listing(result, sub)):
                if (sub, name) in self._logs or not name.endswith(".log"):
                    continue
                if stat.S_ISREG(st.st_mode) and st.st_size > 0:
                    self._logs.add((sub, name))
                    self._emit(result, point_event(DEBUG_LOG), {**scope_attrs(None), "debug_file": f"{sub}/{name}"},
                               [(name, (sub, name))], None)  # a log spans the run: no one time
        folders = sorted(((n, s) for n, s in self._listing(result, INDUCTOR_DIR) if stat.S_ISDIR(s.st_mode)),
                         key=lambda f: _folder_key(f[0]))
        if len(folders) > MAX_FOLDERS:
            self._say(result, f"{INDUCTOR_DIR}/ holds {len(folders)} model folders: only the first {MAX_FOLDERS} "
                              "are read (in torch's order)")
        for name, _ in folders[:MAX_FOLDERS]:
            self._scan_folder(result, name)

    def _scan_folder(self, result: ReadResult, name: str) -> None:
        folder = self._folders.get(name)
        files = {n: s for n, s in self._listing(result, f"{INDUCTOR_DIR}/{name}", cap=MAX_FILES)
                 if stat.S_ISREG(s.st_mode)}
        if not files:
            return
        if folder is None:
            folder = self._folders[name] = _Folder(self._compile_attrs(name))
        a = folder.attrs
        if not folder.opened:
            folder.opened = True
            first = min(s.st_mtime for s in files.values())
            self._emit(result, lifecycle_event("before", COMPILE), {**a, "lifecycle_name": COMPILE}, [], first)
        present = [i for i, (_, _, names) in enumerate(STAGES) if any(n in files for n in names)]
        last = present[-1] if present else -1
        while folder.stage <= last:
            phase, base, names = STAGES[folder.stage]
            folder.stage += 1
            fname = next((n for n in names if n in files), None)
            if fname is None:
                continue  # a later stage is already there: this one will not come
            mtime = files[fname].st_mtime
            ref: list[tuple[str, tuple[str, ...]]] = [(fname, (INDUCTOR_DIR, name, fname))]
            if phase is None:
                self._emit(result, point_event(base), dict(a), ref, mtime)
            else:
                self._emit(result, lifecycle_event(phase, base), {**a, "lifecycle_name": base}, ref, mtime)
        if not folder.closed and any(n in files for n in STAGES[-1][2]):
            folder.closed = True
            last_t = max(s.st_mtime for s in files.values())
            self._emit(result, lifecycle_event("after", COMPILE), {**a, "lifecycle_name": COMPILE}, [], last_t)
        for fname in sorted(files):
            st = files[fname]
            if fname in _STAGE_FILES or fname in folder.names or st.st_size == 0:
                continue
            folder.names.add(fname)
            self._emit(result, point_event(DEBUG_FILE), dict(a), [(fname, (INDUCTOR_DIR, name, fname))], st.st_mtime)

    @staticmethod
    def _compile_attrs(name: str) -> dict[str, Any]:
        a: dict[str, Any] = {**scope_attrs(None), "compile_id": name, "debug_folder": f"{INDUCTOR_DIR}/{name}",
                             "source": "torch_compile_debug"}
        m = FOLDER_RE.match(name)
        if m:
            a.update(model=m.group(1), aot_id=int(m.group(2)), graph_kind=m.group(3))
            if m.group(3) == "backward":
                a["backward"] = True
        return a

    def _emit(self, result: ReadResult, name: str, attrs: dict[str, Any], files: list[tuple[str, tuple[str, ...]]],
              ts: float | None) -> None:
        if ts is not None and self._t0 is None:
            self._t0 = ts
        obj = timeline_record(self.seq, name, [f for f, _ in files], attrs, ts, self._t0)
        line = json.dumps(obj, ensure_ascii=False).encode("utf-8", "replace")
        off = len(self._lines)
        self._lines += line + b"\n"
        if files:
            self._files[self.seq] = files
        self.line_no += 1
        ev = Event.from_obj(obj, seq=self.seq, session=0, line_no=self.line_no, offset=off, length=len(line))
        self.seq += 1
        self.offset = len(self._lines)
        result.events.append(ev)
