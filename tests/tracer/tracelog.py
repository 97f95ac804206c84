"""Reading a TORCH_TRACE log (TORCH_TRACE.md §1 "Line format") and running it through the tracer's
mapping, without torch: ``python tests/tracer/tracelog.py LOG`` prints the mapped events as JSON lines
and exits 3 if anything imported torch.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[2]
GLOG = re.compile(r"^[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^\]]*:\d+\] (\{.*\})$")


def trace_logs() -> list[Path]:
    """The real TORCH_TRACE logs kept in the repository (tests/fixtures/README.md says how they were made)."""
    return sorted((ROOT / "tests" / "fixtures" / "torch_trace").glob("*.log"))


def read_trace_log(path: Path) -> Iterator[tuple[dict, str | None]]:
    """``(metadata, payload)`` per record; the payload (tab-prefixed lines) is checked against ``has_payload``."""
    md: dict | None = None
    payload: list[str] = []

    def done() -> tuple[dict, str | None]:
        text = "\n".join(payload) if payload else None
        want = md.get("has_payload")
        if want is not None:
            got = hashlib.md5((text or "").encode("utf-8")).hexdigest()
            assert got == want, f"payload md5 mismatch for {json.dumps(md)[:200]}"
        return md, text

    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if line.startswith("\t"):
                assert md is not None, "payload line before any record"
                payload.append(line[1:])
                continue
            m = GLOG.match(line)
            if not m:
                continue
            if md is not None:
                yield done()
            md, payload = json.loads(m.group(1)), []
    if md is not None:
        yield done()


def map_log(path: Path) -> list[dict]:
    sys.path.insert(0, str(ROOT))
    from magi_format.torch_mapping import TraceMapper

    mapper = TraceMapper()
    out = []
    for md, payload in read_trace_log(path):
        for name, attrs, files, _ts in mapper.handle(md, payload):
            out.append({"name": name, "attributes": attrs, "files": {k: len(v) for k, v in files.items()},
                        "metrics": json.loads(files["metrics.json"]) if "metrics.json" in files else None})
    for name, attrs, files, _ts in mapper.finish():
        out.append({"name": name, "attributes": attrs, "files": {k: len(v) for k, v in files.items()},
                    "metrics": None})
    return out


if __name__ == "__main__":
    for ev in map_log(Path(sys.argv[1])):
        print(json.dumps(ev, sort_keys=True))
    sys.exit(3 if "torch" in sys.modules else 0)
