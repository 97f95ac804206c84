"""``compiled_functions/`` when a traced block ends (FORMAT.md part A §6, part B §B5).

For each function Dynamo transformed (seen through the bytecode hook): ``overview.md``, the original
code decompiled (depyf where it works, else a ``# Failed to decompile`` line), and one ``entry_<i>/``
per cache entry with the transformed code, its guards and the compiled fns / resume fns it calls.
Resume functions are written under the entries that call them.

Entry order is Dynamo's cache-entry list as it stands when the block ends: Dynamo moves the entry whose
guards passed to the front, so ``entry_0`` is the most recently *used* entry — not necessarily the one
compiled last. The order is recorded as is; nothing here calls an entry "newest".
"""

from __future__ import annotations

import dis
import io
import re
from pathlib import Path
from typing import Any, Callable

from magi_format.guards import count_leaf_guards, guard_kinds

_SAFE = re.compile(r"[<> .]")


def _name(code: Any) -> str:
    return _SAFE.sub("_", code.co_name)


def _decompile(code: Any) -> str:
    try:
        import depyf

        return depyf.decompile(code)
    except Exception as exc:
        return f"# Failed to decompile {code.co_name}: {type(exc).__name__}\n"


def _bytecode_info(code: Any) -> str:
    out = io.StringIO()
    for attr in ("co_name", "co_filename", "co_firstlineno", "co_argcount", "co_varnames", "co_names",
                 "co_consts"):
        out.write(f"{attr}: {getattr(code, attr, None)!r}\n")
    out.write("\n")
    try:
        dis.dis(code, file=out)
    except Exception as exc:
        out.write(f"(dis failed: {exc})\n")
    return out.getvalue()


def _entries(code: Any) -> list[Any]:
    try:
        from torch._dynamo.eval_frame import _debug_get_cache_entry_list

        return list(_debug_get_cache_entry_list(code))
    except Exception:
        return []


def _write_function(fdir: Path, code: Any, resume_codes: dict[str, Any], depth: int,
                    originals: dict[int, tuple[Any, Any]] | None = None) -> None:
    fdir.mkdir(parents=True, exist_ok=True)
    (fdir / "decompiled_code.py").write_text(_decompile(code))
    (fdir / "bytecode_info.txt").write_text(_bytecode_info(code))
    entries = _entries(code)
    lines = [f"# {code.co_name}", "", f"**Root:** `{fdir}`  ", f"**Cache entries:** {len(entries)} "
             "(Dynamo's order: most recently used first)", "",
             "[decompiled code (before dynamo)](./decompiled_code.py)", "[bytecode info](./bytecode_info.txt)", ""]
    for i, entry in enumerate(entries):
        edir = fdir / f"entry_{i}"
        edir.mkdir(exist_ok=True)
        cid = getattr(entry, "compile_id", None)
        lines.append(f"## entry\\[{i}\\]" + (f" (compile {cid})" if cid is not None else ""))
        lines.append("")
        new_code = getattr(entry, "code", None)
        ours = (originals or {}).get(id(new_code))
        if ours is not None and ours[0] is new_code:
            new_code = ours[1]   # Dynamo's code, not the tracer's counting copy
        if new_code is not None:
            (edir / "decompiled_code.py").write_text(_decompile(new_code))
            (edir / "bytecode_info.txt").write_text(_bytecode_info(new_code))
            lines += [f"- [decompiled code](./entry_{i}/decompiled_code.py)",
                      f"- [bytecode info](./entry_{i}/bytecode_info.txt)"]
        try:
            guards = str(entry.guard_manager)
            (edir / "guards.txt").write_text(guards)
            leaves = count_leaf_guards(guards)
            kinds = ", ".join(f"{k} {n}" for k, n in sorted(guard_kinds(guards).items(), key=lambda kv: -kv[1]))
            lines.append(f"- [guards ({leaves} leaf)](./entry_{i}/guards.txt)" + (f": {kinds}" if kinds else ""))
        except Exception:
            pass
        names = list(getattr(new_code, "co_names", ()) or ())
        cfs = [n for n in names if n.startswith("__compiled_fn")]
        if cfs:
            (edir / "compiled_fns").mkdir(exist_ok=True)
            lines.append("- compiled_fns/")
            for cf in cfs:
                backend = getattr(entry, "backend", None)
                bname = getattr(backend, "__name__", None) or type(backend).__name__ if backend else "unknown"
                (edir / "compiled_fns" / f"{_SAFE.sub('_', cf)}.py").write_text(
                    f"# {cf} (backend={bname}); its graphs are in the timeline's events\n")
                lines.append(f"  - [`{cf}` ({bname})](./entry_{i}/compiled_fns/{_SAFE.sub('_', cf)}.py)")
        resumes = [n for n in names if n.startswith("__resume_at")]
        if resumes and depth < 4:
            lines.append("- resume_fns/")
            for r in resumes:
                target = resume_codes.get(r)
                if target is None:
                    continue
                _write_function(edir / "resume_fns" / _SAFE.sub("_", r), target, resume_codes, depth + 1,
                                originals)
                lines.append(f"  - [`{r}`/](./entry_{i}/resume_fns/{_SAFE.sub('_', r)}/overview.md)")
        lines.append("")
    (fdir / "overview.md").write_text("\n".join(lines) + "\n")


def _resume_globals(codes: list[tuple[Any, Any]]) -> dict[str, Any]:
    """Map ``__resume_at_<off>_<n>`` global names to resume code objects.

    Dynamo installs each resume function in the frame's globals under that name; we find the function
    objects that use a resume code (``gc``) and look the name up in their ``__globals__``."""
    import gc
    import types

    out: dict[str, Any] = {}
    for code, _new in codes:
        if not code.co_name.startswith("torch_dynamo_resume_in_"):
            continue
        for ref in gc.get_referrers(code):
            if isinstance(ref, types.FunctionType) and ref.__code__ is code:
                for k, v in ref.__globals__.items():
                    if v is ref and k.startswith("__resume_at"):
                        out.setdefault(k, code)
    return out


def write_compiled_functions(run_dir: Path, codes: list[tuple[Any, Any]],
                             originals: dict[int, tuple[Any, Any]] | None = None,
                             on_error: Callable[[BaseException, str], None] | None = None) -> None:
    """``originals``: id of the code the tracer gave Dynamo (counting calls, tracer/runtime.py) -> (that code,
    Dynamo's own code, which is what is written). A function that cannot be written (not a disk error) is
    left out and told to ``on_error(exc, its name)``; the others are written."""
    root = Path(run_dir) / "compiled_functions"
    seen: set[str] = set()
    resume_codes = _resume_globals(codes)
    for code, _new in codes:
        if code.co_name.startswith("torch_dynamo_resume_in_"):
            continue
        name = _name(code)
        if name in seen:
            continue
        seen.add(name)
        try:
            _write_function(root / name, code, resume_codes, 0, originals)
        except OSError:
            raise
        except Exception as exc:
            if on_error is None:
                raise
            on_error(exc, name)
