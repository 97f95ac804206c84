#!/usr/bin/env bash
# The tracer on every torch it claims (issue 33.11): for each torch version, a fresh venv (outside the
# checkout), that torch, and everything else pinned as in .venv (--no-deps: same versions, no resolving);
# then the tracer's own tests (tests/tracer, but test_real_models.py: its programs are run below) and a set
# of real programs (demos/ and tests' programs, Inductor ones included), each run plain and under
# `python -m tracer --keep-trace` (tests/tracer/realrun.py: output and exit unchanged, run dir triage =
# TORCH_TRACE triage, records dropped, what the torch lacks).
# Results: $MATRIX_DIR/results/<version>.jsonl; the table: docs/TORCH_MATRIX.md (scripts/torch_matrix_table.py).
# Each venv is deleted after its version (the wheels stay in $MATRIX_DIR/wheels for a rerun).
#
#   bash scripts/torch-matrix.sh                 # every version below, in sequence
#   bash scripts/torch-matrix.sh 2.10.0 2.4.0    # some
#   MATRIX_TESTS=0 bash scripts/torch-matrix.sh  # programs only
#   MATRIX_APPEND=1 MATRIX_PROGRAMS="demos/explain.py" bash scripts/torch-matrix.sh 2.10.0
#                                                # add to a version's results (a program's new row replaces its old)
#   MATRIX_KEEP=1 ...                            # keep the venv (to look into a row), else deleted
#
# Where each torch comes from: 2.13.0 the pinned CPU wheel (/opt/wheels, as .venv), 2.14.1 the wheel on this
# machine's disk (found under /opt), the rest from https://download.pytorch.org/whl/cpu when it answers, else
# the registry (PyPI: CUDA builds, GBs with their nvidia-* wheels; they run on CPU). This machine's pip
# constraint caps torch at 2.14.1, so torch's own install lifts it (PIP_CONSTRAINT=/dev/null) for that one
# pip command.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
MATRIX_DIR=${MATRIX_DIR:-/work/torch-matrix}
PY=${MATRIX_PYTHON:-$(readlink -f .venv/bin/python)}
VERSIONS=("$@")
[ ${#VERSIONS[@]} -eq 0 ] && VERSIONS=(2.13.0 2.14.1 2.15.0 2.10.0 2.4.0)
PROGRAMS=(${MATRIX_PROGRAMS:-demos/explain.py demos/graph_break.py demos/recompile_storm.py demos/transformer.py
          tests/tracer/programs/hf_gpt2_generate.py tests/tracer/programs/hf_bert_mlm.py
          tests/tracer/programs/hf_llama_train.py tests/tracer/programs/diffusers_unet.py})
mkdir -p "$MATRIX_DIR/wheels" "$MATRIX_DIR/results"

# everything .venv has but torch, what torch brings itself, and this project (run from the checkout)
.venv/bin/python -m pip freeze --exclude-editable 2>/dev/null \
  | grep -v -i -E '^(torch|triton|nvidia-|sympy|mpmath|networkx|filelock|jinja2|markupsafe|fsspec|typing.extensions|setuptools|cuda-|magi)' \
  | grep -v '^-e ' > "$MATRIX_DIR/rest.txt"

torch_source() {  # pip arguments that install torch $1
  case "$1" in
    2.13.0) ls /opt/wheels/torch-2.13.0+cpu-*.whl 2>/dev/null | head -1 || echo "torch==2.13.0" ;;
    2.14.1) find /opt -name 'torch-2.14.1-*.whl' 2>/dev/null | head -1 ;;
    *) if curl -s -m 10 -o /dev/null https://download.pytorch.org/whl/cpu/torch/; then
         echo "torch==$1 --index-url https://download.pytorch.org/whl/cpu"
       else echo "torch==$1"; fi ;;
  esac
}

for v in "${VERSIONS[@]}"; do
  venv="$MATRIX_DIR/venv-$v"
  out="$MATRIX_DIR/results/$v.jsonl"
  work="$MATRIX_DIR/work-$v"
  rm -rf "$venv" "$work"; [ "${MATRIX_APPEND:-0}" = 1 ] || : > "$out"
  echo "== torch $v: venv $venv"
  "$PY" -m venv "$venv" || { echo "{\"torch\": \"$v\", \"install\": \"venv failed\"}" >> "$out"; continue; }
  src=$(torch_source "$v")
  start=$(date +%s)
  # shellcheck disable=SC2086
  if ! PIP_CONSTRAINT=/dev/null "$venv/bin/pip" install -q --progress-bar off $src > "$MATRIX_DIR/pip-$v.log" 2>&1; then
    echo "{\"torch\": \"$v\", \"install\": \"torch failed: $(tail -1 "$MATRIX_DIR/pip-$v.log" | tr -d '"\\')\"}" >> "$out"
    rm -rf "$venv"; continue
  fi
  "$venv/bin/pip" install -q --progress-bar off --no-deps -r "$MATRIX_DIR/rest.txt" >> "$MATRIX_DIR/pip-$v.log" 2>&1 \
    || echo "  (some of .venv's packages did not install: $MATRIX_DIR/pip-$v.log)"
  got=$("$venv/bin/python" -c 'import torch; print(torch.__version__)' 2>&1 | tail -1)
  echo "   torch $got installed in $(( $(date +%s) - start )) s"
  echo "{\"torch\": \"$v\", \"installed\": \"$got\", \"source\": \"$src\"}" >> "$out"
  if [ "${MATRIX_TESTS:-1}" = 1 ]; then
    start=$(date +%s)
    "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/tracer --ignore tests/tracer/test_real_models.py > "$MATRIX_DIR/tests-$v.log" 2>&1
    rc=$?
    summary=$(grep -E '^(=+ )?[0-9]+ (passed|failed)|^FAILED|^ERROR' "$MATRIX_DIR/tests-$v.log" | tail -12 \
              | "$venv/bin/python" -c 'import json,sys; print(json.dumps(sys.stdin.read()))')
    echo "{\"torch\": \"$v\", \"tests\": \"tests/tracer\", \"rc\": $rc, \"summary\": $summary, \"seconds\": $(( $(date +%s) - start ))}" >> "$out"
    echo "   tests/tracer: rc $rc ($(( $(date +%s) - start )) s)"
  fi
  for prog in "${PROGRAMS[@]}"; do
    start=$(date +%s)
    name=$(basename "$prog" .py)
    if line=$(timeout 900 "$venv/bin/python" -m tests.tracer.realrun "$REPO/$prog" "$work/$name" 2> "$work-$name.err"); then
      echo "$line" | "$venv/bin/python" -c "import json,sys; d=json.load(sys.stdin); d['torch']='$v'; d['path']='$prog'; d['seconds']=$(( $(date +%s) - start )); print(json.dumps(d))" >> "$out"
    else
      echo "{\"torch\": \"$v\", \"path\": \"$prog\", \"program\": \"$name.py\", \"error\": $(tail -5 "$work-$name.err" | "$venv/bin/python" -c 'import json,sys; print(json.dumps(sys.stdin.read()))')}" >> "$out"
    fi
    echo "   $prog ($(( $(date +%s) - start )) s)"
  done
  rm -rf "$work" "$work"-*.err
  [ "${MATRIX_KEEP:-0}" = 1 ] || rm -rf "$venv"
done
"$PY" scripts/torch_matrix_table.py "$MATRIX_DIR/results" > docs/TORCH_MATRIX.md && echo "wrote docs/TORCH_MATRIX.md"
