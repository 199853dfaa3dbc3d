#!/usr/bin/env bash
# Issue 18 on a one-GPU H100/H200 (PyTorch, CuPy, nvidia-smi; no internet): the host-link test idle beside
# nvbandwidth ($NVBANDWIDTH: the binary, optional), the same while a matmul loop runs, two tests at once, the
# worker killed with SIGKILL mid-run, --allow-busy, --no-wait/--wait, idle again, and the contention check's cost.
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
run $PY benchmarks/bench_contention.py --live --runs 5

echo
echo "== 1. idle: host-link test of GPU0 (first run pays the kernel compile), then beside nvbandwidth"
run $PY -m p2ptop bench 0
echo; echo "\$ $PY -m p2ptop bench 0 --json > idle.json"
$PY -m p2ptop bench 0 --json > "$TMP/idle.json"; echo "[exit $?]"
$PY - "$TMP/idle.json" <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("no JSON:", e); sys.exit(0)
for r in d["results"]:
    print("verdict", r["verdict"], "status", r["status"], "link", {k: v for k, v in r["params"].get("link", {}).items() if k != "na"})
    for m in r["measurements"]:
        print(f"  {m['name']:<20} {m['value']} {m['unit']} (min {m['min']}, max {m['max']}) expected {m['expected']} {m['verdict']}")
    c = r.get("contention") or {}
    print("  contention: checked", c.get("checked"), "busy", c.get("busy"), "check_s", c.get("check_s"), "reasons", c.get("reasons"))
EOF
if [ -n "${NVBANDWIDTH:-}" ] && [ -x "${NVBANDWIDTH}" ]; then
  run "$NVBANDWIDTH" -t host_to_device_memcpy_ce device_to_host_memcpy_ce | tee "$TMP/nvb.txt"
  $PY - "$TMP/idle.json" "$TMP/nvb.txt" <<'EOF'
import json, re, sys
d = json.load(open(sys.argv[1]))["results"][0]
ours = {m["name"]: m["value"] for m in d["measurements"]}
text = open(sys.argv[2]).read()
for test, name in (("host_to_device_memcpy_ce", "h2d"), ("device_to_host_memcpy_ce", "d2h")):
    m = re.search(r"SUM " + test + r"\s+([\d.]+)", text)
    if m and ours.get(name):
        ref = float(m.group(1))
        print(f"{name}: p2ptop {ours[name]:.2f} GB/s, nvbandwidth {ref:.2f} GB/s, ratio {ours[name] / ref:.3f} (target >= 0.98)")
    else:
        print(f"{name}: no figure to compare (nvbandwidth line for {test} not found, or p2ptop gave none)")
EOF
else
  echo "skip nvbandwidth: \$NVBANDWIDTH is not set to an executable"
fi

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
echo "== 3. two host-link tests started together (one waits for the other's GPU lock)"
( $PY -m p2ptop bench 0 > "$TMP/a.txt" 2>&1; echo "[exit $?]" >> "$TMP/a.txt"; date -u +%T.%N >> "$TMP/a.txt" ) &
A=$!
( $PY -m p2ptop bench 0 > "$TMP/b.txt" 2>&1; echo "[exit $?]" >> "$TMP/b.txt"; date -u +%T.%N >> "$TMP/b.txt" ) &
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
echo "== 6. idle again"
run nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv
run $PY -m p2ptop bench 0
echo
echo "done in $(( $(date +%s) - T0 )) s"
