"""The recorded fixtures in tests/fixtures/ are all there and byte for byte as recorded.

They are the compatibility contract (the viewer must open every one of them), and a checkout that lost one
(a folder git did not keep, a line ending converted on the way) must fail here by name, not skip elsewhere.
"""

from __future__ import annotations

import hashlib

from tests.support.paths import FIXTURES_ROOT


def _listed() -> dict[str, str]:
    out = {}
    for line in (FIXTURES_ROOT / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        out[name.lstrip("*")] = digest
    return out


def test_every_recorded_fixture_is_present_and_unchanged():
    want = _listed()
    assert len(want) > 900, "SHA256SUMS lists the whole tree"
    missing = [name for name in want if not (FIXTURES_ROOT / name).is_file()]
    assert not missing, f"fixtures missing from tests/fixtures/: {missing[:5]} (+{max(0, len(missing) - 5)} more)"
    changed = [name for name, digest in want.items()
               if hashlib.sha256((FIXTURES_ROOT / name).read_bytes()).hexdigest() != digest]
    assert not changed, f"fixtures changed since they were recorded: {changed[:5]}"


def test_no_file_in_the_fixture_tree_is_unlisted():
    """A file added without its provenance (a row in the README and a line in SHA256SUMS) is caught."""
    want = _listed()
    on_disk = {str(p.relative_to(FIXTURES_ROOT)) for top in ("magi_depyf", "torch_trace")
               for p in (FIXTURES_ROOT / top).rglob("*") if p.is_file()}
    assert on_disk - set(want) == set()


def test_the_empty_timeline_folders_the_format_allows_survive_a_clone():
    """git keeps no empty folder: these two are held by a .gitkeep, and the model tests read them as empty."""
    for rel in ("magi_depyf/toy_explain_warm_cache/timeline_events",
                "magi_depyf/dynamo_failure/magi_depyf/run_20261122_112215/model_1_Breaks_rank_0/timeline_events"):
        folder = FIXTURES_ROOT / rel
        assert folder.is_dir() and not (folder / "timeline.jsonl").exists(), rel
