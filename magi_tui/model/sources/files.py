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
  each cut at :data:`~magi_tui.model.sources.textfile.MAX_LINE_BYTES`; Markdown and pretty JSON are read only
  below a size bound (otherwise shown as plain lines);
* **total**: a name that cannot be encoded (a lone surrogate), ``ENAMETOOLONG``, ``ELOOP``,
  ``EACCES``, a file vanishing: all come back as ``problem`` text.

Functions that can take long (indexing a big file) are meant to run in a worker thread; none of them
touch the UI.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from magi_format.text import json_literal, literal
from magi_tui.model.sources.paths import (  # noqa: F401 (files is the door callers use)
    MAX_INDEX_BYTES,
    MAX_INDEX_LINES,
    MAX_MARKDOWN_BYTES,
    PRETTY_JSON_BYTES,
    FileProblem,
    check,
    display_name,
    file_size,
    open_regular,
    problem_of,
    read_head,
    read_settings,
)
from magi_tui.model.sources.safejson import decode_or_none

if TYPE_CHECKING:  # a headless command opens no document: textfile (and threading) stays unloaded
    from magi_tui.model.sources.textfile import TextFile


def json_or_none(text: str | None) -> Any:
    """The JSON value of a file's text read with :func:`read_head`, or None when there is none (no text,
    not JSON, nested deeper than :data:`~magi_tui.model.sources.safejson.MAX_DEPTH`): a run's JSON files are facts
    when they parse, never errors. The file's own type, when it has one, is read with
    :func:`magi_tui.model.sources.safejson.decode` and its Struct instead."""
    if not text:
        return None
    return decode_or_none(text)


def open_document(path: Path | str, root: Path | str | None = None,
                  cancelled: Callable[[], bool] | None = None) -> "TextFile":
    """A :class:`~magi_tui.model.sources.textfile.TextFile` on ``path`` — indexed (may take a while on a big
    file: call it in a worker; ``cancelled()`` is polled between chunks). On a problem, ``doc.error``
    says what and the document holds that one line."""
    from magi_tui.model.sources.textfile import TextFile

    return TextFile(path, root=root, cancelled=cancelled)


def pretty_json(path: Path | str, root: Path | str | None = None) -> "TextFile":
    """A small JSON file, re-indented (``indent=2``; unsafe characters written as ``\\uXXXX``, still
    the same JSON); a big or invalid one as its own lines."""
    from magi_tui.model.sources.textfile import TextFile

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
    from magi_tui.model.sources.textfile import TextFile

    size, problem = file_size(path, root)
    if problem is not None:
        return TextFile.from_problem(display_name(path), problem)
    if size is None or size > limit:
        return None
    return open_for_view(path, root)
