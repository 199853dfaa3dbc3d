#!/usr/bin/env bash
# The de-duplication clean-up on a one-GPU H100/H200 (root, Python 3.12, CuPy, NCCL wheel, nvidia-smi; no internet).
# What changed underneath: the three GPU workers (bench/worker.py, worker_ipc.py, worker_nccl.py) share
# bench/worker_common.py (job line, bus-id lookup, CuPy import, CUDA/NCCL error names, exit with the parent); the
# copy-test runner starts, kills and reaps its worker through bench/children.py, as the NCCL and IPC runners do.
# This runs each of them for real and prints every command, its output and its exit status into $OUT/dedupe.log:
#  1. p2ptop bench 0: GPU 0's host link through the copy worker (expect healthy, exit 0; 3 if the GPU is busy)
#  2. the same with --timeout 2 and many repeats: the runner kills the worker's group (expect timeout, exit 1,
#     no worker left, no compute process left on the GPU)
#  3. the copy worker killed with SIGKILL mid-run (expect interrupted, 'killed by SIGKILL from outside', exit 4)
#  4. the IPC test, two processes on GPU 0 (bench 0 0 --ipc), and p2ptop nccl --all (one GPU: it runs the IPC test)
#  5. a one-rank NCCL communicator on GPU 0 through the rank worker (p2ptop nccl 0)
#  6. the NCCL rank killed with SIGKILL mid-run (expect a failed run naming SIGKILL, no rank left)
#  7. the workers by hand, with real CuPy: a bad job line, a GPU that is not there by bus id and by ordinal (expect
#     'bad job on stdin', 'not among the GPUs CUDA sees', cudaErrorInvalidDevice (101) named as CUDA names it)
# Run from the repository root: bash benchmarks/device/dedupe.sh   (< 3 minutes)
set -u
export PYTHONPATH="$PWD"
export NCCL_NVLS_ENABLE=0
OUTDIR="${OUT:-/tmp}"
mkdir -p "$OUTDIR"
exec > >(tee "$OUTDIR/dedupe.log") 2>&1
PY=python3
TMP=$(mktemp -d)
T0=$(date +%s)
step() { echo; echo "=== $* ===   [+$(( $(date +%s) - T0 )) s]"; }
run() { echo "\$ $*"; timeout 90 "$@"; echo "[exit $?]"; }
left() {  # worker processes and GPU compute processes still there
  echo "--- workers left: $(pgrep -fa 'p2ptop\.bench\.worker' | grep -v pgrep || echo none)"
  echo "--- compute processes on the GPU:"; nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader
}
kill_mid_run() {  # PATTERN CMD...: run CMD, SIGKILL the worker matching PATTERN 4 s after it appears, print all
  local pattern=$1 pid= job; shift
  echo "\$ $*   (its worker killed with SIGKILL after 4 s)"
  "$@" > "$TMP/killed.txt" 2>&1 & job=$!
  for _ in $(seq 1 100); do pid=$(pgrep -f "$pattern" | head -1); [ -n "$pid" ] && break; sleep 0.1; done
  echo "worker pid: ${pid:-not found}"
  sleep 4
  [ -n "$pid" ] && run kill -KILL "$pid"
  wait $job; echo "[exit $?]"
  cat "$TMP/killed.txt"
  left
}
cleanup() { rm -rf "$TMP"; }
trap cleanup EXIT

step "machine"
nvidia-smi -L
$PY -c "import cupy, sys; print('cupy', cupy.__version__, 'python', sys.version.split()[0])"
git log --oneline -1 2>/dev/null || true

step "1. host link of GPU 0 through the copy worker (first run compiles the kernels)"
run $PY -m p2ptop bench 0

step "2. --timeout 2 with 400 repeats: the runner kills the worker's process group (expect timeout, exit 1)"
run $PY -m p2ptop bench 0 --timeout 2 --repeats 400
sleep 1
left

step "3. the copy worker killed with SIGKILL mid-run (expect interrupted, exit 4)"
kill_mid_run 'p2ptop\.bench\.worker$' $PY -m p2ptop bench 0 --repeats 40

step "4a. IPC test: two processes on GPU 0, both handle types, against the same copy in one process"
run $PY -m p2ptop bench 0 0 --ipc --size 256 --copies 8 --repeats 3 --warmup 2
step "4b. p2ptop nccl --all on the one GPU (says NCCL needs a GPU per rank, runs the IPC test)"
run $PY -m p2ptop nccl --all

step "5. a one-rank NCCL communicator on GPU 0 through the rank worker"
run $PY -m p2ptop nccl 0 --min-bytes 8 --max-bytes 67108864 --factor 8 --iters 20 --warmup 5

step "6. the NCCL rank killed with SIGKILL mid-run (expect a failed run that names SIGKILL)"
kill_mid_run 'p2ptop\.bench\.worker_nccl$' $PY -m p2ptop nccl 0 --min-bytes 1073741824 --max-bytes 1073741824 \
  --iters 10000 --warmup 5 --timeout 40

step "7. the workers by hand with real CuPy (JSON lines on stdout; NCCL's own lines go to stderr)"
echo "--- 7a. a bad job line, each worker (expect one fatal 'bad job on stdin', exit 2)"
for w in worker worker_ipc worker_nccl; do
  echo "\$ echo '[1]' | $PY -m p2ptop.bench.$w"; echo '[1]' | timeout 60 $PY -m p2ptop.bench.$w 2>/dev/null; echo "[exit $?]"
done
echo "--- 7b. NCCL rank: a bus id CUDA does not see (expect error step setup, LookupError ... not among the GPUs CUDA sees)"
J='{"rank": 0, "nranks": 1, "bus_id": "00000000:FF:1F.7", "ops": ["all_reduce"], "sizes": [8]}'
echo "\$ echo '$J' | $PY -m p2ptop.bench.worker_nccl"; echo "$J" | timeout 60 $PY -m p2ptop.bench.worker_nccl 2>/dev/null; echo "[exit $?]"
echo "--- 7c. NCCL rank: CUDA ordinal 7 on a one-GPU host (expect cudaErrorInvalidDevice, code 101, CUDA's own text)"
J='{"rank": 0, "nranks": 1, "gpu": 7, "ops": ["all_reduce"], "sizes": [8]}'
echo "\$ echo '$J' | $PY -m p2ptop.bench.worker_nccl"; echo "$J" | timeout 60 $PY -m p2ptop.bench.worker_nccl 2>/dev/null; echo "[exit $?]"
echo "--- 7d. IPC import side: a bus id CUDA does not see (expect hello, then error step setup naming the bus id)"
J='{"side": "import", "bus_a": "00000000:FF:1F.7", "bus_b": "00000000:FF:1F.7", "kinds": ["legacy"], "size_mib": 1, "copies": 1, "repeats": 1, "warmup": 0, "socket_dir": "/tmp"}'
echo "\$ echo '$J' | $PY -m p2ptop.bench.worker_ipc"; echo "$J" | timeout 60 $PY -m p2ptop.bench.worker_ipc; echo "[exit $?]"
echo "--- 7e. copy worker: GPU 0's bus id replaced by one CUDA does not see (expect pair_start, error 'GPU not visible to"
echo "        CUDA', pair_end failed, done; exit 0). stdin stays open 8 s: the worker exits at its EOF"
J=$($PY -c 'import json; from p2ptop.bench.runner import BenchOptions
print(json.dumps({"pairs": [[0, 0]], "pci_bus_ids": {"0": "00000000:FF:1F.7"}, "options": BenchOptions().job()}))')
echo "\$ (echo '<job: pairs [[0, 0]], pci_bus_ids {\"0\": \"00000000:FF:1F.7\"}>'; sleep 8) | $PY -m p2ptop.bench.worker"
(echo "$J"; sleep 8) | timeout 60 $PY -m p2ptop.bench.worker; echo "[exit ${PIPESTATUS[1]}]"
left

step "done in $(( $(date +%s) - T0 )) s"
