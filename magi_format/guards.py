"""Reading Dynamo's guard tree text, as our tracer writes it into ``guards.txt`` (``dynamo_cpp_guards_str``,
``str(cache_entry.guard_manager)``) and as upstream magi_depyf does (``LEAF: …`` lines).

On torch 2.13 the tree is ``+- RootGuardManager`` / ``| +- GuardManager: source=…`` (accessors, at any
depth, CamelCase) holding leaf guards ``+- TENSOR_MATCH: …``, ``+- ID_MATCH: …`` (UPPER_CASE names). A
leaf guard is what is checked; managers only walk to the value. A relational guard (e.g.
``NO_TENSOR_ALIASING``) is printed in full once and then as a bare name under each other manager it
watches: that is one guard, counted once. Upstream's format prints each leaf as ``LEAF: <guard>`` under
``[GuardManager] (N leaf guards, …)`` headers. Shared by the tracer and the viewer; stdlib only.
"""

from __future__ import annotations

from magi_format.lazyre import lazy_re

_NODE = lazy_re(r"^[\s|]*\+- ([A-Za-z_][A-Za-z0-9_]*):")
_LEAF_NAME = lazy_re(r"^[A-Z][A-Z0-9_]*$")


def leaf_guards(text: str) -> list[str]:
    """The leaf guard lines of a guard tree (``TENSOR_MATCH: check_tensor(L['x'], …)``, or upstream's
    ``LEAF: check_tensor(…)``), in order."""
    out = []
    for line in text.splitlines():
        m = _NODE.match(line)
        if m and _LEAF_NAME.match(m.group(1)):
            out.append(line[m.start(1):].strip())
        elif line.lstrip().startswith("LEAF: "):
            out.append(line.strip())
    return out


def count_leaf_guards(text: str) -> int:
    return len(leaf_guards(text))


def guard_kinds(text: str) -> dict[str, int]:
    """``{"TENSOR_MATCH": 2, "ID_MATCH": 5, …}``."""
    kinds: dict[str, int] = {}
    for g in leaf_guards(text):
        k = g.split(":", 1)[0]
        kinds[k] = kinds.get(k, 0) + 1
    return kinds
