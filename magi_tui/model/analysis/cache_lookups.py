"""Two cache lookups side by side: a missed lookup and the one it was compared with, key component by
component, the differing ones first (issue 34: Enter on a cache miss in the app opens them).

:mod:`.cache_explain` knows which components of the two keys differ (by torch's hash of each). This lays
each key out as a document of one line per component, ``<name in the user's terms>: <value>``
(:func:`.cache_terms.component_label`), and pairs the two into a :class:`~.diff.Diff` that the diff view
shows: the differing components first, each its own hunk (the graph's code line by line where both keys
recorded it), then the components that are the same on both sides, folded into one row unless asked for.

The left side (−) is the lookup compared with (the baseline's, or an earlier one of this run), the right
(+) this run's miss. A component whose recorded text is the same on both sides though torch's hash differs
(torch cut it at 1,024 characters) says so on its row; ``TORCH_COMPILE_CACHE_KEY_TAG``'s value is never
shown.
"""

from __future__ import annotations

from msgspec import Struct

from magi_tui.model.analysis.cache_explain import GRAPH_COMPONENT, MissExplained
from magi_tui.model.analysis.cache_terms import component_label, shown_value
from magi_tui.model.analysis.diff import Diff, Row, compute_diff

#: what a side shows for a component its key does not have
ABSENT = "(not in this key)"
#: lines of unchanged graph code kept around each change of the graph
GRAPH_CONTEXT = 2


class KeyRow(Struct):
    """One component of the two keys: its name in the user's terms and both values (None: not in that
    key); ``old`` is the compared-with lookup's, ``new`` the miss's."""

    component: str
    label: str
    old: str | None
    new: str | None
    differs: bool
    #: torch's hashes differ but the recorded texts read the same (cut at 1,024 characters, or printed alike)
    same_text: bool = False


def key_rows(e: MissExplained, names: list[str] | None = None) -> list[KeyRow]:
    """Every component of the two keys: the differing ones first (in the key's order), then the same ones.
    [] when the miss had nothing to compare with."""
    if e.nearest is None:
        return []
    n_inputs = sum(1 for c in e.miss.components if c.startswith("example_inputs["))
    if names and n_inputs and n_inputs != len(names):   # counted otherwise (an FX key's inputs): not named
        names = None
    a, b = e.nearest.components, e.miss.components
    out = []
    differing = set()
    for d in e.differs:
        comp = d["component"]
        differing.add(comp)
        old, new = d.get("nearest"), d.get("value")
        out.append(KeyRow(comp, component_label(comp, names), shown_value(comp, old), shown_value(comp, new), True,
                          old is not None and old == new and comp != "cache_key_tag"))
    for comp, (_hash, value) in b.items():
        if comp not in differing:
            v = shown_value(comp, value)
            out.append(KeyRow(comp, component_label(comp, names), shown_value(comp, a[comp][1]) if comp in a else v,
                              v, False))
    return out


def _line(r: KeyRow, value: str | None) -> str:
    note = ""
    if r.same_text:
        cut = value is not None and value.rstrip().endswith(("...", "…"))
        note = " [the same text, torch's hash differs" + (": cut at 1,024 characters]" if cut else "]")
    return f"{r.label}{note}: {ABSENT if value is None else value}"


def lookups_diff(e: MissExplained, names: list[str] | None = None, *, fold_same: bool = True) -> Diff:
    """The two keys as a diff the diff view shows (left: the compared-with lookup, right: the miss). The
    same components are one fold row when ``fold_same``, else listed after the differing ones."""
    rows = key_rows(e, names)
    d = Diff()
    same = [r for r in rows if not r.differs]
    for r in rows:
        if not r.differs:
            continue
        d.hunks.append(len(d.rows))
        d.unified_hunks.append(len(d.unified))
        old_g = e.nearest.graph if e.nearest is not None else None
        if r.component == GRAPH_COMPONENT and old_g and e.miss.graph:
            _graph(d, r.label, old_g, e.miss.graph)
            continue
        left, right = _line(r, r.old), _line(r, r.new)
        if r.old is None or r.new is None:
            kind = "insert" if r.old is None else "delete"
            row = Row(kind, None if r.old is None else len(d.a) + 1, "" if r.old is None else left,
                      None if r.new is None else len(d.b) + 1, "" if r.new is None else right)
            d.rows.append(row)
            d.unified.append(row)
        else:
            row = Row("replace", len(d.a) + 1, left, len(d.b) + 1, right)
            d.rows.append(row)
            d.unified.append(Row("delete", len(d.a) + 1, left, None, "", pair=row))
            d.unified.append(Row("insert", None, "", len(d.b) + 1, right, pair=row))
        if r.old is not None:
            d.a.append(left)
            d.removed += 1
        if r.new is not None:
            d.b.append(right)
            d.added += 1
    if same and fold_same:
        fold = Row("fold", None, "", None, "", folded=len(same))
        d.rows.append(fold)
        d.unified.append(fold)
    for r in same:
        text = _line(r, r.new)
        if not fold_same:
            row = Row("equal", len(d.a) + 1, text, len(d.b) + 1, text)
            d.rows.append(row)
            d.unified.append(row)
        d.a.append(text)
        d.b.append(text)
    return d


def _graph(d: Diff, label: str, old: str, new: str) -> None:
    """The graph component: its label, then both graphs' code diffed line by line (unchanged stretches
    folded), numbered on from the lines before."""
    head = f"{label}: the code torch hashed"
    la, lb = len(d.a), len(d.b)
    row = Row("equal", la + 1, head, lb + 1, head)
    d.rows.append(row)
    d.unified.append(row)
    d.a.append(head)
    d.b.append(head)
    a = ["    " + ln for ln in old.splitlines() if ln.strip()]
    b = ["    " + ln for ln in new.splitlines() if ln.strip()]
    sub = compute_diff(a, b, context=GRAPH_CONTEXT)
    shifted: dict[int, Row] = {}

    def shift(r: Row) -> Row:
        got = shifted.get(id(r))
        if got is None:
            got = shifted[id(r)] = Row(r.kind, None if r.left_no is None else r.left_no + la + 1, r.left,
                                       None if r.right_no is None else r.right_no + lb + 1, r.right, r.folded)
        return got

    d.rows += [shift(r) for r in sub.rows]
    for r in sub.unified:
        u = shift(r) if r.pair is None else Row(r.kind, None if r.left_no is None else r.left_no + la + 1, r.left,
                                                None if r.right_no is None else r.right_no + lb + 1, r.right,
                                                pair=shift(r.pair))
        d.unified.append(u)
    d.a += a
    d.b += b
    d.removed += sub.removed
    d.added += sub.added
