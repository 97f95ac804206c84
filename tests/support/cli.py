"""Running the headless command line in-process, as a script would, and reading what it printed."""

from __future__ import annotations

from magi_tui.cli import main


def run_cli(capsys, *argv):
    """``(exit code, stdout, stderr)`` of ``magi-tui *argv``; never a traceback."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err
