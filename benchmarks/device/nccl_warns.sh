#!/usr/bin/env bash
# NCCL's own WARNs provoked for real on one GPU (nccl_refused_calls.py: two calls NCCL refuses), each program output and
# its WARN lines alone through `p2ptop explain` on the live host, then doctor. Expects p2ptop's wheel installed in /tmp/v
# (session_check.sh / texts_on_host.sh do it). The twenty-seventh session ran, in one device call:
#   bash benchmarks/device/session_check.sh .carry/texts40all.txt benchmarks/device/texts_r66.txt >/dev/null 2>&1
#   cat "$OUT/md5.txt" "$OUT/new.log"; bash benchmarks/device/nccl_warns.sh
export PYTHONPATH=$PWD:/tmp/site
{
python3 -c "import torch; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version())" 2>&1 | tail -1
for w in groupend selfsend; do
  echo "### $w: the program's output (NCCL_DEBUG=WARN)"
  NCCL_DEBUG=WARN timeout 120 python3 benchmarks/device/nccl_refused_calls.py $w > "$OUT/$w.txt" 2>&1; echo "rc $?"
  grep -v "^ *$" "$OUT/$w.txt" | tail -4
  echo "--- explain on the whole output (live host)"
  timeout 60 /tmp/v/bin/python -m p2ptop explain "$OUT/$w.txt" 2>&1 | grep -E "^[0-9]\. |No sign|NCCL warned|Nothing|Unsure|Symptoms" | head -4
  echo "--- explain on its WARN lines alone (live host)"
  grep "NCCL WARN" "$OUT/$w.txt" > /tmp/$w.warn
  timeout 60 /tmp/v/bin/python -m p2ptop explain /tmp/$w.warn 2>&1 | grep -E "^[0-9]\. |No sign|NCCL warned|Nothing|Unsure" | head -4
  timeout 60 /tmp/v/bin/python -m p2ptop explain /tmp/$w.warn --json 2>&1 | python3 -c "import json,sys; d=json.load(sys.stdin); print('json kind', d['kind'], 'warnings_unread', d['warnings_unread'])"
done
echo "### doctor"
timeout 120 /tmp/v/bin/python -m p2ptop doctor 2>&1 | grep -E "entries match|^Verdict|healthy" | head -3
} > "$OUT/final.log" 2>&1
cat "$OUT/final.log"
