"""A view redoes its analysis when the run's findings change (``RunModel.findings_signature``): every kind of
finding the triage holds changes the signature, a new one included, with no second list of fields to keep
(the panel's hand-made list missed cascades, cache stores, export issues and the compiled-nothing counts)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from magi_tui.model.triage import Triage


@pytest.mark.parametrize("name", Triage.__struct_fields__)
def test_every_field_of_the_triage_changes_its_signature(name):
    t = Triage()
    before = t.signature()
    v = getattr(t, name)
    if type(v) is list:
        v.append(SimpleNamespace(recovered=False))
    else:
        setattr(t, name, v + 1)
    assert t.signature() != before, f"Triage.{name} changed and the signature did not"


@pytest.mark.parametrize("name", ["failures", "restarts"])
def test_a_recovery_changes_the_signature(name):
    t = Triage()
    item = SimpleNamespace(recovered=False)
    getattr(t, name).append(item)
    before = t.signature()
    item.recovered = True
    assert t.signature() != before
