"""Opening a file of a run safely: inside the run, a regular file, bounded -- or a :class:`FileProblem`
saying why not (the rules are in :mod:`magi_tui.model.sources.files`, the one door callers use).

Kept apart from ``files`` so that the text index (``textfile``) and the bounded JSON decoder (``safejson``)
open files the same way without importing the door that opens documents with them."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from magi_format.safepath import UnsafePath, is_inside
from magi_format.text import literal

#: a Markdown file above this is shown as plain lines
MAX_MARKDOWN_BYTES = 200_000
#: a JSON file above this is shown as it is, not pretty-printed
PRETTY_JSON_BYTES = 2 << 20
#: a file is indexed (its line starts found) up to this many bytes; the rest is not shown
MAX_INDEX_BYTES = 512 << 20
#: at most this many lines are indexed (8 bytes each)
MAX_INDEX_LINES = 5_000_000

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"))


class FileProblem(Exception):
    """Why a run file cannot be shown (the message is meant for the screen, already literal)."""


def display_name(path: Path | str) -> str:
    """A file's name, safe to show (escapes visible, cut at 120 characters)."""
    try:
        name = Path(path).name or str(path)
    except (TypeError, ValueError):
        name = "?"
    return literal(name, 120)


def _kind(mode: int) -> str | None:
    for test, what in _KINDS:
        if test(mode):
            return what
    return None if stat.S_ISREG(mode) else "not a regular file"


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or type(exc).__name__
    if isinstance(exc, UnicodeError):
        return "the name cannot be encoded"
    return literal(str(exc), 200) or type(exc).__name__


def _precheck(path: Path | str, root: Path | str | None) -> tuple[Path, str]:
    """The resolved path and its display name, if it may be opened; :class:`FileProblem` else.
    Nothing is opened: only resolved and ``stat``-ed."""
    name = display_name(path)
    try:
        p = Path(path)
        os.fsencode(p)  # a lone surrogate: UnicodeEncodeError, reported as such
        if root is not None and not is_inside(Path(root), p):
            raise FileProblem(f"refused: {name} leads outside the run directory (a link)")
        real = p.resolve()
        st = os.stat(real)  # before open: a FIFO or device is never opened
    except FileProblem:
        raise
    except UnsafePath as exc:
        raise FileProblem(f"refused: {name}: {_why(exc)}") from None
    except OSError as exc:
        if exc.errno == getattr(os, "ELOOP", -1):
            raise FileProblem(f"refused: {name} is a link loop") from None
        raise FileProblem(f"cannot read {name}: {_why(exc)}") from None
    except (ValueError, RuntimeError, TypeError) as exc:
        raise FileProblem(f"cannot read {name}: {_why(exc)}") from None
    what = _kind(st.st_mode)
    if what:
        raise FileProblem(f"{name} is {what}, not a file: not shown")
    return real, name


def problem_of(path: Path | str, root: Path | str | None = None) -> str | None:
    """Why ``path`` would be refused (outside ``root``, not a regular file, unreadable), without
    opening it; None when it looks readable."""
    try:
        _precheck(path, root)
    except FileProblem as exc:
        return str(exc)
    return None


def open_regular(path: Path | str, root: Path | str | None = None) -> tuple[int, os.stat_result]:
    """An fd (read-only, blocking) on a regular file, and its ``fstat``; :class:`FileProblem` else.

    With ``root``: the path must resolve inside it. The caller closes the fd."""
    real, name = _precheck(path, root)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) \
        | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(real, flags)
    except OSError as exc:
        if exc.errno == getattr(os, "ELOOP", -1):
            raise FileProblem(f"refused: {name} changed into a link while opening") from None
        raise FileProblem(f"cannot read {name}: {_why(exc)}") from None
    except (ValueError, TypeError) as exc:
        raise FileProblem(f"cannot read {name}: {_why(exc)}") from None
    try:
        st = os.fstat(fd)
        what = _kind(st.st_mode)
        if what:
            raise FileProblem(f"{name} is {what}, not a file: not shown")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
    except BaseException as exc:
        os.close(fd)
        if isinstance(exc, FileProblem):
            raise
        if isinstance(exc, OSError):
            raise FileProblem(f"cannot read {name}: {_why(exc)}") from None
        raise
    return fd, st


def read_settings(path: Path | str, limit: int = 1 << 20) -> bytes:
    """A settings file the user named (a policy, a keymap): a regular file's first ``limit`` bytes, never a
    wait on a FIFO or a device; :class:`FileProblem` (saying what it is instead) else."""
    fd, _ = open_regular(path)
    try:
        return os.read(fd, limit)
    except OSError as exc:
        raise FileProblem(f"cannot read {display_name(path)}: {_why(exc)}") from None
    finally:
        os.close(fd)


def check(path: Path | str, root: Path | str | None = None) -> str | None:
    """``None`` if ``path`` can be read as a file of the run, else the problem (no content read)."""
    try:
        fd, _ = open_regular(path, root)
    except FileProblem as exc:
        return str(exc)
    os.close(fd)
    return None


def read_head(path: Path | str, limit: int, root: Path | str | None = None) -> tuple[str | None, str | None]:
    """``(text, None)``: at most ``limit`` bytes from the start, decoded (bad bytes replaced);
    or ``(None, problem)``."""
    try:
        fd, _ = open_regular(path, root)
    except FileProblem as exc:
        return None, str(exc)
    try:
        data = os.pread(fd, max(0, limit), 0)
    except OSError as exc:
        return None, f"cannot read {display_name(path)}: {_why(exc)}"
    finally:
        os.close(fd)
    return data.decode("utf-8", "replace"), None


def file_size(path: Path | str, root: Path | str | None = None) -> tuple[int | None, str | None]:
    """``(size, None)`` of a readable run file, or ``(None, problem)``."""
    try:
        fd, st = open_regular(path, root)
    except FileProblem as exc:
        return None, str(exc)
    os.close(fd)
    return st.st_size, None
