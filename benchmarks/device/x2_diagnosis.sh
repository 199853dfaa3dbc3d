#!/usr/bin/env bash
# Issue 22 on two GPUs (nvidia-h200-x2 or nvidia-h100-x2): real NCCL_DEBUG=INFO logs of a two-rank torchrun
# all-reduce, healthy and with NCCL_P2P_DISABLE=1, NCCL_P2P_LEVEL=LOC, LOC + NCCL_SHM_DISABLE=1, P2P + SHM off with
# NCCL_NET_DISABLE_INTRA=1 (no transport left) and a 64 KiB
# /dev/shm in a private mount namespace (NCCL_CUMEM_ENABLE=0), each through `p2ptop explain` on the live host
# (text and --json) and `p2ptop nccl --log`; two ranks on GPU 0 (and that log cut before NCCL's refusal); PyTorch's
# peer-access errors on two GPUs; then `doctor` and
# `explain` of the healthy log on this healthy host (no failure entry may be likely or possible).
# The raw logs go to $OUT/x2-logs.tar.gz, everything printed to $OUT/x2-diagnosis.log. About 2 minutes.
#
#   P2PTOP_PY=/tmp/v/bin/python bash benchmarks/device/x2_diagnosis.sh
#
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0 and kin), as the lent multi-GPU machines require.
OUT=${OUT:-/tmp/x2-diagnosis-out}
. "$(dirname "$0")/x2_env.sh" x2-diagnosis.log  # set -u, NVLink multicast off, PY, W, OUT, the log, T0
export PYTHONPATH=$PWD  # the repository's p2ptop, as this script always ran it

cp "$(dirname "$0")/allreduce.py" "$W/ar.py"  # the two-rank all-reduce (benchmarks/device/allreduce.py)

summary() {  # the top entries of `explain --json`, one line
  timeout 90 $PY -m p2ptop explain "$1" --json 2>/dev/null | $PY "$(dirname "$0")/explain_top.py" 4
}

judge() {  # one log through explain (live host), its JSON summary, and nccl --log
  local name=$1 f=$2
  echo; echo "================ $name: $(grep -c ' via ' "$f") channel lines; first: $(grep -m1 ' via ' "$f" | cut -c1-160)"
  grep -m3 -E "NCCL WARN|Error|error:" "$f" | cut -c1-200
  echo "---- \$ p2ptop explain $name.log --top 3   (live host)"
  timeout 90 $PY -m p2ptop explain "$f" --top 3 2>&1 | cut -c1-220 | head -60
  summary "$f"
  echo "---- \$ p2ptop nccl --log $name.log"
  timeout 90 $PY -m p2ptop nccl --log "$f" 2>&1 | cut -c1-220 | head -30
}

job() {  # job NAME [VAR=VALUE ...]: a torchrun all-reduce with NCCL_DEBUG=INFO in that environment
  local name=$1; shift
  env "$@" NCCL_DEBUG=INFO timeout 150 torchrun --standalone --nproc_per_node=2 "$W/ar.py" > "$W/$name.log" 2>&1
  echo "-- job $name ($*): exit $?"
  judge "$name" "$W/$name.log"
}

job healthy
job p2p-disable NCCL_P2P_DISABLE=1
job p2p-level-loc NCCL_P2P_LEVEL=LOC
job loc-shm-off NCCL_P2P_LEVEL=LOC NCCL_SHM_DISABLE=1
# P2P and SHM off and the network refused between ranks of one host: NCCL's "No transport found for rank" (transport.cc)
job no-transport NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NET_DISABLE_INTRA=1
# two ranks of one communicator on GPU 0 (NCCL refuses them: "Duplicate GPU detected" / "Multiple Ranks ...")
sed 's/torch.cuda.set_device(rank)/torch.cuda.set_device(0)/' "$W/ar.py" > "$W/ar_same.py"
NCCL_DEBUG=INFO timeout 150 torchrun --standalone --nproc_per_node=2 "$W/ar_same.py" > "$W/same-gpu.log" 2>&1
echo "-- job same-gpu (both ranks on GPU 0): exit $?"
judge same-gpu "$W/same-gpu.log"
# the same log cut before NCCL's refusal: only the rank lines say the ranks share a GPU
grep -v -E "NCCL WARN|Duplicate GPU|Multiple Ranks|Multiple ranks" "$W/same-gpu.log" | grep "NCCL INFO" > "$W/same-gpu-cut.log"
judge same-gpu-cut "$W/same-gpu-cut.log"
TORCHRUN=$(command -v torchrun)
unshare -m sh -c "mount -t tmpfs -o size=64k tmpfs /dev/shm && NCCL_CUMEM_ENABLE=0 NCCL_DEBUG=INFO timeout 150 $TORCHRUN --standalone --nproc_per_node=2 $W/ar.py" > "$W/shm-64k.log" 2>&1
echo "-- job shm-64k (unshare -m, 64 KiB /dev/shm, NCCL_CUMEM_ENABLE=0): exit $?"
judge shm-64k "$W/shm-64k.log"

cat > "$W/peer.py" <<'PY'
import os, subprocess, sys
D = sys.argv[1]
cases = {
  "torch-visible-0-to-cuda1": ("import torch; a = torch.ones(4, device='cuda:0'); a.to('cuda:1')", {"CUDA_VISIBLE_DEVICES": "0"}),
  "torch-set-device-2": ("import torch; torch.cuda.set_device(2); torch.zeros(1, device='cuda')", {}),
  "cupy-enable-peer-twice": ("import cupy; cupy.cuda.Device(0).use(); cupy.cuda.runtime.deviceEnablePeerAccess(1); cupy.cuda.runtime.deviceEnablePeerAccess(1)", {}),
  "cupy-disable-peer-never-enabled": ("import cupy; cupy.cuda.Device(0).use(); cupy.cuda.runtime.deviceDisablePeerAccess(1)", {}),
}
for name, (code, env) in cases.items():
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=90, env=dict(os.environ, **env))
    open(os.path.join(D, name + ".txt"), "w").write((r.stdout + r.stderr)[-6000:])
    print(f"{name}: exit {r.returncode}")
PY
python3 "$W/peer.py" "$W"
for n in torch-visible-0-to-cuda1 torch-set-device-2 cupy-enable-peer-twice cupy-disable-peer-never-enabled; do
  echo; echo "================ $n (last lines)"; tail -n 3 "$W/$n.txt" | cut -c1-220
  echo "---- \$ p2ptop explain $n.txt --top 3   (live host)"
  timeout 90 $PY -m p2ptop explain "$W/$n.txt" --top 3 2>&1 | cut -c1-220 | head -30
  summary "$W/$n.txt"
done

echo; echo "================ doctor on this healthy host (no failure entry may be offered)"
timeout 120 $PY -m p2ptop doctor 2>&1 | tail -30
echo "[exit ${PIPESTATUS[0]}]"
(cd "$W" && tar czf "$OUT/x2-logs.tar.gz" *.log *.txt)
echo; echo "done in $(( $(date +%s) - T0 )) s"
