#!/usr/bin/env bash
# Issue 22 on two GPUs: real NCCL logs in the framings a launcher or NCCL itself gives them, healthy and with
# NCCL_P2P_DISABLE=1: torchrun --tee 3 (each line behind "[default0]:"), NCCL_DEBUG_TIMESTAMP_LEVELS=ALL (NCCL 2.26+: every
# line behind "[%F %T] "), both at once. Each log through `p2ptop explain --text-only`: the healthy ones healthy, the
# P2P-disabled ones answered by the variable's entry, as their plain forms are (x2_diagnosis.sh).
# Logs to $OUT/x2-prefixed/, answers to $OUT/x2-prefixed-logs.log. About 1.5 minutes.
#
#   run(kind=nvidia-h200-x2, carry=[".whl"]): P2PTOP_PY=/tmp/v/bin/python bash benchmarks/device/x2_prefixed_logs.sh
#
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0 and kin), as the lent multi-GPU machines require.
OUT=${OUT:-/tmp/x2-prefixed-out}
. "$(dirname "$0")/x2_env.sh" x2-prefixed-logs.log  # set -u, NVLink multicast off, PY, W, OUT, the log, T0
D="$OUT/x2-prefixed"
mkdir -p "$D"
cp "$(dirname "$0")/allreduce.py" "$W/ar.py"  # the two-rank all-reduce (benchmarks/device/allreduce.py)
job() {  # job NAME "TORCHRUN OPTIONS" [VAR=VALUE ...]
  local name=$1 opts=$2; shift 2
  env "$@" NCCL_DEBUG=INFO timeout -k 5 90 torchrun $opts --standalone --nproc_per_node=2 "$W/ar.py" < /dev/null > "$D/$name.log" 2>&1
  echo; echo "================ $name (torchrun $opts; $*): exit $?, $(wc -l < "$D/$name.log") lines; e.g. $(grep -m1 'NCCL INFO' "$D/$name.log" | cut -c1-110)"
  printf '  text-only:'; timeout 60 $PY -m p2ptop explain "$D/$name.log" --text-only --json 2>/dev/null | $PY "$(dirname "$0")/explain_top.py" 3
}
job tee-healthy "--tee 3"
job tee-p2p-disable "--tee 3" NCCL_P2P_DISABLE=1
job ts-healthy "" NCCL_DEBUG_TIMESTAMP_LEVELS=ALL
job ts-p2p-disable "" NCCL_DEBUG_TIMESTAMP_LEVELS=ALL NCCL_P2P_DISABLE=1
job tee-ts-p2p-level-loc "--tee 3" NCCL_DEBUG_TIMESTAMP_LEVELS=ALL NCCL_P2P_LEVEL=LOC
tar czf "$OUT/x2-prefixed.tar.gz" -C "$OUT" x2-prefixed 2>/dev/null
echo "== done in $(( $(date +%s) - T0 )) s"
