#!/usr/bin/env bash
# Issue 22 on a one-GPU machine, from wheels: benchmarks/device/diagnosis.sh (provoked PyTorch, CuPy and NCCL errors through
# explain on the live host, doctor) into $OUT/diagnosis.log, then every line of TEXTS (default .carry/texts.txt; "\n" in a
# line is a line break) through `p2ptop explain -` on the live host, the first lines of each answer into $OUT/onegpu2.log.
# Run from the repository root with the wheels in .whl/ (README "Verified on real hardware"):
#   run(kind=nvidia-h200, carry=[".whl", ".carry"]): bash benchmarks/device/texts_on_host.sh .carry/texts.txt
set -u
TEXTS=${1:-.carry/texts.txt}
python3 -m venv /tmp/v && /tmp/v/bin/pip install -q --no-index --no-deps .whl/*.whl || exit 1
(unset PYTHONDONTWRITEBYTECODE; /tmp/v/bin/python -m compileall -q p2ptop >/dev/null)
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/jsonschema-*.whl .whl/jsonschema_specifications-*.whl .whl/referencing-*.whl .whl/rpds_py-*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
OUT=$OUT timeout 300 bash benchmarks/device/diagnosis.sh >/dev/null 2>&1
export PYTHONPATH=$PWD
{ nvidia-smi -L; echo "### new-rule texts on the live one-GPU host"
  while IFS= read -r t; do
    [ -z "$t" ] && continue
    echo "== $t"
    printf '%b\n' "$t" | timeout 60 /tmp/v/bin/python -m p2ptop explain - 2>&1 \
      | grep -E "^[0-9]\. |No sign|No entry applies|points at|suggests|Nothing|in doubt|only 'it fails'|speaks of|Not a GPU-to-GPU|never met|launcher could not" | head -6
  done < "$TEXTS"; } > "$OUT/onegpu2.log" 2>&1
