"""The layers hold: the on-disk contract needs nothing, the model and the headless CLI never load
Textual (quick on a login node, usable in scripts), the tracer never loads the viewer, and no UI module
opens, stats or parses a file itself (files reach widgets only through the model)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import COLD, ROOT


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def _top(mods: set[str]) -> set[str]:
    return {m.split(".")[0] for m in mods}


def test_contract_package_is_dependency_free():
    before = _modules_after("")
    mods = _modules_after("import magi_format.names, magi_format.layout, magi_format.runname, "
                          "magi_format.safepath, magi_format.text, magi_format.torch_mapping")
    new = _top(mods - before) - {"magi_format"}
    stdlib = set(sys.stdlib_module_names)
    assert new <= stdlib, f"magi_format imports non-stdlib modules: {sorted(new - stdlib)}"


def test_model_never_loads_textual_or_torch():
    mods = _top(_modules_after("import magi_tui.model, magi_tui.model.outputs.report"))
    assert "textual" not in mods and "torch" not in mods and "tracer" not in mods


@pytest.mark.usefixtures("fixtures_dir")
def test_reading_a_log_never_loads_the_tracer():
    mods = _top(_modules_after("from magi_tui.model.sources.torchtrace import reader\nreader._mapping()"))
    assert "tracer" not in mods and "torch" not in mods and "textual" not in mods


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every module a file imports, deferred ones (inside functions) included."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            out.append((node.lineno, node.module or ""))
    return out


@pytest.mark.parametrize("package, forbidden", [("magi_format", ("tracer", "magi_tui", "torch", "textual")),
                                                ("magi_tui", ("tracer", "torch"))])
def test_no_deferred_import_crosses_a_layer(package, forbidden):
    offenders = [f"{p.relative_to(ROOT)}:{line} import {name}"
                 for p in sorted((ROOT / package).rglob("*.py")) for line, name in _imports(p)
                 if name.split(".")[0] in forbidden]
    assert not offenders, f"{package} must not import {forbidden}:\n" + "\n".join(offenders)


@pytest.mark.usefixtures("fixtures_dir")
def test_headless_cli_never_loads_textual():
    code = ("import contextlib, io\nfrom magi_tui.cli import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    main(['triage', {str(COLD)!r}, '--json'])\n    main(['runs', {str(COLD)!r}, '--json'])")
    mods = _top(_modules_after(code))
    assert "textual" not in mods and "torch" not in mods


def test_tracer_never_loads_the_viewer():
    mods = _top(_modules_after("import tracer, tracer.writer, tracer.session"))
    assert "magi_tui" not in mods and "textual" not in mods


_FILE_CALLS = {"open", "read_text", "read_bytes", "stat", "lstat", "scandir", "listdir", "iterdir",
               "is_file", "is_dir", "exists", "loads", "glob", "rglob", "walk", "readlink"}


def test_no_ui_module_touches_files():
    offenders = []
    for path in sorted((ROOT / "magi_tui" / "ui").rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else (f.id if isinstance(f, ast.Name) else "")
                if name in _FILE_CALLS:
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}()")
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                if any(n in ("shutil", "glob", "tomllib", "pathlib.Path.open") for n in names):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} import {', '.join(names)}")
    assert not offenders, "UI modules must read files only through the model:\n" + "\n".join(offenders)


def test_no_cross_test_imports():
    offenders = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tests.") \
                    and (node.module or "").split(".")[-1].startswith("test_"):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} from {node.module}")
    assert not offenders, "\n".join(offenders)


def test_model_and_contract_agree_on_names():
    from magi_format import names
    from magi_tui.model import events

    assert events.PHASES is names.PHASES
    assert Path(events.__file__).read_text().count("re.compile") == 0  # the grammar lives in magi_format


def test_model_record_types_are_structs():
    """A dataclass is made by generating and compiling its methods when its module is imported (~0.35 ms
    each, ~15 ms of every headless command's start-up for the forty on triage's path); a msgspec Struct
    is made in C. The model's record types are Structs (docs/ARCHITECTURE.md, rules that keep it fast)."""
    found = [f"{p.relative_to(ROOT)}:{line}" for p in sorted((ROOT / "magi_tui" / "model").rglob("*.py"))
             for line, mod in _imports(p) if mod == "dataclasses"]
    assert not found, f"dataclasses in the model (make them msgspec.Struct): {found}"


# -- the model's wings and no import circle -------------------------------------------------------------------

#: ``magi_tui/model/`` in wings, imports one way: sources -> core -> analysis -> outputs. The core's records
#: (events, the line layout) are what sources produce, so a source may import those; the run model (``run``,
#: ``triage``) assembles the sources. Nothing imports a wing above its own.
_CORE_RECORDS = {"magi_tui.model.events", "magi_tui.model.msgspec_import", "magi_tui.model.json_stream"}
_WING_MAY_IMPORT = {
    "sources": ("sources",),
    "core": ("sources", "core"),
    "analysis": ("sources", "core", "analysis"),
    "outputs": ("sources", "core", "analysis", "outputs"),
}


def _product_modules() -> dict[str, Path]:
    out = {}
    for package in ("magi_format", "magi_tui", "tracer"):
        for p in (ROOT / package).rglob("*.py"):
            parts = list(p.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = p
    return out


def _edges(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Every product module each module imports: at the top, deferred inside functions, or for types only
    (a type-only import is still a circle a reader has to hold in their head)."""
    edges: dict[str, set[str]] = {}
    for name, path in mods.items():
        got: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                subs = [f"{node.module}.{a.name}" for a in node.names]
                # ``from pkg import module`` imports the module (and runs pkg's __init__, which is not a
                # dependency of this module's own); ``from pkg import name`` imports pkg
                targets = [t for t in subs if t in mods] or [node.module]
            else:
                continue
            for imported in targets:
                while imported and imported not in mods:
                    imported = imported.rpartition(".")[0]
                if imported:
                    got.add(imported)
        edges[name] = got - {name}
    return edges


def _wing(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] != ["magi_tui", "model"] or len(parts) == 2:
        return None
    return parts[2] if parts[2] in ("sources", "analysis", "outputs") else "core"


def test_model_wings_import_one_way():
    edges = _edges(_product_modules())
    offenders = []
    for mod, deps in sorted(edges.items()):
        wing = _wing(mod)
        if wing is None:
            continue
        for dep in sorted(deps):
            if dep == "magi_tui.model":
                offenders.append(f"{mod} imports the package facade (import the module it needs)")
                continue
            dwing = _wing(dep)
            if dwing is None or dwing in _WING_MAY_IMPORT[wing] or dep in _CORE_RECORDS:
                continue
            offenders.append(f"{mod} ({wing}) imports {dep} ({dwing})")
    assert not offenders, "model/ wings import one way (sources -> core -> analysis -> outputs):\n" + \
        "\n".join(offenders)


def test_no_import_circle_in_the_product():
    edges = _edges(_product_modules())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    circles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w.startswith(v + ".") or v.startswith(w + "."):
                continue  # a package and its own modules
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(c) for c in circles)


def test_only_the_collector_module_touches_the_cycle_collector():
    """Holding the collector off, freezing a run out of its passes and ending without teardown are speed
    tricks with one owner (``magi_tui/model/collector.py``) whose names say what each buys."""
    offenders = [f"{p.relative_to(ROOT)}:{line}" for p in sorted((ROOT / "magi_tui").rglob("*.py"))
                 for line, mod in _imports(p) if mod == "gc" and p.name != "collector.py"]
    assert not offenders, f"use magi_tui.model.collector instead of gc: {offenders}"
