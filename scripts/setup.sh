#!/usr/bin/env bash
# Create .venv (idempotent) and install magi-tui with the tracer and test extras.
# torch is pinned to 2.13.0: that CPU wheel is on disk here; anything else pulls a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
stamp=.venv/.magi-tui-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q "torch==2.13.0"
  .venv/bin/python -m pip install -q -e ".[tracer,test]"
  touch "$stamp"
fi
