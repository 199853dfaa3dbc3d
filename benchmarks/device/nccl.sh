#!/usr/bin/env bash
# Issue 17 on a one-GPU H100/H200 (root, Python 3.12, PyTorch, CuPy 14 (cupy-cuda13x), nvidia-nccl-cu13; no internet).
# Run from the repository root: bash benchmarks/device/nccl.sh   (writes everything to $OUT/nccl.log; < 3 minutes)
#  1. CUDA IPC between two processes on GPU 0, both handle types (legacy, cuMem POSIX fd), against the same copy in one process
#  2. the same with the import side in its own IPC namespace (unshare -i), then its own PID namespace, then with its GPU
#     hidden by CUDA_VISIBLE_DEVICES: the error and its finding
#  3. doctor --pid on a running PyTorch job started with NCCL_P2P_DISABLE=1, on another user's process, and as a
#     non-root user on root's job ("needs root")
#  4. p2ptop nccl --all on the one GPU (says NCCL needs a distinct GPU per rank, runs the IPC test instead)
#  5. the NCCL rank worker for real: two ranks on the one GPU (NCCL refuses; its own error and log come back through the runner)
#  6. nccl --log on a 100 MB log, timed on an idle machine
set -u
export PYTHONPATH="$PWD"
OUTDIR="${OUT:-/tmp}"
LOG="$OUTDIR/nccl.log"
exec > >(tee "$LOG") 2>&1
PY=python3
step() { echo; echo "=== $* ==="; }
run() { echo "\$ $*"; timeout 90 "$@"; echo "[exit $?]"; }
cleanup() { for p in ${TORCH:-} ${OTHER:-}; do kill "$p" 2>/dev/null; done; userdel p2ptopdev 2>/dev/null; }
trap cleanup EXIT
T0=$(date +%s)

step "machine"
nvidia-smi -L
$PY -c "import cupy, sys; print('cupy', cupy.__version__, 'python', sys.version.split()[0])"
$PY -c "from cupy.cuda import nccl; v = nccl.get_version(); print('NCCL through cupy.cuda.nccl:', v)" || echo "cupy.cuda.nccl did not load by itself (the worker also tries the nvidia-nccl wheel's libnccl)"
$PY -m pip list 2>/dev/null | grep -iE "nccl|cupy|torch " || true
command -v unshare setpriv useradd || true

step "1. IPC test, two processes on GPU 0, both handle types, vs the in-process copy"
run $PY -m p2ptop bench 0 0 --ipc --size 512 --copies 8 --repeats 5 --warmup 2
run $PY -m p2ptop bench 0 0 --ipc --size 64 --copies 8 --repeats 5 --warmup 2

step "2a. the import side in its own IPC namespace (unshare -i)"
P2PTOP_IPC_WRAP_IMPORT="unshare -i" run $PY -m p2ptop bench 0 0 --ipc --size 256 --timeout 20
step "2b. the import side in its own PID namespace (unshare -p -f)"
P2PTOP_IPC_WRAP_IMPORT="unshare -p -f" run $PY -m p2ptop bench 0 0 --ipc --size 256 --timeout 20
step "2c. the same, JSON (the findings the knowledge base matches: bench.error, error.cuda)"
P2PTOP_IPC_WRAP_IMPORT="unshare -i" run $PY -m p2ptop bench 0 0 --ipc --size 64 --timeout 20 --json

step "2d. the import side with its GPU hidden by CUDA_VISIBLE_DEVICES (a peer hidden from one process)"
P2PTOP_IPC_WRAP_IMPORT="env CUDA_VISIBLE_DEVICES=" run $PY -m p2ptop bench 0 0 --ipc --size 64 --timeout 20

step "3. doctor --pid on a PyTorch job started with NCCL_P2P_DISABLE=1"
READY=$(mktemp)
NCCL_P2P_DISABLE=1 NCCL_DEBUG=WARN $PY -c "
import sys, time, torch
x = torch.ones(1 << 20, device='cuda')
open(sys.argv[1], 'w').write('ready')
time.sleep(150)" "$READY" &
TORCH=$!
for _ in $(seq 1 60); do [ -s "$READY" ] && break; sleep 0.5; done
echo "PyTorch job pid $TORCH ($(cat "$READY"))"
run $PY -m p2ptop doctor --pid "$TORCH"
step "3b. doctor --pid on a process of another user (root reads it)"
useradd -M -s /usr/sbin/nologin p2ptopdev 2>/dev/null || true
setpriv --reuid=p2ptopdev --regid=p2ptopdev --clear-groups env NCCL_SOCKET_IFNAME=lo sleep 150 &
OTHER=$!
sleep 0.5
ps -o pid,user,cmd -p "$OTHER" || true
run $PY -m p2ptop doctor --pid "$OTHER"
step "3c. doctor --pid as that other (non-root) user on root's PyTorch job: needs root"
run setpriv --reuid=p2ptopdev --regid=p2ptopdev --clear-groups env PYTHONPATH="$PWD" HOME=/tmp $PY -m p2ptop doctor --pid "$TORCH"

step "4. p2ptop nccl --all on the one GPU"
run $PY -m p2ptop nccl --all

step "5. the NCCL rank worker for real: two ranks on GPU 0 (NCCL refuses two ranks on one GPU; the runner brings back its words and log)"
run $PY - <<'PYEOF'
from p2ptop.sources import open_snapshot
from p2ptop.nccl.runner import NcclOptions, run_group
from p2ptop.commands.nccl import table_lines
snap = open_snapshot()
r = run_group(snap, [0, 0], NcclOptions(sizes=[8, 1 << 20], iters=5, warmup=1, timeout_s=60, same_gpu_probe=True))
print("status:", r.status, "| NCCL", r.nccl_version, "|", round(r.duration_s or 0, 2), "s")
for e in r.errors:
    print("error:", e)
print("\n".join(table_lines(r.table)))
print("NCCL output kept:", r.log_bytes, "bytes; first lines:")
print("\n".join(r.log_text.splitlines()[:25]))
PYEOF

step "6. nccl --log on a 100 MB NCCL log (target <= 5 s)"
run $PY benchmarks/bench_nccl_cli_log.py 100

step "done in $(( $(date +%s) - T0 )) s"
