#!/usr/bin/env bash
# One-GPU check of this session's rules (2026-11-28, fourth session): provoked errors through explain on the live host,
# the new-rule texts, doctor.
set -u
python3 -m venv /tmp/v && /tmp/v/bin/pip install -q --no-index --no-deps .whl/*.whl || exit 1
(unset PYTHONDONTWRITEBYTECODE; /tmp/v/bin/python -m compileall -q p2ptop >/dev/null)
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/jsonschema-*.whl .whl/jsonschema_specifications-*.whl .whl/referencing-*.whl .whl/rpds_py-*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
OUT=$OUT timeout 300 bash benchmarks/device/diagnosis.sh >/dev/null 2>&1
export PYTHONPATH=$PWD
{ nvidia-smi -L; echo "### new-rule texts on the live one-GPU host"; while IFS= read -r t; do [ -z "$t" ] && continue; echo "== $t"; printf '%b\n' "$t" | timeout 60 /tmp/v/bin/python -m p2ptop explain - 2>&1 | grep -E "^[0-9]\. |No sign|No entry applies|points at|Nothing|in doubt|only 'it fails'" | head -6; done < .carry/texts.txt; } > $OUT/onegpu2.log 2>&1
