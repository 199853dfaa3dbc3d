#!/usr/bin/env bash
# Two GPUs of one host (nvidia-h200-x2): NCCL's "Check P2P Type" line for real (transport.cc, NCCL 2.28.9), by default and
# with NCCL_P2P_LEVEL=LOC (isAllDirectP2p 0, isAllCudaP2p 1, SHM), each log through `p2ptop explain --text-only`, then the
# LOC log trimmed as a paste may hold it (the P2P type line and the channel lines, NCCL's prefix cut off, the
# "set by environment" line dropped): the twenty-eighth session's p2p_beyond_level decision and its known limitation.
python3 -m venv /tmp/v && /tmp/v/bin/pip install -q --no-index --no-deps .whl/*.whl || exit 1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/jsonschema-*.whl .whl/jsonschema_specifications-*.whl .whl/referencing-*.whl .whl/rpds_py-*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
ex() { timeout 60 /tmp/v/bin/python -m p2ptop explain --text-only "$1" 2>&1 | grep -E "^[0-9]\. |No sign|Unsure|Symptoms" | head -5; }
for m in default loc; do
  echo "### $m"
  if [ $m = loc ]; then NCCL_P2P_LEVEL=LOC NCCL_DEBUG=INFO timeout 240 python3 benchmarks/device/one_gpu_each.py all > "$OUT/$m.log" 2>&1; echo "rc $?"
  else NCCL_DEBUG=INFO timeout 240 python3 benchmarks/device/one_gpu_each.py all > "$OUT/$m.log" 2>&1; echo "rc $?"; fi
  grep -E "^rank |Check P2P Type|set by environment|via " "$OUT/$m.log" | sed 's/^[^ ]* //; s/Channel [0-9]*\/[0-9]* : //' | sort | uniq -c | sort -rn | head -6
  echo "--- explain --text-only, the whole log"; ex "$OUT/$m.log"
done
echo "### the loc log trimmed: the P2P type and channel lines without NCCL's prefix"
{ grep -m1 "Check P2P Type" "$OUT/loc.log" | sed 's/^.*NCCL INFO //'
  grep -E " via " "$OUT/loc.log" | sed 's/^.*NCCL INFO //' | sort -u | head -4; } > "$OUT/loc-trimmed.txt"
cat "$OUT/loc-trimmed.txt"; echo "---"; ex "$OUT/loc-trimmed.txt"
