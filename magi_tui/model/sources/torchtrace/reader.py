"""Incremental, tolerant reading of a TORCH_TRACE log into timeline events.

The log (TORCH_TRACE.md §1) is a sequence of *records*: one glog-prefixed line holding the metadata
JSON, then the payload, one ``\\t``-prefixed line each. The reader behaves like the run-dir reader
(:class:`magi_tui.model.sources.reader.TimelineReader`), whose interface it has, so ``RunModel`` and the live
follower use it unchanged:

* it reads from the byte offset just past the last *complete record*, in bounded chunks;
* a record is complete when the next non-payload line starts, or — at the end of the file — when its
  last line has its ``\\n`` and its payload matches ``has_payload`` (the md5 torch writes); anything
  short of that stays pending (``partial``) until the writer finishes it, and is never returned twice.
  Once the writer has gone (the file unchanged for :data:`SETTLED_S`), the last record is whatever the
  file holds: a last line without ``\\n`` ends it, and a payload whose md5 does not match is counted
  malformed and kept, as tlparse does;
* lines are read as tlparse reads them: a ``\\r`` before the ``\\n`` (CRLF) is not part of the line,
  and a UTF-8 byte-order mark before the first record is skipped;
* a garbage line, a metadata line that is not JSON, a payload line with no record, a payload whose md5
  does not match: a :class:`~magi_tui.model.sources.reader.Malformed` entry with the line number, and reading
  goes on;
* record types torch 2.13 does not emit are counted (:attr:`TraceLogReader.unknown_types`) and shown as
  ``fullgraph_trace_record`` events; known payloads the mapping has no event for (``fx_graph_runnable``,
  resume-function bytecode, …) become ``fullgraph_trace_artifact`` events, so every payload opens;
* a truncated or replaced file starts over (``reset``), a deleted one keeps what was read;
* a ``.log.gz`` is read as a stream (:mod:`magi_tui.model.sources.torchtrace.gzstream`): offsets are those of the
  unpacked log, nothing is unpacked to disk, and a payload opened later is decompressed again;
* runs of blank lines, of lines that are no record and of payload lines without a record are skipped a run
  at a time (regex and ``bytes.count``, not a loop step a line), so a log padded with millions of them
  reads at about the speed of decompressing it; a run of junk lines is one ``malformed`` entry after its
  first line, and past :data:`MAX_MALFORMED_LISTED` entries bad lines are only counted.

Records become events through the tracer's own mapping (``magi_format.torch_mapping.TraceMapper``), so
a log and a run the tracer wrote from the same compile carry the same events. Of the JSON line the tracer
would have written for an event, only its attributes' JSON is kept (``Event.offset`` points into that
store): index, name, time fields and files are on the Event and the reader, and the line is made again,
byte for byte, when asked for (:meth:`TraceLogReader.event_line_bytes`). Its files are kept as references: a payload is a byte range of the log, re-read when the file is asked
for; ``metrics.json`` and ``user_stack.txt`` (one each per compile) are made when asked for, from their
record's metadata re-read from the log (the mapping defers them: ``METRICS_OF_RECORD``, ``STACK_OF_RECORD``);
other small derived files (``recompile_reasons.txt``, ``phases.json``) are kept as text. A file is
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
import sys
import tempfile
import threading
import time
import zlib
from array import array
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec
from msgspec import Struct, field

from magi_format import names
from magi_format.layout import timeline_record, timeline_times_json
from magi_format.names import PHASES, frag, point_event, scope_attrs
from magi_format.text import json_safe, literal
from magi_format.torch_records import EventSpec
from magi_tui.model.events import Event, dict_event, name_kind, place_line
from magi_tui.model.sources.reader import Malformed, Reader, ReadResult, open_followed
from magi_tui.model.sources.torchtrace import GLOG_RE, GZ_SUFFIX, log_run_name  # noqa: F401 (log_run_name: re-exported)

CHUNK = 8 << 20
#: a record longer than this (metadata line and payload) is reported and skipped, not held in memory
MAX_RECORD_BYTES = 256 << 20
_FINGERPRINT = 256
#: a log unchanged for this long has no writer left: its last record is final, whole or not
SETTLED_S = 2.0
_BOM = b"\xef\xbb\xbf"
#: a .log.gz unpacked to more than this is refused (a gzip bomb fills no disk)
MAX_UNPACKED_BYTES = 64 << 30
#: a newline not followed by a tab: where a run of payload lines ends
_PAYLOAD_END = re.compile(rb"\n(?!\t)")
#: a run of blank lines (as the loop tells them: empty, or white space not starting with a tab), possessive
_BLANK_RUN = re.compile(rb"(?:\n++|[ \r\x0b\x0c][ \t\r\x0b\x0c]*+\n)++")
#: the end of a line before one that may be more than junk: a payload line, a blank line (as
#: :data:`_BLANK_RUN` tells one), a glog prefix (:data:`GLOG_RE`'s)
_MAYBE_NEXT = re.compile(rb"\n(?=\t|\n|[ \r\x0b\x0c][ \t\r\x0b\x0c]*+\n|[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^\]\n]*:\d+\] )")
#: blank lines after a record's payload are its own only if more payload follows; past this many bytes of
#: them the record has ended (a log padded with blank lines is not read as one record growing without end)
MAX_BLANK_RUN = 1 << 20
#: malformed entries a reader lists; past them bad lines are only counted (``malformed_count``, ``stats``)
MAX_MALFORMED_LISTED = 10_000
_EPOCH_S = re.compile(rb'"start_time": (1\d{9}(?:\.\d+)?)')
_EPOCH_US = re.compile(rb'"ts": (1\d{15})')
#: events kept per unknown record type (the rest are only counted)
MAX_UNKNOWN_EVENTS = 200
#: payloads shorter than this are kept as text; longer ones are re-read from the log when opened
INLINE_BYTES = 4096

#: the prefix of an event named after a record the mapping has no event of its own for, when its own
#: name would read as one of ours (a phase, a recompile, a cache result) or is empty
TRACE_PREFIX = "trace_"
#: distinct record names given events of their own (a log inventing names does not grow this without end)
MAX_OWN_NAMES = 500
_PHASE_PREFIX = tuple(f"{p}_" for p in PHASES)

_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
#: an event's line (the in-memory timeline.jsonl): msgspec's compact JSON (10x the stdlib's speed; a
#: NaN is written null), else the stdlib's, as the tracer's writer spells it
_fast_line = msgspec.json.encode
_encode_line = json.JSONEncoder(ensure_ascii=False).encode
_fast_loads = msgspec.json.decode
_getrefcount = sys.getrefcount


def _refs_of_unheld() -> int:
    """What ``_getrefcount(item[0])`` says of an object only the tuple ``item`` holds (:meth:`TraceLogReader.settle`:
    an event no one else holds)."""
    item = (object(),)
    return _getrefcount(item[0])


_UNHELD = _refs_of_unheld()
#: event names / files lists -> their members of a line (``,"name":...`` / ``,"files":[...],"attributes":``;
#: a log's events draw on a few hundred of each)
_NAME_JSON: dict[str, bytes] = {}
_FILES_JSON: dict[tuple, bytes] = {}
_JSON_CACHE_MAX = 4096


def _line_parts(name: str, files: tuple) -> tuple[bytes, bytes]:
    """An event's name and files as their members of a line (``,"name":...``, ``,"files":[...],"attributes":``),
    made once per distinct one; raises what msgspec raises for what it refuses."""
    nb = _NAME_JSON.get(name)
    if nb is None:
        nb = b',"name":' + _fast_line(name)
        if len(_NAME_JSON) < _JSON_CACHE_MAX:
            _NAME_JSON[name] = nb
    fb = _FILES_JSON.get(files)
    if fb is None:
        fb = b',"files":' + _fast_line(files) + b',"attributes":'
        if len(_FILES_JSON) < _JSON_CACHE_MAX:
            _FILES_JSON[files] = fb
    return nb, fb


def _make_line(seq: int, name: str, files: tuple, ts: float | None, t0: float | None, attrs_json: bytes) -> bytes:
    """An event's ``timeline.jsonl`` line, compact, in the writer's key order (``timeline_record``), from its
    parts and its attributes' JSON: the time fields as ``timeline_times_json`` writes them (none without a
    timestamp; ``t0`` the log's first timestamp)."""
    nb, fb = _line_parts(name, files)
    head, tail = timeline_times_json(ts, t0, _fast_line)
    return b"".join((b'{"index":%d' % seq, nb, b"," + head if head else b"", fb, attrs_json,
                     b"," + tail + b"}" if tail else b"}"))


def _search_at(pattern: re.Pattern[bytes], data: bytes) -> re.Match[bytes] | None:
    """``pattern.search(data)`` for a pattern that starts with a literal (its text up to the first
    ``(``): the literal is found by ``bytes.find`` (a log of megabytes without it is scanned at memchr's
    speed, not the regex engine's), the pattern matched there."""
    lit = pattern.pattern[:pattern.pattern.index(b"(")]
    at = data.find(lit)
    while at >= 0:
        m = pattern.match(data, at)
        if m:
            return m
        at = data.find(lit, at + 1)
    return None


def tlparse_compile_id(md: dict[str, Any]) -> str | None:
    """tlparse's spelling of a record's compile id: ``[0/1]``, ``[0/1_2]`` (attempt 2), ``[!3/0/1]``, and
    ``[!3/-/-]`` for a record of compiled autograd's capture 3 itself (its graph, before Dynamo compiles it)."""
    fid, fcid = md.get("frame_id"), md.get("frame_compile_id")
    if fid is None or fcid is None:
        ca = md.get("compiled_autograd_id")
        return f"[!{ca}/-/-]" if ca is not None else None
    ca, att = md.get("compiled_autograd_id"), md.get("attempt")
    if ca is None and not att:  # (most records: neither part; 210k records of a 100k-frame log)
        return f"[{fid}/{fcid}]"
    head = f"!{ca}/" if ca is not None else ""
    tail = f"_{att}" if isinstance(att, int) and att else ""
    return f"[{head}{fid}/{fcid}{tail}]"


def _file_name(name: str) -> str:
    """A name fit for one path component in our own folder (the shown name stays the original)."""
    safe = _SAFE_NAME.sub("_", name).strip("_")[:120] or "file"
    return safe if not safe.startswith(".") else "_" + safe


class _Pending(Struct):
    """A record being assembled: its metadata line and payload lines (``\\t`` stripped)."""

    start: int            # byte offset of the metadata line
    line_no: int
    match: re.Match
    header: bytes
    payload_start: int    # byte offset of the first payload line
    #: the payload's runs of ``\t`` lines: (start, stop) byte offsets in the file, and the blank lines
    #: (an editor stripped their tab) before each run; the bytes stay in the chunk until the record ends
    runs: list[tuple[int, int, int]] = field(default_factory=list)
    end: int = 0          # byte offset just past the record


def _decode_metadata(raw: bytes, column: int = 0) -> tuple[dict[str, Any] | None, str]:
    """A record's metadata JSON (``raw``, from ``column`` of its line) -> ``(map, "")`` or ``(None, why)``."""
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
            return None, f"invalid JSON: {exc.msg} at column {exc.colno + column}"
        return None, f"invalid JSON: {type(exc).__name__}"
    if not isinstance(md, dict) or not md:
        return None, "metadata is not a non-empty JSON object"
    return md, ""


class _LineStore:
    """Texts appended one after another (the events' attributes JSON, small files' texts), in zlib blocks
    of ``BLOCK`` bytes; the block being filled stays plain. Offsets are those of the whole text. A text is
    read back only when an event is shown, and JSON shrinks ~8x. The caller holds the reader's lock."""

    BLOCK = 256 << 10

    def __init__(self, start: int = 0) -> None:
        self._blocks: list[bytes] = []   # compressed, whole lines each
        self._starts: list[int] = []     # offset of each block's first byte
        self._tail = bytearray()
        self._start = start              # the first offset (a store replacing another starts past its end)
        self._tail_start = start
        self._cached: tuple[int, bytes] = (-1, b"")  # the last block read back: (index, plain bytes)

    def __len__(self) -> int:
        return self._tail_start + len(self._tail)

    def append(self, line: bytes, end: bytes = b"\n") -> int:
        off = self._tail_start + len(self._tail)
        self._tail += line
        self._tail += end
        if len(self._tail) >= self.BLOCK:
            self._blocks.append(zlib.compress(self._tail, 1, -15))  # raw deflate: no checksum to make
            self._starts.append(self._tail_start)
            self._tail_start += len(self._tail)
            self._tail = bytearray()
        return off

    def get(self, offset: int, length: int) -> bytes | None:
        if offset < self._start or length < 0 or offset + length > len(self):
            return None
        if offset >= self._tail_start:
            start = offset - self._tail_start
            return bytes(self._tail[start:start + length])
        i = bisect.bisect_right(self._starts, offset) - 1
        if self._cached[0] != i:
            self._cached = (i, zlib.decompress(self._blocks[i], -15))
        start = offset - self._starts[i]
        return self._cached[1][start:start + length]


_Kept = int
"""A small file's text kept in the reader's text store: the offset of its UTF-8 bytes there, shifted
left 40 bits, or'ed with their length (one plain int, not a tuple of two nor an int subclass: a log of
100k frames keeps 200k)."""


def _kept_span(kept: int) -> tuple[int, int]:
    return kept >> 40, kept & 0xFF_FFFF_FFFF


#: string tables (``TraceMapper.strings``) a reader tells deferred stacks apart by, at most
MAX_STRING_TABLES = 1 << 16


def _derived(start: int, length: int, table: int = -1, size: int = 0) -> int:
    """A deferred file as a source, one negative int (a :data:`_Kept` is positive): where its record's
    metadata JSON is in the log, and for a stack (``user_stack.txt``) the string table it is formatted
    with: its place in ``TraceLogReader._tables`` and how many ids it held then (ids are only added to a
    table; one redefined makes a new table); table -1: ``metrics.json``."""
    return -1 - (((start << 32 | length) << 17 | (table + 1)) << 40 | size)


def _derived_span(src: int) -> tuple[int, int, int, int]:
    v = -1 - src
    size, v = v & 0xFF_FFFF_FFFF, v >> 40
    span = v >> 17
    return span >> 32, span & 0xFFFF_FFFF, (v & 0x1FFFF) - 1, size


def _pairs(flat: tuple) -> Any:
    """``(name, source)`` pairs of a flat files tuple (``TraceLogReader._files``)."""
    return zip(flat[::2], flat[1::2])


class _Range(Struct):
    """A payload in the log: bytes [start, end) of ``\\t``-prefixed lines."""

    start: int
    end: int



def _open_for_writing(dev: int, ino: int) -> bool:
    """Whether any process whose ``/proc/<pid>/fd`` this one may read holds file ``(dev, ino)`` open for
    writing. True where ``/proc`` cannot be read (nothing can be concluded)."""
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return True
    for pid in pids:
        fd_dir = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.stat(f"{fd_dir}/{fd}")
            except OSError:
                continue
            if target.st_ino != ino or target.st_dev != dev:
                continue
            try:
                with open(f"/proc/{pid}/fdinfo/{fd}", encoding="ascii", errors="replace") as info:
                    flags = next((ln.split()[1] for ln in info if ln.startswith("flags:")), "0")
                if int(flags, 8) & (os.O_WRONLY | os.O_RDWR):
                    return True
            except (OSError, ValueError, IndexError):
                return True  # it holds the file and how cannot be read: assume a writer
    return False

class TraceLogReader(Reader):
    """Reads a TORCH_TRACE log incrementally into :class:`Event` s (the :class:`Reader` interface, with every
    optional capability: it holds its events' files and keeps torch's own records)."""

    holds_event_files = True
    reads_file_text = True
    keeps_records = True
    hands_opening_site = True
    streams_lean = True

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        #: the log as given (the same as ``path``; a ``.log.gz`` is read as a stream: :attr:`_gz`)
        self.source = self.path
        self._gzipped = self.path.name.endswith(GZ_SUFFIX)
        self._lock = threading.Lock()
        self._tmp: str | None = None
        self._generation = 0
        #: record kinds whose metadata and payload are kept as read (``kept``), for what needs torch's own
        #: records rather than events: ``chromium_event``, ``artifact:<name>`` (``magi_tui.model.outputs.ranks``,
        #: ``magi_tui.model.outputs.chrome_trace``). Empty: nothing is kept.
        self.keep: frozenset[str] = frozenset()
        #: a follower reads it again and again (``RunFollower`` sets this): only the quiet period ends a record
        self.followed = False
        #: a streamed headless load (``RunModel.load(fold=...)``) sets this: an event's attributes JSON and
        #: files are kept only if something still holds the event once its read is folded in (``settle``)
        self.lean = False
        self._reset_state()

    # -- state ---------------------------------------------------------------------------------
    def _reset_state(self) -> None:
        self._reset_read_state()  # ``partial``: bytes of a record (or line) still being written
        self._listed = 0         # malformed entries listed (MAX_MALFORMED_LISTED)
        self._ino: tuple[int, int] | None = None
        self._head = b""
        self._skip_tabs = False  # payload lines of a record that was rejected
        self._rest_of_line = False  # the tail of a line too long to read is still to be skipped
        self._settled = False    # its writer is gone (quiet for SETTLED_S, or no process holds it for writing)
        self._writers_asked_at = -1e9
        self._writers_held = True
        self._year: int | None = None
        self._year_hint: float | None = None  # an epoch time the log itself holds (else the file's mtime)
        self._last_mon = 0
        self._t0: float | None = None
        self._mapper: Any = None
        self._last_second: tuple = (None, 0.0)
        self._last_tl_id: str | None = None  # the last id put in compile_ids
        #: each event's attributes as JSON (``Event.offset`` points here): the rest of its line (the in-memory
        #: ``timeline.jsonl``) is on the Event and made again when asked for (``event_line_bytes``)
        old = getattr(self, "_store", None)  # (a log read again: the offsets of its former events read nothing)
        self._store = _LineStore(0 if old is None else len(old))
        #: the events whose whole line is kept there instead: made the careful way (what msgspec refuses), or
        #: with a name, files or time the Event holds otherwise
        self._whole: set[int] = set()
        self._texts = _LineStore()  # small files' texts (metrics.json, user_stack.txt, ...): _Kept
        #: event seq -> its files, flat: ``(name, source, name, source, ...)`` (one tuple an event: a log of
        #: 100k frames has 200k of these); a source is a :class:`_Range` of the log, a :class:`_Kept`, a str
        self._files: dict[int, tuple] = {}
        #: the events with one file kept as an int (a :data:`_Kept`, a deferred metrics.json: most events
        #: with a file), in arrays rather than a tuple each in ``_files``: the event's seq (increasing), the
        #: file's name (its place in ``_one_names``) and the source, split in two (an int may be 70 bits)
        self._one_seq = array("q")
        self._one_name = array("I")
        self._one_hi = array("q")
        self._one_lo = array("Q")
        self._one_names: dict[str, int] = {}
        self._one_names_list: list[str] = []
        self._attrs_of: dict[int, int] = {}
        #: seq -> (the event, its co_filename, its co_firstlineno) of the compile ``before`` events of the
        #: last read (opening_site)
        self._opening: dict[int, tuple[Event, Any, Any]] = {}
        #: what tlparse calls its stats: ok / fail_glog / fail_json / fail_payload_md5 / unknown
        self.stats: Counter = Counter()
        #: record types torch 2.13 does not emit, with how many records had each
        self.unknown_types: Counter = Counter()
        #: every compile id seen on a record, tlparse's spelling (attempts included), in order
        self.compile_ids: dict[str, None] = {}
        #: ``(kind, metadata, payload)`` of the records named in ``keep``, in log order
        self.kept: list[tuple[str, dict[str, Any], str | None]] = []
        self._own_names: set[str] = set()
        self._record_json = (0, 0)  # the record being mapped: its metadata JSON's (start, length) in the log
        #: the mapping's string tables deferred stacks were given (a new one when a ``str`` record redefines
        #: an id), in order
        self._tables: list[dict[int, str]] = []
        #: a lean reader's events of the last read, until :meth:`settle`: what :meth:`_keep` takes (``(ev,)``:
        #: kept already), the first one's seq
        self._unsettled: list[tuple] = []
        self._unsettled_from = 0
        #: seqs of the last read's events something holds for their Event alone (:meth:`index_only`)
        self._index_only: set[int] = set()
        #: a ``.log.gz``'s unpacked bytes, streamed (``gzstream.GzStream``): ``offset`` and every byte range
        #: are offsets in the unpacked log
        self._gz: Any = None
        if self._gzipped:
            from magi_tui.model.sources.torchtrace.gzstream import GzStream

            self._gz = GzStream(MAX_UNPACKED_BYTES)
        self._generation += 1

    # -- the TimelineReader interface ----------------------------------------------------------
    def read(self, max_bytes: int | None = None) -> ReadResult:
        """Read what was appended since the last call (at most about ``max_bytes`` of complete records).
        Never raises for anything found on disk."""
        result = ReadResult()
        if self.lean:  # (a reader that keeps every event keeps their opening sites: see opening_site)
            self._opening = {}
        opened = open_followed(self, result, self._reset_locked)
        if opened is None:
            return result
        fd, st = opened
        gz = self._gz
        try:
            if gz is not None:
                gz.keep_from(self.offset)
            if self._year_hint is None:
                self._year_hint = self._epoch_in_log(fd) or st.st_mtime
            # the writer is gone: the file is quiet for SETTLED_S, or -- read once, not followed -- no process
            # here holds it open for writing (a log just copied or cut by hand is final at once; one torch still
            # writes is not). A followed log waits for the quiet: its writer may be elsewhere (NFS) or reopen it.
            self._settled = time.time() - st.st_mtime >= SETTLED_S or (
                not self.followed and not self._held_for_writing(st))
            read_from = self._read_from if gz is None else self._read_gz
            if self.lean:  # (one thread reads and folds it in: its events are placed under the lock once a
                with self._lock:  # read, not once a record -- 210k of them in a 100k-frame log)
                    read_from(fd, st.st_size, result, max_bytes)
            else:
                read_from(fd, st.st_size, result, max_bytes)
            if len(self._head) < _FINGERPRINT:
                self._head = os.pread(fd, _FINGERPRINT, 0)
            if gz is None or not self._gz_failed(gz, result):
                self.error = None
        except OSError as exc:
            self._error(result, f"cannot read: {exc.strerror or exc}")
        except Exception as exc:  # a bug of ours must not take the viewer down: say so, keep what was read
            self._error(result, f"cannot map record near line {self.line_no + 1}: {type(exc).__name__}: "
                                f"{literal(str(exc), 200)}")
        finally:
            os.close(fd)
        return result

    def opening_site(self, ev: Event) -> tuple[Any, Any] | None:
        """``(co_filename, co_firstlineno)`` (None where absent) of the attribute map this reader made for
        ``ev`` (before its line was encoded) when ``ev`` is a compile's ``before`` event (of the last
        :meth:`read` for a :attr:`lean` reader; of any read for one that keeps every event, as the app's
        does: its analysis folds them after the load), else None (read its line). What the fold reads of
        each frame's first compile (``TimelineFold.bind``), handed over rather than made again from the
        line and decoded (a line per frame, again); only those two values are
        kept, not the map."""
        got = self._opening.get(ev.seq)
        return got[1:] if got is not None and got[0] is ev else None

    def event_line_bytes(self, ev: Event) -> bytes | None:
        """An event's JSON line, as the tracer would have written it (the log has no such line): made from
        the Event and its attributes' JSON kept in memory; None when ``ev`` is not one of this reading's
        (the log was replaced since)."""
        with self._lock:
            self._keep_pending(ev)
            data = self._store.get(ev.offset, ev.length)
            if data is None or ev.seq >= self.seq or not data:  # (none kept: a lean reader's, index_only)
                return None
            if ev.seq in self._whole:
                return data
            return _make_line(ev.seq, ev.name, ev.files, ev.timestamp, self._t0, data)

    def event_files(self, ev: Event) -> list[tuple[str, Path | None, str | None]]:
        """``(file name, path or None, problem or None)`` per file of the event, plus ``attributes.json``
        (as for a run dir). Files are written on first use into a private folder. Never raises."""
        try:
            with self._lock:
                self._keep_pending(ev)
                return self._event_files(ev)
        except Exception as exc:
            return [("?", None, f"cannot list files: {type(exc).__name__}")]

    def file_text(self, ev: Event, name: str, limit: int) -> str | None:
        """The text of the event's file ``name`` (its first ``limit`` characters) from what this reader
        holds, writing no copy; None when the event has no such file or the log changed. Never raises."""
        try:
            with self._lock:
                self._keep_pending(ev)
                for fname, src in _pairs(self._files_of(ev.seq)):
                    if fname == name:
                        text = self._text_of(src)
                        return None if text is None else text[:limit]
        except Exception:
            return None
        return None

    # -- identity ------------------------------------------------------------------------------
    def _reset_locked(self) -> None:
        with self._lock:
            self._reset_state()

    def _check_identity(self, fd: int, st: os.stat_result) -> str | None:
        """The run-dir reader's rule (``TimelineReader._check_identity``: truncated / replaced / first bytes
        changed); for a ``.log.gz`` it is the compressed file that must not shrink below what was read of it."""
        if not self.exists:
            return None
        if self._ino is not None and self._ino != (st.st_dev, st.st_ino):
            return "replaced"
        if st.st_size < (self.offset if self._gz is None else self._gz.read_in):
            return "truncated"
        if self._head:
            head = os.pread(fd, len(self._head), 0)
            if head != self._head[: len(head)] or len(head) < min(len(self._head), st.st_size):
                return "replaced"
        return None

    def _error(self, result: ReadResult, reason: str) -> None:
        if reason != self.error:
            self.error = reason
            result.malformed.append(Malformed(0, reason, ""))

    def _bad(self, result: ReadResult, line_no: int, reason: str, raw: bytes, stat_key: str,
             lines: int = 1) -> None:
        """``lines`` malformed lines from ``line_no`` on: counted, and listed as one entry (past
        :data:`MAX_MALFORMED_LISTED` entries, counted only: a log of millions of bad records holds no
        million entries)."""
        self.malformed_count += lines
        self.stats[stat_key] += lines
        self._listed += 1
        if self._listed <= MAX_MALFORMED_LISTED:
            result.malformed.append(Malformed(line_no, reason, raw[:200].decode("utf-8", "replace")))
        elif self._listed == MAX_MALFORMED_LISTED + 1:
            result.malformed.append(Malformed(line_no, f"more malformed lines from here on: counted, not listed "
                                                       f"(the first {MAX_MALFORMED_LISTED} are)", ""))

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

    def _read_gz(self, fd: int, _size: int, result: ReadResult, max_bytes: int | None) -> None:
        """:meth:`_read_from` for a ``.log.gz``: the unpacked bytes come from the stream (``fd`` is the gzip
        file), as far as they go; its end is the end of the log."""
        gz = self._gz
        budget = max_bytes if max_bytes is not None else 1 << 62
        pos = self.offset
        self.more = False
        want = max(1, min(CHUNK, budget))
        while not (gz.done and pos >= gz.size):
            if budget <= 0:
                self.more = True
                break
            data = gz.read(fd, pos, want)
            if not data:
                break
            at_eof = gz.done and pos + len(data) >= gz.size
            consumed = self._parse(data, pos, at_eof, result)
            if consumed == 0:
                if at_eof:
                    break  # a record still being written (a stream cut inside it, read again)
                if len(data) >= MAX_RECORD_BYTES:
                    consumed = self._skip_huge(data, pos, result)
                else:
                    want = len(data) * 2  # one record longer than the chunk: read it whole
                    continue
            pos += consumed
            budget -= consumed
            want = max(1, min(CHUNK, budget))
        self.offset = pos
        self.partial = 0 if self.more else max(0, gz.size - pos)

    def _gz_failed(self, gz: Any, result: ReadResult) -> bool:
        """What the gzip stream said once it ended early, as ``malformed`` notes (a cut or damaged stream,
        bytes after it, a bomb refused), or as the error when nothing could be unpacked (not gzip at all):
        True then."""
        failed = False
        for kind, detail, at in gz.take_notes():
            name = self.source.name
            if kind == "damaged" and at == 0:
                self._error(result, f"cannot unpack: {literal(detail, 200)}")
                failed = True
            elif kind == "damaged":
                result.malformed.append(Malformed(0, f"{name}: the gzip stream is damaged: what unpacked before "
                                                     f"it is read ({literal(detail, 100)})", ""))
            elif kind == "cut":
                result.malformed.append(Malformed(0, f"{name} ends early (a cut gzip stream): what it holds "
                                                     "is read", ""))
            elif kind == "trailing":
                result.malformed.append(Malformed(0, f"{name}: bytes after the gzip stream are ignored", ""))
            else:
                result.malformed.append(Malformed(0, f"{name}: refused past {MAX_UNPACKED_BYTES >> 30} GB "
                                                     "unpacked: what came before is read", ""))
        return failed or (self.error is not None and gz.done and gz.size == 0
                          and self.error.startswith("cannot unpack"))

    def _skip_huge(self, data: bytes, base: int, result: ReadResult) -> int:
        """A line that makes a record over MAX_RECORD_BYTES: the records before it are whole (that line
        starts after them) and are read; the record it belongs to is reported and skipped."""
        end = data.rfind(b"\n") + 1
        if end and data[end:end + 1] != b"\t":  # a new line, not more payload: what is before it is whole
            done = self._parse(data[:end], base, False, result, ended=True)
            if done:
                return done
        first = data[: data.find(b"\n") + 1 or len(data)]
        self._bad(result, self.line_no + 1, f"record longer than {MAX_RECORD_BYTES >> 20} MB: skipped",
                  first, "fail_too_long")
        self.line_no += data.count(b"\n", 0, end)
        self._skip_tabs = True
        self._rest_of_line = not end  # the long line goes on past this chunk: its tail is skipped too
        return end or len(data)

    def _parse(self, data: bytes, base: int, at_eof: bool, result: ReadResult, ended: bool = False) -> int:
        """Records in ``data`` (file bytes from ``base``); returns the bytes of complete records and
        rejected lines consumed (a pending record and a partial last line are left for later).
        ``ended``: the last record in ``data`` is whole (the line after it is known to start a new one).

        Lines are found with ``find`` and a payload's ``\\t`` lines are skipped in one regex step: a
        payload is kept as byte ranges of ``data`` (no list of lines), joined once when its record ends."""
        if self._rest_of_line:  # the tail of a skipped overlong line: up to its newline
            nl = data.find(b"\n")
            if nl < 0:
                return len(data)
            self._rest_of_line = False
            self.line_no += 1
            return nl + 1
        final = ended or (at_eof and self._settled)
        unterminated = final and data[-1:] != b"\n"
        if unterminated:  # the writer is gone: its last line is whole, newline or not
            data += b"\n"
        end_complete = data.rfind(b"\n") + 1
        if end_complete == 0:
            return 0
        if base == 0 and data.startswith(_BOM):
            data = b" " * len(_BOM) + data[len(_BOM):]  # same offsets; the blank prefix is stripped below
        pos = 0
        line_no = self.line_no
        consumed, consumed_line = 0, line_no
        cur: _Pending | None = None
        blanks, blank_start = 0, 0  # blank lines after a record's payload: its own, if more payload follows
        find, payload_end, count, blank_run = data.find, _PAYLOAD_END.search, data.count, _BLANK_RUN.match
        while pos < end_complete:
            start = pos
            if data[pos] == 9:  # "\t": this payload line and every one right after it
                stop = payload_end(data, pos, end_complete).end()  # type: ignore[union-attr]  # "\n" ends it
                if cur is not None:
                    cur.runs.append((base + start, base + stop, blanks))
                    blanks = 0
                    line_no += count(b"\n", start, stop)
                    pos = stop
                    continue
                n = count(b"\n", start, stop)  # (one entry for the run)
                if not self._skip_tabs:
                    self._bad(result, line_no + 1, "payload line without a record" + (
                        f" (and {n - 1} more after it)" if n > 1 else ""), data[start:find(b"\n", pos)],
                        "fail_glog", n)
                    self._skip_tabs = True  # (the run's tail in the next block is the same run)
                line_no += n
                pos = stop
                consumed, consumed_line = pos, line_no
                continue
            nl = find(b"\n", pos)
            pos = nl + 1
            line_no += 1
            raw = data[start:nl - 1] if data[nl - 1:nl] == b"\r" and nl > start else data[start:nl]
            if not raw or raw.isspace():  # a blank line (strip() would copy it) and those right after it,
                n = 1                     # at the regex engine's speed
                if pos < end_complete:
                    more = blank_run(data, pos, end_complete)
                    if more is not None:
                        n += count(b"\n", pos, more.end())
                        line_no += n - 1
                        pos = more.end()
                if cur is None:
                    self._skip_tabs = False
                    consumed, consumed_line = pos, line_no
                    continue
                if not blanks:
                    blank_start = start
                blanks += n
                if pos - blank_start <= MAX_BLANK_RUN:
                    continue
                cur.end = base + blank_start  # so many blank lines: the record ended before them
                blanks = 0
                self._finish(cur, data, base, result)
                cur = None
                self._skip_tabs = False
                consumed, consumed_line = pos, line_no
                continue
            if cur is not None:  # a new line ends the record before it
                cur.end = base + (blank_start if blanks else start)
                blanks = 0
                self._finish(cur, data, base, result)
                cur = None
            consumed, consumed_line = start, line_no - 1
            self._skip_tabs = False
            if start == 0 and base == 0 and raw[:len(_BOM)] == b" " * len(_BOM):
                raw = raw.lstrip(b" ")
            m = GLOG_RE.match(raw)
            if m is None:
                self._bad(result, line_no, "not a TORCH_TRACE record line", raw, "fail_glog")
                self._skip_tabs = True
                nxt = _MAYBE_NEXT.search(data, pos - 1, end_complete)  # the lines after it that are junk too
                stop = nxt.start() + 1 if nxt is not None else end_complete
                if stop > pos:
                    n = count(b"\n", pos, stop)
                    if n > 1:  # one entry for them
                        self._bad(result, line_no + 1, f"{n} more lines that are not TORCH_TRACE record lines "
                                  f"(to line {line_no + n})", data[pos:find(b"\n", pos)], "fail_glog", n)
                    else:
                        self._bad(result, line_no + 1, "not a TORCH_TRACE record line",
                                  data[pos:stop - 1].removesuffix(b"\r"), "fail_glog")
                    line_no += n
                    pos = stop
                consumed, consumed_line = pos, line_no
                continue
            cur = _Pending(base + start, line_no, m, raw, base + pos)
        if cur is not None:
            cur.end = base + (blank_start if blanks else pos - unterminated)
            if at_eof and end_complete == len(data) and (final or self._complete_at_eof(cur, data, base)):
                self._finish(cur, data, base, result)
                consumed, consumed_line = pos, line_no
            elif ended:
                self._finish(cur, data, base, result)
                consumed, consumed_line = pos, line_no
        else:
            consumed, consumed_line = pos, line_no
        self.line_no = consumed_line
        return min(consumed, len(data) - 1) if unterminated else consumed

    @staticmethod
    def _payload(cur: _Pending, data: bytes, base: int) -> bytes | None:
        """The record's payload: its lines, tab and newline stripped, joined by ``\\n`` (tlparse's)."""
        runs = cur.runs
        if not runs:
            return None
        if len(runs) == 1:
            s, e, _ = runs[0]
            region = data[s - base + 1:e - base - 1]  # "\tA\n\tB\n" -> "A\n\tB"
            if b"\r" not in region:
                return region.replace(b"\n\t", b"\n")
        lines: list[bytes] = []
        for s, e, blanks in runs:
            lines.extend([b""] * blanks)
            for ln in data[s - base:e - base].split(b"\n")[:-1]:
                lines.append(ln[1:-1] if ln[-1:] == b"\r" else ln[1:])
        return b"\n".join(lines)

    @staticmethod
    def _metadata(cur: _Pending) -> tuple[dict[str, Any] | None, str]:
        return _decode_metadata(cur.header[cur.match.end():], cur.match.end())

    def _complete_at_eof(self, cur: _Pending, data: bytes, base: int) -> bool:
        """The last record of the file is whole: no payload announced, or its payload matches."""
        md, _ = self._metadata(cur)
        if md is None:
            return True  # reported as it is; nothing more can make it right
        want = md.get("has_payload")
        if not isinstance(want, str):
            return True
        blob = self._payload(cur, data, base)
        return blob is not None and hashlib.md5(blob).hexdigest() == want

    # -- one record -> events ------------------------------------------------------------------
    def _finish(self, cur: _Pending, data: bytes, base: int, result: ReadResult) -> None:
        """One record's events: its metadata and payload read, counted as tlparse counts, mapped, made
        Events (:meth:`_add_events`). Run 210k times on a 100k-frame log: what is the same for every record
        (the mapping module) is looked up once, a record without payload skips the payload's steps."""
        jstart = cur.match.end()
        md, why = _decode_metadata(cur.header[jstart:], jstart)
        if md is None:
            self._bad(result, cur.line_no, why, cur.header, "fail_json")
            return
        payload: str | None = None
        blob = self._payload(cur, data, base) if cur.runs else None
        if blob is not None:
            want = md.get("has_payload")
            if isinstance(want, str) and hashlib.md5(blob).hexdigest() != want:
                self._bad(result, cur.line_no, "payload does not match its has_payload md5 (shown anyway)",
                          cur.header, "fail_payload_md5")
            payload = blob.decode("utf-8", "replace")
            del blob  # the text alone from here: a big payload is held once, not as bytes and text
        kind = next(iter(md))
        if self.keep:
            body = md.get(kind)
            key = f"artifact:{body.get('name')}" if kind == "artifact" and isinstance(body, dict) else kind
            if key in self.keep:
                self.kept.append((key, md, payload))
        cid = tlparse_compile_id(md)
        if cid is not None and cid != self._last_tl_id and kind != "chromium_event":
            self.compile_ids.setdefault(cid, None)  # (a compile's records come together: asked once for them)
            self._last_tl_id = cid
        mapping = _MAPPING or _mapping()
        if kind not in mapping.TORCH_KINDS:  # read all the same: tlparse counts it ok and unknown
            self.unknown_types[kind] += 1
            self.stats["unknown"] += 1
        if kind != "str":
            self.stats["ok"] += 1
        ts = self._timestamp(cur.match)
        rng = _Range(cur.payload_start, cur.end) if cur.runs else None
        # where the metadata JSON is in the log (a deferred metrics.json is made from it when opened):
        # the line ends before payload_start's "\n" (and a CRLF's "\r"); the header holds no "\r"
        eol = cur.payload_start - 1
        if data[eol - base - 1:eol - base] == b"\r":
            eol -= 1
        jlen = len(cur.header) - jstart
        self._record_json = (eol - jlen, jlen)
        try:  # (the mapping's answer first, at one call: most records have one; _map shows the others)
            mapper = self._mapper
            specs = mapper.handle(md, payload) if mapper is not None else None
            if not specs:
                specs = self._map(kind, md, payload, mapping, specs)
        except Exception as exc:  # a record the mapping chokes on: reported, the rest still read
            self._bad(result, cur.line_no, f"record not mapped ({literal(kind, 80)}): {type(exc).__name__}: "
                      f"{literal(str(exc), 200)}", cur.header, "fail_parser")
            return
        if specs:
            if self.lean:  # (read() holds the lock)
                self._add_events(specs, ts, cur.line_no, payload, rng, result)
            else:
                with self._lock:  # (once for the record's events)
                    self._add_events(specs, ts, cur.line_no, payload, rng, result)

    def _map(self, kind: str, md: dict[str, Any], payload: str | None, mapping: Any,
             specs: list[EventSpec] | None = None) -> list[EventSpec]:
        """A record's event specs: the mapping's (``specs``, when asked already: :meth:`_finish`), else the
        events of a record it has none for."""
        if self._mapper is None:
            self._mapper = mapping.TraceMapper()
            self._mapper.defer_files = True  # metrics.json, user_stack.txt made when opened (_record_file)
        m = self._mapper.map(md, payload, specs)  # (a new list each record)
        if m.known == "mapped":
            return m.specs
        if m.known == "shown":  # one of torch's records no handler takes: shown as it is, under its name
            stem, _, ext = m.file.rpartition(".")
            return [EventSpec(self._own_name(m.name), self._attrs(md, **(m.attrs or {})),
                              {f"{_file_name(stem)}.{ext}": payload or ""})]
        if self.unknown_types[kind] > MAX_UNKNOWN_EVENTS:
            return m.specs
        body = md.get(kind)
        meta = json.dumps(body, default=repr)
        attrs = self._attrs(md, record_type=kind, unknown=True,
                            metadata=meta if len(meta) <= 2000 else meta[:2000] + "…")
        return [EventSpec(self._own_name(kind), attrs, {f"{_file_name(kind)}.txt": payload} if payload else {})]

    def _own_name(self, name: str) -> str:
        """The event name of a record the mapping has no event for: the record's own name (``graph_execution``,
        ``exported_program``, an unknown kind), prefixed ``trace_`` where it would read as one of ours."""
        base = frag(name)[:80]
        if base.startswith(_PHASE_PREFIX) or name_kind(base) or base == "unknown" or base in _OURS:
            base = TRACE_PREFIX + base
        if base not in self._own_names:
            if len(self._own_names) >= MAX_OWN_NAMES:
                return point_event(TRACE_PREFIX + "record")
            self._own_names.add(base)
        return point_event(base)

    def _attrs(self, md: dict[str, Any], **extra: Any) -> dict[str, Any]:
        """The attributes the mapping gives its own events (compile id without the attempt, frame)."""
        a: dict[str, Any] = dict(scope_attrs(None))
        cid = self._mapper.compile_id_of(md)
        if cid is None and md.get("compiled_autograd_id") is not None:
            # compiled autograd's capture itself (its graph, its compile reasons): tlparse's ``!N/-/-``
            a["compile_id"] = f"!{md['compiled_autograd_id']}/-/-"
            a["attempt"] = md.get("attempt")
        elif cid is not None:
            st = self._mapper.compiles.get(cid)
            key = (self._mapper.resets, md.get("compiled_autograd_id"), md.get("frame_id"))
            a["compile_id"] = cid
            a["frame"] = st.frame if st is not None else self._mapper.frame_names.get(key)
            a["attempt"] = md.get("attempt")
        a["source"] = "torch_trace"
        a.update(extra)
        return a

    def _held_for_writing(self, st: os.stat_result) -> bool:
        """Whether a process on this machine has the log open for writing (Linux ``/proc``; asked at most once
        a second). Where it cannot be told (no ``/proc``), assume so: the quiet period decides."""
        now = time.monotonic()
        if now - self._writers_asked_at < 1.0:
            return self._writers_held
        self._writers_asked_at = now
        self._writers_held = _open_for_writing(st.st_dev, st.st_ino)
        return self._writers_held

    def _timestamp(self, m: re.Match) -> float | None:
        """The glog prefix's local time (ms precision). It has no year: the year is the one that puts the
        first record nearest an epoch time the log holds (:meth:`_epoch_in_log`), else the file's mtime,
        and turns over when the month goes back (a log across New Year)."""
        try:
            key = m.string[1:14]  # "MMDD hh:mm:ss" (GLOG_RE's groups 2-6, fixed widths)
            last = self._last_second  # records come thousands a second: mktime once per second
            if last[0] != key:
                mon, day, hh, mm, ss = (int(v) for v in m.group(2, 3, 4, 5, 6))
                if self._year is None:
                    hint = self._year_hint if self._year_hint is not None else time.time()
                    y = time.localtime(hint).tm_year
                    self._year = min((y - 1, y, y + 1), key=lambda yr: abs(
                        time.mktime((yr, mon, day, hh, mm, ss, 0, 0, -1)) - hint))
                elif mon < self._last_mon:
                    self._year += 1
                self._last_mon = mon
                last = self._last_second = (key, time.mktime((self._year, mon, day, hh, mm, ss, 0, 0, -1)))
            return last[1] + float(b"0." + m.group(7))
        except (ValueError, OverflowError):
            return None

    def _epoch_in_log(self, fd: int) -> float | None:
        """An epoch time from the log's first chunk: a ``compilation_metrics`` ``start_time`` (seconds)
        or a chromium event's ``ts`` (µs), so dates do not depend on when the file was copied."""
        try:
            if self._gz is not None:
                if self.offset:  # (asked at the first read, from the start)
                    return None
                head = self._gz.read(fd, 0, CHUNK)
            else:
                head = os.pread(fd, CHUNK, 0)
        except OSError:
            return None
        m = _search_at(_EPOCH_S, head)
        if m:
            return float(m.group(1))
        m = _search_at(_EPOCH_US, head)
        return float(m.group(1)) / 1e6 if m else None

    def _add_events(self, specs: list[EventSpec], ts: float | None, line_no: int, payload: str | None,
                    rng: _Range | None, result: ReadResult) -> None:
        """A record's events: each one's Event, and its attributes JSON (its line, made when asked for) and
        files kept (:meth:`_keep`): at once, or, for a :attr:`lean` reader, once the read is folded in and
        only for the events something still holds (:meth:`settle`). The lock is held."""
        events = result.events
        lean = self.lean
        unsettled = self._unsettled
        for spec in specs:
            name, attrs, files, ets = spec
            if ets is None:
                ets = ts
            if ets is not None and self._t0 is None:
                self._t0 = ets
            seq = self.seq
            fkey = tuple(files) if files else ()
            data: Any = None
            if lean and type(attrs) is dict:  # its attributes encoded only if the event is kept (settle: 1
                # in 4 of a 100k-frame log), from the map it was made of (:meth:`_attrs_json`), where the
                # Event holds the name, files and time its line is made of (else: at once, below)
                ev = dict_event(name, seq, fkey, ets, attrs, line_no, 0, 0)
                if (ev.timestamp is ets and ev.name == name and ev.files == fkey
                        and (ets is None or type(self._t0) is float)):
                    data = attrs
            if data is None:
                ev, data, attrs = self._event_and_json(name, seq, fkey, ets, attrs, line_no)
            if lean:  # (a lean reader's event is placed when kept)
                if not unsettled:
                    self._unsettled_from = seq
                if files:  # (a deferred user_stack.txt is formatted with the string table of now)
                    strings = self._mapper.strings
                    unsettled.append((ev, data, files, payload, rng, self._record_json, strings, len(strings)))
                else:
                    unsettled.append((ev, data))
            elif files:
                strings = self._mapper.strings
                self._keep(ev, data, files, payload, rng, self._record_json, strings, len(strings))
            else:
                self._keep(ev, data)
            if ev.phase == "before" and ev.lifecycle == "compile":
                self._opening[seq] = (ev, attrs.get("co_filename"), attrs.get("co_firstlineno"))
            self.seq = seq + 1
            events.append(ev)

    def _event_and_json(self, name: str, seq: int, fkey: tuple, ets: float | None, attrs: Any,
                        line_no: int) -> tuple[Event, bytes, dict[str, Any]]:
        """An event's Event, the JSON kept of its line and the attribute map the Event was made of.

        Only the attributes are kept (encoded in C): the rest of the line is on the Event and the reader and
        is made again when asked for (:meth:`event_line_bytes`); a line that could not be made again byte for
        byte from those -- what msgspec refuses (lone surrogates, ...) goes the careful way, a name / files /
        time the Event holds otherwise -- is kept whole (``_whole``)."""
        lean = self.lean
        try:
            data = _fast_line(attrs)
            if name not in _NAME_JSON or fkey not in _FILES_JSON:  # (known ones encoded before)
                _line_parts(name, fkey)  # (what msgspec refuses in them takes the careful way too)
            whole = False
        except (TypeError, ValueError, OverflowError):
            obj = timeline_record(seq, name, list(fkey), json_safe(attrs), ets, self._t0)
            data = _encode_line(obj).encode("utf-8", "replace")
            attrs = obj["attributes"]
            whole = True
        if type(attrs) is not dict:
            attrs = {}
        ev = dict_event(name, seq, fkey, ets, attrs, line_no, 0 if lean else len(self._store), len(data))
        if not whole and not (ev.timestamp is ets and ev.name == name and ev.files == fkey
                              and (ets is None or type(self._t0) is float)):
            try:
                data = _make_line(seq, name, fkey, ets, self._t0, data)
            except (TypeError, ValueError, OverflowError):
                obj = timeline_record(seq, name, list(fkey), json_safe(attrs), ets, self._t0)
                data = _encode_line(obj).encode("utf-8", "replace")
                attrs = obj["attributes"]
                if type(attrs) is not dict:
                    attrs = {}
            whole = True
            ev = dict_event(name, seq, fkey, ets, attrs, line_no, 0 if lean else len(self._store), len(data))
        if whole:
            self._whole.add(seq)
        return ev, data, attrs

    def _attrs_json(self, ev: Event, attrs: dict[str, Any]) -> bytes:
        """The JSON a lean reader keeps of an event it keeps (:meth:`_keep`), made now from the map the Event
        was made of, as :meth:`_event_and_json` makes it at once (the Event's name, files and time are those
        of its line: :meth:`_add_events` checked); what msgspec refuses keeps the whole line, the careful way
        (and a map too deep for either encoder, a hostile log's, is kept as ``{}``)."""
        name, files = ev.name, ev.files
        try:
            data = _fast_line(attrs)
            if name not in _NAME_JSON or files not in _FILES_JSON:
                _line_parts(name, files)
            return data
        except (TypeError, ValueError, OverflowError, RecursionError):
            pass
        self._whole.add(ev.seq)
        try:
            obj = timeline_record(ev.seq, name, list(files), json_safe(attrs), ev.timestamp, self._t0)
        except RecursionError:
            obj = timeline_record(ev.seq, name, list(files), {}, ev.timestamp, self._t0)
        return _encode_line(obj).encode("utf-8", "replace")

    def _keep(self, ev: Event, data: bytes | dict[str, Any], files: dict[str, Any] | None = None, payload: str | None = None,
              rng: _Range | None = None, record_json: tuple[int, int] = (0, 0),
              strings: dict[int, str] | None = None, size: int = 0, *, early: bool = False) -> None:
        """An event's attributes JSON put in the store (where the Event says its line is: a lean reader's
        Event learns it here) and its files listed (the lock is held). ``early``: a lean reader's event kept
        before the events pending ahead of it; its one file is listed in seq order at :meth:`settle`."""
        # a lean reader's event's attributes are encoded now that it is kept
        line = self._attrs_json(ev, data) if isinstance(data, dict) else data
        off = self._store.append(line, b"")
        if self.lean:
            place_line(ev, off, len(line))
        if not files:
            return
        mapping = _MAPPING or _mapping()
        metrics_of, stack_of = mapping.METRICS_OF_RECORD, mapping.STACK_OF_RECORD
        flat: list[Any] = []
        for fname, text in files.items():
            flat.append(str(fname))
            if text is metrics_of:
                flat.append(_derived(*record_json))
            elif text is stack_of:
                flat.append(self._deferred_stack(record_json, strings or {}, size))
            else:
                flat.append(rng if (rng is not None and text is payload and text is not None
                                     and len(text) > INLINE_BYTES)
                            else self._keep_text(str(text)))
        seq = ev.seq
        if (not early and len(flat) == 2 and type(flat[1]) is int and len(self._one_names) < 0xFFFF_FFFF
                and (not self._one_seq or self._one_seq[-1] < seq)):  # (kept in seq order: bisected)
            self._one_file(seq, flat[0], flat[1])
        else:
            self._files[seq] = tuple(flat)

    def _list_early(self, seq: int) -> None:
        """The one file of an event kept early (``_keep(early=True)``) moved to the arrays, in seq order
        now (a dict entry each held 40 MB more for ``compare``, which reads every compile's attributes)."""
        flat = self._files.get(seq)
        if (flat is not None and len(flat) == 2 and type(flat[1]) is int and len(self._one_names) < 0xFFFF_FFFF
                and (not self._one_seq or self._one_seq[-1] < seq)):
            del self._files[seq]
            self._one_file(seq, flat[0], flat[1])

    def index_only(self, ev: Event) -> None:
        """``ev`` (an event of the read being folded in) is held from now on by something that reads only the
        Event itself -- its index, name, compile id: a frame's first event, a check's event or a row's jump
        target (``TimelineFold``) -- never its line nor its files. A :attr:`lean` reader keeps no line for it
        if that is all that holds it at :meth:`settle` (a big log's frames would each keep one); asked for, its line is None and it has no files."""
        if self.lean:
            self._index_only.add(ev.seq)

    def settle(self) -> None:
        """A :attr:`lean` reader's events of the last read, once it is folded in: each one something still
        holds (the fold, the triage, an open span: the answer may read its line or files) is kept
        (:meth:`_keep`), as a reader that is not lean keeps every event, but for one held only once, by what
        reads its Event alone (:meth:`index_only`); the others went with the read, so their attributes JSON is
        never stored nor their files listed (3 of 4 events of a 100k-frame log, and each frame's first)."""
        with self._lock:
            pending, self._unsettled = self._unsettled, []
            index_only, self._index_only = self._index_only, set()
            self._opening = {}  # (it holds the read's compile openings: the fold has read them)
            keep, refs, unheld = self._keep, _getrefcount, _UNHELD  # (400k items of a 100k-frame log)
            for item in pending:
                if len(item) == 1:  # kept early
                    self._list_early(item[0].seq)
                    continue
                n = refs(item[0])
                if n > unheld and (n > unheld + 1 or item[0].seq not in index_only):
                    keep(*item)

    def _keep_pending(self, ev: Event) -> None:
        """``ev`` kept now if a lean reader still has it pending: its line or files are asked for while
        its read is being folded in (a fold that reads attributes, ``metrics.CompileInfoFold``)."""
        pending = self._unsettled
        i = ev.seq - self._unsettled_from
        if 0 <= i < len(pending):
            item = pending[i]
            if len(item) > 1 and item[0] is ev:
                pending[i] = (ev,)
                self._keep(*item, early=True)

    # -- files ---------------------------------------------------------------------------------
    def _one_file(self, seq: int, name: str, src: int) -> None:
        i = self._one_names.get(name)
        if i is None:
            i = self._one_names[name] = len(self._one_names_list)
            self._one_names_list.append(name)
        self._one_seq.append(seq)
        self._one_name.append(i)
        self._one_hi.append(src >> 64)
        self._one_lo.append(src & 0xFFFF_FFFF_FFFF_FFFF)

    def _files_of(self, seq: int) -> tuple:
        """The event's files, flat: ``(name, source, name, source, ...)`` (the lock is held)."""
        got = self._files.get(seq)
        if got is not None:
            return got
        i = bisect.bisect_left(self._one_seq, seq)
        if i == len(self._one_seq) or self._one_seq[i] != seq:
            return ()
        return self._one_names_list[self._one_name[i]], self._one_hi[i] << 64 | self._one_lo[i]

    def _keep_text(self, text: str) -> _Kept:
        data = text.encode("utf-8", "surrogatepass")
        return self._texts.append(data, b"") << 40 | len(data)

    def _text_of(self, src: Any) -> str | None:
        """A file's text: re-read from the log (a payload), or from the text store (the lock is held)."""
        if isinstance(src, _Range):
            return self._read_payload(src)
        if type(src) is int:
            if src < 0:
                return self._record_file(*_derived_span(src))
            data = self._texts.get(*_kept_span(src))
            return None if data is None else data.decode("utf-8", "surrogatepass")
        return src

    def _deferred_stack(self, record_json: tuple[int, int], strings: dict[int, str], size: int) -> Any:
        """The source of a record's ``user_stack.txt`` the mapping deferred: the record and the string
        table it was mapped with, ``size`` ids long then (the text itself where there have been too many
        tables)."""
        if not self._tables or self._tables[-1] is not strings:
            if len(self._tables) >= MAX_STRING_TABLES or size > 0xFF_FFFF_FFFF:
                text = self._record_file(*record_json, MAX_STRING_TABLES, size, strings)
                return self._keep_text(text or "")
            self._tables.append(strings)
        return _derived(*record_json, len(self._tables) - 1, size)

    def _record_file(self, start: int, length: int, table: int, size: int = 0,
                     strings: dict[int, str] | None = None) -> str | None:
        """A deferred ``metrics.json`` (``table`` -1) or ``user_stack.txt``: made, as the mapping would have,
        from the record's metadata JSON re-read from the log (None when the log changed since); the string
        table is ``strings`` when given."""
        raw = self._read_log(start, length)
        if raw is None:
            return None
        md, _why = _decode_metadata(raw)
        if md is None:
            return None
        body = md.get(next(iter(md)))
        body = body if isinstance(body, dict) else {}
        if table < 0:
            return _mapping().metrics_json(body)
        if strings is None:
            strings = self._mapper.strings if table >= len(self._tables) else self._tables[table]
        if len(strings) > size:  # the ids it held then (a stack may name one defined only later)
            strings = dict(itertools.islice(strings.items(), size))
        return _mapping().TraceMapper.stack_text(body.get("stack"), strings)[0]

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
        entries = self._files_of(ev.seq)
        if not entries:
            return []
        folder = self._folder() / f"{ev.seq:04d}_{_file_name(ev.name)}"
        folder.mkdir(mode=0o700, exist_ok=True)
        out: list[tuple[str, Path | None, str | None]] = []
        used: set[str] = set()
        for name, src in _pairs(entries):
            fname = _file_name(name)
            while fname in used or fname == "attributes.json":
                fname = "_" + fname
            used.add(fname)
            out.append((name, *self._write(folder / fname, src)))
        data = self._store.get(ev.offset, ev.length)  # (the lock is held)
        try:
            attrs = json.loads(data or b"{}")
            if ev.seq in self._whole:
                attrs = attrs.get("attributes", {})
            text = json.dumps(attrs, indent=2, ensure_ascii=False)
        except (ValueError, AttributeError):
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

    def _read_log(self, start: int, length: int) -> bytes | None:
        """Bytes [start, start + length) of the log read so far (None when it was replaced or cut)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != self._ino:
                return None
            data = os.pread(fd, length, start) if self._gz is None else self._gz.pread(fd, start, length)
        except OSError:
            return None
        finally:
            os.close(fd)
        return data if data is not None and len(data) == length else None

    def _read_payload(self, rng: _Range) -> str | None:
        data = self._read_log(rng.start, rng.end - rng.start)
        if data is None:
            return None
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        lines = [ln[:-1] if ln[-1:] == b"\r" else ln for ln in lines]
        if any(ln[:1] != b"\t" and ln.strip() for ln in lines):
            return None
        return b"\n".join(ln[1:] if ln[:1] == b"\t" else b"" for ln in lines).decode("utf-8", "replace")


#: point-event names of the mapping's own (a record named like one gets the trace_ prefix)
_OURS = frozenset({names.GRAPH_BREAK, names.RECOMPILE, names.RECOMPILE_LIMIT_HIT, names.RESTART, names.CACHE_HIT,
                   names.CACHE_MISS, names.CACHE_BYPASS, names.TRACER_STOPPED, names.SHAPE_SYMBOL,
                   names.SHAPE_SPECIALIZATION, names.SHAPE_GUARD, names.FX_GRAPH_RUNNABLE,
                   names.INDUCTOR_PROVENANCE})
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
    """:mod:`magi_format.torch_mapping`, imported on first use (opening no log costs nothing)."""
    global _MAPPING
    if _MAPPING is None:
        import magi_format.torch_mapping as m

        _MAPPING = m
    return _MAPPING
