"""Which compile is happening on this thread: torch's own compile context, or the one declared with
:func:`compile_scope` for work done later on a compile's behalf (a piece compiled on its first call).
Shared by ``capture`` (trace records without ids) and ``session`` (user events); no torch at import."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

_hint = threading.local()


def hinted_ids() -> dict[str, int | None] | None:
    """The ids declared with :func:`compile_scope` on this thread, if any."""
    return getattr(_hint, "ids", None)


def compile_ids() -> dict[str, int | None] | None:
    """The compile torch is in on this thread (``frame_id``, ``frame_compile_id``, ``attempt``), or the
    one a piece compiled later on behalf of a compile declared with :func:`compile_scope`. Torch's
    ``frame_compile_id`` may be None (its ``CompileId`` declares it optional)."""
    try:
        from torch._guards import CompileContext

        tid = CompileContext.current_trace_id()
        if tid is not None and tid.compile_id.frame_id is not None:
            return {"frame_id": tid.compile_id.frame_id, "frame_compile_id": tid.compile_id.frame_compile_id,
                    "attempt": tid.attempt}
    except Exception:
        pass
    return hinted_ids()


@contextmanager
def compile_scope(ids: dict[str, int | None] | None) -> Iterator[None]:
    """Attribute what happens in the block (trace records without a compile id, lifecycle events) to
    the compile ``ids`` — e.g. a piece compiled on its first call, after Dynamo's compile returned."""
    old = getattr(_hint, "ids", None)
    _hint.ids = ids
    try:
        yield
    finally:
        _hint.ids = old
