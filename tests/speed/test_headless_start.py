"""What a headless command's start imports (issue #21: ``triage --json`` on a small run is mostly start-up,
and its anchor, a process that loops ``orjson.loads``, imports next to nothing). Each module named here
cost a millisecond or more of every start and is not needed to answer on a timeline run: msgspec's
optional ``typing_extensions`` (and the ``inspect`` / ``ast`` it loads), ``dataclasses`` (``inspect``
again), ``shutil`` (argparse sizing a help text nobody asked for; ``bz2``, ``lzma``), ``difflib`` (only
guard diffs use it), ``threading`` (the load's lock is ``_thread``'s, the same), the stdlib's ``json``
(msgspec reads and writes; the stdlib only parses a run's small JSON files and the odd line msgspec
leaves). Patterns are compiled when first used (magi_format/lazyre.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.support import slow
from tests.support.paths import COLD, ROOT

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from synth import write_synthetic_run  # noqa: E402

LEAN = ("typing_extensions", "inspect", "ast", "dataclasses", "shutil", "bz2", "lzma", "difflib", "threading",
        "json", "textual", "rich", "torch", "tracer")
#: our modules a timeline run's answer does not need: graph-break and guard grammars (no breaks nor
#: recompiles here), the debug-dir reader, the other commands' command lines
OURS_NOT_NEEDED = {"magi_format.torchtext", "magi_tui.model.analysis.guards", "magi_tui.model.sources.debugdir.reader",
                   "magi_tui.bisect_cli", "magi_tui.fix_cli"}

_PROBE = """
import contextlib, io, re, sys
compiled = []
_compile = re._compile
def counting(pattern, flags):
    if sys._getframe(2).f_globals.get("__name__", "").startswith(("magi_tui", "magi_format")):
        compiled.append(pattern)
    return _compile(pattern, flags)
re._compile = counting
from magi_tui.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    rc = main(sys.argv[1:])
mods = sorted(sys.modules)
import json
print(json.dumps([rc, mods, len(set(compiled))]))
"""


def _start(*argv: str) -> tuple[int, set[str], int]:
    out = slow.run([sys.executable, "-c", _PROBE, *argv], cwd=ROOT, capture_output=True, text=True,
                   timeout=120)
    assert out.returncode == 0, out.stderr
    rc, mods, n_compiled = json.loads(out.stdout.strip().splitlines()[-1])
    return rc, {m.split(".")[0] for m in mods} | (set(mods) & OURS_NOT_NEEDED), n_compiled


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    return write_synthetic_run(tmp_path_factory.mktemp("lean") / "model_1_Synthetic_rank_0", 200)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="before 3.11 msgspec loads typing_extensions")
@pytest.mark.parametrize("command", [["triage", "--json"], ["runs", "--json"], ["triage"]])
def test_a_headless_start_stays_lean(synthetic, command):
    rc, mods, n_compiled = _start(*command, str(synthetic))
    assert rc in (0, 1)
    unwanted = mods & (set(LEAN) | OURS_NOT_NEEDED)
    assert not unwanted, f"{command} imported {sorted(unwanted)}"
    # ~a dozen patterns compiled at import or used to answer (run and event names, literal, numbers); the
    # ~50 others wait for their first use (before: 63 compiled at every start)
    assert n_compiled <= 20, f"{command} compiled {n_compiled} of our patterns"


@pytest.mark.usefixtures("fixtures_dir")
def test_a_real_runs_triage_stays_lean():
    rc, mods, _ = _start("triage", "--json", str(COLD))
    unwanted = mods & (set(LEAN) - {"json"})  # a real run's small JSON files may be parsed by the stdlib
    assert rc in (0, 1) and not unwanted, sorted(unwanted)


@pytest.mark.parametrize("columns", ["30", "50", "100", "200"])
def test_help_is_laid_out_as_argparse_would(monkeypatch, columns):
    """The formatter that sizes itself late (cli._HelpFormatter) lays help out as argparse's own does."""
    import argparse

    from magi_tui import cli

    monkeypatch.setenv("COLUMNS", columns)

    def helps() -> list[str]:
        p = cli.build_parser()
        subs = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction)).choices
        return [p.format_help(), p.format_usage()] + [subs[c].format_help() for c in sorted(subs)]

    ours = helps()
    monkeypatch.setattr(cli, "_HelpFormatter", argparse.HelpFormatter)
    assert ours == helps()
