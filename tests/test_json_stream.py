"""``triage --json`` written a piece at a time (issue #21) is, byte for byte, the document encoded whole.

Every recorded log and run (tests/, the shared fixtures, a hostile run), a synthetic log of many frames,
and values made to cross every branch of the writer: big arrays and objects in batches, non-ASCII and
escaped pieces between ASCII ones, floats msgspec spells otherwise, what msgspec refuses. Each also with
batches of a few items, so the fixtures' small lists are cut at every place too.
"""

from __future__ import annotations

import io
import json
import random
import sys
from pathlib import Path

import pytest

from magi_format.text import json_literal
from magi_tui.model import RunModel, find_runs, json_stream
from magi_tui.model.json_stream import Lazy, encode, materialize, write_json
from magi_tui.model.outputs.report import triage_document, triage_json
from tests.hostile.hostile_run import build_root
from tests.support import slow
from tests.support.paths import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
from synth import write_trace_log  # noqa: E402


def _whole(obj) -> bytes:
    """Today's encoder on the whole value, as the CLI printed it (text + newline, UTF-8)."""
    out = encode(materialize(obj))
    return (out if isinstance(out, bytes) else out.encode("utf-8", "surrogateescape")) + b"\n"


def _streamed(obj) -> bytes:
    pieces: list[bytes] = []
    write_json(obj, pieces.append, lambda s: pieces.append(s.encode("utf-8", "surrogateescape")))
    return b"".join(pieces)


def _inputs(tmp_path: Path) -> list[Path]:
    paths = [r.path for r in find_runs(ROOT / "tests")]  # the recorded fixtures (tests/fixtures/) among them
    root, _outside = build_root(tmp_path / "hostile")
    paths += [r.path for r in find_runs(root)]
    paths.append(write_trace_log(tmp_path / "big" / "dedicated_log_torch_trace_rank_0_big.log", 3000))
    return paths


@pytest.mark.parametrize("chunk", [json_stream.CHUNK, 3])
def test_streamed_triage_is_the_whole_document_encoded(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(json_stream, "CHUNK", chunk)
    paths = _inputs(tmp_path)
    assert len(paths) > 10 and any(p.suffix == ".log" for p in paths)
    for path in paths:
        run = RunModel(path).load()
        want = _whole(triage_json(run))
        assert _streamed(triage_document(run)) == want, path
        assert want == _stdlib(triage_json(run)), path  # the whole encoder's own contract
    big = RunModel(paths[-1]).load()
    assert len(triage_json(big)["frames"]) == 3000
    # several runs: one array of documents
    runs = [RunModel(p).load() for p in paths[:3]]
    assert _streamed([triage_document(r) for r in runs]) == _whole([triage_json(r) for r in runs])


def _stdlib(obj) -> bytes:
    return json_literal(json.dumps(obj, indent=2, ensure_ascii=False)).encode("utf-8", "surrogateescape") + b"\n"


@pytest.mark.parametrize("chunk", [1, 2, 5, 1000])
def test_every_piece_is_spelled_as_the_stdlib_spells_the_whole(monkeypatch, chunk):
    monkeypatch.setattr(json_stream, "CHUNK", chunk)
    rng = random.Random(3)
    floats = [rng.random() * 10 ** rng.randint(-30, 30) for _ in range(300)] + [5.1e-05, 1e-07, -0.0, 1e16]
    strings = ["é", "\x1b[31m", "\u202eevil", "plain", "q:0.00001,", "\x7f", "\u2028", "日本"]
    items = [{"f": f, "s": strings[i % len(strings)], "n": [], "d": {}, "l": [f, [f]]} for i, f in enumerate(floats)]
    obj = {"schema": 2, "é": "ü", "\x1b": 1, "items": items, "empty": [], "e2": {},
           "big": {f"k{i}": strings[i % len(strings)] for i in range(40)},
           "nested": {"lazy": [1, 2, 3], "deeper": {"x": list(range(30))}},
           "mixed": [{"a": [1]}, "s", 1.5, None, True, [[], {}]],
           "tail": None}
    want = _stdlib(obj)

    def lazified() -> dict:
        o = dict(obj)
        o["items"] = Lazy(iter(items))
        o["empty"] = Lazy(iter(()))
        o["nested"] = {"lazy": Lazy([1, 2, 3]), "deeper": {"x": Lazy(range(30))}}
        return o

    assert _whole(obj) == want
    assert _streamed(obj) == want
    assert _streamed(lazified()) == want
    assert materialize(lazified()) == obj
    assert _streamed([lazified(), lazified()]) == _stdlib([obj, obj])
    assert _streamed(Lazy(iter(items))) == _stdlib(items)
    for small in ([], {}, [[]], Lazy(()), "x", 1, None):
        assert _streamed(small) == _stdlib(materialize(small))


def test_what_msgspec_refuses_is_written_by_the_stdlib_encoder(monkeypatch):
    monkeypatch.setattr(json_stream, "CHUNK", 2)
    def obj() -> dict:
        return {"a": ["ok", "x\ud800y", "ok"], "b": Lazy(iter(["\ud800", "z"])), "c": {"\ud800": 1}}

    out = _streamed(obj())
    assert out == _stdlib(materialize(obj())) and b"\\ud800" in out
    assert json.loads(_streamed({"x": Lazy([float("inf")])})) == {"x": [None]}  # valid JSON, not Infinity


def test_the_cli_streams_the_same_bytes_and_exit_code(tmp_path):
    """The command itself: ``triage --json`` on a synthetic log (several batches), and on two logs at
    once (an array of documents), gives the whole document's text and the same exit code."""
    log = write_trace_log(tmp_path / "one" / "dedicated_log_torch_trace_rank_0_a.log", 2500)
    write_trace_log(tmp_path / "two" / "dedicated_log_torch_trace_rank_0_b.log", 1200)
    write_trace_log(tmp_path / "two" / "dedicated_log_torch_trace_rank_1_b.log", 1300)
    for target in (log, tmp_path / "two"):
        proc = slow.run([sys.executable, "-m", "magi_tui", "triage", "--json", str(target)], cwd=ROOT,
                        capture_output=True, timeout=300)
        runs = [RunModel(r.path).load() for r in find_runs(target)]
        want = _whole(triage_json(runs[0]) if len(runs) == 1 else [triage_json(r) for r in runs])
        assert proc.stdout == want, target
        assert proc.returncode == 0, proc.stderr
    buf = io.StringIO()  # a stdout without bytes under it still gets the whole text
    sys_stdout, sys.stdout = sys.stdout, buf
    try:
        from magi_tui.cli import _print_json

        _print_json({"x": Lazy(["é", "a"])})
    finally:
        sys.stdout = sys_stdout
    assert buf.getvalue() == '{\n  "x": [\n    "é",\n    "a"\n  ]\n}\n'
