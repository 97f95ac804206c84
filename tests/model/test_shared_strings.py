"""Equal strings of what a run keeps per event are one object (issue 36, the app on 100k compile ids).

A line's decoded strings are copies of their own: a skip event keeps its attribute map (triage reads it),
and every compile repeats its compile id, lifecycle name, frame name and the skip's reason in it and in its
summary. They are shared (``events._kept_attrs``, ``events._one_copy``), and what an event says is the
line's, value for value."""

from __future__ import annotations

import json

from magi_tui.model.events import KeptAttrs
from magi_tui.model.sources.reader import TimelineReader

REASON = "not completed in this compile"


def _lines(n: int, reason: str = REASON) -> list[dict]:
    out = []
    for i in range(n):
        common = {"scope": "fullgraph", "compile_id": f"{i}/0", "frame": f"fn_{i}", "source": "torch_trace"}
        out += [
            {"name": "fullgraph_before_compile", "attributes": dict(common, lifecycle_name="compile")},
            {"name": "fullgraph_before_dynamo_capture", "attributes": dict(common, lifecycle_name="dynamo_capture")},
            {"name": "fullgraph_skip_dynamo_capture",
             "attributes": dict(common, lifecycle_name="dynamo_capture", reason=reason)},
            {"name": "fullgraph_after_compile", "attributes": dict(common, lifecycle_name="compile", duration_ms=0.2)},
        ]
    for k, line in enumerate(out):
        line.update(index=k, timestamp=1795345959.0 + k / 1000)
    return out


def _read(tmp_path, lines):
    path = tmp_path / "timeline.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return TimelineReader(path).read().events


def test_a_skips_kept_map_and_summary_share_their_strings(tmp_path):
    lines = _lines(5)
    events = _read(tmp_path, lines)
    assert len(events) == len(lines)
    skips = [ev for ev in events if ev.phase == "skip"]
    assert len(skips) == 5
    for ev, line in zip(events, lines):  # what an event says is its line's, value for value
        assert ev.compile_id == line["attributes"]["compile_id"]
        assert ev.summary is not None and ev.summary["frame"] == line["attributes"]["frame"]
    for ev in skips:
        kept = ev.attrs
        assert type(kept) is KeptAttrs
        assert kept == {"compile_id": ev.compile_id, "frame": ev.summary["frame"], "lifecycle_name": "dynamo_capture",
                        "reason": REASON}
        assert kept["compile_id"] is ev.compile_id
        assert kept["lifecycle_name"] is ev.lifecycle
        assert kept["frame"] is ev.summary["frame"] and kept["reason"] is ev.summary["reason"]
    # one reason for all the compiles; a compile's frame name one object in all its events' summaries
    assert len({id(ev.attrs["reason"]) for ev in skips}) == 1
    for i in range(5):
        assert len({id(ev.summary["frame"]) for ev in events[4 * i:4 * i + 4]}) == 1


def test_a_long_string_is_kept_by_its_events_alone(tmp_path):
    """A string over 200 characters is not entered in the shared strings: a hostile file's long messages
    stay only as long as the events that hold them (and are still whole)."""
    long = "x" * 5000
    events = _read(tmp_path, _lines(3, reason=long))
    reasons = [ev.attrs["reason"] for ev in events if ev.phase == "skip"]
    assert reasons == [long] * 3
    assert len({id(r) for r in reasons}) == 3
