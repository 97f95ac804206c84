#!/usr/bin/env bash
# Set everything up (idempotent), trace a demo compile (a small transformer through the piecewise
# backend with passes) into ./runs, and open it in magi-tui.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
demo=${1:-demos/transformer.py}
log=$(mktemp)
echo "tracing $demo (a real torch.compile on CPU; ~30 s)..."
if ! .venv/bin/python -m tracer -o runs "$demo" 2> >(tee "$log" >&2); then
  echo "the demo exited with an error; opening what was recorded" >&2
fi
run=$(sed -n 's/^MAGI_RUN_DIR=//p' "$log" | tail -n 1)
rm -f "$log"
exec .venv/bin/magi-tui "${run:-runs}"
