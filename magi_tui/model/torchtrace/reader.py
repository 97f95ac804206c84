"""Incremental, tolerant reading of a TORCH_TRACE log into timeline events.

The log (TORCH_TRACE.md §1) is a sequence of *records*: one glog-prefixed line holding the metadata
JSON, then the payload, one ``\\t``-prefixed line each. The reader behaves like the run-dir reader
(:class:`magi_tui.model.reader.TimelineReader`), whose interface it has, so ``RunModel`` and the live
follower use it unchanged:

* it reads from the byte offset just past the last *complete record*, in bounded chunks;
* a record is complete when the next non-payload line starts, or — at the end of the file — when its
  last line has its ``\\n`` and its payload matches ``has_payload`` (the md5 torch writes); anything
  short of that stays pending (``partial``) until the writer finishes it, and is never returned twice;
* a garbage line, a metadata line that is not JSON, a payload line with no record, a payload whose md5
  does not match: a :class:`~magi_tui.model.reader.Malformed` entry with the line number, and reading
  goes on;
* record types torch 2.13 does not emit are counted (:attr:`TraceLogReader.unknown_types`) and shown as
  ``fullgraph_trace_record`` events; known payloads the mapping has no event for (``fx_graph_runnable``,
  resume-function bytecode, …) become ``fullgraph_trace_artifact`` events, so every payload opens;
* a truncated or replaced file starts over (``reset``), a deleted one keeps what was read.

Records become events through the tracer's own mapping (``tracer.mapping.TraceMapper``, torch-free), so
a log and a run the tracer wrote from the same compile carry the same events. Each event is kept as the
JSON line the tracer would have written (an in-memory ``timeline.jsonl``: ``Event.offset`` points into
it), and its files as references: a payload is a byte range of the log, re-read when the file is asked
for; small derived files (``metrics.json``, ``recompile_reasons.txt``) are kept as text. A file is
written, on first use, into a private temporary folder (mode 0700, removed when the process exits), so
the viewer opens it — and diffs it, marks it — like any run file. Nothing here imports torch, and nothing raises on file contents.
"""

from __future__ import annotations

import atexit
import bisect
import hashlib
import itertools
import json
import os
import re
import shutil
import stat
import tempfile
import threading
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from magi_format.layout import timeline_record
from magi_format.names import point_event, scope_attrs
from magi_format.text import json_safe, literal
from magi_tui.model.events import Event
from magi_tui.model.reader import Malformed, ReadResult, TimelineReader, open_followed
from magi_tui.model.torchtrace import GLOG_RE, log_run_name  # noqa: F401 (log_run_name: re-exported)

CHUNK = 8 << 20
#: a record longer than this (metadata line and payload) is reported and skipped, not held in memory
MAX_RECORD_BYTES = 256 << 20
_FINGERPRINT = 256
#: events kept per unknown record type (the rest are only counted)
MAX_UNKNOWN_EVENTS = 200
#: payloads shorter than this are kept as text; longer ones are re-read from the log when opened
INLINE_BYTES = 4096

#: event names for records the mapping has no event of its own for
TRACE_ARTIFACT = "trace_artifact"
TRACE_RECORD = "trace_record"

#: record types torch 2.13 emits (TORCH_TRACE.md §3a) — the rest are counted as unknown
KNOWN_KINDS = frozenset({
    "str", "dynamo_start", "dynamo_output_graph", "dynamo_guards", "dynamo_cpp_guards_str", "compilation_metrics",
    "bwd_compilation_metrics", "compilation_metrics_runtime", "bwd_compilation_metrics_runtime",
    "aot_autograd_backward_compilation_metrics", "aot_joint_graph", "aot_forward_graph", "aot_backward_graph",
    "aot_inference_graph", "inductor_pre_grad_graph", "inductor_post_grad_graph", "inductor_output_code",
    "graph_dump", "artifact", "chromium_event", "link", "dump_file", "describe_storage", "describe_tensor",
    "describe_source", "create_symbol", "create_unbacked_symbol", "symbolic_shape_specialization",
    "guard_added_fast", "propagate_real_tensors", "compiled_autograd_graph", "optimize_ddp_split_graph",
    "optimize_ddp_split_child", "guard_added", "expression_created", "propagate_real_tensors_provenance",
    "guard_on_data_dependent_error", "missing_fake_kernel", "mismatched_fake_kernel", "exported_program",
    "export",
})
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
#: an event's line (the in-memory timeline.jsonl): msgspec's compact JSON (10x the stdlib's speed; a
#: NaN is written null), else the stdlib's, as the tracer's writer spells it
_fast_line = msgspec.json.encode
_encode_line = json.JSONEncoder(ensure_ascii=False).encode
_fast_loads = msgspec.json.decode


def tlparse_compile_id(md: dict[str, Any]) -> str | None:
    """tlparse's spelling of a record's compile id: ``[0/1]``, ``[0/1_2]`` (attempt 2), ``[!3/0/1]``."""
    fid, fcid = md.get("frame_id"), md.get("frame_compile_id")
    if fid is None or fcid is None:
        return None
    ca, att = md.get("compiled_autograd_id"), md.get("attempt")
    head = f"!{ca}/" if ca is not None else ""
    tail = f"_{att}" if isinstance(att, int) and att else ""
    return f"[{head}{fid}/{fcid}{tail}]"


def _file_name(name: str) -> str:
    """A name fit for one path component in our own folder (the shown name stays the original)."""
    safe = _SAFE_NAME.sub("_", name).strip("_")[:120] or "file"
    return safe if not safe.startswith(".") else "_" + safe


@dataclass
class _Pending:
    """A record being assembled: its metadata line and payload lines (``\\t`` stripped)."""

    start: int            # byte offset of the metadata line
    line_no: int
    match: re.Match
    header: bytes
    payload_start: int    # byte offset of the first payload line
    payload: list[bytes] = field(default_factory=list)
    end: int = 0          # byte offset just past the record
    size: int = 0


class _LineStore:
    """The events' JSON lines (the log's in-memory ``timeline.jsonl``), in zlib blocks of ``BLOCK``
    bytes; the block being filled stays plain. Offsets are those of the whole text. A line is read
    back only when an event is shown, and JSON lines shrink ~8x: a 100k-frame log's lines are ~120 MB
    plain. The caller holds the reader's lock."""

    BLOCK = 256 << 10

    def __init__(self) -> None:
        self._blocks: list[bytes] = []   # compressed, whole lines each
        self._starts: list[int] = []     # offset of each block's first byte
        self._tail = bytearray()
        self._tail_start = 0
        self._cached: tuple[int, bytes] = (-1, b"")  # the last block read back: (index, plain bytes)

    def __len__(self) -> int:
        return self._tail_start + len(self._tail)

    def append(self, line: bytes, end: bytes = b"\n") -> int:
        off = self._tail_start + len(self._tail)
        self._tail += line
        self._tail += end
        if len(self._tail) >= self.BLOCK:
            self._blocks.append(zlib.compress(self._tail, 1))
            self._starts.append(self._tail_start)
            self._tail_start += len(self._tail)
            self._tail = bytearray()
        return off

    def get(self, offset: int, length: int) -> bytes | None:
        if offset < 0 or length < 0 or offset + length > len(self):
            return None
        if offset >= self._tail_start:
            start = offset - self._tail_start
            return bytes(self._tail[start:start + length])
        i = bisect.bisect_right(self._starts, offset) - 1
        if self._cached[0] != i:
            self._cached = (i, zlib.decompress(self._blocks[i]))
        start = offset - self._starts[i]
        return self._cached[1][start:start + length]

    def all(self) -> bytes:
        return b"".join(zlib.decompress(b) for b in self._blocks) + bytes(self._tail)


class _Kept(tuple):
    """A small file's text kept in the reader's text store: ``(offset, length)`` of its UTF-8 bytes."""

    __slots__ = ()


@dataclass(frozen=True)
class _Range:
    """A payload in the log: bytes [start, end) of ``\\t``-prefixed lines."""

    start: int
    end: int


class TraceLogReader:
    """Reads a TORCH_TRACE log incrementally into :class:`Event` s (the ``TimelineReader`` interface)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._tmp: str | None = None
        self._generation = 0
        self._reset_state()

    # -- state ---------------------------------------------------------------------------------
    def _reset_state(self) -> None:
        self.offset = 0          # bytes consumed (just past the last complete record)
        self.line_no = 0         # lines consumed
        self.seq = 0             # events returned so far
        self.partial = 0         # bytes of a record (or line) still being written
        self.malformed_count = 0
        self.exists = False
        self.more = False
        self.error: str | None = None
        self.gone = False
        self._ino: tuple[int, int] | None = None
        self._head = b""
        self._skip_tabs = False  # payload lines of a record that was rejected
        self._year: int | None = None
        self._t0: float | None = None
        self._mapper: Any = None
        self._last_second: tuple = (None, 0.0)
        self._lines = _LineStore()  # the events as timeline.jsonl lines (Event.offset points here)
        self._texts = _LineStore()  # small files' texts (metrics.json, user_stack.txt, ...): _Kept
        self._files: dict[int, list[tuple[str, Any]]] = {}
        self._attrs_of: dict[int, int] = {}
        #: what tlparse calls its stats: ok / fail_glog / fail_json / fail_payload_md5 / unknown
        self.stats: Counter = Counter()
        #: record types torch 2.13 does not emit, with how many records had each
        self.unknown_types: Counter = Counter()
        #: every compile id seen on a record, tlparse's spelling (attempts included), in order
        self.compile_ids: dict[str, None] = {}
        self._generation += 1

    # -- the TimelineReader interface ----------------------------------------------------------
    def read(self, max_bytes: int | None = None) -> ReadResult:
        """Read what was appended since the last call (at most about ``max_bytes`` of complete records).
        Never raises for anything found on disk."""
        result = ReadResult()
        opened = open_followed(self, result, self._reset_locked)
        if opened is None:
            return result
        fd, st = opened
        try:
            if self._year is None:
                self._year = time.localtime(st.st_mtime).tm_year
            self._read_from(fd, st.st_size, result, max_bytes)
            if len(self._head) < _FINGERPRINT:
                self._head = os.pread(fd, _FINGERPRINT, 0)
            self.error = None
        except OSError as exc:
            self._error(result, f"cannot read: {exc.strerror or exc}")
        except Exception as exc:  # a bug of ours must not take the viewer down: say so, keep what was read
            self._error(result, f"cannot map record near line {self.line_no + 1}: {type(exc).__name__}: "
                                f"{literal(str(exc), 200)}")
        finally:
            os.close(fd)
        return result

    def read_line_bytes(self, offset: int, length: int) -> bytes | None:
        """An event's JSON line (kept in memory: the log has no such line)."""
        with self._lock:
            return self._lines.get(offset, length)

    def event_files(self, ev: Event) -> list[tuple[str, Path | None, str | None]]:
        """``(file name, path or None, problem or None)`` per file of the event, plus ``attributes.json``
        (as for a run dir). Files are written on first use into a private folder. Never raises."""
        try:
            with self._lock:
                return self._event_files(ev)
        except Exception as exc:
            return [("?", None, f"cannot list files: {type(exc).__name__}")]

    def file_text(self, ev: Event, name: str, limit: int) -> str | None:
        """The text of the event's file ``name`` (its first ``limit`` characters) from what this reader
        holds, writing no copy; None when the event has no such file or the log changed. Never raises."""
        with self._lock:
            for fname, src in self._files.get(ev.seq) or ():
                if fname == name:
                    text = self._text_of(src)
                    return None if text is None else text[:limit]
        return None

    # -- identity ------------------------------------------------------------------------------
    def _reset_locked(self) -> None:
        with self._lock:
            self._reset_state()

    # the same identity rule as the run-dir reader (truncated / replaced / first bytes changed)
    _check_identity = TimelineReader._check_identity

    def _error(self, result: ReadResult, reason: str) -> None:
        if reason != self.error:
            self.error = reason
            result.malformed.append(Malformed(0, reason, ""))

    def _bad(self, result: ReadResult, line_no: int, reason: str, raw: bytes, stat_key: str) -> None:
        self.malformed_count += 1
        self.stats[stat_key] += 1
        result.malformed.append(Malformed(line_no, reason, raw[:200].decode("utf-8", "replace")))

    # -- reading records -----------------------------------------------------------------------
    def _read_from(self, fd: int, size: int, result: ReadResult, max_bytes: int | None) -> None:
        budget = max_bytes if max_bytes is not None else size
        pos = self.offset
        self.more = False
        want = max(1, min(CHUNK, budget))
        while pos < size:
            if budget <= 0:
                self.more = True
                break
            n = min(want, size - pos)
            data = os.pread(fd, n, pos)
            if not data:
                break
            at_eof = pos + len(data) >= size
            consumed = self._parse(data, pos, at_eof, result)
            if consumed == 0:
                if at_eof:
                    break  # a record still being written
                if len(data) >= MAX_RECORD_BYTES:
                    consumed = self._skip_huge(data, pos, result)
                else:
                    want = len(data) * 2  # one record longer than the chunk: read it whole
                    continue
            pos += consumed
            budget -= consumed
            want = max(1, min(CHUNK, budget))
        self.offset = pos
        self.partial = 0 if self.more else max(0, size - pos)

    def _skip_huge(self, data: bytes, base: int, result: ReadResult) -> int:
        """A record over MAX_RECORD_BYTES: reported, its lines read so far dropped, the rest skipped."""
        end = data.rfind(b"\n") + 1
        first = data[: data.find(b"\n") + 1 or len(data)]
        self._bad(result, self.line_no + 1, f"record longer than {MAX_RECORD_BYTES >> 20} MB: skipped",
                  first, "fail_too_long")
        self.line_no += data.count(b"\n", 0, end)
        self._skip_tabs = True
        return end or len(data)

    def _parse(self, data: bytes, base: int, at_eof: bool, result: ReadResult) -> int:
        """Records in ``data`` (file bytes from ``base``); returns the bytes of complete records and
        rejected lines consumed (a pending record and a partial last line are left for later)."""
        end_complete = data.rfind(b"\n") + 1
        if end_complete == 0:
            return 0
        pos = 0
        line_no = self.line_no
        consumed, consumed_line = 0, line_no
        cur: _Pending | None = None
        for raw in data[:end_complete].split(b"\n")[:-1]:
            line_no += 1
            start = pos
            pos += len(raw) + 1
            if raw[:1] == b"\t":
                if cur is not None:
                    cur.payload.append(raw[1:])
                    continue
                if not self._skip_tabs:
                    self._bad(result, line_no, "payload line without a record", raw, "fail_glog")
                consumed, consumed_line = pos, line_no
                continue
            if cur is not None:  # a new line ends the record before it
                cur.end = base + start
                self._finish(cur, result)
                cur = None
            consumed, consumed_line = start, line_no - 1
            self._skip_tabs = False
            if not raw.strip():
                consumed, consumed_line = pos, line_no
                continue
            m = GLOG_RE.match(raw)
            if m is None:
                self._bad(result, line_no, "not a TORCH_TRACE record line", raw, "fail_glog")
                self._skip_tabs = True
                consumed, consumed_line = pos, line_no
                continue
            cur = _Pending(base + start, line_no, m, raw, base + pos)
        if cur is not None:
            cur.end = base + pos
            if at_eof and end_complete == len(data) and self._complete_at_eof(cur):
                self._finish(cur, result)
                consumed, consumed_line = pos, line_no
        else:
            consumed, consumed_line = pos, line_no
        self.line_no = consumed_line
        return consumed

    @staticmethod
    def _metadata(cur: _Pending) -> tuple[dict[str, Any] | None, str]:
        raw = cur.header[cur.match.end():]
        try:  # the common case in C; what msgspec refuses (NaN, lone surrogates, bad bytes, ...) is
            md = _fast_loads(raw)  # decided, with the stdlib's verdict and messages, below
            if type(md) is dict and md:
                return md, ""
        except (msgspec.DecodeError, msgspec.ValidationError, ValueError, RecursionError):
            pass
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None, "metadata is not valid UTF-8"
        try:
            md = json.loads(text)
        except (ValueError, RecursionError) as exc:
            if isinstance(exc, json.JSONDecodeError):
                return None, f"invalid JSON: {exc.msg} at column {exc.colno + cur.match.end()}"
            return None, f"invalid JSON: {type(exc).__name__}"
        if not isinstance(md, dict) or not md:
            return None, "metadata is not a non-empty JSON object"
        return md, ""

    def _complete_at_eof(self, cur: _Pending) -> bool:
        """The last record of the file is whole: no payload announced, or its payload matches."""
        md, _ = self._metadata(cur)
        if md is None:
            return True  # reported as it is; nothing more can make it right
        want = md.get("has_payload")
        if not isinstance(want, str):
            return True
        return bool(cur.payload) and hashlib.md5(b"\n".join(cur.payload)).hexdigest() == want

    # -- one record -> events ------------------------------------------------------------------
    def _finish(self, cur: _Pending, result: ReadResult) -> None:
        md, why = self._metadata(cur)
        if md is None:
            self._bad(result, cur.line_no, why, cur.header, "fail_json")
            return
        payload: str | None = None
        if cur.payload:
            blob = b"\n".join(cur.payload)
            want = md.get("has_payload")
            if isinstance(want, str) and hashlib.md5(blob).hexdigest() != want:
                self._bad(result, cur.line_no, "payload does not match its has_payload md5 (shown anyway)",
                          cur.header, "fail_payload_md5")
            payload = blob.decode("utf-8", "replace")
        kind = next(iter(md))
        cid = tlparse_compile_id(md)
        if cid is not None and kind != "chromium_event":
            self.compile_ids.setdefault(cid, None)
        if kind not in KNOWN_KINDS:
            self.unknown_types[kind] += 1
            self.stats["unknown"] += 1
        elif kind != "str":
            self.stats["ok"] += 1
        ts = self._timestamp(cur.match)
        rng = _Range(cur.payload_start, cur.end) if cur.payload else None
        try:
            specs = self._map(kind, md, payload)
        except Exception as exc:  # a record the mapping chokes on: reported, the rest still read
            self._bad(result, cur.line_no, f"record not mapped ({literal(kind, 80)}): {type(exc).__name__}: "
                      f"{literal(str(exc), 200)}", cur.header, "fail_parser")
            return
        for spec in specs:
            self._add_event(spec, ts, cur.line_no, payload, rng, result)

    def _map(self, kind: str, md: dict[str, Any], payload: str | None) -> list[tuple]:
        mapping = _mapping()
        if self._mapper is None:
            self._mapper = mapping.TraceMapper()
        specs = list(self._mapper.handle(md, payload))
        if specs or kind in mapping.IGNORED or kind == "str":
            return specs
        body = md.get(kind)
        if kind == "artifact":
            name = str(body.get("name", "")) if isinstance(body, dict) else ""
            if name in mapping.ARTIFACT_HANDLERS or mapping.CACHE_ARTIFACT.match(name) or payload is None:
                return specs  # mapped (into nothing, this time) or nothing to show
            enc = body.get("encoding") if isinstance(body, dict) else None
            fname = name + (".json" if enc == "json" else ".txt")
            return [(point_event(TRACE_ARTIFACT), self._attrs(md, artifact=name, encoding=enc), {fname: payload})]
        if kind in KNOWN_KINDS:
            if kind in mapping.KIND_HANDLERS or payload is None:
                return specs
            return [(point_event(TRACE_ARTIFACT), self._attrs(md, artifact=kind), {f"{kind}.txt": payload})]
        if self.unknown_types[kind] > MAX_UNKNOWN_EVENTS:
            return specs
        meta = json.dumps(body, default=repr)
        attrs = self._attrs(md, record_type=kind, unknown=True,
                            metadata=meta if len(meta) <= 2000 else meta[:2000] + "…")
        return [(point_event(TRACE_RECORD), attrs, {f"{_file_name(kind)}.txt": payload} if payload else {})]

    def _attrs(self, md: dict[str, Any], **extra: Any) -> dict[str, Any]:
        """The attributes the mapping gives its own events (compile id without the attempt, frame)."""
        a: dict[str, Any] = dict(scope_attrs(None))
        fid, fcid = md.get("frame_id"), md.get("frame_compile_id")
        if fid is not None and fcid is not None:
            ca = md.get("compiled_autograd_id")
            cid = f"{fid}/{fcid}" if ca is None else f"!{ca}/{fid}/{fcid}"
            st = self._mapper.compiles.get(cid) if self._mapper is not None else None
            a["compile_id"] = cid
            a["frame"] = st.frame if st is not None else self._mapper.frame_names.get((ca, fid))
            a["attempt"] = md.get("attempt")
        a["source"] = "torch_trace"
        a.update(extra)
        return a

    def _timestamp(self, m: re.Match) -> float | None:
        """The glog prefix's local time (no year in it: the file's year; ms precision)."""
        try:
            key = m.group(2, 3, 4, 5, 6)
            last = self._last_second  # records come thousands a second: mktime once per second
            if last[0] != key:
                mon, day, hh, mm, ss = (int(v) for v in key)
                year = self._year or time.localtime().tm_year
                last = self._last_second = (key, time.mktime((year, mon, day, hh, mm, ss, 0, 0, -1)))
            return last[1] + float(b"0." + m.group(7))
        except (ValueError, OverflowError):
            return None

    def _add_event(self, spec: tuple, ts: float | None, line_no: int, payload: str | None,
                   rng: _Range | None, result: ReadResult) -> None:
        name, attrs, files = spec[0], spec[1], spec[2] or {}
        if len(spec) > 3 and spec[3] is not None:
            ts = spec[3]
        if ts is not None and self._t0 is None:
            self._t0 = ts
        obj = timeline_record(self.seq, name, list(files), attrs, ts, self._t0)
        try:  # encoded once, in C: a record's attributes are plain JSON but for a hostile log's
            line = _fast_line(obj)
        except (TypeError, ValueError, OverflowError):  # lone surrogates, what JSON cannot hold, ...
            obj["attributes"] = json_safe(attrs)
            line = _encode_line(obj).encode("utf-8", "replace")
        with self._lock:
            off = self._lines.append(line)
            if files:
                self._files[self.seq] = [
                    (str(fname), rng if (rng is not None and text is payload and len(text) > INLINE_BYTES)
                     else self._keep_text(str(text))) for fname, text in files.items()]
        ev = Event.from_obj(obj, seq=self.seq, session=0, line_no=line_no, offset=off, length=len(line))
        self.seq += 1
        result.events.append(ev)

    # -- files ---------------------------------------------------------------------------------
    def _keep_text(self, text: str) -> _Kept:
        data = text.encode("utf-8", "surrogatepass")
        return _Kept((self._texts.append(data, b""), len(data)))

    def _text_of(self, src: Any) -> str | None:
        """A file's text: re-read from the log (a payload), or from the text store (the lock is held)."""
        if isinstance(src, _Range):
            return self._read_payload(src)
        if isinstance(src, _Kept):
            data = self._texts.get(*src)
            return None if data is None else data.decode("utf-8", "surrogatepass")
        return src

    @property
    def files_root(self) -> Path:
        """The private folder this reader writes its events' files into (what they are read inside)."""
        if self._tmp is None:
            self._tmp = str(_session_dir() / f"log{next(_READERS)}")
        Path(self._tmp).mkdir(mode=0o700, parents=True, exist_ok=True)
        return Path(self._tmp)

    def _folder(self) -> Path:
        if self._tmp is None:
            self._tmp = str(_session_dir() / f"log{next(_READERS)}")
        d = Path(self._tmp) / f"g{self._generation}"
        d.mkdir(mode=0o700, parents=True, exist_ok=True)
        return d

    def _event_files(self, ev: Event) -> list[tuple[str, Path | None, str | None]]:
        entries = self._files.get(ev.seq)
        if not entries:
            return []
        folder = self._folder() / f"{ev.seq:04d}_{_file_name(ev.name)}"
        folder.mkdir(mode=0o700, exist_ok=True)
        out: list[tuple[str, Path | None, str | None]] = []
        used: set[str] = set()
        for name, src in entries:
            fname = _file_name(name)
            while fname in used or fname == "attributes.json":
                fname = "_" + fname
            used.add(fname)
            out.append((name, *self._write(folder / fname, src)))
        attrs = self._lines.get(ev.offset, ev.length)  # (the lock is held)
        try:
            text = json.dumps(json.loads(attrs or b"{}").get("attributes", {}), indent=2, ensure_ascii=False)
        except ValueError:
            text = "{}"
        out.append(("attributes.json", *self._write(folder / "attributes.json", text)))
        return out

    def _write(self, path: Path, src: Any) -> tuple[Path | None, str | None]:
        try:
            return self._write_copy(path, src)
        except OSError as exc:  # disk full, the folder removed under us
            return None, f"cannot write a copy to show: {exc.strerror or type(exc).__name__}"

    def _write_copy(self, path: Path, src: Any) -> tuple[Path | None, str | None]:
        try:
            st = os.lstat(path)
            return (path, None) if stat.S_ISREG(st.st_mode) else (None, "not a regular file: not shown")
        except FileNotFoundError:
            pass
        text = self._text_of(src)
        if text is None:
            return None, "the log changed since it was read: not shown"
        tmp = path.with_name(path.name + ".part")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            os.write(fd, text.encode("utf-8", "replace"))
        finally:
            os.close(fd)
        os.replace(tmp, path)
        return path, None

    def _read_payload(self, rng: _Range) -> str | None:
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != self._ino:
                return None
            data = os.pread(fd, rng.end - rng.start, rng.start)
        except OSError:
            return None
        finally:
            os.close(fd)
        if len(data) != rng.end - rng.start:
            return None
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        if any(ln[:1] != b"\t" for ln in lines):
            return None
        return b"\n".join(ln[1:] for ln in lines).decode("utf-8", "replace")


_MAPPING: Any = None
_SESSION: Path | None = None
_SESSION_LOCK = threading.Lock()
_READERS = itertools.count(1)


def _session_dir() -> Path:
    """One private folder (0700) per process for the files of every log opened, removed at exit — not
    when a reader goes: a file marked in one log stays readable for a diff against another."""
    global _SESSION
    with _SESSION_LOCK:
        if _SESSION is None or not _SESSION.is_dir():
            _SESSION = Path(tempfile.mkdtemp(prefix="magi-tui-trace-"))
            atexit.register(shutil.rmtree, str(_SESSION), True)
        return _SESSION


def _mapping() -> Any:
    """``tracer.mapping``, imported on first use (``import magi_tui.model`` must not load the tracer)."""
    global _MAPPING
    if _MAPPING is None:
        import tracer.mapping as m

        _MAPPING = m
    return _MAPPING
