"""A ``.log.gz`` read as a stream: nothing unpacked to disk, memory bounded, re-reads decompressed again.

:class:`GzStream` gives :class:`~magi_tui.model.sources.torchtrace.reader.TraceLogReader` the unpacked log's bytes
by their offset in the unpacked log, as ``os.pread`` gives a plain log's:

* :meth:`GzStream.read` is the reader's forward pass: bytes from an offset at or after the last read's,
  decompressed as asked (``CHUNK`` at a step). What was read before the reader's current read (or more than
  :data:`RETAIN` bytes back) is let go: the stream holds the records the reader is on, not the log.
* :meth:`GzStream.pread` is a re-read (a payload or a record's metadata, opened later): from the bytes
  held when it is the read being folded in, else decompressed again from the nearest *mark* before it: a
  copy of the decompressor's state (``zlib`` ``Decompress.copy()``, ~41 KB) taken every ``spacing`` bytes
  of output in the forward pass. At most :data:`MAX_MARKS` are kept: when there are more, every other one
  goes and the spacing doubles, so a re-read decompresses at most ``spacing`` bytes and the marks stay bounded
  whatever the log's size. One re-read cursor is kept where the
  last re-read ended, so re-reads in log order (what an analysis does) cost one pass in all.

Concatenated gzip members (``cat a.gz b.gz``) are read one after the other, as ``gzip -dc`` does; bytes
after the last member that start no member are ignored (a note says so). A cut stream gives what it holds,
a damaged one what unpacked before the damage (a note each), a stream unpacking to more than ``limit``
bytes stops there. Nothing here raises on file contents; ``OSError`` from the descriptor passes through.
"""

from __future__ import annotations

import bisect
import os
import threading
import zlib

#: compressed bytes read from the file at a time (a damaged stream loses what the piece it is in makes)
IN_CHUNK = 64 << 10
#: unpacked bytes decompressed at a step of the forward pass
STEP = 1 << 20
#: bytes before the reader's position kept for re-reads of the read being folded in, at most
RETAIN = 16 << 20
#: decompressor states kept for re-reads (each ~41 KB)
MAX_MARKS = 256
#: unpacked bytes a re-read keeps before where it ended (a record's metadata is read after its payload)
WINDOW = 2 << 20
#: unpacked bytes between two marks at first (doubled each time the marks are thinned)
SPACING = 1 << 20
_MAGIC = b"\x1f\x8b"


class _Inflater:
    """A position in the gzip file: the decompressor of the member being read, the compressed bytes
    not given to it yet (``pending``, the file's bytes from ``in_pos``) and the unpacked bytes made so far
    (``out_pos``)."""

    __slots__ = ("d", "in_pos", "pending", "out_pos", "done", "note")

    def __init__(self, d: zlib._Decompress, in_pos: int, out_pos: int) -> None:
        self.d = d
        self.in_pos = in_pos
        self.pending = b""
        self.out_pos = out_pos
        self.done = False
        #: why it ended before the stream's own end, once: ``(kind, detail)``, kind ``cut`` / ``damaged``
        #: / ``trailing``
        self.note: tuple[str, str] | None = None

    def copy(self) -> "_Inflater":
        """The same position, holding no compressed bytes: they are read again from ``in_pos``."""
        return _Inflater(self.d.copy(), self.in_pos, self.out_pos)

    def advance(self, fd: int, want: int) -> bytes:
        """Up to ``want`` more unpacked bytes (fewer only when the stream ends: ``done``). Members follow
        one another; raises ``OSError`` only (from the file)."""
        out: list[bytes] = []
        got = 0
        while got < want and not self.done:
            if not self.pending:
                data = os.pread(fd, IN_CHUNK, self.in_pos)
                if not data:
                    tail = self._drain(want - got)  # (what zlib still holds for the input it has)
                    if tail:
                        out.append(tail)
                        got += len(tail)
                        continue
                    self.done = True
                    if not self.d.eof and self.in_pos > 0:
                        self.note = ("cut", "")
                    break
                self.pending = data
            before = len(self.pending)
            try:
                chunk = self.d.decompress(self.pending, want - got)
            except zlib.error as exc:
                self.done = True
                self.note = ("damaged", str(exc))
                break
            if chunk:
                out.append(chunk)
                got += len(chunk)
            if self.d.eof:  # the end of a member: another may follow
                rest = self.d.unused_data
                self.in_pos += before - len(rest)
                self.pending = rest
                self._next_member(fd)
            else:
                rest = self.d.unconsumed_tail
                self.in_pos += before - len(rest)
                self.pending = rest
        data = b"".join(out) if len(out) != 1 else out[0]
        self.out_pos += len(data)
        return data

    def _drain(self, want: int) -> bytes:
        try:
            return self.d.decompress(b"", want) if not self.d.eof else b""
        except zlib.error:
            return b""

    def _next_member(self, fd: int) -> None:
        head = self.pending[:2]
        if len(head) < 2:
            try:
                head = os.pread(fd, 2, self.in_pos)
            except OSError:
                head = b""
        if not head:
            self.done = True  # the end of the file: the stream is whole
        elif head == _MAGIC:
            self.d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        else:
            self.done = True
            self.note = ("trailing", "")


class GzStream:
    """The unpacked bytes of one gzip file, by offset (see the module). Thread-safe: the reader's forward
    pass and a re-read from another thread (the app's detail pane) each hold the lock while they
    decompress."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._seq = _Inflater(zlib.decompressobj(16 + zlib.MAX_WBITS), 0, 0)
        self._buf = b""          # unpacked bytes [_buf_start, _seq.out_pos)
        self._buf_start = 0
        self._keep = 0           # the reader's current read starts here: kept for its re-reads
        self._marks: list[tuple[int, _Inflater]] = [(0, self._seq.copy())]
        self._mark_outs = [0]
        self.spacing = SPACING
        self._next_mark = SPACING
        self._cursor: _Inflater | None = None
        self._window = b""       # what the re-read cursor made last, up to where it is: [_window_start, + len)
        self._window_start = 0
        #: why the stream ended early, for the reader to report once each: ``(kind, detail, unpacked bytes
        #: before it)``, kind ``cut`` / ``damaged`` / ``trailing`` / ``refused``
        self.notes: list[tuple[str, str, int]] = []

    # -- the forward pass ----------------------------------------------------------------------
    @property
    def done(self) -> bool:
        """No more unpacked bytes will come (the stream ended, was cut or damaged, or reached the limit)."""
        return self._seq.done

    @property
    def size(self) -> int:
        """Unpacked bytes made so far (all of them once :attr:`done`)."""
        return self._seq.out_pos

    @property
    def read_in(self) -> int:
        """Compressed bytes consumed so far."""
        return self._seq.in_pos

    def keep_from(self, pos: int) -> None:
        """The reader's read starts at ``pos``: what is before it may go (re-reads decompress it again)."""
        self._keep = pos

    def read(self, fd: int, pos: int, n: int) -> bytes:
        """Unpacked bytes [pos, pos + n) (fewer only at the end of the stream); ``pos`` not before the
        previous call's. ``fd``: the gzip file."""
        with self._lock:
            seq = self._seq
            end = pos + n
            if end > seq.out_pos and not seq.done:
                keep = min(max(self._keep, pos - RETAIN), pos)
                drop = min(max(0, keep - self._buf_start), len(self._buf))
                parts = [self._buf[drop:]] if drop < len(self._buf) else []
                while seq.out_pos < end and not seq.done:
                    parts.append(self._advance(fd, max(end - seq.out_pos, STEP)))
                self._buf_start += drop
                self._buf = b"".join(parts) if len(parts) != 1 else parts[0]
            s = pos - self._buf_start
            if s < 0:  # (never asked by the reader: a re-read then)
                got = self._reread(fd, pos, min(n, max(0, seq.out_pos - pos)))
                return got or b""
            return self._buf[s:s + n]

    def _advance(self, fd: int, want: int) -> bytes:
        seq = self._seq
        room = self.limit - seq.out_pos
        if room <= 0:
            seq.done = True
            self.notes.append(("refused", "", seq.out_pos))
            return b""
        out: list[bytes] = []
        step = min(want, room)
        while step > 0 and not seq.done:  # a mark every ``spacing`` bytes of output
            nxt = self._next_mark
            piece = seq.advance(fd, min(step, max(1, nxt - seq.out_pos)))
            out.append(piece)
            step -= len(piece)
            if seq.out_pos >= nxt and not seq.done:
                self._mark(seq)
        if seq.note is not None:
            self.notes.append((*seq.note, seq.out_pos))
            seq.note = None
        return b"".join(out) if len(out) != 1 else out[0]

    def _mark(self, seq: _Inflater) -> None:
        self._next_mark = seq.out_pos + self.spacing
        mark = seq.copy()
        # the copy still holds the input zlib left unconsumed (``unconsumed_tail``, up to IN_CHUNK): a step
        # with no input and room for one byte lets it go (the byte it may make moves the mark by one)
        try:
            nudge = mark.d.decompress(b"", 1)
        except zlib.error:
            return
        if mark.d.eof:
            return
        mark.out_pos += len(nudge)
        self._marks.append((mark.out_pos, mark))
        self._mark_outs.append(mark.out_pos)
        if len(self._marks) > MAX_MARKS:
            self._marks = self._marks[::2]
            self._mark_outs = [m[0] for m in self._marks]
            self.spacing *= 2
            self._next_mark = self._mark_outs[-1] + self.spacing

    def take_notes(self) -> list[tuple[str, str, int]]:
        with self._lock:
            notes, self.notes = self.notes, []
            return notes

    # -- re-reads ------------------------------------------------------------------------------
    def pread(self, fd: int, start: int, length: int) -> bytes | None:
        """Unpacked bytes [start, start + length) of what the forward pass has read (None past it)."""
        with self._lock:
            if start < 0 or length < 0 or start + length > self._seq.out_pos:
                return None
            s = start - self._buf_start
            if s >= 0:
                return self._buf[s:s + length]
            return self._reread(fd, start, length)

    def _reread(self, fd: int, start: int, length: int) -> bytes | None:
        """A re-read: from the bytes the re-read cursor made last (the :data:`WINDOW` before it: a record's
        metadata is read after its payload), else decompressed on from the cursor or from the nearest mark,
        whichever is nearer."""
        end = start + length
        ws, w = self._window_start, self._window
        if ws <= start and end <= ws + len(w):
            return w[start - ws:end - ws]
        i = bisect.bisect_right(self._mark_outs, start) - 1
        cur = self._cursor
        if cur is None or start < ws or (start > cur.out_pos and cur.out_pos < self._mark_outs[i]):
            cur = self._marks[i][1].copy()
            ws, w = cur.out_pos, b""
        while cur.out_pos < start - WINDOW and not cur.done:  # far ahead: made and let go
            cur.advance(fd, min(start - WINDOW - cur.out_pos, STEP))
            ws, w = cur.out_pos, b""
        if end > cur.out_pos and not cur.done:
            w += cur.advance(fd, end - cur.out_pos)
        self._cursor = cur
        keep = max(ws, min(start, cur.out_pos - WINDOW))
        self._window, self._window_start = w[keep - ws:], keep
        if ws + len(w) < end:
            return None
        return w[start - ws:end - ws]
