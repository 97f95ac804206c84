#!/usr/bin/env bash
# Set everything up (idempotent) and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# the end-to-end tests drive the real app as a person would: in tmux, in a browser (magi-tui serve), over
# ssh to a private sshd on loopback. Each is installed if missing; a test whose tool is missing skips.
need=()
command -v tmux >/dev/null 2>&1 || need+=(tmux)
# tests/history/test_spark.py runs the history's queries in Spark (pyspark, local mode): it needs a JRE
command -v java >/dev/null 2>&1 || need+=(default-jre-headless)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
{ [ -x /usr/sbin/sshd ] && command -v ssh >/dev/null 2>&1; } || need+=(openssh-server)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq >/dev/null 2>&1 || true
  for pkg in "${need[@]}"; do
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null 2>&1 \
      || echo "$pkg unavailable: the end-to-end tests that need it will be skipped"
  done
fi
# the layers and the code's hygiene are part of the suite: lint and type-check before the tests
.venv/bin/ruff check .
.venv/bin/python -m mypy  # magi_format/, magi_tui/ and tracer/ ([tool.mypy] in pyproject.toml): zero errors
exec .venv/bin/python -m pytest -q "$@"
