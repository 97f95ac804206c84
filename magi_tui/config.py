"""The user's settings files (no Textual): the keymap.

``--keymap FILE``, else ``$MAGI_TUI_KEYMAP``, else ``$XDG_CONFIG_HOME/magi-tui/keymap.toml`` (default
``~/.config/magi-tui/keymap.toml``)::

    [keys]
    first_failure = "F1"
    diff = "D,ctrl+d"

Ids are the action catalogue's (``?`` and the README list them). Problems (unknown ids, bad TOML) are
reported, never fatal; a missing file is an empty keymap.
"""

from __future__ import annotations

import os
from pathlib import Path

try:  # Python 3.11+
    import tomllib
except ImportError:  # pragma: no cover - 3.10
    tomllib = None  # type: ignore[assignment]


def keymap_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    if explicit:
        return Path(explicit)
    if os.environ.get("MAGI_TUI_KEYMAP"):
        return Path(os.environ["MAGI_TUI_KEYMAP"])
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "magi-tui" / "keymap.toml"


def load_keymap(path: Path, known: set[str]) -> tuple[dict[str, str], list[str]]:
    """``({binding id: keys}, [problems])`` from a keymap file."""
    problems: list[str] = []
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}, []
    except OSError as exc:
        return {}, [f"keymap {path}: {exc.strerror or exc}"]
    if tomllib is None:  # pragma: no cover
        return {}, [f"keymap {path}: needs Python 3.11 (tomllib)"]
    try:
        data = tomllib.loads(raw.decode("utf-8", "replace"))
    except tomllib.TOMLDecodeError as exc:
        return {}, [f"keymap {path}: {exc}"]
    keys = data.get("keys", {})
    if not isinstance(keys, dict):
        return {}, [f"keymap {path}: [keys] must be a table of id = \"keys\""]
    out: dict[str, str] = {}
    for k, v in keys.items():
        if k not in known:
            problems.append(f"keymap {path}: unknown action id {k!r}")
        elif not isinstance(v, str) or not v.strip():
            problems.append(f"keymap {path}: {k} must be a non-empty string of keys")
        else:
            out[k] = ",".join(p.strip() for p in v.split(",") if p.strip())
    return out, problems
