#!/usr/bin/env bash
# Issue 22 on two GPUs: real logs of healthy runs with NCCL settings, and of application faults on healthy hardware (a
# collective one rank never calls, a rank that dies mid-run), each through `p2ptop explain` on the live host. None of
# them is a P2P fault: no failure entry may be likely or possible on the healthy ones, and the application faults must
# not be blamed on the GPUs' link. Logs to $OUT/x2-app-logs.tar.gz, answers to $OUT/x2-app-faults.log.
#
#   P2PTOP_PY=/tmp/v/bin/python bash benchmarks/device/x2_app_faults.sh
#
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0 and kin), as the lent multi-GPU machines require.
OUT=${OUT:-/tmp/x2-app-out}
. "$(dirname "$0")/x2_env.sh" x2-app-faults.log  # set -u, NVLink multicast off, PY, W, OUT, the log, T0

cat > "$W/ar.py" <<'PY'
import os, sys, datetime, torch, torch.distributed as dist
mode = sys.argv[1] if len(sys.argv) > 1 else "ok"
dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=20))
rank = dist.get_rank()
torch.cuda.set_device(rank)
x = torch.ones(1 << 22, device="cuda")
for i in range(5):
    if mode == "skip" and rank == 1 and i == 2:
        break                       # rank 1 never calls the third all_reduce: rank 0 waits for it
    if mode == "die" and rank == 1 and i == 2:
        os._exit(3)                 # rank 1 dies between two collectives
    dist.all_reduce(x)
torch.cuda.synchronize()
if mode == "skip" and rank == 1:
    import time; time.sleep(60)
print(f"rank {rank}: done, x[0] = {x[0].item()}")
dist.destroy_process_group()
PY

summary() {  # the top entries of `explain --json`, one line
  timeout 90 $PY -m p2ptop explain "$1" --json 2>/dev/null | $PY "$(dirname "$0")/explain_top.py" 3
}

job() {  # job NAME MODE [VAR=VALUE ...]
  local name=$1 mode=$2; shift 2
  env "$@" NCCL_DEBUG=INFO timeout 120 torchrun --standalone --nproc_per_node=2 "$W/ar.py" "$mode" > "$W/$name.log" 2>&1
  echo; echo "================ $name ($mode; $*): exit $?; $(grep -c ' via ' "$W/$name.log") channel lines"
  grep -m3 -E "NCCL WARN|Error|error:|Watchdog|timed out|Timeout" "$W/$name.log" | cut -c1-200
  timeout 90 $PY -m p2ptop explain "$W/$name.log" --top 3 2>&1 | grep -E "^[0-9]\. |No sign|Not a GPU|Unsure|Symptoms" | cut -c1-220
  summary "$W/$name.log"
}

job ok-ring-simple ok NCCL_ALGO=Ring NCCL_PROTO=Simple
job ok-cumem-off ok NCCL_CUMEM_ENABLE=0
job ok-shm-off ok NCCL_SHM_DISABLE=1
job ok-reordered ok CUDA_VISIBLE_DEVICES=1,0
job ok-debug-all ok NCCL_DEBUG_SUBSYS=ALL
job skip-collective skip
job rank-dies die
(cd "$W" && tar czf "$OUT/x2-app-logs.tar.gz" *.log)
echo; echo "done in $(( $(date +%s) - T0 )) s"
