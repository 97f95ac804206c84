"""Writes ``golden/mapping_specs.json``: every event spec ``TraceMapper.handle`` (then ``finish``) makes of the
shared TORCH_TRACE fixtures and of two synthetic logs (``benchmarks/synth.py``), whole: the name, the
attributes as ``[key, value]`` pairs in their order, the files as ``[name, sha1 of the text]`` pairs in theirs
(a deferred file as its marker), with ``defer_files`` off (the tracer); and with it on (the log reader),
the files alone (the names and attributes are the same: checked).
``test_mapping_specs.py`` compares the mapping against it, so a change meant to make the mapping cheaper
changes no event. Run it (``python tests/tracer/make_mapping_specs_golden.py``) only when the mapping is
meant to change what it makes, and review the diff."""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
GOLDEN = HERE / "golden" / "mapping_specs.json"
#: the synthetic logs: name -> write_trace_log's arguments
SYNTH = {"synth_300": (300, {}), "synth_60_failing": (60, {"fail_every": 7, "graph_every": 3})}


def spec_rows(specs: Iterable[tuple], markers: dict[int, str]) -> list[list[Any]]:
    """Event specs as JSON-able rows that keep the attributes' and files' order."""
    rows = []
    for name, attrs, files, *_ in specs:
        fl = [[k, markers.get(id(v)) or hashlib.sha1(v.encode("utf-8", "surrogatepass")).hexdigest()[:16]]
              for k, v in files.items()]
        rows.append([name, [[k, v] for k, v in attrs.items()], fl])
    return json.loads(json.dumps(rows))  # (tuples as lists, as the golden file reads back)


def map_records(records: list[tuple[dict, str | None]], defer: bool) -> list[list[Any]]:
    from magi_format.torch_mapping import METRICS_OF_RECORD, STACK_OF_RECORD, TraceMapper

    markers = {id(METRICS_OF_RECORD): "<deferred metrics.json>", id(STACK_OF_RECORD): "<deferred user_stack.txt>"}
    mapper = TraceMapper()
    mapper.defer_files = defer
    out: list[list[Any]] = []
    for md, payload in records:
        out.extend(spec_rows(mapper.handle(md, payload), markers))
    out.extend(spec_rows(mapper.finish(), markers))
    return out


def logs(tmp: Path) -> dict[str, list[tuple[dict, str | None]]]:
    """name -> records of every log the golden file covers (fixtures only where they are found)."""
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(ROOT))
    from tracelog import read_trace_log, trace_logs

    from benchmarks.synth import write_trace_log

    out = {p.stem: list(read_trace_log(p)) for p in trace_logs()}
    for name, (n, kw) in SYNTH.items():
        out[name] = list(read_trace_log(write_trace_log(tmp / f"{name}.log", n, **kw)))
    return out


def golden(tmp: Path) -> dict[str, dict[str, list]]:
    """name -> {"events": rows with defer_files off, "reader_files": the files of each row with it on}."""
    out = {}
    for name, recs in logs(tmp).items():
        events, reader = map_records(recs, False), map_records(recs, True)
        assert [e[:2] for e in events] == [e[:2] for e in reader], f"{name}: defer_files changed an event"
        out[name] = {"events": events, "reader_files": [e[2] for e in reader]}
    return out


def dump(got: dict[str, dict[str, list]]) -> str:
    """One event (or one event's reader files) per line: a reviewable diff."""
    def rows(xs: list) -> str:
        return "[\n" + ",\n".join(json.dumps(x, separators=(",", ":"), ensure_ascii=False) for x in xs) + "]"
    return "{\n" + ",\n".join(
        f"{json.dumps(name)}: {{\"events\": {rows(v['events'])},\n\"reader_files\": {rows(v['reader_files'])}}}"
        for name, v in got.items()) + "}\n"


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as d:
        got = golden(Path(d))
    GOLDEN.write_text(dump(got))
    assert json.loads(GOLDEN.read_text()) == got
    print(GOLDEN, GOLDEN.stat().st_size, {k: len(v["events"]) for k, v in got.items()})
