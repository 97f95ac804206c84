"""Hostile round 3, items 4 and 5: the files a user names (a policy, a keymap) and the JUnit XML a CI shows.

A FIFO given as ``--policy`` or ``--keymap`` hung forever (the read waited for a writer); ``nan`` / ``inf``
budgets were accepted and could never break. Regular files only, finite numbers only: exit 2 with one clear
line. JUnit output carried raw C1 controls, DEL and bidi overrides from the run's text; they are written as
``\\uXXXX`` there as in the text and JSON."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from magi_format.text import UNSAFE_CHARS
from magi_tui.model.outputs.budget import check, junit_xml, parse_policy
from magi_tui.model.run import RunModel
from tests.support import slow
from tests.support.paths import ROOT
from tests.support.timeline import ev_line, write_run

HOSTILE = "boom\x1b]0;pwned\x07 \x85C1 \x7fDEL \u202egnirts\u202c \u2066iso\u2069"


def _cli(*args: str, timeout: float = 20) -> subprocess.CompletedProcess:
    return slow.run([sys.executable, "-m", "magi_tui", *args], cwd=ROOT, capture_output=True, text=True,
                    timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.fixture
def run_dir(tmp_path):
    return write_run(tmp_path / "run", [
        ev_line(0, "fullgraph_before_compile", lifecycle_name="compile", compile_id="0/0", frame="forward"),
        ev_line(1, "fullgraph_after_compile", lifecycle_name="compile", compile_id="0/0", frame="forward",
                duration_ms=5.0)])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("flag", ["--policy", "--keymap"])
def test_a_fifo_as_a_settings_file_is_refused_not_waited_on(tmp_path, run_dir, flag):
    fifo = tmp_path / "settings.toml"
    os.mkfifo(fifo)
    cmd = ("check", str(run_dir), "--policy", str(fifo)) if flag == "--policy" else \
          ("open", str(run_dir), "--keymap", str(fifo))
    out = _cli(*cmd)  # before: blocked in open() until the timeout
    assert out.returncode == 2
    assert "FIFO" in out.stderr and "not a file" in out.stderr and "Traceback" not in out.stderr


def test_a_missing_keymap_that_was_named_is_an_error(tmp_path, run_dir):
    out = _cli("open", str(run_dir), "--keymap", str(tmp_path / "nope.toml"))
    assert out.returncode == 2 and "keymap" in out.stderr and "No such file" in out.stderr


@pytest.mark.parametrize("line", ["max_compile_seconds = nan", "max_compile_seconds = inf",
                                  "max_graph_breaks = inf", "min_cache_hit_rate = nan",
                                  "max_compile_time_increase = +inf"])
def test_budgets_that_could_never_break_are_refused(tmp_path, run_dir, line):
    policy = tmp_path / "policy.toml"
    policy.write_text(f"[budget]\n{line}\n")
    out = _cli("check", str(run_dir), "--policy", str(policy))
    assert out.returncode == 2, out.stdout
    key, value = (p.strip() for p in line.split("="))
    assert f"budget.{key}" in out.stderr and value.lstrip("+") in out.stderr


def test_junit_escapes_what_a_terminal_or_ci_page_would_obey(tmp_path):
    lines = [ev_line(0, "fullgraph_before_compile", lifecycle_name="compile", compile_id="0/0", frame="forward"),
             ev_line(1, "fullgraph_failed_compile", lifecycle_name="compile", compile_id="0/0", frame="forward",
                     exception_type="BackendCompilerFailed", exception_message=HOSTILE)]
    run = RunModel(write_run(tmp_path / "hostile", lines)).load()
    xml = junit_xml(check([run], parse_policy("[budget]\nallow_unrecovered_failures = false\n")))
    assert "pwned" in xml and "gnirts" in xml  # the text is there, shown
    bad = sorted({hex(ord(c)) for c in xml if ord(c) in UNSAFE_CHARS and c not in "\t\n"})
    assert bad == [], bad
    failure = ET.fromstring(xml).find(".//failure")
    assert failure is not None and "\\u202e" in failure.get("message") + (failure.text or "")
