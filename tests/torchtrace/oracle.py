"""tlparse as the oracle: run it on a log, read back the facts it reports (``raw.jsonl``,
``compile_directory.json``, ``failures_and_restarts.html``), and the same facts from our model.

Both sides come out as plain data (compile ids spelled tlparse's way: ``[0/1]``, ``[0/1_1]``), so a test
compares them with ``==`` and a failure shows the difference."""

from __future__ import annotations

import html
import json
import re
import shutil
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from magi_format.torchtext import find_gb_registry, is_limit_hit, merged_gb_registry
from tests.support import slow

CACHE_RE = re.compile(r"^(fx_graph|aotautograd)_cache_(hit|miss|bypass)$")
GB_ID = re.compile(r"/gb/gb(\d+)\.html")
_ROW = re.compile(r"<tr>\s*<td>\s*<a href='[^']*'>(\[[^\]]*\])</a>\s*</td>\s*<td>\s*(?:<pre>)?(.*?)(?:</pre>)?\s*"
                  r"</td>\s*<td>\s*<pre>(.*?)</pre>", re.S)


def find_tlparse() -> str | None:
    """The tlparse executable (the PyPI wheel, ``pip install tlparse``): on PATH or beside this Python."""
    exe = shutil.which("tlparse") or str(Path(sys.executable).with_name("tlparse"))
    return exe if Path(exe).is_file() else None


def tlparse_bin() -> str:
    """The tlparse executable, else the test is skipped."""
    exe = find_tlparse()
    if exe is None:
        pytest.skip("tlparse is not installed (pip install tlparse: the test extra has it)")
    return exe


@dataclass
class Facts:
    """What a user checks, in tlparse's terms."""

    compile_ids: list[str] = field(default_factory=list)
    graph_breaks: Counter = field(default_factory=Counter)     # (compile id, GB id) -> n
    break_texts: dict = field(default_factory=dict)            # compile id -> [payload text]
    recompiles: dict = field(default_factory=dict)             # compile id -> [reasons]
    restarts: Counter = field(default_factory=Counter)         # (compile id, first line of reason) -> n
    failures: Counter = field(default_factory=Counter)         # (compile id, fail type, first line) -> n
    cache: Counter = field(default_factory=Counter)            # (compile id, cache, result) -> n
    stats: dict = field(default_factory=dict)                  # tlparse's "Stats { ok: N, ... }"


def tl_id(compile_id: str | None, attempt) -> str | None:
    """Our ``compile_id`` (``0/1``, ``!2/0/1``) and ``attempt`` in tlparse's spelling."""
    if not compile_id:
        return None
    tail = f"_{attempt}" if isinstance(attempt, int) and attempt else ""
    return f"[{compile_id}{tail}]"


def _first(text: str) -> str:
    return next((ln.strip() for ln in str(text).splitlines() if ln.strip()), "")


def recompile_reasons(payload: str) -> list[str]:
    """tlparse writes the payload; a single reason is a bare string, not JSON (TORCH_TRACE.md §7.3)."""
    try:
        v = json.loads(payload)
    except ValueError:
        v = payload.strip()
    return [str(x) for x in (v if isinstance(v, list) else [v])]


def run_tlparse(log: Path, out: Path) -> Path:
    proc = slow.run([tlparse_bin(), str(log), "-o", str(out), "--overwrite", "--no-browser"],
                    capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    m = re.search(r"Stats \{([^}]*)\}", proc.stdout + proc.stderr)
    stats = {k.strip(): int(v) for k, v in (kv.split(":") for kv in m.group(1).split(","))} if m else {}
    (out / "magi_test_stats.json").write_text(json.dumps(stats))
    return out


def tlparse_facts(out: Path) -> Facts:
    f = Facts()
    f.stats = json.loads((out / "magi_test_stats.json").read_text())
    directory = json.loads((out / "compile_directory.json").read_text())
    f.compile_ids = [k for k in directory if k != "[-/-]"]
    lines = (out / "raw.jsonl").read_text(encoding="utf-8").splitlines()[1:]  # line 1: the string table
    for line in lines:
        rec = json.loads(line)
        art = rec.get("artifact")
        if not isinstance(art, dict):
            continue
        cid = tl_id(f"{rec['frame_id']}/{rec['frame_compile_id']}" if "frame_id" in rec else None, rec.get("attempt"))
        if "compiled_autograd_id" in rec and cid:
            cid = f"[!{rec['compiled_autograd_id']}/{cid[1:]}"
        name = art.get("name")
        text = (out / rec["payload_filename"]).read_text(encoding="utf-8") if rec.get("payload_filename") else ""
        if name == "dynamo_graph_break_reason":
            m = GB_ID.search(text)
            f.graph_breaks[(cid, f"GB{m.group(1)}" if m else None)] += 1
            f.break_texts.setdefault(cid, []).append(text)
        elif name == "recompile_reasons":
            f.recompiles.setdefault(cid, []).extend(recompile_reasons(text))
        elif CACHE_RE.match(str(name)):
            cache, result = CACHE_RE.match(name).groups()
            f.cache[(cid, cache, result)] += 1
    page = (out / "failures_and_restarts.html").read_text(encoding="utf-8")
    for cid, kind, desc in _ROW.findall(page):
        kind = html.unescape(re.sub(r"<[^>]+>", "", kind)).strip()
        desc = html.unescape(desc)
        if kind == "RestartAnalysis":
            f.restarts[(cid, _first(desc))] += 1
        else:
            f.failures[(cid, kind, _first(desc))] += 1
    return f


def model_facts(run) -> Facts:
    """The same facts from a loaded :class:`RunModel` (events and their files, as the UI reads them)."""
    f = Facts()
    f.compile_ids = list(run.reader.compile_ids)
    for ev in run.events:
        a = run.attributes(ev)
        cid = tl_id(ev.compile_id, a.get("attempt"))
        if ev.kind == "graph_break":
            f.graph_breaks[(cid, a.get("gb_id"))] += 1
            path = next(p for n, p, _ in run.files(ev) if n == "graph_break.txt")
            f.break_texts.setdefault(cid, []).append(Path(path).read_text(encoding="utf-8"))
        elif ev.kind == "recompile":
            f.recompiles.setdefault(cid, []).extend(a.get("reasons") or [])
        elif ev.kind == "restart":
            f.restarts[(cid, _first(a.get("restart_reason") or ""))] += 1
        elif ev.kind == "failed" and ev.lifecycle == "compile":
            f.failures[(cid, a.get("fail_type"), _first(a.get("fail_reason") or a.get("exception_message") or ""))] += 1
        elif ev.frag == "recompile_limit_hit" and a.get("fail_type"):
            # tlparse lists the compile that hit the limit as a failure; ours is a limit-hit event, whose
            # metrics.json holds torch's fail_reason
            path = next(p for n, p, _ in run.files(ev) if n == "metrics.json")
            metrics = json.loads(Path(path).read_text(encoding="utf-8"))
            f.failures[(cid, a["fail_type"], _first(metrics.get("fail_reason") or ""))] += 1
        elif ev.kind in ("cache_hit", "cache_miss", "cache_bypass"):
            f.cache[(cid, a.get("cache"), ev.kind.split("_", 1)[1])] += 1
    return f


def event_compile_ids(run) -> set[str]:
    """Compile ids (with attempts) the model's events carry."""
    out = set()
    for ev in run.events:
        cid = tl_id(ev.compile_id, run.attributes(ev).get("attempt"))
        if cid:
            out.add(cid)
    return out


def _registry_id(gb_type: str | None) -> str | None:
    """The graph-break id torch's registry (the installed torch's, else the one we ship) gives ``gb_type``."""
    registry = merged_gb_registry(find_gb_registry())
    return next((k for k, versions in registry.items() if any(v.get("Gb_type") == gb_type for v in versions)), None)


def assert_triage_matches(tj: dict, tl: Facts) -> None:
    """``magi-tui triage --json`` counts what tlparse shows."""
    s = tj["summary"]
    assert s["graph_breaks"] == sum(tl.graph_breaks.values())
    assert s["restarts"] == sum(tl.restarts.values())
    assert s["recompiles"] == len(tl.recompiles)
    # graph-break ids (torch writes them in the message) and their compile ids, per site
    sites: Counter = Counter()
    for b in tj["graph_breaks"]:
        for cid in b["compile_ids"]:
            key = (f"[{cid}]", b["gb_id"])
            if key not in tl.graph_breaks and (key[0], None) in tl.graph_breaks and _registry_id(b["gb_type"]) == b["gb_id"]:
                key = (key[0], None)  # a message without its URL (torch 2.10): our id is the registry's for its type
            sites[key] += 1
    assert sites == tl.graph_breaks, (sites, tl.graph_breaks)
    assert sorted(r["compile_id"] for r in tj["recompiles"]) == sorted(c.strip("[]") for c in tl.recompiles)
    # tlparse's failures: the compiles that failed (unrecovered here: torch fell back to eager), and the
    # compiles that hit the recompile limit (triage lists those as recompile_limit_hits)
    limit = [(c, t) for (c, t, d), n in tl.failures.items() if is_limit_hit(t, d) for _ in range(n)]
    failed = [(c, t) for (c, t, d), n in tl.failures.items() if not is_limit_hit(t, d) for _ in range(n)]
    assert len(tj["recompile_limit_hits"]) == len(limit), (tj["recompile_limit_hits"], limit)
    # a compile that failed with Unsupported after a graph break Dynamo could not resume from (torch then
    # skips the frame: it runs eagerly and the program goes on) is a failure in tlparse's table, and a
    # frame that ran eagerly here (status degraded, exit 0: docs/HEADLESS.md)
    eager = sorted((f"[{r['compile_id']}]", "Unsupported") for r in tj["ran_eagerly"] if r["cause"] == "unsupported")
    assert all(e in failed for e in eager), (eager, failed)
    for e in eager:
        failed.remove(e)
    assert s["unrecovered"] == len(failed), (tj["failures"], failed)
    assert sorted((f"[{f['compile_id']}]", f["exception_type"]) for f in tj["failures"]) == sorted(failed)
    cache = tj["cache"]["counts"]
    for result, key in (("hit", "hits"), ("miss", "misses"), ("bypass", "bypasses")):
        assert cache[key] == sum(n for (_, _, r), n in tl.cache.items() if r == result)


#: a frame in tlparse's stack trie: ``file.py:line in name``
_TRIE = re.compile(r"([^\s<>]+\.py):(\d+) in ([\w]+|<module>)")


def tlparse_compiled_frames(out: Path) -> set[tuple]:
    """The innermost frame of each stack in tlparse's stack trie (the frame torch compiled)."""
    page = html.unescape((out / "index.html").read_text(encoding="utf-8"))
    trie = page[page.index("Stack trie"):page.index("Failures and Restarts")] if "Failures and Restarts" in page else page
    found = {(name, file, int(line)) for file, line, name in _TRIE.findall(trie)}
    return {f for f in found if f[0] != "<module>"}
