"""msgspec imported without ``typing_extensions``: the model's first import of it, made before any other.

msgspec's ``_utils`` takes ``get_type_hints``, ``Required`` and ``NotRequired`` from ``typing_extensions``
when that is installed (textual brings it), else from ``typing``. ``typing_extensions`` and the
``inspect`` / ``ast`` it imports are paid at every start, a good part of ``triage --json``'s fixed
part on a small run (docs/ARCHITECTURE.md; measured in ``tests/speed/test_headless_start.py``). On Python 3.11+ both sources give the same thing for msgspec's
use (``typing_extensions`` re-exports ``typing``'s ``Required`` / ``NotRequired``, and its
``get_type_hints(..., include_extras=True)`` returns ``typing``'s answer unchanged; tests/model/
test_msgspec_import.py holds that), so there the import is made as in an environment without
``typing_extensions``, which msgspec supports. Nothing else changes: the block is lifted right after,
and whatever imports ``typing_extensions`` later (Textual) gets the real one. Before 3.11, or when
something loaded ``typing_extensions`` or msgspec first, this is a plain ``import msgspec``.
"""

from __future__ import annotations

import sys


def import_msgspec() -> None:
    if sys.version_info < (3, 11) or "msgspec" in sys.modules or "typing_extensions" in sys.modules:
        import msgspec  # noqa: F401
        return
    sys.modules["typing_extensions"] = None  # type: ignore[assignment]  # an import of it fails: msgspec falls back
    try:
        import msgspec  # noqa: F401
    except ImportError:  # a msgspec that needs typing_extensions after all: imported as ever, below
        for name in [m for m in sys.modules if m == "msgspec" or m.startswith("msgspec.")]:
            del sys.modules[name]
    finally:
        if sys.modules.get("typing_extensions", 0) is None:
            del sys.modules["typing_extensions"]
    import msgspec  # noqa: F401,F811  # (a no-op when the lean import above succeeded)


import_msgspec()
