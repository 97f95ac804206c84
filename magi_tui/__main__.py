"""``python -m magi_tui`` is the same as the ``magi-tui`` console script."""

from magi_tui.cli import run

if __name__ == "__main__":
    run()
