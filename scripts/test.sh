#!/usr/bin/env bash
# Set everything up (idempotent) and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if ! command -v tmux >/dev/null 2>&1; then
  # the end-to-end tests drive the real app in tmux, as a person would
  (apt-get update -qq && apt-get install -y -qq tmux) >/dev/null 2>&1 || echo "tmux unavailable: end-to-end tests will be skipped"
fi
# the layers and the code's hygiene are part of the suite: lint before the tests
.venv/bin/ruff check .
exec .venv/bin/python -m pytest -q "$@"
