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
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10: no TOML reader in the standard library
    tomllib = None


def keymap_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    if explicit:
        return Path(explicit)
    if os.environ.get("MAGI_TUI_KEYMAP"):
        return Path(os.environ["MAGI_TUI_KEYMAP"])
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "magi-tui" / "keymap.toml"


def keymap_file_problem(explicit: str | os.PathLike[str] | None) -> str | None:
    """Why a keymap the user named (``--keymap`` / ``$MAGI_TUI_KEYMAP``) cannot be used at all -- missing,
    not a regular file, unreadable -- or None. The CLI exits 2 with it before starting the app; a default
    keymap that is absent is no problem."""
    from magi_tui.model.sources.files import FileProblem, read_settings

    if not explicit and not os.environ.get("MAGI_TUI_KEYMAP"):
        return None
    path = keymap_path(explicit)
    try:
        read_settings(path, 0)
    except FileProblem as exc:
        return f"keymap: {str(exc).removesuffix(': not shown')}"
    return None


def load_keymap(path: Path, known: set[str]) -> tuple[dict[str, str], list[str]]:
    """``({binding id: keys}, [problems])`` from a keymap file."""
    from magi_tui.model.sources.files import FileProblem, read_settings

    problems: list[str] = []
    try:
        raw = read_settings(path)  # a FIFO or a device is refused, never waited on
    except FileProblem as exc:
        if not os.path.lexists(path):
            return {}, []
        return {}, [f"keymap: {str(exc).removesuffix(': not shown')}"]
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
