"""The graph-break registry (issue 33.7): the installed torch's wording, with the ids only a newer torch knows
from the registry shipped in ``magi_format`` (torch 2.15.0's: 2.14 grew it from 517 to 561 ids, 2.15 to 592),
and an id no registry knows shown with the log's own text and hints, never dropped."""

from __future__ import annotations

import json

from magi_format import torchtext
from magi_format.torch_mapping import TraceMapper
from magi_format.torchtext import SHIPPED_GB_REGISTRY, SHIPPED_GB_REGISTRY_TORCH, merged_gb_registry

START = {"dynamo_start": {"stack": []}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0}
GB = {"artifact": {"name": "dynamo_graph_break_reason", "encoding": "string"}, "frame_id": 0,
      "frame_compile_id": 0, "attempt": 0}
URL = "\n\n For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb{n}.html"


def _break(reason: str, registry) -> dict:
    m = TraceMapper(gb_registry=registry)
    m.handle(dict(START), None)
    (ev,) = [e for e in m.handle(dict(GB), f"Graph Break Reason: {reason}\nUser code traceback:\n") if e[0].endswith("_graph_break")]
    return ev[1]


def test_the_shipped_registry_is_torch_2_15s(tmp_path):
    shipped = json.loads(open(SHIPPED_GB_REGISTRY, encoding="utf-8").read())
    assert SHIPPED_GB_REGISTRY_TORCH == "2.15.0" and len(shipped) == 592
    # an older torch's own id (2.13's GB0060, gone in 2.14) is kept beside it
    older = tmp_path / "old.json"
    older.write_text(json.dumps({"GB0060": [{"Gb_type": "Failed to trace unittest method"}]}))
    merged = merged_gb_registry(older)
    assert len(merged) == 593 and merged["GB0060"][0]["Gb_type"] == "Failed to trace unittest method"


def test_an_id_only_a_newer_torch_knows_is_named(tmp_path):
    """A log of torch 2.15 read where torch 2.13 is installed: the id's type and explanation come from the
    shipped registry (the log's message held only the id)."""
    installed = tmp_path / "installed.json"
    installed.write_text(json.dumps({"GB0001": [{"Gb_type": "x"}]}))
    a = _break("Some break" + URL.format(n="9958"), installed)
    assert a["gb_id"] == "GB9958"
    assert a["gb_type"] == "Missing attribute on torch.autograd.Function subclass"
    assert a["hints"] == ["Define the missing autograd.Function attribute before compiling."]


def test_an_unknown_id_keeps_the_logs_own_text():
    reason = ("A break of a torch not yet released\n  Explanation: Dynamo cannot trace this yet.\n"
              "  Hint: Move the call outside the compiled region.\n  Hint: Or wait.\n\n"
              "  Developer debug context: ctx" + URL.format(n="9999"))
    a = _break(reason, None)
    assert a["gb_id"] == "GB9999"
    assert a["gb_type"] == "A break of a torch not yet released"
    assert a["explanation"] == "Dynamo cannot trace this yet."
    assert a["hints"] == ["Move the call outside the compiled region.", "Or wait."]
    assert a["reason"].startswith("A break of a torch not yet released")


def test_the_installed_torchs_wording_wins(tmp_path):
    installed = tmp_path / "installed.json"
    installed.write_text(json.dumps({"GB9958": [{"Gb_type": "as the installed torch says it",
                                                 "Explanation": "e", "Hints": []}]}))
    assert _break("x" + URL.format(n="9958"), installed)["gb_type"] == "as the installed torch says it"
    assert torchtext.find_gb_registry() is None or merged_gb_registry(torchtext.find_gb_registry())
