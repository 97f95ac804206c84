"""Every → line of a recompile comes from one table (``magi_tui/model/analysis/advice.py``), and every entry of it is
proven on the pinned torch (issue 31.6): ``cases.py`` runs each entry's programs before and after following
the advice, in one process, and each entry's proofs must leave fewer recompiles (its ``stays`` the same
count: "expected, not a problem", or a setting the text says does not help). A new kind of advice without a
proving case fails here; so does a traced run whose → line is not the table's text."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from magi_tui.model.analysis.advice import PROVEN_ON, TABLE
from magi_tui.model.analysis.guards import KINDS, advice_for, advise
from tests.advice.cases import CASES
from tests.support import ahead, slow

HERE = Path(__file__).parent
ROOT = HERE.parents[1]

#: claims in the texts beyond "fewer": the int global and the nn.Module int recompile on every one of
#: their 3 new values; these settings leave exactly one recompile ("dynamic after one recompile")
EVERY_VALUE = ("global_int_dynamic_sources", "global_int_module_dynamic_sources", "global_int_as_argument",
               "global_int_tensor", "module_int_allow_unspec", "module_int_dynamic_sources",
               "module_int_global_dynamic_sources", "module_int_tensor")
ONCE_AFTER = ("size_static_drop_dynamic_false", "int_static_drop_dynamic_false", "global_int_as_argument",
              "module_int_allow_unspec", "float_specialized_specialize_float_false", "float_static_drop_dynamic_false")


def _env() -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for k in ("TORCH_TRACE", "TORCH_COMPILE_DYNAMIC_SOURCES", "TORCH_LOGS"):
        env.pop(k, None)
    return env


# -- the table, torch-free -------------------------------------------------------------------------------
def test_every_entry_has_a_proof_and_every_proof_a_case():
    used: set[str] = set()
    for a in TABLE.values():
        assert a.proofs or a.stays, f"advice {a.id!r} has no proving case"
        if a.expected:
            assert a.stays and not a.proofs, f"{a.id}: 'expected, not a problem' is proven by a count that stays"
        for c in a.proofs + a.stays:
            assert c in CASES, f"advice {a.id!r} names the case {c!r}, which tests/advice/cases.py lacks"
        used |= set(a.proofs + a.stays)
        assert a.kind in KINDS and set(PROVEN_ON) <= set(a.torch)
    assert used == set(CASES), f"cases no advice uses: {sorted(set(CASES) - used)}"


def test_every_reason_kind_but_other_has_advice_from_the_table():
    for kind in KINDS:
        aid = advice_for(kind, "x", "1")
        assert (aid is None) == (kind == "other"), kind
        assert aid is None or TABLE[aid].kind == kind, (kind, aid)


# -- the proofs, on real torch ------------------------------------------------------------------------
@ahead.early("advice_proofs")
def _advice_proofs(folder: Path) -> dict:
    """Every case of cases.py, in one process (started early: tests/support/ahead.py)."""
    proc = slow.run([sys.executable, str(HERE / "cases.py")], cwd=folder, env=_env(), capture_output=True,
                    text=True, timeout=400)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def proofs(tmp_path_factory):
    pytest.importorskip("torch")
    return ahead.early_result("advice_proofs", tmp_path_factory)


@pytest.mark.torch
@pytest.mark.slow
@pytest.mark.parametrize("advice_id", list(TABLE))
def test_the_advice_is_proven_on_the_pinned_torch(advice_id, proofs):
    a = TABLE[advice_id]
    assert proofs["torch"].split("+")[0] in a.torch
    base = advice_id.removesuffix("_automatic")
    for c in a.proofs:
        got = proofs[c]
        assert got["before"] > got["after"], (c, got)
        # the "before" program is the one this advice is for: magi-tui gives its recompile this advice
        assert base in got["advice"], (c, got)
        if advice_id.endswith("_automatic"):
            assert got["before"] == 1, (c, got)  # torch made it dynamic after one recompile
    for c in a.stays:
        got = proofs[c]
        assert got["before"] == got["after"] >= 1, (c, got)
        assert base in got["advice"], (c, got)


@pytest.mark.torch
@pytest.mark.slow
def test_the_texts_claims_on_how_often_torch_recompiles(proofs):
    for c in EVERY_VALUE:
        assert proofs[c]["before"] == 3, (c, proofs[c])  # every one of the 3 new values
    for c in ONCE_AFTER:
        assert proofs[c]["after"] == 1, (c, proofs[c])   # once, then dynamic
    # TORCH_COMPILE_DYNAMIC_SOURCES leaves a float's recompiles as they were (issue 31.6: it was advised)
    assert proofs["float_specialized_dynamic_sources"]["before"] == 3 == \
        proofs["float_specialized_dynamic_sources"]["after"]


@pytest.mark.torch
@pytest.mark.slow
def test_recompiles_are_counted_right(proofs):
    """The count is Dynamo's compile records with a recompile reason: 3 new sizes of a static compile are 3."""
    assert proofs["size_static_mark_dynamic"]["before"] == 3
    assert proofs["size_static_mark_dynamic"]["reason"] == "0/0: tensor 'x' size mismatch at index 0. expected 4, actual 8"
    assert proofs["_count_check"] == {"recompiles": 3, "graphs": 3}


# -- a real traced run's → lines are the table's -------------------------------------------------------
@ahead.early("advice_traced")
def _advice_traced(folder: Path) -> dict:
    """programs/recompiles.py under ``python -m tracer``, read by ``magi-tui triage --json``."""
    env = _env()
    proc = slow.run([sys.executable, "-m", "tracer", "-o", str(folder), str(HERE / "programs" / "recompiles.py")],
                    cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = next(ln for ln in proc.stderr.splitlines() if ln.startswith("MAGI_RUN_DIR=")).split("=", 1)[1]
    tri = slow.run([sys.executable, "-m", "magi_tui", "triage", "--json", run], env=env, capture_output=True,
                   text=True, timeout=120)
    assert "Traceback" not in tri.stderr, tri.stderr[-3000:]
    return json.loads(tri.stdout)


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    pytest.importorskip("torch")
    return ahead.early_result("advice_traced", tmp_path_factory)


@pytest.mark.torch
@pytest.mark.slow
def test_a_traced_runs_advice_is_the_tables_text(traced):
    by_frame: dict[str, list[dict]] = {}
    for r in traced["recompiles"]:
        by_frame.setdefault(r["frame"].split(" ")[0], []).append(r)
    got = {f: [(r["reasons_parsed"][0]["advice"], r["automatic_dynamic"]) for r in rs] for f, rs in by_frame.items()}
    assert got == {"scale": [("float_automatic", True)],
                   "times_global": [("global_int", False)] * 2,
                   "forward": [("module_int", False)] * 2,
                   "plus_maybe": [("type", False)]}
    for r in traced["recompiles"]:
        p = r["reasons_parsed"][0]
        sources = r["dynamic_sources"] if p["advice"].endswith("_automatic") else None
        # the → line is the table's text (the actual may be filled in afterwards, from the guard diff)
        want = advise(p["advice"], p["subject"], p["expected"], p["actual"] if p["kind"] == "type" else None,
                      p["index"], hint=p["hint"], sources=sources)
        assert r["suggestion"] == want
    (f,) = by_frame["scale"]
    assert "TORCH_COMPILE_DYNAMIC_SOURCES does not apply to floats" in f["suggestion"]
    assert "torch.tensor(f)" in f["suggestion"] and f["dynamic_sources"] == []
    g = by_frame["times_global"][0]
    assert g["reasons_parsed"][0]["subject"] == "G['K']" and "TORCH_COMPILE_DYNAMIC_SOURCES=\"G['K']\"" in g["suggestion"]
    assert "every new value recompiles" in g["suggestion"]
    m = by_frame["forward"][0]
    hint = m["reasons_parsed"][0]["hint"]
    assert "allow_unspec_int_on_nn_module = True" in hint and f"Torch's HINT: {hint}" in m["suggestion"]
    (t,) = by_frame["plus_maybe"]
    assert (t["kind"], t["expected"], t["actual"]) == ("type", "Tensor", "NoneType")
