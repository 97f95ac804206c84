"""Every event spec the mapping makes, whole, against ``golden/mapping_specs.json``: names, attributes with
their key order, files (by content hash; a deferred file by its marker), for the tracer (``defer_files``
off) and the log reader (on), over the real TORCH_TRACE fixtures (tests/fixtures/torch_trace/) and two synthetic logs
(``benchmarks/synth.py``). The golden file was recorded with the mapping as it was before its per-record
cost was cut, by ``make_mapping_specs_golden.py`` (rerun it only when the mapping is meant to change what
it makes, and review the diff): a change made for speed changes no event."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from make_mapping_specs_golden import GOLDEN, SYNTH, logs, map_records  # noqa: E402

EXPECTED = json.loads(GOLDEN.read_text())
_logs: dict[str, list] = {}


def records(name: str, tmp: Path) -> list:
    if not _logs:
        _logs.update(logs(tmp))
    if name not in _logs:
        assert name not in SYNTH
        pytest.fail(f"fixture missing: tests/fixtures/torch_trace/{name}.log (see tests/fixtures/README.md)",
                    pytrace=False)
    return _logs[name]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_mapping_makes_the_recorded_specs(name, tmp_path_factory):
    recs = records(name, tmp_path_factory.mktemp("logs"))
    want = EXPECTED[name]
    got = map_records(recs, False)
    assert len(got) == len(want["events"])
    for i, (g, w) in enumerate(zip(got, want["events"])):
        assert g == w, f"{name}: event {i} differs"
    reader = map_records(recs, True)
    assert [e[:2] for e in reader] == [e[:2] for e in want["events"]]
    assert [e[2] for e in reader] == want["reader_files"]


def test_golden_covers_what_a_user_reads():
    """The golden file is not empty of what matters: compiles opened and closed, failures, graph breaks."""
    names = {e[0] for v in EXPECTED.values() for e in v["events"]}
    assert {"fullgraph_before_compile", "fullgraph_after_compile", "fullgraph_failed_compile"} <= names
    # per frame: before compile, before capture, capture closed (after or skip), after compile
    assert len(EXPECTED["synth_300"]["events"]) == 300 * 4
