"""The model imports msgspec without ``typing_extensions`` (model/msgspec_import.py, issue #21: ~7 ms of
every headless start). That is only sound because, on Python 3.11+, what msgspec takes from
``typing_extensions`` and what it takes from ``typing`` in its place are the same; these tests hold that,
and that the real ``typing_extensions`` is there for whatever imports it afterwards (Textual)."""

from __future__ import annotations

import json
import sys
import typing
from typing import Annotated, Generic, Optional, TypedDict, TypeVar

import msgspec
import pytest

from tests.support import slow
from tests.support.paths import ROOT

typing_extensions = pytest.importorskip("typing_extensions")
pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="before 3.11 msgspec is imported as it is")

T = TypeVar("T")


class _Box(Generic[T]):
    item: T


class _Td(TypedDict, total=False):
    a: typing.Required[int]
    b: typing.NotRequired[Annotated[str, msgspec.Meta(max_length=3)]]
    c: Optional["_Td"]


class _S(msgspec.Struct):
    x: Annotated[int, msgspec.Meta(ge=0)]
    y: "list[_S] | None" = None
    z: _Box[int] | None = None


@pytest.mark.parametrize("obj", [_Box, _Td, _S])
def test_typing_gives_msgspec_what_typing_extensions_would(obj):
    assert typing.get_type_hints(obj, include_extras=True) == \
        typing_extensions.get_type_hints(obj, include_extras=True)
    assert typing_extensions.Required is typing.Required
    assert typing_extensions.NotRequired is typing.NotRequired


_PROBE = """
import sys, json, typing
import magi_tui.model
import msgspec._utils as u
lean = "typing_extensions" not in sys.modules
same = (u._get_type_hints is typing.get_type_hints, u.Required is typing.Required, u.NotRequired is typing.NotRequired)
import msgspec
class Td(typing.TypedDict, total=False):
    a: typing.Required[int]
    b: typing.NotRequired[typing.Annotated[str, msgspec.Meta(max_length=3)]]
ok = msgspec.json.decode(b'{"a": 1, "b": "ab"}', type=Td)
try:
    msgspec.json.decode(b'{"b": "ab"}', type=Td)
    missing = None
except msgspec.ValidationError as exc:
    missing = str(exc)
import typing_extensions
print(json.dumps([lean, same, ok, missing, typing_extensions.__name__, hasattr(typing_extensions, "TypeAliasType")]))
"""


def test_the_model_loads_msgspec_without_typing_extensions_and_leaves_it_importable():
    out = slow.run([sys.executable, "-c", _PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lean, same, ok, missing, name, real = json.loads(out.stdout.strip().splitlines()[-1])
    assert lean, "importing the model loaded typing_extensions (msgspec's import costs ~7 ms more)"
    assert same == [True, True, True]
    assert ok == {"a": 1, "b": "ab"} and missing == "Object missing required field `a`"
    assert name == "typing_extensions" and real


def test_msgspec_reads_the_same_with_either():
    # in this process typing_extensions may have come first (pytest plugins): msgspec as imported here and
    # as the model imports it decode a Struct with extras and a TypedDict alike
    dec = msgspec.json.Decoder(list[_S])
    assert dec.decode(b'[{"x": 1, "y": [{"x": 2}]}]') == [_S(1, [_S(2)])]
    with pytest.raises(msgspec.ValidationError, match=">= 0"):
        dec.decode(b'[{"x": -1}]')
    assert msgspec.json.decode(b'{"a": 1, "b": "ab"}', type=_Td) == {"a": 1, "b": "ab"}
    with pytest.raises(msgspec.ValidationError, match="missing required field `a`"):
        msgspec.json.decode(b'{"b": "ab"}', type=_Td)
