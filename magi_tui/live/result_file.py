"""A command's result file (``bisect.json``, ``fix.json``) written whole: through a temporary file in the same
folder and ``os.replace``, so a reader (the app's screens, a later ``report``) never sees half of it, and a
command killed while writing leaves the previous whole file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def write_json_whole(path: Path, obj: Any) -> str | None:
    """Write ``obj`` as indented JSON at ``path``; None, or why it could not be written (one line)."""
    data = json.dumps(obj, indent=2, ensure_ascii=False) + "\n"
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(data, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        try:
            tmp.unlink()
        except OSError:
            pass
        return f"cannot write {path.name}: {exc.strerror or exc}"
    return None
