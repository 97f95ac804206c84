"""What a torch's source says it writes to TORCH_TRACE: the record kinds (``trace_structured("<kind>", …)``) and
artifact names, read with ``ast`` — a name written as a literal, kept in a constant (``_ARTIFACT_NAME =
"native_dsl_compile"``), passed in by the callers of a helper (``artifact_name="compiled_fn_wrapper"``), or
made by an f-string (``f"flex_gemm_{name}"``: the prefix ``flex_gemm_*``).

The torches read: the installed one, and any other found on disk: ``MAGI_TORCH_SOURCES`` (``os.pathsep``-separated
``…/torch`` folders or torch wheels, read inside the zip), and the torch wheels of the places this project keeps
them (``WHEEL_DIRS``: the pinned wheel, the torch matrix's, the local package mirror).
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import zipfile
from pathlib import Path

#: where torch wheels are kept on this project's machines (scripts/torch-matrix.sh's MATRIX_DIR/wheels …)
WHEEL_DIRS = ("/opt/wheels", "/opt/pypi-more/files", "/work/torch-matrix/wheels")
_WHEEL = re.compile(r"^torch-(\d+\.\d+\.\d+)[^-]*-.*\.whl$")

_ARTIFACT_KINDS = ("artifact", "graph_dump")


def torch_sources() -> list[Path]:
    """The installed torch's folder, then every other torch found (a folder or a wheel), one per version."""
    out: list[Path] = []
    spec = importlib.util.find_spec("torch")
    if spec and spec.submodule_search_locations:
        out.append(Path(next(iter(spec.submodule_search_locations))))
    extra = [Path(p) for p in os.environ.get("MAGI_TORCH_SOURCES", "").split(os.pathsep) if p]
    for d in WHEEL_DIRS:
        if Path(d).is_dir():
            extra += sorted(w for w in Path(d).iterdir() if _WHEEL.match(w.name))
    seen = {torch_version(p) for p in out}
    for p in extra:
        ok = _WHEEL.match(p.name) if p.is_file() else (p / "_logging" / "_internal.py").is_file()
        if ok and torch_version(p) not in seen:
            seen.add(torch_version(p))
            out.append(p)
    return out


def torch_version(src: Path) -> str:
    """``2.15.0`` (the local part, ``+cpu``, dropped)."""
    m = _WHEEL.match(src.name)
    if m:
        return m.group(1)
    v = src / "version.py"
    for line in v.read_text().splitlines() if v.is_file() else []:
        if line.startswith("__version__"):
            return line.split("=", 1)[1].strip().strip("'\"").split("+")[0]
    return src.as_posix()


def _texts(src: Path) -> dict[str, str]:
    if src.is_file():
        with zipfile.ZipFile(src) as z:
            return {n: z.read(n).decode("utf-8", "replace") for n in z.namelist()
                    if n.startswith("torch/") and n.endswith(".py")}
    return {str(p): p.read_text(errors="replace") for p in src.rglob("*.py")}


def _called(node: ast.Call) -> str | None:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _strings(node: ast.AST | None) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return _strings(node.body) + _strings(node.orelse)
    return []


class _Scan:
    def __init__(self) -> None:
        self.kinds: set[str] = set()
        self.artifacts: set[str] = set()
        self.prefixes: set[str] = set()
        self.params: set[tuple[str, str, int]] = set()  # (helper, parameter, position) naming an artifact

    def name(self, expr: ast.AST, consts: dict[str, set[str]], fn: ast.FunctionDef | None) -> None:
        if isinstance(expr, ast.JoinedStr):
            head = ""
            for v in expr.values:
                if not (isinstance(v, ast.Constant) and isinstance(v.value, str)):
                    break
                head += v.value
            if head:
                self.prefixes.add(head)
        elif isinstance(expr, ast.Name) and fn is not None and expr.id in _params(fn):
            self.params.add((fn.name, expr.id, _params(fn).index(expr.id)))  # a parameter before a constant
        elif isinstance(expr, ast.Name) and expr.id in consts:
            self.artifacts |= consts[expr.id]
        else:
            self.artifacts.update(_strings(expr))


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    return [a.arg for a in fn.args.posonlyargs + fn.args.args] + [a.arg for a in fn.args.kwonlyargs]


def _metadata_name(call: ast.Call) -> ast.AST | None:
    """The ``"name"`` of a ``trace_structured`` call's metadata (``metadata_fn=lambda: {...}``)."""
    fns = [kw.value for kw in call.keywords if kw.arg == "metadata_fn"] + call.args[1:2]  # (older torch: by position)
    for fn in fns:
        if isinstance(fn, ast.Lambda) and isinstance(fn.body, ast.Dict):
            for k, v in zip(fn.body.keys, fn.body.values):
                if isinstance(k, ast.Constant) and k.value == "name":
                    return v
    return None


def scan(src: Path) -> _Scan:
    s = _Scan()
    texts = _texts(src)
    for p, text in texts.items():
        if "trace_structured" not in text:
            continue
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        consts: dict[str, set[str]] = {}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and _strings(node.value):
                for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if isinstance(t, ast.Name):
                        consts.setdefault(t.id, set()).update(_strings(node.value))
        fns = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        owner = {id(c): f for f in fns for c in ast.walk(f)}  # the innermost function wins (walked last)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            called, fn = _called(node), owner.get(id(node))
            if called == "trace_structured" and node.args:
                kinds = _strings(node.args[0])
                s.kinds.update(kinds)
                if set(kinds) & set(_ARTIFACT_KINDS):
                    expr = _metadata_name(node)
                    if expr is not None:
                        s.name(expr, consts, fn)
            elif called == "trace_structured_artifact":
                expr = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "name"), None)
                if expr is not None:
                    s.name(expr, consts, fn)
    # a helper given the name by its callers: every literal they pass (by keyword or position)
    for helper, param, pos in sorted(s.params):
        for text in texts.values():
            if helper + "(" not in text:
                continue
            try:
                tree = ast.parse(text)
            except SyntaxError:
                continue
            consts = {}
            for node in ast.walk(tree):
                if isinstance(node, ast.Assign) and _strings(node.value):
                    for t in node.targets:
                        if isinstance(t, ast.Name):
                            consts.setdefault(t.id, set()).update(_strings(node.value))
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and _called(node) == helper:
                    arg = next((k.value for k in node.keywords if k.arg == param), None)
                    if arg is None and pos < len(node.args):
                        arg = node.args[pos]
                    if isinstance(arg, ast.Name) and arg.id in consts:
                        s.artifacts |= consts[arg.id]
                    elif arg is not None:
                        s.artifacts.update(_strings(arg))
    return s
