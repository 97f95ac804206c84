"""Reading the texts torch writes into its structured trace (pure functions, torch-free): the one grammar
of torch's text that the tracer (through ``magi_format/torch_mapping.py``) and the viewer (``magi_tui/model``) both use.

Graph-break reports (``artifact dynamo_graph_break_reason``: the header, torch's graph-break message as
``torch._dynamo.exc.format_graph_break_message`` formats it, the user code traceback), formatted
tracebacks (``artifact dynamo_error``), ``recompile_reasons`` payloads, and torch's
``graph_break_registry.json``.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from magi_format.lazyre import lazy_re

_TB_FRAME = lazy_re(r'^\s*File "(.+)", line (\d+), in (.+)$')
_GB_HEADER = lazy_re(r"^Graph break in user code at (.+):(\d+)\s*$", re.M)
_GB_URL = lazy_re(r"/gb/gb(\d+)\.html")
_LIMIT_TYPE = lazy_re(r"Limit type: (\w+)")
_LIMIT_VALUE = lazy_re(r"currently set to (\d+)")
#: every release's spelling of "this frame reached its recompile limit": torch 2.13's GB0039 text, 2.10's
#: ``fail_type: RecompileLimitExceeded`` / ``fail_reason: recompile_limit reached``, older ``cache_size_limit``
_LIMIT_HIT = lazy_re(r"(recompile|cache) limit exceeded|FailOnRecompileLimitHit|hit config\.\w*limit"
                        r"|RecompileLimitExceeded|CacheLimitExceeded|\b(recompile|cache_size|cache)_limit reached",
                        re.IGNORECASE)
_TORCH_FOOTER = ("Set TORCHDYNAMO_VERBOSE=1", "Set TORCH_LOGS=", "You can suppress this exception")
_DEFAULT_FRAMEWORK = lazy_re(r"[/\\](site|dist)-packages[/\\]torch[/\\]|^<frozen |(^|[/\\])runpy\.py$")


def first_line(text: str, limit: int = 300) -> str:
    for line in str(text).splitlines():
        line = line.strip()
        if line:
            return line[:limit]
    return ""


def exception_from_traceback(text: str) -> tuple[str, str]:
    """``(type name, whole message)`` of the exception that ends a formatted traceback: the first
    unindented line after its last ``Traceback (most recent call last):`` block of frames, and every
    line after it (several for e.g. ``BackendCompilerFailed``; Dynamo's messages even quote user
    frames), without torch's ``Set TORCHDYNAMO_VERBOSE=1 …`` footer."""
    lines = text.rstrip().splitlines()
    heads = [i for i, ln in enumerate(lines) if ln.startswith("Traceback (most recent call last):")]
    start: int | None = None
    if heads:
        j = heads[-1] + 1
        while j < len(lines) and (lines[j].startswith((" ", "\t")) or not lines[j].strip()):
            j += 1
        start = j if j < len(lines) else None
    else:
        last_frame = max((i for i, ln in enumerate(lines) if _TB_FRAME.match(ln)), default=-1)
        start = next((i for i in range(last_frame + 1, len(lines))
                      if lines[i].strip() and not lines[i].startswith((" ", "\t"))), None)
    if start is None:
        return "Error", first_line(text)
    body: list[str] = []
    for ln in lines[start:]:
        if ln.startswith(_TORCH_FOOTER):
            break
        body.append(ln)
    head, sep, rest = body[0].partition(": ")
    qual = head.strip() if sep and " " not in head.strip() else ""
    if not qual and not sep and re.fullmatch(r"[A-Za-z_][\w.]*", body[0].strip()):
        qual = body[0].strip()  # an exception raised without a message
    message = "\n".join([rest if qual else body[0], *body[1:]]).strip("\n").rstrip()
    return (qual.rsplit(".", 1)[-1] if qual else "Error"), message


class Frame:
    """One frame of a formatted stack. A plain class, as ``@dataclass`` made it (the same constructor,
    ``repr`` and ``==``; no hash): ``dataclasses`` imports ``inspect``, paid by every headless start."""

    __slots__ = ("filename", "line", "function", "code")

    def __init__(self, filename: str, line: int, function: str | None = None, code: str | None = None) -> None:
        self.filename = filename
        self.line = line
        self.function = function
        self.code = code

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.filename, self.line, self.function, self.code) == (
            other.filename, other.line, other.function, other.code)

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass

    def __repr__(self) -> str:
        return (f"Frame(filename={self.filename!r}, line={self.line!r}, function={self.function!r}, "
                f"code={self.code!r})")

    @property
    def where(self) -> str:
        return f"{self.filename}:{self.line}"


def parse_traceback_frames(text: str) -> list[Frame]:
    """The ``File "…", line N, in fn`` frames of a formatted stack, with their source line if shown."""
    frames: list[Frame] = []
    for ln in text.splitlines():
        m = _TB_FRAME.match(ln)
        if m:
            frames.append(Frame(m.group(1), int(m.group(2)), m.group(3).strip()))
        elif frames and frames[-1].code is None and ln.strip() and not set(ln.strip()) <= set("^~ "):
            frames[-1].code = ln.strip()
    return frames


_GB_STOP = ("  Hint: ", "  Developer debug context: ", " For more details about this graph break")


def _block(lines: list[str], k: int, first: str) -> tuple[str, int]:
    """A field of torch's graph-break message from its first line on: its continuation lines are indented
    by four spaces (``textwrap.indent(text, "    ")``, blank lines left bare) up to the next field."""
    out = [first]
    while k < len(lines):
        ln = lines[k]
        if ln.startswith(_GB_STOP) or (ln.strip() and not ln.startswith("    ")):
            break
        out.append(ln[4:] if ln.startswith("    ") else "")
        k += 1
    return "\n".join(x.rstrip() for x in out).strip("\n").rstrip(), k


def _gb_message_fields(reason: str) -> dict[str, Any]:
    """``gb_type``, ``explanation`` (whole: torch's blank lines and indented code kept), ``hints`` (every
    one, each whole) and ``debug_context`` of the first graph-break message in ``reason`` (the format of
    ``torch._dynamo.exc.format_graph_break_message``)."""
    lines = reason.splitlines()
    out: dict[str, Any] = {}
    for i, ln in enumerate(lines):
        if ln.startswith("  Explanation: ") and i > 0:
            j = i - 1
            while j >= 0 and (not lines[j].strip() or lines[j].startswith("  Higher Order Operator: ")):
                j -= 1  # augment_exc_message_with_hop_name puts the HOP between the type and the explanation
            if j >= 0:
                out["gb_type"] = lines[j].strip()
            out["explanation"], k = _block(lines, i + 1, ln[len("  Explanation: "):])
            hints: list[str] = []
            while k < len(lines):
                nxt = lines[k]
                if nxt.startswith("  Hint: "):
                    h, k = _block(lines, k + 1, nxt[len("  Hint: "):])
                    hints.append(h)
                elif nxt.startswith("  Developer debug context: "):
                    out["debug_context"], k = _block(lines, k + 1, nxt[len("  Developer debug context: "):])
                elif not nxt.strip():
                    k += 1
                else:
                    break
            out["hints"] = hints
            break
    return out


def parse_graph_break(payload: str) -> dict[str, Any]:
    """What ``artifact dynamo_graph_break_reason`` says: the full ``reason``, torch's graph-break id
    and type, explanation, hints, the header location and the user stack frames."""
    head = payload.split("\nTraceback (most recent call last):", 1)[0]
    out: dict[str, Any] = {"frames": []}
    m = _GB_HEADER.search(head)
    if m:
        out["header_frame"] = Frame(m.group(1), int(m.group(2)))
    r = re.search(r"Graph Break Reason: ", head)
    user_tb = ""
    if r:
        reason_part = head[r.end():]
        for marker in ("\nUser code traceback:", "\nStack variable source attribution:"):
            reason_part = reason_part.split(marker, 1)[0]
        out["reason"] = reason_part.strip()
    else:
        out["reason"] = first_line(payload, 2000)
    if "User code traceback:" in head:
        user_tb = head.split("User code traceback:", 1)[1]
        out["frames"] = parse_traceback_frames(user_tb)
    out.update(_gb_message_fields(out["reason"]))
    u = _GB_URL.search(out["reason"])
    if u:
        out["gb_id"] = f"GB{u.group(1)}"
    return out


def graph_break_report(payload: str,
                       is_framework: Any = None) -> dict[str, Any]:
    """A graph-break report (``graph_break.txt``, torch's ``dynamo_graph_break_reason``) as the viewer shows
    it: ``gb_id``, ``gb_type``, ``reason``, ``explanation``, ``hints``, and where it broke:
    ``break_*`` (file, line, function, source) is the innermost frame outside torch, ``user_*`` the
    innermost frame outside torch *and* installed libraries (``site-packages``: transformers …), i.e. the
    user's call site; ``in_user_code`` says whether the two are the same frame."""
    gb = parse_graph_break(payload)
    out: dict[str, Any] = {k: gb[k] for k in ("gb_id", "gb_type", "reason", "explanation", "hints", "debug_context") if k in gb}
    fw = is_framework or is_torch_or_runpy
    frames = [f for f in gb["frames"] if not fw(f.filename)]
    hf = gb.get("header_frame")
    brk = frames[-1] if frames else hf
    user = next((f for f in reversed(frames) if not is_library(f.filename)), None)
    if brk is not None:
        out.update(break_file=brk.filename, break_line=brk.line, break_function=brk.function,
                   break_source=brk.code)
    if user is None and brk is not None and not frames:
        user = brk  # only the header's file:line is known
    if user is not None:
        out.update(user_file=user.filename, user_line=user.line, user_function=user.function,
                   source_line=user.code)
    if brk is not None and user is not None:
        out["in_user_code"] = (brk.filename, brk.line) == (user.filename, user.line)
    return out


_LIBRARY = lazy_re(r"[/\\](site|dist)-packages[/\\]|^<frozen |(^|[/\\])runpy\.py$")


def is_library(filename: str) -> bool:
    """A frame in an installed package (``site-packages``: torch, transformers, …), ``runpy`` or a frozen
    module: code the user calls but does not edit."""
    return bool(_LIBRARY.search(filename))


def parse_recompile_reasons(payload: str) -> list[str]:
    """``recompile_reasons`` claims JSON but is a bare string when one cache entry failed (§7.3)."""
    try:
        reasons: Any = json.loads(payload)
    except ValueError:
        reasons = payload.strip()
    if isinstance(reasons, str):
        reasons = [reasons] if reasons else []
    elif not isinstance(reasons, list):
        reasons = [reasons]
    return [str(r) for r in reasons]


def load_gb_registry(path: str | os.PathLike[str] | None) -> dict[str, Any]:
    """torch's ``graph_break_registry.json``: ``{"GB0059": [{"Gb_type", "Explanation", "Hints", …}, …]}``."""
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


#: the torch release whose ``graph_break_registry.json`` is shipped beside this module (the newest read: ids of
#: a torch newer than the one installed, or of any torch where none is installed, as the viewer runs)
SHIPPED_GB_REGISTRY_TORCH = "2.15.0"
SHIPPED_GB_REGISTRY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "graph_break_registry.json")


def merged_gb_registry(installed: str | os.PathLike[str] | None) -> dict[str, Any]:
    """The installed torch's registry (its wording wins: it is the torch most likely to have written the log),
    with the ids only the shipped one knows (torch 2.14 grew it from 517 to 561 ids, 2.15 to 592) added, and
    those only an older torch knew kept. An id neither knows is shown with the log's own text."""
    shipped = load_gb_registry(SHIPPED_GB_REGISTRY)
    own = load_gb_registry(installed) if installed else {}
    return {**shipped, **own}


def find_gb_registry() -> str | None:
    """The registry of the installed torch, found without importing torch."""
    try:
        import importlib.util

        spec = importlib.util.find_spec("torch")
        if spec is None or not spec.origin:
            return None
        path = os.path.join(os.path.dirname(spec.origin), "_dynamo", "graph_break_registry.json")
        return path if os.path.isfile(path) else None
    except Exception:
        return None




def is_limit_hit(fail_type: Any, fail_reason: Any) -> bool:
    """Did a compile fail because its frame reached the recompile limit (torch's GB0039)?"""
    return bool(_LIMIT_HIT.search(f"{fail_type or ''}\n{fail_reason or ''}"))


def limit_from_message(text: str) -> tuple[str | None, int | None]:
    """``(limit_type, limit)`` from torch's "Dynamo recompile limit exceeded" message."""
    lt, lv = _LIMIT_TYPE.search(text), _LIMIT_VALUE.search(text)
    return (lt.group(1) if lt else None), (int(lv.group(1)) if lv else None)


def is_torch_or_runpy(filename: str) -> bool:
    """A frame in an installed torch, ``runpy`` or a frozen module: never "the user's frame"."""
    return bool(_DEFAULT_FRAMEWORK.search(filename))


def recompile_limit_of(dynamo_config: Any, default: Any = None) -> Any:
    """``recompile_limit`` (``cache_size_limit`` on older torch) from compilation_metrics' ``dynamo_config``
    (a JSON string of torch._dynamo.config at that compile)."""
    if not isinstance(dynamo_config, str) or "limit" not in dynamo_config:
        return default
    try:
        cfg = json.loads(dynamo_config)
    except ValueError:
        return default
    if not isinstance(cfg, dict):
        return default
    for key in ("recompile_limit", "cache_size_limit"):
        if isinstance(cfg.get(key), int):
            return cfg[key]
    return default
