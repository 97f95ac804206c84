"""Hostile run directories for the issue-14 tests: escapes, markup and bidi in every field, links out of
the run, FIFOs and directories where files are expected, lone surrogates, over-long names, a sparse
one-line artifact of any size.

Everything outside a run that a link points at holds :data:`SECRET` (under ``outside/``), so a test can
tell that nothing outside was read: the secret never reaches the screen and no ``open`` names it.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

SECRET = "S3CRET-6f1d2c-never-on-screen"
#: what an attacker would put in any string field
ESC = "\x1b[2J\x1b[31mred\x1b]0;title\x07\x1b]52;c;cHduZWQ=\x07\x9b5n"
BIDI = "\u202eevil\u2066x\u2069\u200f"
MARKUP = "[bold red]boom[/][link=http://x]y[/link]"
HOSTILE = f"{ESC}{BIDI}{MARKUP}\x00\x7f\u2028"
LONG = "L" * 300  # longer than NAME_MAX (255): ENAMETOOLONG when it becomes a path component

RUN_NAME = f"model_1_evil{ESC[:8]}{BIDI[:4]}_rank_0"


def _line(index: int, name: str, files=(), *, ascii_json: bool = False, ts: float = 1795346341.0,
          **attrs) -> str:
    if "scope" not in attrs:
        attrs = {"scope": "subgraph" if name.startswith("subgraph_") else "fullgraph", **attrs}
    obj = {"index": index, "name": name, "relative_time": f"{index}.0ms{ESC[:4]}", "files": list(files),
           "attributes": attrs, "datetime": f"2026-11-22 11:19:01.460{BIDI[:1]}", "timestamp": ts + index}
    # a lone surrogate cannot be written as UTF-8: the JSON escape "\ud800" is what a writer produces
    return json.dumps(obj, ensure_ascii=ascii_json) + "\n"


def _write(p: Path, text: str | bytes) -> None:
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, str):
        text = text.encode("utf-8", "surrogatepass")
    p.write_bytes(text)


def _sparse(p: Path, size: int, head: bytes = b"x = '") -> None:
    p.parent.mkdir(parents=True, exist_ok=True)
    with open(p, "wb") as fh:
        fh.write(head)
        fh.truncate(size)  # a hole: one line of NULs, no newline, no disk used


def _fifo(p: Path) -> None:
    p.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(p)


def outside_dir(tmp: Path) -> Path:
    out = tmp / "outside"
    if not out.exists():
        (out / "entry_0").mkdir(parents=True)
        _write(out / "secret.txt", f"{SECRET}\n")
        _write(out / "secret.md", f"# {SECRET}\n")
        _write(out / "entry_0" / "guards.txt", f"LEAF: {SECRET}\n")
        _write(out / "entry_0" / "decompiled_code.py", f"{SECRET}\n")
        _write(out / "forward" / "overview.md", f"# {SECRET}\n")
        _write(out / "forward" / "decompiled_code.py", f"{SECRET}\n")
    return out


def build_hostile_run(run: Path, outside: Path, *, huge_bytes: int = 0, bytecode_hazards: bool = False) -> Path:
    """One run dir with every hostile thing in it (``huge_bytes``: size of the one-line artifact).

    ``bytecode_hazards``: the functions' ``bytecode_info.txt`` is a FIFO / a link out of the run
    (read by the triage's frame analysis, ``model/analysis/frames.py``)."""
    te = run / "timeline_events"
    files = te / "files"
    secret = outside / "secret.txt"
    graph = f"def forward(self, x):\n    y = x  # {HOSTILE}\n\treturn y\n"
    lines = [
        _line(0, "fullgraph_before_compiler_compile",
              ["before_compiler_compile_graph_module.py", "leak.py", "fifo.py", "dir.py", f"e{ESC}v{BIDI}.py"],
              lifecycle_name="compiler_compile", compile_id=f"[0/0]{ESC}", graph_index=0,
              **{f"key{ESC}{BIDI}": HOSTILE, "nested": {"v": [HOSTILE, 1, None]}}),
        _line(1, "fullgraph_failed_compiler_compile", ["failed_lifecycle_graph_module.py", "huge.txt"],
              lifecycle_name="compiler_compile", compile_id=f"[0/0]{ESC}", exception_type=f"Err{ESC}",
              exception_message=HOSTILE, graph_index=0),
        _line(2, f"fullgraph_after_x\ud800{ESC}", ["x.py"], ascii_json=True, lifecycle_name="x\udfff",
              compile_id="\ud800", **{"k\ud800": "v\udc00"}),
        _line(3, f"fullgraph_after_{LONG}", ["y.py"], lifecycle_name=LONG),
        _line(4, f"subgraph_0_before_{MARKUP}", ["g.txt"], subgraph=f"submod_0{ESC}", subgraph_index=0,
              lifecycle_name=MARKUP),
        _line(5, f"subgraph_0_after_{MARKUP}", ["g.txt", LONG + ".py"], subgraph="submod_0",
              subgraph_index=0, lifecycle_name=MARKUP),
        _line(6, "fullgraph_after_link_folder", ["f.py"], lifecycle_name="link_folder"),
        _line(7, f"{ESC}{BIDI}", [], compile_id=f"[1/0]{BIDI}", scope=f"scope{ESC}"),
        f"\x1b[2J{SECRET[:0]}not json {ESC}\n",
        _line(8, "fullgraph_after_attrs_link", ["attributes.json"], lifecycle_name="attrs_link"),
    ]
    _write(te / "timeline.jsonl", "".join(lines))

    f0 = files / "0000_fullgraph_before_compiler_compile"
    _write(f0 / "before_compiler_compile_graph_module.py", graph)
    (f0 / "leak.py").symlink_to(secret)
    _fifo(f0 / "fifo.py")
    (f0 / "dir.py").mkdir(parents=True)
    _write(f0 / f"e{ESC}v{BIDI}.py", graph)
    _write(f0 / "attributes.json", json.dumps({"scope": "fullgraph", "v": HOSTILE}, indent=2, ensure_ascii=False))

    f1 = files / "0001_fullgraph_failed_compiler_compile"
    _write(f1 / "failed_lifecycle_graph_module.py", graph.replace("y = x", "y = x + 1") + ("z = 1\n" * 50))
    if huge_bytes:
        _sparse(f1 / "huge.txt", huge_bytes)
    else:
        _write(f1 / "huge.txt", "x" * 100_000)
    _write(f1 / "attributes.json", "{\"not\": json" + ESC)

    # event 2's folder name holds a surrogate: it cannot exist on disk; event 3's is too long
    f4 = files / "0004_subgraph_0_before_" / "x"  # the real one is refused (MARKUP has '/')
    f4.mkdir(parents=True)
    f5 = files / f"0005_subgraph_0_after_{MARKUP}".replace("/", "_")
    f5.mkdir(parents=True)
    (files / "0006_fullgraph_after_link_folder").symlink_to(outside, target_is_directory=True)
    f8 = files / "0008_fullgraph_after_attrs_link"
    f8.mkdir(parents=True)
    (f8 / "attributes.json").symlink_to(secret)

    cf = run / "compiled_functions"
    fn = cf / f"forward{ESC}{BIDI}"
    _write(fn / "overview.md", f"# forward {HOSTILE}\n\n**Root:** `{ESC}`\n\n[link{ESC}](http://evil/{ESC})\n"
                               f"- [`x`](./entry_0/decompiled_code.py)\n")
    (fn / "decompiled_code.py").parent.mkdir(parents=True, exist_ok=True)
    (fn / "decompiled_code.py").symlink_to(secret)
    if bytecode_hazards:
        _fifo(fn / "bytecode_info.txt")
    else:
        _write(fn / "bytecode_info.txt", f"co_name: forward{ESC}\n")
    e0 = fn / "entry_0"
    e0.mkdir(parents=True)
    (e0 / "guards.txt").symlink_to(outside / "entry_0" / "guards.txt")
    _write(e0 / "decompiled_code.py", graph)
    (e0 / "bytecode_info.txt").mkdir()
    _write(e0 / "compiled_fns" / f"__compiled_fn_1{ESC}.py", f"# stub {ESC}\n")
    _write(e0 / "compiled_fns" / f"__compiled_fn_1{ESC}" / "submod_0" / "README.txt", f"# submod_0 (x{ESC})\n")
    (e0 / "compiled_fns" / f"__compiled_fn_1{ESC}" / "submod_0" / "leak.py").symlink_to(secret)
    _write(e0 / "compiled_fns" / f"__compiled_fn_1{ESC}" / "submod_0" / "graph_module.py", graph)
    (e0 / "resume_fns").mkdir()
    (e0 / "resume_fns" / "__resume_at_1").symlink_to(outside / "forward", target_is_directory=True)
    e1 = fn / "entry_1"
    _write(e1 / "guards.txt", f"[Root] (1 leaf guards){ESC}\n  LEAF: {HOSTILE}\n")
    (fn / "entry_2").symlink_to(outside / "entry_0", target_is_directory=True)
    (cf / "evil").symlink_to(outside, target_is_directory=True)
    if bytecode_hazards:
        (cf / "linked_bytecode" / "entry_0").mkdir(parents=True)
        (cf / "linked_bytecode" / "bytecode_info.txt").symlink_to(secret)
    big = cf / "big"
    _write(big / "overview.md", ("x" * 100 + "\n") * 3000)  # over the Markdown bound: shown as lines
    _write(big / "entry_0" / "decompiled_code.py", "pass\n")
    return run


def build_linked_cf_run(run: Path, outside: Path) -> Path:
    """A run whose ``compiled_functions/`` is itself a link out of the run."""
    _write(run / "timeline_events" / "timeline.jsonl", _line(0, "fullgraph_after_x", [], lifecycle_name="x"))
    (run / "compiled_functions").symlink_to(outside, target_is_directory=True)
    return run


def fifos_opened(root: Path) -> list[str]:
    """FIFOs under ``root`` that some reader has open right now (and is perhaps blocked on): each is
    opened for writing and closed at once, so a reader blocked in ``open`` gets EOF and goes on."""
    hit = []
    for dirpath, dirnames, filenames in os.walk(root):
        for n in filenames:
            p = os.path.join(dirpath, n)
            try:
                if not stat.S_ISFIFO(os.lstat(p).st_mode):
                    continue
                fd = os.open(p, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # ENXIO: nobody reads it
                continue
            os.close(fd)
            hit.append(p)
    return hit


def build_root(tmp: Path, *, huge_bytes: int = 0) -> tuple[Path, Path]:
    """``(root, hostile run)``: a magi_depyf root with the hostile run, a run whose
    compiled_functions/ links out, and a run whose timeline.jsonl is a FIFO."""
    outside = outside_dir(tmp)
    root = tmp / f"root{ESC[:4]}" / "magi_depyf"
    run = build_hostile_run(root / "run_20261122_111900" / RUN_NAME, outside, huge_bytes=huge_bytes)
    build_linked_cf_run(root / "run_20261122_111901" / "model_2_linked_rank_0", outside)
    fifo_run = root / "run_20261122_111902" / f"model_3_{BIDI}_rank_0" / "timeline_events"
    fifo_run.mkdir(parents=True)
    os.mkfifo(fifo_run / "timeline.jsonl")
    return root, run
