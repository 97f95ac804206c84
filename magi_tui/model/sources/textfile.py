"""Large-file-safe line access for the file viewer and the diff.

A graph dump or ``inductor_output.py`` can be tens of MB, and a hostile artifact can be one multi-GB
line. ``TextFile`` opens the file once (through :func:`magi_tui.model.sources.files.open_regular`: inside the
run, a regular file, never a FIFO), indexes line starts once with bounded chunked reads (an
``array('Q')``, 8 bytes a line; at most ``MAX_INDEX_BYTES`` / ``MAX_INDEX_LINES``), and reads only the
lines asked for with ``os.pread`` — each line at most :data:`MAX_LINE_BYTES`, so a 1 GB line costs a
few KB to show, and says ``line cut at N bytes``. Bytes that are not UTF-8 are replaced, never raised.

Indexing a big file takes time: build a ``TextFile`` in a worker thread. Reads after that are
bounded (a screen of lines) and cheap enough for the UI thread. No method raises.
"""

from __future__ import annotations

import os
import threading
from array import array
from pathlib import Path
from typing import Callable

from magi_tui.model.sources import paths as _files

MAX_LINE_CHARS = 2000
#: bytes read for one line at most (UTF-8 needs up to 4 bytes a character)
MAX_LINE_BYTES = MAX_LINE_CHARS * 4
#: a range of lines is read in one ``pread`` when it is at most this big, else line by line
_ONE_READ_BYTES = 1 << 20
_CHUNK = 4 << 20
_BLOCK = 2000  # lines kept for line(i) (the diff reads all lines one by one)


def _cut_note(nbytes: int) -> str:
    return f"… [line cut at {MAX_LINE_CHARS:,} characters: {nbytes:,} bytes]"


class TextFile:
    """Lines of a file (or of an in-memory text), indexed once."""

    def __init__(self, path: str | os.PathLike[str] | None, *, text: str | None = None,
                 name: str | None = None, root: str | os.PathLike[str] | None = None,
                 cancelled: Callable[[], bool] | None = None) -> None:
        self.path = Path(path) if path is not None else None
        try:
            self.name = name or (self.path.name if self.path else "")
        except (TypeError, ValueError):
            self.name = "?"
        self._text_lines: list[str] | None = None
        self._offsets = array("Q")
        self._size = 0          # bytes covered by the index
        self.file_size = 0      # the whole file
        self.error: str | None = None
        #: set when only part of the file is shown ("showing the first 512 MB of 2.0 GB")
        self.notice: str | None = None
        self._fd: int | None = None
        self._lock = threading.Lock()
        self._block: tuple[int, list[str]] | None = None
        if text is not None:
            self._text_lines = text.splitlines() or [""]
        elif self.path is not None:
            self._index(root, cancelled)
        else:
            self._text_lines = [""]

    @classmethod
    def from_text(cls, name: str, text: str) -> "TextFile":
        return cls(None, text=text, name=name)

    @classmethod
    def from_problem(cls, name: str, problem: str) -> "TextFile":
        tf = cls(None, text=problem, name=name)
        tf.error = problem
        return tf

    def _fail(self, problem: str) -> None:
        self.error = problem
        self._text_lines = [problem]
        self.close()

    def _index(self, root: str | os.PathLike[str] | None, cancelled: Callable[[], bool] | None = None) -> None:
        assert self.path is not None
        try:
            fd, st = _files.open_regular(self.path, None if root is None else os.fspath(root))
        except _files.FileProblem as exc:
            self._fail(str(exc))
            return
        self._fd = fd
        self.file_size = size = st.st_size
        limit = min(size, _files.MAX_INDEX_BYTES)
        offsets = array("Q", [0])
        append = offsets.append
        pos = 0
        try:
            while pos < limit:
                buf = os.pread(fd, min(_CHUNK, limit - pos), pos)
                if not buf:
                    break  # the file shrank under us
                find = buf.find
                j = find(b"\n")
                while j != -1:
                    append(pos + j + 1)
                    j = find(b"\n", j + 1)
                pos += len(buf)
                if cancelled is not None and cancelled():
                    break
                if len(offsets) > _files.MAX_INDEX_LINES:
                    del offsets[_files.MAX_INDEX_LINES + 1:]
                    pos = offsets[-1]
                    break
        except OSError as exc:
            self._fail(f"cannot read {_files.display_name(self.path)}: {exc.strerror or exc}")
            return
        self._size = pos
        if len(offsets) > 1 and offsets[-1] >= pos:
            offsets.pop()  # a final newline does not start another line
        self._offsets = offsets
        if pos < size:
            self.notice = (f"showing the first {pos / 1e6:,.1f} MB ({len(offsets):,} lines) of "
                           f"{size / 1e6:,.1f} MB")

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            self.close()
        except Exception:
            pass

    @property
    def line_count(self) -> int:
        if self._text_lines is not None:
            return len(self._text_lines)
        return len(self._offsets)

    def _span(self, i: int) -> tuple[int, int]:
        start = self._offsets[i]
        end = self._offsets[i + 1] if i + 1 < len(self._offsets) else self._size
        return start, end

    def _pread(self, n: int, at: int) -> bytes:
        fd = self._fd
        if fd is None or n <= 0:
            return b""
        try:
            return os.pread(fd, n, at)
        except OSError:
            return b""

    def _decode(self, data: bytes, full_len: int) -> str:
        s = data.decode("utf-8", "replace")
        if s.endswith("\n"):
            s = s[:-1]
        if s.endswith("\r"):
            s = s[:-1]
        if full_len > MAX_LINE_BYTES:
            return s[:MAX_LINE_CHARS] + _cut_note(full_len)
        return s if len(s) <= MAX_LINE_CHARS else s[:MAX_LINE_CHARS] + "…"

    def raw_line(self, i: int) -> str:
        """Line ``i`` without its newline, decoded (replacing bad bytes), at most
        :data:`MAX_LINE_BYTES` read."""
        return self.line(i)

    def line(self, i: int) -> str:
        """Line ``i`` as shown (cut with a note when over-long). Served from a block of lines read
        together, so reading a whole file line by line opens nothing and reads each byte once."""
        if self._text_lines is not None:
            if not 0 <= i < len(self._text_lines):
                return ""
            s = self._text_lines[i]
            return s if len(s) <= MAX_LINE_CHARS else s[:MAX_LINE_CHARS] + "…"
        if not 0 <= i < len(self._offsets):
            return ""
        block = self._block
        if block is None or not block[0] <= i < block[0] + len(block[1]):
            start = (i // _BLOCK) * _BLOCK
            block = (start, self.lines(start, start + _BLOCK))
            self._block = block
        return block[1][i - block[0]]

    def lines(self, start: int, stop: int) -> list[str]:
        """Lines ``start..stop-1``: one read when they are small, else one bounded read a line."""
        start = max(0, start)
        stop = min(self.line_count, stop)
        if start >= stop:
            return []
        if self._text_lines is not None:
            return [self.line(i) for i in range(start, stop)]
        with self._lock:
            a = self._offsets[start]
            b = self._span(stop - 1)[1]
            if b - a <= _ONE_READ_BYTES:
                data = self._pread(b - a, a)
                out = []
                for i in range(start, stop):
                    s, e = self._span(i)
                    out.append(self._decode(data[s - a:e - a], e - s))
                return out
            out = []
            for i in range(start, stop):
                s, e = self._span(i)
                out.append(self._decode(self._pread(min(e - s, MAX_LINE_BYTES), s), e - s))
            return out

    def all_lines(self, max_lines: int | None = None) -> list[str]:
        """Every line (each bounded), in few reads: the diff's input."""
        n = self.line_count if max_lines is None else min(self.line_count, max_lines)
        out: list[str] = []
        for start in range(0, n, _BLOCK):
            out.extend(self.lines(start, min(n, start + _BLOCK)))
        return out

    def search(self, needle: str, start: int, *, forward: bool = True,
               case_sensitive: bool = False, cancelled: Callable[[], bool] | None = None) -> int | None:
        """The next line (from ``start``, exclusive, wrapping) containing ``needle``.

        ``cancelled`` (a callable) is polled between blocks, so a worker can stop a long search."""
        n = self.line_count
        if not needle or n == 0:
            return None
        want = needle if case_sensitive else needle.lower()
        step = 1 if forward else -1
        chunk = 4000
        blo = bhi = -1
        block: list[str] = []
        for k in range(1, n + 1):
            j = (start + step * k) % n
            if not blo <= j < bhi:  # read the next block in the direction of travel
                if cancelled is not None and cancelled():
                    return None
                blo, bhi = (j, min(n, j + chunk)) if forward else (max(0, j - chunk + 1), j + 1)
                block = self.lines(blo, bhi)
            text = block[j - blo]
            if want in (text if case_sensitive else text.lower()):
                return j
        return None
