#!/usr/bin/env bash
# Set everything up (idempotent), trace a demo compile (a small transformer through the piecewise
# backend with passes) into ./runs (or $MAGI_DEMO_ROOT), and open it in magi-tui. While it compiles, a line
# every few seconds ($MAGI_DEMO_PROGRESS_S) says how long so far, how many events the tracer recorded, and
# the compile and step it is in.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
demo=${1:-demos/transformer.py}
root=${MAGI_DEMO_ROOT:-runs}
every=${MAGI_DEMO_PROGRESS_S:-5}
log=$(mktemp)
start=$SECONDS
echo "tracing $demo (a real torch.compile on CPU: ~30 s on 2 idle cores, minutes on a busy machine)..."

# the newest run dir the tracer announced (MAGI_RUN_DIR= on its stderr), its timeline's line count and last event
progress() {
  local run="" tl n last cid
  while sleep "$every"; do
    [ -n "$run" ] || run=$(sed -n 's/^MAGI_RUN_DIR=//p' "$log" | tail -n 1)
    tl="$run/timeline_events/timeline.jsonl"
    if [ -z "$run" ]; then
      echo "  $((SECONDS - start)) s: starting Python and importing torch..."
    elif [ ! -s "$tl" ]; then
      echo "  $((SECONDS - start)) s: running $demo, no compile recorded yet"
    else
      n=$(wc -l < "$tl" | tr -d ' ')
      last=$(tail -n 1 "$tl")
      cid=$(printf '%s' "$last" | grep -o '"compile_id": *"[^"]*"' | head -n 1 | sed 's/.*"\([^"]*\)"$/\1/' || true)
      last=$(printf '%s' "$last" | sed -n 's/^{"index": *[0-9]*, *"name": *"\([^"]*\)".*/\1/p')
      echo "  $((SECONDS - start)) s: $n events recorded${cid:+, compile $cid}${last:+, now at $last}"
    fi
  done
}
progress &
ticker=$!
stop_progress() { kill "$ticker" 2>/dev/null || true; wait "$ticker" 2>/dev/null || true; }
trap 'stop_progress; rm -f "$log"' EXIT

if ! .venv/bin/python -m tracer -o "$root" "$demo" 2> >(tee "$log" >&2); then
  echo "the demo exited with an error; opening what was recorded" >&2
fi
stop_progress
run=$(sed -n 's/^MAGI_RUN_DIR=//p' "$log" | tail -n 1)
echo "traced in $((SECONDS - start)) s: ${run:-$root}"
# a second run of the demo is no warm start when its graphs bypass the cache: say so, in torch's words
if [ -n "$run" ]; then
  .venv/bin/magi-tui triage --json "$run" 2>/dev/null | .venv/bin/python -c '
import json, sys
try:
    c = json.load(sys.stdin)["cache"]
except Exception:
    sys.exit(0)
n, why = c["counts"]["bypasses"], ", ".join(c["reasons"]["bypass"])
if n and not c["counts"]["hits"] + c["counts"]["misses"]:
    print(f"note: every graph of this demo bypassed the cache ({why}): running it again compiles again, it is not a warm start")
elif n:
    print(f"note: {n} cache bypass(es) ({why}): those graphs compile again on every run")
' || true
fi
rm -f "$log"
trap - EXIT
exec .venv/bin/magi-tui "${run:-$root}"
