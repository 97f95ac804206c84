"""A timeline line's time fields (``magi_format.layout``): the ``datetime`` text is the one
``datetime.fromtimestamp`` gives, to the millisecond, though the second's text is made once a second."""

from __future__ import annotations

from datetime import datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from magi_format.layout import _datetime_text, timeline_record, timeline_times

_ERRORS = (OverflowError, OSError, ValueError)


def _reference(ts: float) -> str:
    try:
        return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    except _ERRORS:
        return "error"


def _ours(ts: float) -> str:
    try:
        return _datetime_text(ts)
    except _ERRORS:
        return "error"


@settings(max_examples=3000, deadline=None)
@given(st.one_of(st.floats(-1e11, 3e11), st.floats(), st.integers(0, 2**31).map(lambda s: s + 0.9999995),
                 st.integers(0, 2**31).map(lambda s: s - 0.0000005), st.integers(0, 10**6).map(lambda u: 1.7e9 + u / 1e6)))
def test_datetime_text_is_fromtimestamps(ts):
    assert _ours(ts) == _reference(ts)


def test_edges_of_a_second_and_of_the_calendar():
    for ts in (0.0, -1.5, -0.0000005, 1.9999995, 1.0000005, 1763982759.9999995, 1763982759.0004995,
               253402300799.9999, 253402300800.0, float("nan"), float("inf"), -float("inf"), 1e20):
        assert _ours(ts) == _reference(ts), ts


def test_record_fields_in_the_writers_order():
    rec = timeline_record(3, "x", ["a"], {"k": 1}, 100.25, 100.0)
    assert list(rec) == ["index", "name", "relative_time", "files", "attributes", "datetime", "timestamp"]
    assert rec["relative_time"] == "250.0ms" and rec["timestamp"] == 100.25
    assert list(timeline_record(3, "x", [], {}, None, None)) == ["index", "name", "files", "attributes"]
    assert "datetime" not in timeline_times(float("nan"), None)[1]  # no calendar: no datetime
    assert "datetime" not in timeline_times(1e20, None)[1]


@settings(max_examples=2000, deadline=None)
@given(st.one_of(st.none(), st.floats(), st.floats(-1e11, 3e11)), st.one_of(st.none(), st.floats(-1e11, 3e11)))
def test_json_members_are_the_maps_encoded(ts, t0):
    """The members a log reader writes for a record's time are those of timeline_times, encoded."""
    import msgspec

    from magi_format.layout import timeline_times_json

    try:
        head, tail = timeline_times(ts, t0)
    except _ERRORS as exc:  # (an infinite time has no relative_time either way)
        want: object = type(exc)
    else:
        want = (msgspec.json.encode(head)[1:-1], msgspec.json.encode(tail)[1:-1])
    try:
        got: object = timeline_times_json(ts, t0, msgspec.json.encode)
    except _ERRORS as exc:
        got = type(exc)
    assert got == want
