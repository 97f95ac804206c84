"""Large-file-safe line access for the file viewer and the diff.

A graph dump or ``inductor_output.py`` can be tens of MB; reading it whole into Python strings to show
forty lines would make opening it slow. ``TextFile`` indexes line starts once (an ``array('Q')`` built
with ``mmap.find``, 8 bytes a line) and reads the lines on screen with ``os.pread``. Bytes that are
not UTF-8 are replaced, never raised; over-long lines are cut for display.
"""

from __future__ import annotations

import mmap
import os
from array import array
from pathlib import Path

MAX_LINE_CHARS = 2000


class TextFile:
    """Lines of a file (or of an in-memory text), indexed lazily."""

    def __init__(self, path: str | os.PathLike[str] | None, *, text: str | None = None,
                 name: str | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self.name = name or (self.path.name if self.path else "")
        self._text_lines: list[str] | None = None
        self._offsets = array("Q")
        self._size = 0
        self.error: str | None = None
        if text is not None:
            self._text_lines = text.splitlines() or [""]
        else:
            self._index()

    @classmethod
    def from_text(cls, name: str, text: str) -> "TextFile":
        return cls(None, text=text, name=name)

    def _index(self) -> None:
        assert self.path is not None
        try:
            with open(self.path, "rb") as fh:
                self._size = os.fstat(fh.fileno()).st_size
                offsets = array("Q", [0])
                if self._size:
                    with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                        find = mm.find
                        pos = find(b"\n")
                        append = offsets.append
                        while pos != -1:
                            append(pos + 1)
                            pos = find(b"\n", pos + 1)
                if len(offsets) > 1 and offsets[-1] == self._size:
                    offsets.pop()  # a final newline does not start another line
                self._offsets = offsets
        except (OSError, ValueError) as exc:
            self.error = f"cannot read {self.name}: {getattr(exc, 'strerror', None) or exc}"
            self._text_lines = [self.error]

    @property
    def line_count(self) -> int:
        if self._text_lines is not None:
            return len(self._text_lines)
        return len(self._offsets)

    def raw_line(self, i: int) -> str:
        """Line ``i`` without its newline, decoded (replacing bad bytes), not cut."""
        if self._text_lines is not None:
            return self._text_lines[i] if 0 <= i < len(self._text_lines) else ""
        if not 0 <= i < len(self._offsets):
            return ""
        start = self._offsets[i]
        end = self._offsets[i + 1] if i + 1 < len(self._offsets) else self._size
        try:
            with open(self.path, "rb") as fh:  # type: ignore[arg-type]
                data = os.pread(fh.fileno(), max(0, end - start), start)
        except OSError:
            return ""
        return data.rstrip(b"\r\n").decode("utf-8", "replace")

    def line(self, i: int) -> str:
        s = self.raw_line(i)
        return s if len(s) <= MAX_LINE_CHARS else s[:MAX_LINE_CHARS] + "…"

    def lines(self, start: int, stop: int) -> list[str]:
        """Lines ``start..stop-1`` with one read."""
        start = max(0, start)
        stop = min(self.line_count, stop)
        if start >= stop:
            return []
        if self._text_lines is not None:
            return [self.line(i) for i in range(start, stop)]
        a = self._offsets[start]
        b = self._offsets[stop] if stop < len(self._offsets) else self._size
        try:
            with open(self.path, "rb") as fh:  # type: ignore[arg-type]
                data = os.pread(fh.fileno(), b - a, a)
        except OSError:
            return [""] * (stop - start)
        out = data.decode("utf-8", "replace").split("\n")
        if len(out) > stop - start:
            out = out[: stop - start]
        out += [""] * (stop - start - len(out))
        return [s.rstrip("\r") if len(s) <= MAX_LINE_CHARS else s[:MAX_LINE_CHARS] + "…" for s in out]

    def search(self, needle: str, start: int, *, forward: bool = True,
               case_sensitive: bool = False) -> int | None:
        """The next line (from ``start``, exclusive, wrapping) containing ``needle``."""
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
                blo, bhi = (j, min(n, j + chunk)) if forward else (max(0, j - chunk + 1), j + 1)
                block = self.lines(blo, bhi)
            text = block[j - blo]
            if want in (text if case_sensitive else text.lower()):
                return j
        return None
