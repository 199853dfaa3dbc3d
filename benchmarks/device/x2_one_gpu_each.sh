#!/usr/bin/env bash
# Two GPUs of one host (nvidia-h200-x2): one_gpu_each.py with every GPU visible to both ranks, with each rank given only
# its own GPU (CUDA_VISIBLE_DEVICES), the same with NCCL's legacy CUDA IPC path (NCCL_CUMEM_ENABLE=0), and with the peer's
# device node hidden too (`isolated`, root); each log and a user's words through `p2ptop explain --text-only`.
# Results of the twenty-seventh session: benchmarks/results/h200x2-2026-11-30-own-gpu.
python3 -m venv /tmp/v && /tmp/v/bin/pip install -q --no-index --no-deps .whl/*.whl || exit 1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/jsonschema-*.whl .whl/jsonschema_specifications-*.whl .whl/referencing-*.whl .whl/rpds_py-*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
for m in all own legacy; do
  echo "### $m"
  if [ $m = legacy ]; then NCCL_CUMEM_ENABLE=0 NCCL_DEBUG=INFO timeout 240 python3 benchmarks/device/one_gpu_each.py own > "$OUT/$m.log" 2>&1; echo "rc $?"
  else NCCL_DEBUG=INFO timeout 240 python3 benchmarks/device/one_gpu_each.py $m > "$OUT/$m.log" 2>&1; echo "rc $?"; fi
  grep -E "^rank |via |WARN|Error|error" "$OUT/$m.log" | sed 's/^[^ ]* //; s/Channel [0-9]*\/[0-9]* : //' | sort | uniq -c | sort -rn | head -8
done
for f in own legacy; do
  echo "### explain --text-only: the user's words and the $f log"
  { echo "Each rank only sees its own GPU (CUDA_VISIBLE_DEVICES=<rank>), and the all_reduce between the two H200s is much slower than with both GPUs visible."; cat "$OUT/$f.log"; } > /tmp/words_$f.txt
  timeout 60 /tmp/v/bin/python -m p2ptop explain --text-only /tmp/words_$f.txt 2>&1 | grep -E "^[0-9]\. |No sign|Unsure|Symptoms" | head -4
  echo "--- the $f log alone"
  timeout 60 /tmp/v/bin/python -m p2ptop explain --text-only "$OUT/$f.log" 2>&1 | grep -E "^[0-9]\. |No sign|Unsure|Symptoms" | head -4
done
for m in isolated isolated-legacy; do
  echo "### $m"
  if [ $m = isolated-legacy ]; then NCCL_CUMEM_ENABLE=0 NCCL_DEBUG=INFO timeout 150 python3 benchmarks/device/one_gpu_each.py isolated > "$OUT/$m.log" 2>&1; echo "rc $?"
  else NCCL_DEBUG=INFO timeout 150 python3 benchmarks/device/one_gpu_each.py isolated > "$OUT/$m.log" 2>&1; echo "rc $?"; fi
  grep -E "^rank |via |WARN|rror|mount|unshare" "$OUT/$m.log" | sed 's/^[^ ]* //; s/Channel [0-9]*\/[0-9]* : //' | sort | uniq -c | sort -rn | head -8
  echo "--- explain --text-only, the log alone"
  timeout 60 /tmp/v/bin/python -m p2ptop explain --text-only "$OUT/$m.log" 2>&1 | grep -E "^[0-9]\. |No sign|Unsure|Symptoms" | head -4
done
