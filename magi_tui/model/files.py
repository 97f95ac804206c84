"""Reading a file of a run: inside the run, a regular file, bounded — or a problem string, never an
exception.

Every file the UI shows (an event's files, ``compiled_functions/`` guards, decompiled code, overviews,
both sides of a diff) is opened here:

* **inside the run**: with ``root`` given, the path is resolved and must stay inside ``root`` (a
  symlink inside the run is fine, one that leads out is refused); the resolved path is opened with
  ``O_NOFOLLOW``, so a last component swapped for a link in between is refused too;
* **a regular file**: a FIFO, socket, device or directory where a file is expected gives a message —
  it is ``stat``-ed before ``open`` and opened ``O_NONBLOCK``, so nothing can hang the reader;
* **bounded**: a document indexes at most :data:`MAX_INDEX_BYTES` and reads only the lines asked for,
  each cut at :data:`~magi_tui.model.textfile.MAX_LINE_BYTES`; Markdown and pretty JSON are read only
  below a size bound (otherwise shown as plain lines);
* **total**: a name that cannot be encoded (a lone surrogate), ``ENAMETOOLONG``, ``ELOOP``,
  ``EACCES``, a file vanishing: all come back as ``problem`` text.

Functions that can take long (indexing a big file) are meant to run in a worker thread; none of them
touch the UI.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from magi_format.safepath import UnsafePath, is_inside
from magi_format.text import json_literal, literal

if TYPE_CHECKING:
    from magi_tui.model.textfile import TextFile

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


def json_or_none(text: str | None) -> Any:
    """The JSON value of a file's text read with :func:`read_head`, or None when there is none (no text,
    not JSON, nested deeper than :data:`~magi_tui.model.safejson.MAX_DEPTH`): a run's JSON files are facts
    when they parse, never errors. The file's own type, when it has one, is read with
    :func:`magi_tui.model.safejson.decode` and its Struct instead."""
    if not text:
        return None
    from magi_tui.model.safejson import decode_or_none

    return decode_or_none(text)


def file_size(path: Path | str, root: Path | str | None = None) -> tuple[int | None, str | None]:
    """``(size, None)`` of a readable run file, or ``(None, problem)``."""
    try:
        fd, st = open_regular(path, root)
    except FileProblem as exc:
        return None, str(exc)
    os.close(fd)
    return st.st_size, None


def open_document(path: Path | str, root: Path | str | None = None,
                  cancelled: Callable[[], bool] | None = None) -> "TextFile":
    """A :class:`~magi_tui.model.textfile.TextFile` on ``path`` — indexed (may take a while on a big
    file: call it in a worker; ``cancelled()`` is polled between chunks). On a problem, ``doc.error``
    says what and the document holds that one line."""
    from magi_tui.model.textfile import TextFile

    return TextFile(path, root=root, cancelled=cancelled)


def pretty_json(path: Path | str, root: Path | str | None = None) -> "TextFile":
    """A small JSON file, re-indented (``indent=2``; unsafe characters written as ``\\uXXXX``, still
    the same JSON); a big or invalid one as its own lines."""
    from magi_tui.model.textfile import TextFile

    size, problem = file_size(path, root)
    if problem is not None:
        return TextFile.from_problem(display_name(path), problem)
    if size is not None and size <= PRETTY_JSON_BYTES:
        text, problem = read_head(path, PRETTY_JSON_BYTES + 1, root)
        if text is not None:
            import json

            try:
                obj = json.loads(text)
                return TextFile.from_text(Path(path).name,
                                          json_literal(json.dumps(obj, indent=2, ensure_ascii=False)))
            except (ValueError, RecursionError):
                pass
    return TextFile(path, root=root)


def markdown_text(path: Path | str, root: Path | str | None = None,
                  limit: int = MAX_MARKDOWN_BYTES) -> tuple[str | None, str | None]:
    """``(markdown, None)`` for a Markdown file up to ``limit`` bytes, control/bidi characters made
    visible; ``(None, None)`` when it is bigger (show it as lines); ``(None, problem)`` when it cannot
    be read."""
    size, problem = file_size(path, root)
    if problem is not None:
        return None, problem
    if size is None or size > limit:
        return None, None
    text, problem = read_head(path, limit, root)
    if text is None:
        return None, problem
    return literal(text, multiline=True), None


def open_for_view(path: Path | str, root: Path | str | None = None,
                  cancelled: Callable[[], bool] | None = None) -> "TextFile":
    """What the file viewer shows for ``path``: pretty JSON for ``.json``, else the plain document."""
    try:
        suffix = Path(path).suffix.lower()
    except (TypeError, ValueError):
        suffix = ""
    if suffix == ".json":
        return pretty_json(path, root)
    return open_document(path, root, cancelled)


def open_small_for_view(path: Path | str, root: Path | str | None, limit: int) -> "TextFile | None":
    """:func:`open_for_view` when the file is at most ``limit`` bytes (cheap enough for the UI
    thread: one bounded read), a problem document when it cannot be read, None when it is bigger
    (open it in a worker)."""
    from magi_tui.model.textfile import TextFile

    size, problem = file_size(path, root)
    if problem is not None:
        return TextFile.from_problem(display_name(path), problem)
    if size is None or size > limit:
        return None
    return open_for_view(path, root)
