"""Tests that need no torch run without it (the viewer needs no torch; CI without the tracer extra still
checks it). So no conftest skips a whole folder for want of torch: the skip belongs in the fixture that
traces a program, or in the one module whose tests all need torch. And no test module imports torch
before it skips: in an interpreter without torch that is a collection error, not a skip."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.paths import ROOT

TESTS = ROOT / "tests"
_SKIPS = {"importorskip", "skip"}


def _module_level(tree: ast.Module):
    """The statements that run at import (function and class bodies aside)."""
    for stmt in tree.body:
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield stmt


def _skip_call(stmt: ast.stmt) -> ast.Call | None:
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _SKIPS \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "pytest":
            return node
    return None


def _imports_torch(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Import):
        return any(a.name == "torch" or a.name.startswith("torch.") for a in stmt.names)
    if isinstance(stmt, ast.ImportFrom):
        return (stmt.module or "").split(".")[0] == "torch" and not stmt.level
    return False


def _rel(p: Path) -> str:
    return str(p.relative_to(ROOT))


def test_no_conftest_skips_its_whole_folder():
    bad = []
    for conftest in sorted(TESTS.rglob("conftest.py")):
        for stmt in _module_level(ast.parse(conftest.read_text())):
            if _skip_call(stmt) is not None or _imports_torch(stmt):
                bad.append(f"{_rel(conftest)}:{stmt.lineno}")
    assert not bad, f"a conftest that skips (or imports torch) at import skips every test under it: {bad}"


def test_no_test_module_imports_torch_before_it_skips():
    bad = []
    for module in sorted(TESTS.rglob("test_*.py")):
        for stmt in _module_level(ast.parse(module.read_text())):
            if _skip_call(stmt) is not None:
                break
            if _imports_torch(stmt):
                bad.append(f"{_rel(module)}:{stmt.lineno}")
                break
    assert not bad, f"`import torch` before `pytest.importorskip('torch')`: {bad}"


def test_the_checks_see_a_folder_skip_and_an_early_import(tmp_path):
    """The two rules on the shapes they refuse (and the shapes that are fine)."""
    def stmts(src: str) -> list[ast.stmt]:
        return list(_module_level(ast.parse(src)))

    folder_skip, = stmts('import pytest\npytest.importorskip("torch")\n')[1:]
    assert _skip_call(folder_skip) is not None
    assigned, = stmts('torch = pytest.importorskip("torch")\n')
    assert _skip_call(assigned) is not None
    in_fixture = stmts('import pytest\n@pytest.fixture\ndef f():\n    pytest.importorskip("torch")\n')
    assert all(_skip_call(s) is None for s in in_fixture)
    assert _imports_torch(stmts("import torch._dynamo\n")[0]) and _imports_torch(stmts("from torch import nn\n")[0])
    assert not _imports_torch(stmts("import torchvision\n")[0]) and not _imports_torch(stmts("from . import torch\n")[0])
