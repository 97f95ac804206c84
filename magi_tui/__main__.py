"""``python -m magi_tui`` is the same as the ``magi-tui`` console script."""

from magi_tui.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
