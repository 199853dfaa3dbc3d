#!/usr/bin/env bash
# Issue 18 on a one-GPU H100/H200 (PyTorch, CuPy, nvidia-smi; no internet): the host-link test idle beside
# nvbandwidth ($NVBANDWIDTH: the binary, optional; 3 rounds, ratios printed, both-ways figures beside nvbandwidth's
# bidirectional host tests), the same while a matmul loop runs, two tests at once, the worker killed with SIGKILL
# mid-run, --allow-busy, --no-wait/--wait, idle again (verdict healthy expected), and the contention check's cost.
# Prints every command and its output (and its exit status) into $OUT/busy.log. Under 3 minutes.
set -u
export PYTHONPATH=$PWD
OUT=${OUT:-/tmp/busy-out}
mkdir -p "$OUT"
TMP=$(mktemp -d)
exec > >(tee "$OUT/busy.log") 2>&1
PY=${PY:-python3}
T0=$(date +%s)

run() {  # print the command, run it, print its exit status
  echo
  echo "\$ $*   [$(date -u +%T), +$(( $(date +%s) - T0 )) s]"
  "$@"
  echo "[exit $?]"
}

cleanup() { [ -n "${MM:-}" ] && kill "$MM" 2>/dev/null; [ -n "${HOLD:-}" ] && kill "$HOLD" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT

echo "== setup"
run nvidia-smi -L
run nvidia-smi --query-gpu=index,name,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,utilization.gpu --format=csv
run $PY -c "import cupy, pynvml; print('cupy', cupy.__version__, 'cuda runtime', cupy.cuda.runtime.runtimeGetVersion())"
run git log --oneline -1

echo
echo "== 0. the contention check's added time (target <= 0.2 s)"
echo "(the check before a test runs while the worker starts; the fake worker starts at once: the worst case)"
run $PY benchmarks/bench_contention.py --live --runs 5
run $PY benchmarks/bench_contention.py --live --real-worker --runs 5

echo
echo "== 1. idle: host-link test of GPU0 (first run pays the kernel compile), then 3 rounds beside nvbandwidth"
echo "checks: verdict healthy on this healthy Gen5 x16 link; H->D, D->H >= 0.98 x nvbandwidth (each round and the"
echo "median of the rounds); both ways (each direction while the other runs) beside nvbandwidth's bidirectional tests;"
echo "the time the test waited for the contention check <= 0.2 s"
run $PY -m p2ptop bench 0
ROUNDS=()
for i in 1 2 3; do
  echo; echo "\$ $PY -m p2ptop bench 0 --json > idle$i.json   [$(date -u +%T)]"
  $PY -m p2ptop bench 0 --json > "$TMP/idle$i.json"; echo "[exit $?]"
  if [ -n "${NVBANDWIDTH:-}" ] && [ -x "${NVBANDWIDTH}" ]; then
    echo "\$ $NVBANDWIDTH -j -t host_to_device_memcpy_ce device_to_host_memcpy_ce host_to_device_bidirectional_memcpy_ce device_to_host_bidirectional_memcpy_ce > nvb$i.json   [$(date -u +%T)]"
    "$NVBANDWIDTH" -j -t host_to_device_memcpy_ce device_to_host_memcpy_ce host_to_device_bidirectional_memcpy_ce \
      device_to_host_bidirectional_memcpy_ce > "$TMP/nvb$i.json"; echo "[exit $?]"
    cat "$TMP/nvb$i.json"
  fi
  ROUNDS+=("$TMP/idle$i.json" "$TMP/nvb$i.json")
done
echo; echo "--- p2ptop beside nvbandwidth, round by round (benchmarks/device/compare_host_link.py)"
$PY benchmarks/device/compare_host_link.py "${ROUNDS[@]}"

echo
echo "== 2. busy: a bf16 matmul loop on GPU0 (background), then the same test, doctor, and --allow-busy"
cat > "$TMP/matmul.py" <<'EOF'
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16); b = torch.randn_like(a)
end = time.time() + 90
print("matmul loop running", flush=True)
while time.time() < end:
    for _ in range(20):
        c = a @ b
    torch.cuda.synchronize()
EOF
$PY "$TMP/matmul.py" > "$TMP/matmul.log" 2>&1 & MM=$!
for i in $(seq 1 60); do grep -q running "$TMP/matmul.log" 2>/dev/null && break; sleep 0.5; done
sleep 2
cat "$TMP/matmul.log"
run nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv
run nvidia-smi --query-gpu=utilization.gpu,pcie.link.gen.current --format=csv
run $PY -m p2ptop bench 0
run $PY -m p2ptop doctor
run $PY -m p2ptop bench 0 --allow-busy
kill $MM 2>/dev/null; wait $MM 2>/dev/null; MM=
sleep 2

echo
echo "== 3. two host-link tests started together (one waits for the other's GPU lock; both healthy, exit 0, expected)"
( $PY -m p2ptop bench 0 --tests h2d,d2h > "$TMP/a.txt" 2>&1; echo "[exit $?]" >> "$TMP/a.txt"; date -u +%T.%N >> "$TMP/a.txt" ) &
A=$!
( $PY -m p2ptop bench 0 --tests h2d,d2h > "$TMP/b.txt" 2>&1; echo "[exit $?]" >> "$TMP/b.txt"; date -u +%T.%N >> "$TMP/b.txt" ) &
B=$!
wait $A $B
echo "--- first:"; cat "$TMP/a.txt"; echo "--- second:"; cat "$TMP/b.txt"

echo
echo "== 4. the worker killed with SIGKILL mid-run (as the OOM killer would)"
$PY -m p2ptop bench 0 --repeats 20 > "$TMP/k.txt" 2>&1 & K=$!
WPID=
for i in $(seq 1 100); do WPID=$(pgrep -f p2ptop.bench.worker | head -1); [ -n "$WPID" ] && break; sleep 0.1; done
echo "worker pid: ${WPID:-not found}"
sleep 3
[ -n "$WPID" ] && run kill -KILL "$WPID"
wait $K; echo "[exit of bench: $?]"
cat "$TMP/k.txt"

echo
echo "== 5. --no-wait and --wait while another process holds GPU0's lock"
$PY - > "$TMP/hold.txt" 2>&1 <<'EOF' &
import time
from p2ptop.bench.lock import GpuLocks
from p2ptop.sources import open_snapshot
locks = GpuLocks(open_snapshot(), [0])
assert locks.acquire(0) is None
print("holding", flush=True)
time.sleep(20)
EOF
HOLD=$!
for i in $(seq 1 50); do grep -q holding "$TMP/hold.txt" 2>/dev/null && break; sleep 0.2; done
cat "$TMP/hold.txt"
run $PY -m p2ptop bench 0 --no-wait
run $PY -m p2ptop bench 0 --wait 1
kill $HOLD 2>/dev/null; wait $HOLD 2>/dev/null; HOLD=

echo
echo "== 6. idle again (verdict healthy, exit 0, expected on a healthy link)"
run nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv
run $PY -m p2ptop bench 0
echo
echo "done in $(( $(date +%s) - T0 )) s"
