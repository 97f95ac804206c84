"""Incremental, tolerant reading of ``timeline.jsonl``.

The file is append-only and may be read while it is written (FORMAT.md §4, §10.7), so the reader:

* reads from the byte offset just past the last complete line, in bounded chunks;
* leaves a partial last line in the file until its ``\\n`` arrives (never drops it, never returns it
  twice), and says so through ``partial``;
* reports a malformed line (line number and reason) and goes on;
* starts a new *session* when ``index`` drops back (a second writer appending into the same dir);
* notices a truncated or replaced file (size shrank, inode changed, or the first bytes differ) and
  starts over, saying why.

It never raises on file contents; a missing file is simply "no timeline yet".
"""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Callable, MutableSequence, Sequence
from pathlib import Path
from typing import Any

import msgspec
from msgspec import Struct, field

from magi_format.safepath import is_inside
from magi_tui.model.events import NO_LINE_ATTRS, Event, LineAttrs, line_event

CHUNK = 8 << 20  # bytes per read; bounds memory on huge files
_TABLE_OFFSETS = 1 << 32  # a line table's entry holds an offset below this (``offset << 32 | length``: 64 bits)
LONG_LINE_FIRST = 1 << 16  # an over-long line is read in growing reads from this size up to CHUNK


@functools.cache
def _stdlib_decoder() -> tuple[Any, Any]:
    """The stdlib decoder's ``scan_once`` and ``decode``, for the lines the fast path leaves (the careful
    path); made at the first such line: a headless start on a clean timeline never imports ``json``."""
    import json

    decoder = json.JSONDecoder()
    return decoder.scan_once, decoder.decode  # type: ignore[attr-defined]  # set by JSONDecoder.__init__

_FINGERPRINT = 256


class _Line(msgspec.Struct, gc=False):
    """The fields of a timeline line the model keeps: decoding into this skips building the others
    (``datetime``, ``relative_time``: read back from the line when shown; the attributes no Event
    field comes from, see :class:`~magi_tui.model.events.LineAttrs`). Typed strictly, so msgspec checks
    the types in C: a line of other types (a bool index, a file that is not a string, a non-finite
    time...) is refused and goes through :meth:`TimelineReader._parse_line`, whose rules and messages
    decide, as for a line that is not JSON. ``gc=False``: decoded JSON holds no cycle, so the
    collector need not track one per line."""

    name: str = ""
    index: int | None = None
    files: tuple[str, ...] | None = None  # as the key it is shared by
    timestamp: float | None = None
    attributes: LineAttrs | None = None  # type: ignore[valid-type]  # a msgspec.defstruct


_fast_decode = msgspec.json.Decoder(_Line).decode
#: what the fast decoder may raise; the line then goes through the stdlib path, which decides
_FAST_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, ValueError, RecursionError)


class Malformed(Struct):
    line_no: int
    reason: str
    text: str  # the first 200 characters of the offending line, for display


class ReadResult(Struct):
    """What one ``read()`` found."""

    events: list[Event] = field(default_factory=list)
    malformed: list[Malformed] = field(default_factory=list)
    #: ``"truncated"`` / ``"replaced"`` when the reader started over (the caller must drop what it
    #: had), else None
    reset: str | None = None
    #: the file disappeared since the last read (what was read stays valid; if a file appears
    #: again at the path it is read from the start as ``"replaced"``)
    deleted: bool = False

    def __bool__(self) -> bool:
        return bool(self.events or self.malformed or self.reset or self.deleted)


def open_followed(reader: Any, result: ReadResult, reset: Callable[[], None]) -> tuple[int, os.stat_result] | None:
    """Open the file a reader follows for one read: ``(fd, stat)``, or None with ``result`` saying why.

    Shared by every incremental reader (``timeline.jsonl``, TORCH_TRACE logs): a missing file keeps what
    was read (``result.deleted``), an unreadable one or a FIFO/directory is an error (O_NONBLOCK: a FIFO
    must not hang), and a file truncated or replaced since the last read is read afresh (``reset()``,
    then ``result.reset``). The reader provides ``path``, ``exists``, ``gone``, ``_ino``, ``_error`` and
    ``_check_identity``; the caller closes the fd.
    """
    try:
        fd = os.open(reader.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        if reader.exists:  # keep what was read; a file that appears again is read afresh
            reader.exists = False
            reader.gone = True
            result.deleted = True
        return None
    except (OSError, ValueError) as exc:  # permission denied, a NUL in the name, ...
        reader._error(result, f"cannot open: {getattr(exc, 'strerror', None) or exc}")
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            reader._error(result, "not a regular file")
            os.close(fd)
            return None
        why = "replaced" if reader.gone else reader._check_identity(fd, st)
    except OSError as exc:
        reader._error(result, f"cannot read: {exc.strerror or exc}")
        os.close(fd)
        return None
    if why:
        reset()
        result.reset = why
    reader.exists = True
    reader._ino = (st.st_dev, st.st_ino)
    return fd, st


class Reader:
    """What every reader of a run is (a run dir's timeline, a TORCH_TRACE log, a TORCH_COMPILE_DEBUG folder):
    the reading state the run model and the follower read, :meth:`read`, an event's line, and the optional
    capabilities some readers have, each declared here with what a reader without it answers. A caller asks
    a capability by its name (``reader.holds_event_files``), never by probing attributes."""

    path: Path
    # -- the reading state (set by :meth:`_reset_read_state`) ---------------------------------------
    offset: int          # bytes consumed (just past the last complete line or record)
    line_no: int         # lines consumed
    seq: int             # events returned so far
    partial: int         # bytes of an incomplete last line or record waiting for the rest
    malformed_count: int
    exists: bool
    more: bool           # a ``max_bytes`` budget stopped the last read before the end
    error: str | None    # why the source cannot be read (reported once per change)
    gone: bool           # the source was deleted after being read

    def _reset_read_state(self) -> None:
        self.offset = 0
        self.line_no = 0
        self.seq = 0
        self.partial = 0
        self.malformed_count = 0
        self.exists = False
        self.more = False
        self.error = None
        self.gone = False

    def read(self, max_bytes: int | None = None) -> ReadResult:
        raise NotImplementedError

    def event_line_bytes(self, ev: Event) -> bytes | None:
        """The bytes of ``ev``'s line (None when it cannot be read back)."""
        raise NotImplementedError

    # -- optional capabilities ----------------------------------------------------------------------
    #: events' files are held by the reader (a log's payloads, a debug folder's files: :meth:`event_files`),
    #: not in the run dir's ``timeline_events/files/`` folders
    holds_event_files = False
    #: :meth:`file_text` reads an event's small file from what the reader holds (no copy written)
    reads_file_text = False
    @property
    def files_root(self) -> Path | None:
        """The folder every file of the events lies inside, when not the run's own path."""
        return None

    #: keeps torch's own records of the kinds in ``keep`` (``kept``: kind, metadata, payload): a log's reader
    keeps_records = False
    keep: frozenset[str] = frozenset()
    kept: Sequence[tuple[str, dict[str, Any], str | None]] = ()
    #: the compile ids the source names, in order (a log's reader), else None
    compile_ids: dict[str, None] | None = None
    #: hands over an event's ``(co_filename, co_firstlineno)`` without its line decoded again (:meth:`opening_site`)
    hands_opening_site = False
    #: ``lean``: read by a streamed headless load (``RunModel.load(fold=...)``), which drops most events: keep
    #: nothing for an event that it does not hold itself (a timeline's reader: no line table);
    #: ``streams_lean``: what the reader keeps for events is let go once nothing holds them (:meth:`settle`)
    streams_lean = False
    lean = False
    #: followed live (the follower sets it): a log's cut last record waits for its writer's quiet
    followed = False

    def event_files(self, ev: Event) -> list[tuple[str, Path | None, str | None]]:
        """``(name, path, problem)`` of ``ev``'s files, when :attr:`holds_event_files`."""
        return []

    def file_text(self, ev: Event, name: str, limit: int) -> str | None:
        """The first ``limit`` bytes of ``ev``'s file ``name``, when :attr:`reads_file_text`."""
        return None

    def opening_site(self, ev: Event) -> tuple[Any, Any] | None:
        """``(co_filename, co_firstlineno)`` of ``ev``'s attributes, when :attr:`hands_opening_site`."""
        return None

    def index_only(self, ev: Event) -> None:
        """``ev`` is kept for its index and name only (a lean reader may drop its line)."""

    def settle(self) -> None:
        """A lean reader lets go of what nothing holds any more (:attr:`streams_lean`)."""


class TimelineReader(Reader):
    """Reads a ``timeline.jsonl`` incrementally. Call :meth:`read` whenever the file may have grown."""

    def __init__(self, path: str | os.PathLike[str], root: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path)
        #: the run directory: a timeline.jsonl (or timeline_events/) that links out of it is refused
        self.root = Path(root) if root is not None else None
        self._reset_state()

    def _reset_state(self) -> None:
        self._reset_read_state()
        self.session = 0
        self.last_index: int | None = None
        self._ino: tuple[int, int] | None = None
        self._head = b""
        self._inside_ident: tuple[int, int] | None = None  # the file last found inside the run dir
        self._lines: MutableSequence[int] | None = None  # :meth:`_line_table`

    # -- public --------------------------------------------------------------------------------
    def read(self, max_bytes: int | None = None) -> ReadResult:
        """Read what was appended since the last call (at most ``max_bytes`` of complete lines).

        Never raises for anything found on disk: an unreadable path (permission, a directory, a FIFO,
        an I/O error) becomes :attr:`error` and one :class:`Malformed` entry with line 0.
        """
        result = ReadResult()
        if self.root is not None and not self._inside_root():
            self._error(result, "refused: timeline.jsonl leads outside the run directory (a link)")
            return result
        opened = open_followed(self, result, self._reset_state)
        if opened is None:
            return result
        fd, st = opened
        try:
            self._read_from(fd, st.st_size, result, max_bytes)
            if not self._head or len(self._head) < _FINGERPRINT:
                self._head = os.pread(fd, _FINGERPRINT, 0)
            self.error = None
        except OSError as exc:
            self._error(result, f"cannot read: {exc.strerror or exc}")
        finally:
            os.close(fd)
        return result

    def _inside_root(self) -> bool:
        """Whether the timeline, its links followed, is inside the run directory. Every link is resolved
        only when the file the path leads to is not the one found inside last time (its device and
        inode): a follow, or a streamed load, reads the same file hundreds of times. A link changed to lead outside leads to another file, so it
        is checked again and refused."""
        try:
            st = os.stat(self.path)
            ident: tuple[int, int] | None = (st.st_dev, st.st_ino)
        except (OSError, ValueError):  # missing, a dangling link, a loop: the whole check decides
            ident = None
        if ident is not None and ident == self._inside_ident:
            return True
        root = self.root
        if root is not None and (self.path.exists() or self.path.is_symlink()) and not is_inside(root, self.path):
            self._inside_ident = None
            return False
        self._inside_ident = ident
        return True

    def event_line_bytes(self, ev: Event) -> bytes | None:
        """The event's line, re-read from ``timeline.jsonl`` (None if it is gone)."""
        return self.read_line_bytes(ev.offset, ev.length)

    def read_line_bytes(self, offset: int, length: int) -> bytes | None:
        """Re-read one line's bytes (for attributes not kept in memory); None if it is gone."""
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except (OSError, ValueError):
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None  # replaced by a FIFO / directory since it was read
            data = os.pread(fd, length, offset)
        except OSError:
            return None
        finally:
            os.close(fd)
        return data if len(data) == length else None

    # -- internals -----------------------------------------------------------------------------
    def _line_table(self) -> MutableSequence[int] | None:
        """Where the lines of the events read are (``offset << 32 | length``), by ``seq``, in one array: an
        event holds the table (shared) instead of an int of its own (an object of 32 bytes; the table's entry
        is 8). None when a lean (streamed) load reads: the few events it keeps hold their own, and it keeps
        nothing for those it drops; or when events were read without it (their ``seq`` would not be their
        place)."""
        if self.lean:
            return None
        table = self._lines
        if table is None:
            if self.seq:
                return None
            from array import array  # (a headless streamed load never makes one)

            table = self._lines = array("Q")
        return table if len(table) == self.seq else None

    def _check_identity(self, fd: int, st: os.stat_result) -> str | None:
        if not self.exists:
            return None
        if self._ino is not None and self._ino != (st.st_dev, st.st_ino):
            return "replaced"
        if st.st_size < self.offset:
            return "truncated"
        if self._head:
            head = os.pread(fd, len(self._head), 0)
            if head != self._head[: len(head)] or len(head) < min(len(self._head), st.st_size):
                return "replaced"
        return None

    def _read_from(self, fd: int, size: int, result: ReadResult, max_bytes: int | None) -> None:
        budget = max_bytes if max_bytes is not None else size
        pos = self.offset
        self.more = False
        while pos < size:
            if budget <= 0:
                self.more = True
                break
            want = min(CHUNK, size - pos, budget)
            data = os.pread(fd, want, pos)
            if not data:
                break
            last_nl = data.rfind(b"\n")
            if last_nl < 0:
                if pos + len(data) >= size or len(data) < want:
                    break  # an incomplete last line: wait for its newline
                if pos > self.offset and want < CHUNK:
                    self.more = True  # the budget ends inside a line: the next read starts with it
                    break
                # one line longer than the budget (or than CHUNK): read it whole
                data = _read_long_line(fd, pos, size)
                last_nl = data.rfind(b"\n")
                if last_nl < 0:
                    break
            self._parse_block(data, pos, result)  # the lines up to last_nl
            pos += last_nl + 1
            budget -= last_nl + 1
        self.offset = pos
        if pos >= size:
            self.more = False
        # only a line still waiting for its newline counts as partial, not bytes a budget left unread
        self.partial = 0 if self.more else max(0, size - pos)

    def _parse_block(self, data: bytes, base: int, result: ReadResult) -> None:
        """Parse the complete lines of ``data`` (read from offset ``base``): those before its last newline;
        what follows it, a line still being written, is left alone (and not copied). Hot path: one
        ``bytes.split``, then per line msgspec decodes only the fields kept; a line it refuses, or that
        is not plainly well-typed, goes through :meth:`_parse_line` (the stdlib decoder, whose verdict
        and messages are the rules)."""
        fast = _fast_decode
        fast_errors = _FAST_ERRORS
        events = result.events
        append = events.append
        slow = self._parse_line
        pos = base
        line_no = self.line_no
        seq = self.seq
        session = self.session
        last_index = self.last_index
        last_ts = None  # a line's time equal to the line before's: that float object (a log's record gives
        # several events one time), not one more of 24 bytes
        table = self._line_table()
        place = table.append if table is not None else None
        ascii_block = data.isascii()  # then no line needs its UTF-8 checked
        lines = data.split(b"\n")
        lines.pop()  # what follows the last newline: nothing, or a line still being written
        for raw in lines:
            line_no += 1
            line_offset = pos
            n = len(raw)
            pos += n + 1
            try:
                if not ascii_block and not raw.isascii():
                    raw.decode("utf-8")  # msgspec does not check the bytes of fields it skips
                obj = fast(raw)
            except fast_errors:
                obj = None
            if obj is not None:
                name = obj.name
                if name:
                    idx = obj.index
                    if idx is not None:
                        if last_index is not None and idx <= last_index:
                            session += 1
                        last_index = idx
                    attrs = obj.attributes
                    ts = obj.timestamp
                    if ts == last_ts:
                        ts = last_ts
                    else:
                        last_ts = ts
                    ev = line_event(name, idx, obj.files, ts, attrs if attrs is not None else NO_LINE_ATTRS,
                                    seq, session, line_no, line_offset, n)
                    if place is not None:
                        if line_offset < _TABLE_OFFSETS:
                            place(ev._bytes)  # type: ignore[arg-type]  # (an int: line_event's)
                            ev._bytes = table  # type: ignore[assignment]  # (not None with place)
                        else:  # a line past 4 GiB: its span stays on its event
                            place(0)
                    append(ev)
                    seq += 1
                    continue
            # the careful path, with the reader's state as it is at this line
            self.line_no, self.seq, self.session, self.last_index = line_no, seq, session, last_index
            slow(raw, line_offset, result)
            seq, session, last_index = self.seq, self.session, self.last_index
        self.line_no, self.seq, self.session, self.last_index = line_no, seq, session, last_index

    def _parse_line(self, raw: bytes, line_offset: int, result: ReadResult) -> None:
        """One line by the stdlib decoder's rules (``self.line_no`` is this line's number)."""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            self._bad(result, _reason(exc), raw)
            return
        scan_once, decode = _stdlib_decoder()
        try:
            obj, end = scan_once(text, 0)
            if end != len(text) and text[end:].strip(" \t\r"):
                obj = decode(text)  # JSON's own rules for what may follow (or "Extra data")
        except StopIteration:  # no value at column 1: blank, leading blanks or a BOM, or garbage
            if not raw.strip():
                return
            try:
                obj = decode(text.lstrip("\ufeff"))
            except (ValueError, RecursionError) as exc:
                self._bad(result, _reason(exc), raw)
                return
        except (ValueError, RecursionError) as exc:
            self._bad(result, _reason(exc), raw)
            return
        if not isinstance(obj, dict):
            self._bad(result, f"not a JSON object ({type(obj).__name__})", raw)
            return
        name = obj.get("name")
        if not isinstance(name, str) or not name:
            self._bad(result, "missing or non-string 'name'", raw)
            return
        idx = obj.get("index")
        if idx is not None and (not isinstance(idx, int) or isinstance(idx, bool)):
            self._bad(result, "'index' is not an integer", raw)
            return
        attrs = obj.get("attributes")
        if attrs is not None and not isinstance(attrs, dict):
            self._bad(result, "'attributes' is not an object", raw)
            return
        if isinstance(idx, int):
            if self.last_index is not None and idx <= self.last_index:
                self.session += 1
            self.last_index = idx
        ev = Event.from_obj(obj, seq=self.seq, session=self.session, line_no=self.line_no, offset=line_offset,
                            length=len(raw))
        table = self._line_table()
        if table is not None:  # its place in the table (its span stays on it)
            table.append(0)
        result.events.append(ev)
        self.seq += 1

    def _error(self, result: ReadResult, reason: str) -> None:
        if reason != self.error:
            self.error = reason
            result.malformed.append(Malformed(0, reason, ""))

    def _bad(self, result: ReadResult, reason: str, raw: bytes) -> None:
        self.malformed_count += 1
        text = raw[:200].decode("utf-8", "replace")
        result.malformed.append(Malformed(self.line_no, reason, text))


def _reason(exc: BaseException) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "not valid UTF-8"
    import json

    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON: {exc.msg} at column {exc.colno}"
    return f"invalid JSON: {exc.__class__.__name__}"


def _read_long_line(fd: int, pos: int, size: int) -> bytes:
    parts = []
    want = LONG_LINE_FIRST
    while pos < size:
        data = os.pread(fd, min(want, CHUNK, size - pos), pos)
        want *= 2
        if not data:
            break
        nl = data.find(b"\n")
        if nl >= 0:
            parts.append(data[: nl + 1])
            break
        parts.append(data)
        pos += len(data)
    return b"".join(parts)
