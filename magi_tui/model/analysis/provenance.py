"""Inductor provenance: which kernel of the output code fused which post-grad FX nodes, which pre-grad
nodes those came from, and where each of them is in the files a run holds (what tlparse ``-i`` links
in a browser; here the run screen's ``P`` / ``K`` / backspace walk it).

torch records it when ``config.trace.provenance_tracking_level`` is on (``python -m tracer
--provenance``): one ``provenance.json`` per graph (torch's ``inductor_provenance_tracking_node_mappings``:
``cppCodeToPost`` kernel -> post-grad nodes, for cpp and Triton kernels alike, keyed ``name:debug
handle``; ``postToCppCode``; ``postToPre``; ``preToPost``) and ``kernel_stack_traces.json``. The output
code names each call with the same key (``# [Provenance debug handles] cpp_fused_add_0:2`` above the
call line). Kernels are found by torch's own spelling: a definition ``NAME = async_compile.<kind>(``
up to its closing ``'''`` line (cpp, Triton, templates), a call ``NAME(...)`` / ``NAME.run(...)`` /
``extern_kernels.mm(...)``. FX nodes by the lines ``name: "f32[8]" = torch.ops...`` of
``print_readable`` (the tracer's files), ``%name : [...] = call_function[...]`` of ``Graph.__str__``
and the parameters of ``def forward(self, arg0_1, ...)``.

The files of one graph are found among the run's events of the same compile id, scope and direction
(forward / backward), nearest in the timeline to the file the cursor is in; all reads go through
:mod:`magi_tui.model.sources.files` (inside the run, regular files, bounded). Nothing here raises on what a
run holds: a step that cannot be taken returns one sentence saying why.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Protocol

from msgspec import Struct, field

from magi_format.torchtext import parse_traceback_frames
from magi_tui.model.events import Event
from magi_tui.model.sources import files
from magi_tui.model.sources.files import json_or_none

if TYPE_CHECKING:
    from pathlib import Path

    from magi_tui.model.run import RunModel

#: file names, as the tracer (and the TORCH_TRACE / TORCH_COMPILE_DEBUG readers) give them
OUTPUT_CODE = ("inductor_output.py", "output_code.py", "inductor_aot_wrapper_code.cpp")
POST_GRAD = ("post_grad_graph.py", "fx_graph_transformed.py", "fx_graph_readable.py")
PRE_GRAD = ("pre_grad_graph.py",)
MAPPINGS = ("provenance.json", "inductor_provenance_tracking_node_mappings.json")
STACKS = ("kernel_stack_traces.json", "inductor_provenance_tracking_kernel_stack_traces.json")
MAX_MAPPING = 8 << 20
MAX_LINES = 2_000_000
NOT_RECORDED = "no provenance recorded: trace with python -m tracer --provenance"

_DEF = re.compile(r"^(\w+) = async_compile\.\w+\(")
_DEF_END = re.compile(r"^(?:'''|\"\"\")")
_HANDLE = re.compile(r"^\s*(?:#|//) \[Provenance debug handles\] (\S+)\s*$")
_COMMENT = re.compile(r"^\s*(?:#|//)")
_CALL = re.compile(r"^\s+((?:extern_kernels\.)?\w+)(?:\.run)?\(")
_NODE = re.compile(r'^\s*%?(\w+)\s*(?::\s*(?:"[^"]*"|\[[^\]]*\]))?\s*=\s')
_FORWARD = re.compile(r"^\s*def forward\(self,?(.*)")
_PARAM = re.compile(r"(\w+)\s*(?::\s*\"[^\"]*\")?\s*(?:,|\)|$)")
_FRAME = re.compile(r'File "([^"]+)", line (\d+), in [^\n]*\n([^\n]*)')
_FILE_COMMENT = re.compile(r"^\s*# File: (.+?), code: (.*)$")


def kernel_name(key: str) -> str:
    """``cpp_fused_add_0:2`` -> ``cpp_fused_add_0`` (torch's key is the name and a debug handle)."""
    name, sep, handle = key.rpartition(":")
    return name if sep and handle.isdigit() else key


def file_role(name: str) -> str | None:
    """``output``, ``post_grad``, ``pre_grad`` (the three files provenance links), else None."""
    if name in OUTPUT_CODE:
        return "output"
    if name in POST_GRAD:
        return "post_grad"
    if name in PRE_GRAD:
        return "pre_grad"
    return None


# -- the output code --------------------------------------------------------------------------------

class KernelSite(Struct, frozen=True):
    """A kernel where the cursor is: its definition or one of its call sites."""

    name: str                 # cpp_fused_add_relu_0, triton_poi_fused_add_0, extern_kernels.mm
    key: str | None           # torch's provenance key of this call (``name:handle``), when written
    line: int                 # the definition's first line / the call line (0-based)
    kind: str                 # definition | call


class OutputCode(Struct):
    """Where each kernel of one output-code file is defined and called."""

    definitions: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (def line, last line)
    calls: list[tuple[int, int, str, str | None]] = field(default_factory=list)  # (from, call line, name, key)
    heads: dict[str, int] = field(default_factory=dict)  # name -> first line of the comments above its def

    def at(self, i: int) -> KernelSite | None:
        for name, (a, b) in self.definitions.items():
            if self.heads.get(name, a) <= i <= b:
                return KernelSite(name, None, a, "definition")
        for a, b, name, key in self.calls:
            if a <= i <= b:
                return KernelSite(name, key, b, "call")
        return None

    def lines_of(self, key: str) -> tuple[int | None, list[int]]:
        """(definition line, call lines) of the kernel ``key`` (the call with this debug handle when
        the file names handles, else every call of that name)."""
        name = kernel_name(key)
        d = self.definitions.get(name)
        exact = [b for _a, b, n, k in self.calls if k == key]
        return (d[0] if d else None), exact or [b for _a, b, n, _k in self.calls if n == name]


def _comments_above(lines: list[str], i: int) -> int:
    """The first line of the comment block right above line ``i`` (``i`` when there is none)."""
    while i > 0 and _COMMENT.match(lines[i - 1]) and not _HANDLE.match(lines[i - 1]):
        i -= 1
    return i


def index_output_code(lines: list[str]) -> OutputCode:
    """Kernels by torch's layout of the output code: ``NAME = async_compile.<kind>(`` up to the line
    closing its source string (the comments above it, e.g. Triton's ``# kernel path:``, belong to it);
    each call with the comments above it (``# Topologically Sorted Source Nodes``, ``# [Provenance
    debug handles] NAME:N``), the call within a few lines of its handle (Triton puts ``stream0 =
    get_raw_stream(0)`` between): ``NAME(...)``, ``NAME.run(...)``, ``extern_kernels.mm(...)``."""
    out = OutputCode()
    n = len(lines)
    i = 0
    while i < n:
        m = _DEF.match(lines[i])
        if m and m.group(1) not in out.definitions:
            j = i + 1
            while j < n and not _DEF_END.match(lines[j]) and not _DEF.match(lines[j]):
                j += 1
            end = j if j < n and _DEF_END.match(lines[j]) else i
            out.definitions[m.group(1)] = (i, end)
            out.heads[m.group(1)] = _comments_above(lines, i)
            i = end + 1
            continue
        i += 1
    known = set(out.definitions)
    claimed: set[int] = set()
    for h, s in enumerate(lines):
        m = _HANDLE.match(s)
        if not m:
            continue
        key = m.group(1)
        name = kernel_name(key)
        call = first_code = None
        for j in range(h + 1, min(n, h + 6)):
            t = lines[j]
            if _COMMENT.match(t) or not t.strip():
                continue
            first_code = j if first_code is None else first_code
            c = _CALL.match(t)
            if c and c.group(1) == name:
                call = j
                break
        at = call if call is not None else first_code  # a fallback op is called otherwise: its next line
        if at is not None and at not in claimed:
            claimed.add(at)
            out.calls.append((_comments_above(lines, h), at, name, key))
    for i, s in enumerate(lines):  # calls without a handle (recorded without provenance)
        c = _CALL.match(s) if i not in claimed else None
        if c and (c.group(1) in known or c.group(1).startswith("extern_kernels.")):
            out.calls.append((_comments_above(lines, i), i, c.group(1), None))
    out.calls.sort(key=lambda c: c[1])
    return out


# -- FX graph files ---------------------------------------------------------------------------------

def node_lines(lines: list[str]) -> dict[str, int]:
    """FX node name -> the line defining it (the first: the top-level graph's), inputs at the
    ``def forward`` line."""
    out: dict[str, int] = {}
    for i, s in enumerate(lines):
        if _COMMENT.match(s):
            continue
        f = _FORWARD.match(s)
        if f:
            for p in _PARAM.findall(f.group(1)):
                if p != "self":
                    out.setdefault(p, i)
            continue
        m = _NODE.match(s)
        if m and not s.lstrip().startswith(("return ", "class ", "def ")):
            out.setdefault(m.group(1), i)
    return out


def node_at(lines: list[str], i: int) -> str | None:
    """The FX node defined on line ``i`` (on a ``# File:`` comment or a blank line: the next node; on
    ``def forward(self, ...)``: the first input)."""
    f = _FORWARD.match(lines[i]) if 0 <= i < len(lines) else None
    if f:
        return next((p for p in _PARAM.findall(f.group(1)) if p != "self"), None)
    for j in range(i, min(len(lines), i + 8)):
        s = lines[j]
        if j > i and not (_COMMENT.match(s) or not s.strip()) and not _NODE.match(s):
            return None
        if _COMMENT.match(s) or not s.strip():
            continue
        m = _NODE.match(s)
        if m and not s.lstrip().startswith(("return ", "class ", "def ")):
            return m.group(1)
        if j == i:
            return None
    return None


def source_of(lines: list[str], i: int) -> str | None:
    """The user line a node comes from: the nearest ``# File: f:N in fn, code: ...`` above line ``i``."""
    for j in range(i, max(-1, i - 400), -1):
        m = _FILE_COMMENT.match(lines[j])
        if m:
            where = m.group(1).split(" in ")[0].rsplit("/", 1)[-1]
            return f"{where}  {m.group(2).strip()}"
        if _FORWARD.match(lines[j]):
            return None
    return None


# -- torch's mapping --------------------------------------------------------------------------------

class Mapping(Struct):
    kernel_to_post: dict[str, list[str]] = field(default_factory=dict)
    post_to_kernel: dict[str, list[str]] = field(default_factory=dict)
    post_to_pre: dict[str, list[str]] = field(default_factory=dict)
    pre_to_post: dict[str, list[str]] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)  # mapping files that are cut or not JSON

    def keys_of(self, site: KernelSite) -> list[str]:
        """torch's keys for a kernel site: its own handle, else every key of that kernel's name."""
        if site.key is not None and site.key in self.kernel_to_post:
            return [site.key]
        return [k for k in self.kernel_to_post if kernel_name(k) == site.name]

    def merge(self, obj: Any) -> None:
        if not isinstance(obj, dict):
            return
        for key, table in obj.items():
            if not isinstance(key, str) or not isinstance(table, dict):
                continue
            if key.endswith("CodeToPost"):
                _add_table(self.kernel_to_post, table)
            elif key.startswith("postTo") and key.endswith("Code"):
                _add_table(self.post_to_kernel, table)
            elif key == "postToPre":
                _add_table(self.post_to_pre, table)
            elif key == "preToPost":
                _add_table(self.pre_to_post, table)
        _add_table(self.post_to_kernel, _invert(self.kernel_to_post))  # older files have no postTo*Code
        _add_table(self.pre_to_post, _invert(self.post_to_pre))

    def __bool__(self) -> bool:
        return bool(self.kernel_to_post or self.post_to_pre)


def _add_table(into: dict[str, list[str]], table: dict) -> None:
    """Merge ``{key: [names]}`` into ``into``, each list in order without repeats (linear: a mapping
    may be big, or hostile)."""
    for k, vs in table.items():
        if not isinstance(vs, list):
            continue
        lst = into.setdefault(str(k), [])
        seen = set(lst)
        for v in vs:
            v = str(v)
            if v not in seen:
                seen.add(v)
                lst.append(v)


def _invert(table: dict[str, list[str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for k, vs in table.items():
        for v in vs:
            out.setdefault(v, []).append(k)
    return out


# -- reading a run ----------------------------------------------------------------------------------

def _path(run: "RunModel", ev: Event, name: str) -> Path | None:
    if name not in (ev.files or ()):
        return None
    for fname, path, _problem in run.files(ev):
        if fname == name:
            return path
    return None


def read_text(run: "RunModel", ev: Event, name: str, limit: int = MAX_MAPPING) -> str | None:
    path = _path(run, ev, name)
    if path is None:
        return None
    text, _ = files.read_head(path, limit, run.files_root)
    return text


def read_lines(run: "RunModel", ev: Event, name: str) -> list[str] | None:
    """The file's lines as the file view numbers them (the same bounded document)."""
    path = _path(run, ev, name)
    if path is None:
        return None
    doc = files.open_document(path, run.files_root)
    try:
        return None if doc.error else doc.all_lines(MAX_LINES)
    finally:
        doc.close()


def _backward(run: "RunModel", ev: Event) -> bool:
    return bool(run.attributes(ev).get("backward"))


def _has(ev: Event, names: tuple[str, ...]) -> str | None:
    return next((n for n in (ev.files or ()) if n in names), None)


class Graph(Struct):
    """The files of one Inductor graph (a compile id, its scope, forward or backward)."""

    output: tuple[Event, str] | None = None
    post_grad: tuple[Event, str] | None = None
    pre_grad: tuple[Event, str] | None = None
    mappings: list[tuple[Event, str]] = field(default_factory=list)
    stacks: list[tuple[Event, str]] = field(default_factory=list)   # kernel_stack_traces.json
    backward: bool = False
    compile_id: str | None = None


def graph_of(run: "RunModel", ev: Event) -> Graph:
    """The graph ``ev`` (an output code, a post-grad or pre-grad graph event) belongs to: the other
    files of the same compile id and scope, those of the same direction, nearest in the timeline
    (a compile may hold several graphs of one kind: the output code anchors them)."""
    cid, scope = ev.compile_id, ev.scope
    g = Graph(compile_id=cid)
    if not cid and not run.is_torch_trace:  # a log's AOTInductor work has no compile id: one graph of its own
        return g
    bw = _backward(run, ev)
    same = [e for e in run.events if e.compile_id == cid and e.scope == scope and e.files]
    outputs = [e for e in same if _has(e, OUTPUT_CODE) and _backward(run, e) == bw]
    role = file_role(_has(ev, OUTPUT_CODE + POST_GRAD + PRE_GRAD) or "")
    out: Event | None
    if ev in outputs:
        out = ev
    else:  # the output code that comes after this graph (else the last one before it)
        out = next((e for e in outputs if e.seq > ev.seq), outputs[-1] if outputs else None)
    anchor = out.seq if out is not None else ev.seq
    if out is not None:
        g.output = (out, _has(out, OUTPUT_CODE) or "")

    def before(cands: list[Event]) -> Event | None:
        prior = [e for e in cands if e.seq <= anchor]
        return prior[-1] if prior else (cands[0] if cands else None)

    posts = [e for e in same if _has(e, POST_GRAD) and _backward(run, e) == bw]
    after_posts = [e for e in posts if e.phase != "before"] or posts
    if role == "post_grad" and out is None:
        g.post_grad = (ev, _has(ev, POST_GRAD) or "")
    else:
        p = before(after_posts)
        g.post_grad = (p, _order(p, POST_GRAD)) if p is not None else None
    pres = [e for e in same if _has(e, PRE_GRAD)]   # the backward's pre-grad nodes are the forward's
    after_pres = [e for e in pres if e.phase != "before"] or pres
    p = before(after_pres)
    g.pre_grad = (p, _has(p, PRE_GRAD) or "") if p is not None else None
    g.backward = bw
    for names, into in ((MAPPINGS, g.mappings), (STACKS, g.stacks)):
        maps = [e for e in same if _has(e, names) and _backward(run, e) == bw]
        if out is not None:  # torch writes the mappings right after the code: those up to the next code
            nxt = next((e.seq for e in outputs if e.seq > out.seq), None)
            mine = [e for e in maps if e.seq > out.seq and (nxt is None or e.seq < nxt)]
            maps = mine or maps
        into.extend((e, _has(e, names) or "") for e in maps)
    return g


def _order(ev: Event, names: tuple[str, ...]) -> str:
    """The file of ``ev`` in ``names``'s order of preference (the after-passes graph first)."""
    return next((n for n in names if n in (ev.files or ())), "")


def read_mapping(run: "RunModel", g: Graph) -> Mapping:
    m = Mapping()
    for ev, name in g.mappings[:8]:
        text = read_text(run, ev, name, MAX_MAPPING + 1)
        obj = json_or_none(text)
        if obj is None and text is not None:
            m.unreadable.append(name)
        m.merge(obj)
    return m


def not_mapped(run: "RunModel", g: Graph, what: str, kernel: str | None = None,
               mapping: Mapping | None = None) -> str:
    """Why there is no step from ``what``: nothing recorded, or torch recorded an empty mapping (it maps
    forward graphs only: a backward graph's mapping holds no node); with the kernel's user line when
    torch's kernel stack traces name it."""
    if not g.mappings:
        return f"{what}: {NOT_RECORDED}"
    if mapping is not None and mapping.unreadable:
        return f"{what}: torch's node mapping ({mapping.unreadable[0]}) cannot be read: bigger than " \
            f"{MAX_MAPPING >> 20} MB, or not JSON"
    why = f"{what}: torch recorded no node mapping for this " + \
        ("backward graph (it maps forward graphs only)" if g.backward else "graph")
    if kernel is not None:
        for ev, name in g.stacks[:8]:
            traces = json_or_none(read_text(run, ev, name))
            if not isinstance(traces, dict):
                continue
            for key, stacks in traces.items():
                if kernel_name(str(key)) == kernel and isinstance(stacks, list) and stacks:
                    last = _FRAME.findall(str(stacks[0]))
                    if last:
                        f, ln, code = last[-1]
                        return why + f"; its code comes from {f.rsplit('/', 1)[-1]}:{ln}  {code.strip()}"
    return why


# -- one step of navigation -------------------------------------------------------------------------

class Jump(Struct):
    """Where a step lands: an event's file, the lines to mark and the line for the cursor (0-based).
    ``note`` is for the status line (holds run data: show it through ``literal``)."""

    event: Event
    file: str
    lines: list[int]
    line: int
    note: str


def _limit(names: list[str], n: int = 6) -> str:
    return ", ".join(names[:n]) + (f", … {len(names) - n} more" if len(names) > n else "")


def _land(g_file: tuple[Event, str] | None, lines: list[str] | None, nodes: list[str], what: str,
          note: str) -> Jump | str:
    if g_file is None or lines is None:
        return f"{note}; but the {what} graph was not recorded"
    at = node_lines(lines)
    found = sorted({at[n] for n in nodes if n in at})
    if not found:
        return f"{note}; none of them is in the {what} graph ({g_file[1]})"
    missing = [n for n in nodes if n not in at]
    if missing:
        note += f" ({_limit(missing, 3)} not in the file)"
    return Jump(g_file[0], g_file[1], found, found[0], note)


def follow(run: "RunModel", ev: Event, fname: str, line: int) -> Jump | str:
    """``P``: from the cursor line towards the source: a kernel of the output code -> the post-grad
    nodes it fused; a post-grad node -> the pre-grad nodes it came from; a pre-grad node -> the user
    line (said, not jumped to). A string says why no step was taken."""
    role = file_role(fname)
    if role is None:
        return "provenance links the output code, the post-grad and the pre-grad graphs: open one of them"
    g = graph_of(run, ev)
    lines = read_lines(run, ev, fname)
    if lines is None:
        return f"{fname} cannot be read"
    if role == "pre_grad":
        node = node_at(lines, line)
        src = source_of(lines, line) if node else None
        if node is None:
            return "the pre-grad graph is the start; put the cursor on a node line"
        return f"pre-grad node {node} is the start" + (f": from {src}" if src else "") + \
            " (K: on to the post-grad nodes and the kernel)"
    mapping = read_mapping(run, g)
    if role == "output":
        idx = index_output_code(lines)
        site = idx.at(line)
        if site is None:
            return "no kernel on this line: put the cursor on a kernel's definition or its call"
        if not mapping:
            return not_mapped(run, g, site.name, site.name, mapping)
        keys = mapping.keys_of(site)
        posts: list[str] = []
        for k in keys:
            posts.extend(p for p in mapping.kernel_to_post.get(k, []) if p not in posts)
        if not posts:
            return f"{site.name}: torch mapped no post-grad node to it"
        note = f"{site.name} fused {len(posts)} post-grad node(s): {_limit(posts)}"
        pg = g.post_grad
        return _land(pg, read_lines(run, *pg) if pg else None, posts, "post-grad", note)
    # post-grad
    node = node_at(lines, line)
    if node is None:
        return "no FX node on this line: put the cursor on a node's line"
    if not mapping:
        return not_mapped(run, g, node, mapping=mapping)
    pres = mapping.post_to_pre.get(node, [])
    if not pres:
        return f"post-grad node {node} has no pre-grad node in torch's mapping (an input, or made by a pass)"
    note = f"post-grad {node} came from pre-grad {_limit(pres)}"
    pg = g.pre_grad
    return _land(pg, read_lines(run, *pg) if pg else None, pres, "pre-grad", note)


def reverse(run: "RunModel", ev: Event, fname: str, line: int) -> Jump | str:
    """``K``: from the cursor line towards the code: a pre-grad node -> the post-grad nodes made from
    it; a post-grad node -> the kernel(s) that compute it, in the output code (cursor on the
    definition, calls marked)."""
    role = file_role(fname)
    if role is None:
        return "provenance links the output code, the post-grad and the pre-grad graphs: open one of them"
    if role == "output":
        return "this is the output code: P goes from a kernel to its post-grad nodes"
    g = graph_of(run, ev)
    lines = read_lines(run, ev, fname)
    if lines is None:
        return f"{fname} cannot be read"
    node = node_at(lines, line)
    if node is None:
        return "no FX node on this line: put the cursor on a node's line"
    mapping = read_mapping(run, g)
    if not mapping:
        return not_mapped(run, g, node, mapping=mapping)
    if role == "pre_grad":
        posts = mapping.pre_to_post.get(node, [])
        if not posts:
            return f"pre-grad node {node} became no post-grad node in torch's mapping"
        note = f"pre-grad {node} became post-grad {_limit(posts)}"
        pg = g.post_grad
        return _land(pg, read_lines(run, *pg) if pg else None, posts, "post-grad", note)
    keys = mapping.post_to_kernel.get(node, [])
    if not keys:
        return f"post-grad node {node} is computed by no kernel in torch's mapping (an input, a view, or folded)"
    if g.output is None:
        return f"post-grad {node} is in {_limit([kernel_name(k) for k in keys])}; but no output code was recorded"
    code = read_lines(run, *g.output)
    if code is None:
        return f"{g.output[1]} cannot be read"
    idx = index_output_code(code)
    marks: list[int] = []
    cursor: int | None = None
    for k in keys:
        d, calls = idx.lines_of(k)
        if cursor is None:
            cursor = d if d is not None else (calls[0] if calls else None)
        marks.extend(x for x in ([d] if d is not None else []) + calls)
    names = []
    for k in keys:
        if kernel_name(k) not in names:
            names.append(kernel_name(k))
    note = f"post-grad {node} is computed by {_limit(names)}"
    calls = [x for x in marks if x != cursor]
    if calls:
        note += f", called at line {', '.join(str(x + 1) for x in sorted(set(calls))[:4])}"
    if cursor is None:
        return f"{note}; but the output code names none of them"
    return Jump(g.output[0], g.output[1], sorted(set(marks)), cursor, note)


# -- the listing in compile info: kernel -> post-grad -> pre-grad -> user lines ---------------------

class KernelProvenance(Struct):
    kernel: str                 # as torch names it in the output code, with its line: "cpp_fused_add_relu_0:2"
    post_grad: list[str]        # the post-grad FX nodes the kernel fused
    pre_grad: list[str]         # the pre-grad nodes those came from
    user_lines: list[str]       # "file:line  code" of the user code behind it
    backward: bool = False

    def as_json(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "post_grad": self.post_grad, "pre_grad": self.pre_grad,
                "user_lines": self.user_lines, "backward": self.backward}




class StackFrame(Struct, frozen=True):
    filename: str
    line: int
    function: str
    code: str | None = None

    @property
    def where(self) -> str:
        return f"{self.filename}:{self.line}"



def parse_stack(text: str | None) -> list[StackFrame]:
    """``user_stack.txt`` (``  File "f", line N, in fn`` + the code line) -> frames, outermost first (the
    traceback grammar is torchtext's, the one for every formatted stack)."""
    return [StackFrame(f.filename, f.line, f.function or "", f.code) for f in parse_traceback_frames(text or "")]



class HasProvenance(Protocol):
    """What :func:`kernel_provenance` reads of a compile (``metrics.CompileInfo``): its provenance events."""

    provenance: list[Event]


def kernel_provenance(run: "RunModel", info: "HasProvenance") -> list[KernelProvenance]:
    """Per kernel of the compile's output code (each graph: forward, backward): what it fused and where
    that came from, from torch's provenance tracking (``python -m tracer --provenance``)."""
    out: list[KernelProvenance] = []
    by_key: dict[tuple[str, bool], KernelProvenance] = {}  # torch may map one graph twice (compile, cache)

    def kernel_of(name: str, bw: bool) -> KernelProvenance:
        k = by_key.get((name, bw))
        if k is None:
            k = by_key[(name, bw)] = KernelProvenance(name, [], [], [], bw)
            out.append(k)
        return k

    def add(into: list[str], items: list[str]) -> None:
        into.extend(x for x in items if x not in into)

    budget = 64
    for ev in info.provenance:
        if budget <= 0:
            break
        bw = _backward(run, ev)
        name = _has(ev, MAPPINGS)
        if name is not None:
            budget -= 1
            m = Mapping()
            m.merge(json_or_none(read_text(run, ev, name)))
            for kernel, posts in m.kernel_to_post.items():
                k = kernel_of(kernel, bw)
                add(k.post_grad, posts)
                for p in posts:
                    add(k.pre_grad, m.post_to_pre.get(p, []))
        name = _has(ev, STACKS)
        traces = None
        if name is not None:
            budget -= 1
            traces = json_or_none(read_text(run, ev, name))
        if isinstance(traces, dict):
            for kernel, stacks in traces.items():
                k = kernel_of(str(kernel), bw)
                for text in stacks if isinstance(stacks, list) else []:
                    frames = parse_stack(str(text))
                    if frames:
                        f = frames[-1]
                        line = f"{f.filename.rsplit('/', 1)[-1]}:{f.line}" + (f"  {f.code}" if f.code else "")
                        if line not in k.user_lines:
                            k.user_lines.append(line)
    return out
