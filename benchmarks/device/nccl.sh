#!/usr/bin/env bash
# Issue 17 on a one-GPU H100/H200 (root, Python 3.12, PyTorch, CuPy 14 (cupy-cuda13x), nvidia-nccl-cu13; no internet).
# Run from the repository root: bash benchmarks/device/nccl.sh   (writes everything to $OUT/nccl.log; < 3 minutes)
#  1. CUDA IPC between two processes on GPU 0, both handle types (legacy, cuMem POSIX fd), against the same copy in one process
#  2. the import side in its own IPC namespace (unshare -i: the report says plainly whether that stopped CUDA IPC), its own
#     PID namespace (unshare -p -f: one failure = one finding, the sides' exits are notes), its GPU hidden (CUDA_VISIBLE_DEVICES)
#  3. doctor --pid on a running PyTorch job (a `python3 -c` script: its command on one line) started with NCCL_P2P_DISABLE=1
#     and variables that do and do not change the transport; on another user's process; as a non-root user on root's job
#     (needs root, host.container N/A too)
#  4. p2ptop nccl --all on the one GPU (says NCCL needs a distinct GPU per rank, runs the IPC test, points to step 5)
#  5. the NCCL rank worker for real: a ONE-rank communicator on GPU 0 (p2ptop nccl 0), NCCL_DEBUG=INFO (the runner sets it),
#     NCCL_NVLS_ENABLE=0; its NCCL log through p2ptop/nccl/log.py, its nccl-tests rows; the kept log read back with nccl --log
#  6. nccl --log on a 100 MB NCCL log: the steps in one process, then the real command, wall and CPU time (target <= 5 s)
set -u
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export NCCL_NVLS_ENABLE=0
OUTDIR="${OUT:-/tmp}"
LOG="$OUTDIR/nccl.log"
exec > >(tee "$LOG") 2>&1
PY=python3
step() { echo; echo "=== $* ==="; }
run() { echo "\$ $*"; timeout 90 "$@"; echo "[exit $?]"; }
cleanup() { for p in ${TORCH:-} ${OTHER:-}; do kill "$p" 2>/dev/null; done; userdel p2ptopdev 2>/dev/null; rm -f /tmp/p2ptop-100mb.log /tmp/p2ptop-100mb.out /tmp/p2ptop-onerank.log; }
trap cleanup EXIT
T0=$(date +%s)
# the findings of a `--json` run, one line each, and the runner's notes
SUMMARY='import json, sys
d = json.load(sys.stdin)
ipc = d.get("ipc") or {}
print("status:", ipc.get("status"), "| findings:", len(d["findings"]), "| problems:", len(ipc.get("problems") or []))
for f in d["findings"]:
    print(" ", f["severity"].upper(), f["id"], "-", f["summary"])
    print("     facts:", ", ".join(f"{k}={v}" for k, v in f["facts"].items()))
for n in ipc.get("notes") or []:
    print("  note:", n)'

step "machine"
nvidia-smi -L
$PY -c "import cupy, sys; print('cupy', cupy.__version__, 'python', sys.version.split()[0])"
$PY -c "from cupy.cuda import nccl; v = nccl.get_version(); print('NCCL through cupy.cuda.nccl:', v)" || echo "cupy.cuda.nccl did not load by itself (the worker also tries the nvidia-nccl wheel's libnccl)"
$PY -m pip list 2>/dev/null | grep -iE "nccl|cupy|torch " || true
command -v unshare setpriv useradd || true
nproc; uptime

step "1. IPC test, two processes on GPU 0, both handle types, vs the in-process copy"
run $PY -m p2ptop bench 0 0 --ipc --size 512 --copies 8 --repeats 5 --warmup 2

step "2a. the import side in its own IPC namespace (unshare -i): did that stop CUDA IPC here? (report line 'namespaces:')"
P2PTOP_IPC_WRAP_IMPORT="unshare -i" run $PY -m p2ptop bench 0 0 --ipc --size 256 --timeout 20
step "2b. the import side in its own PID namespace (unshare -p -f): one failure -> one finding, the sides' exits as notes"
P2PTOP_IPC_WRAP_IMPORT="unshare -p -f" run $PY -m p2ptop bench 0 0 --ipc --size 256 --timeout 20
echo "--- the same, --json, summarised (what the knowledge base gets):"
P2PTOP_IPC_WRAP_IMPORT="unshare -p -f" timeout 90 $PY -m p2ptop bench 0 0 --ipc --size 64 --timeout 20 --json | $PY -c "$SUMMARY"
echo "--- unshare -i, --json, summarised:"
P2PTOP_IPC_WRAP_IMPORT="unshare -i" timeout 90 $PY -m p2ptop bench 0 0 --ipc --size 64 --timeout 20 --json | $PY -c "$SUMMARY"
step "2c. the import side with its GPU hidden by CUDA_VISIBLE_DEVICES (a peer hidden from one process)"
P2PTOP_IPC_WRAP_IMPORT="env CUDA_VISIBLE_DEVICES=" run $PY -m p2ptop bench 0 0 --ipc --size 64 --timeout 20

step "3. doctor --pid on a PyTorch job (a python3 -c script) started with NCCL_P2P_DISABLE=1 and other variables"
READY=$(mktemp)
NCCL_P2P_DISABLE=1 NCCL_DEBUG=WARN NCCL_IB_HCA=mlx5_0 NCCL_SOCKET_IFNAME=lo NCCL_PROTO=Simple $PY -c "
import sys, time, torch
x = torch.ones(1 << 20, device='cuda')
open(sys.argv[1], 'w').write('ready')
time.sleep(150)" "$READY" &
TORCH=$!
for _ in $(seq 1 60); do [ -s "$READY" ] && break; sleep 0.5; done
echo "PyTorch job pid $TORCH ($(cat "$READY"))"
echo "expect: the command on ONE line (newlines as ⏎); 'Variables that change P2P' = NCCL_P2P_DISABLE's problem + NCCL_NVLS_ENABLE,"
echo "        NCCL_IB_HCA, NCCL_PROTO, NVIDIA_VISIBLE_DEVICES; NCCL_DEBUG, NCCL_SOCKET_IFNAME, CUDA_HOME, NCCL_VERSION... under Other"
run $PY -m p2ptop doctor --pid "$TORCH"
step "3b. doctor --pid on a process of another user (root reads it)"
useradd -M -s /usr/sbin/nologin p2ptopdev 2>/dev/null || true
setpriv --reuid=p2ptopdev --regid=p2ptopdev --clear-groups env NCCL_SOCKET_IFNAME=lo sleep 150 &
OTHER=$!
sleep 0.5
ps -o pid,user,cmd -p "$OTHER" || true
run $PY -m p2ptop doctor --pid "$OTHER"
step "3c. doctor --pid as that other (non-root) user on root's PyTorch job: needs root (host.container N/A, not 'none')"
run setpriv --reuid=p2ptopdev --regid=p2ptopdev --clear-groups env PYTHONPATH="$PWD" HOME=/tmp $PY -m p2ptop doctor --pid "$TORCH"

step "4. p2ptop nccl --all on the one GPU"
run $PY -m p2ptop nccl --all

step "5a. a ONE-rank NCCL communicator on GPU 0 through the real rank worker (p2ptop nccl 0; NCCL_DEBUG=INFO set by the runner)"
run $PY -m p2ptop nccl 0 --min-bytes 8 --max-bytes 1073741824 --factor 4 --iters 20 --warmup 5
step "5b. the same run from Python: the worker's NCCL log, read by p2ptop/nccl/log.py, and the figures"
run $PY - <<'PYEOF'
import os
from p2ptop.sources import open_snapshot
from p2ptop.nccl.runner import NcclOptions, run_group
from p2ptop.nccl.log import read_nccl_log
from p2ptop.commands.nccl import run_lines
snap = open_snapshot()
r = run_group(snap, [0], NcclOptions(sizes=[8, 1 << 10, 1 << 20, 64 << 20, 256 << 20, 1 << 30], iters=20, warmup=5, timeout_s=90))
print("status:", r.status, "| NCCL (worker's hello):", r.nccl_version, "|", round(r.duration_s or 0, 2), "s |", r.log_bytes, "bytes of NCCL output")
print("NCCL_NVLS_ENABLE in our environment:", os.environ.get("NCCL_NVLS_ENABLE"))
log = read_nccl_log(r.log_text)
print("log.py: is_nccl", log.is_nccl, "| version", log.version, "| cuda", log.cuda, "| driver", log.cuda_driver, "| hosts", log.hosts,
      "| lines", log.lines_total, "| NCCL lines", log.nccl_lines)
for k in log.ranks:
    print("  rank", k.rank, "of", k.nranks, "cudaDev", k.cuda_dev, "nvmlDev", k.nvml_dev, "busId", k.bus_id_raw, "->", k.bus_id, "(line", k.line, ")")
print("  channels:", len(log.channels), sorted({(c.src, c.dst, c.transport) for c in log.channels}))
print("  set by environment:", [(e.name, e.value) for e in log.env])
print("  WARN/errors:", [(m.level, m.message[:120]) for m in log.messages if m.level != "INFO"][:5])
print("  decisions:", [(d.kind, d.detail[:100]) for d in log.decisions][:5])
print("\n".join(run_lines([r])))
for e in r.errors:
    print("error:", e)
print("--- NCCL's own output (first 40 lines):")
print("\n".join(r.log_text.splitlines()[:40]))
open("/tmp/p2ptop-onerank.log", "w").write(r.log_text)
PYEOF
step "5c. that real NCCL log read back through the CLI (nccl --log)"
run $PY -m p2ptop nccl --log /tmp/p2ptop-onerank.log

step "6. nccl --log on a 100 MB NCCL log (target <= 5 s): each step in one process, then the whole command as a user runs it"
nproc; uptime
run $PY benchmarks/bench_nccl_cli_log.py 100
run $PY benchmarks/bench_nccl_log.py 100
$PY benchmarks/bench_nccl_cli_log.py 100 --write /tmp/p2ptop-100mb.log
echo "\$ time python3 -m p2ptop nccl --log /tmp/p2ptop-100mb.log > /dev/null   (the whole command: start, NVML, read, parse, table, findings, print)"
TIMEFORMAT="nccl --log 100 MB, whole command: wall %R s, CPU %U s user + %S s sys (target <= 5 s wall)"
time $PY -m p2ptop nccl --log /tmp/p2ptop-100mb.log > /dev/null
echo "[exit of the timed command: $?]  (1 = the log holds problems, as it does)"
sed "s/^[A-Za-z0-9._-]*:\([0-9]*:[0-9]* \[\)/$(hostname):\1/" /tmp/p2ptop-100mb.log > /tmp/p2ptop-100mb-here.log
echo "\$ time python3 -m p2ptop nccl --log /tmp/p2ptop-100mb-here.log > /dev/null   (the same log with this host's name: NVML and host facts are read)"
TIMEFORMAT="nccl --log 100 MB of this host, whole command: wall %R s, CPU %U s user + %S s sys (target <= 5 s wall)"
time $PY -m p2ptop nccl --log /tmp/p2ptop-100mb-here.log > /dev/null
rm -f /tmp/p2ptop-100mb-here.log
echo "\$ python3 -m cProfile -s cumtime -m p2ptop nccl --log /tmp/p2ptop-100mb.log   (where the whole command spends its time, top 25)"
$PY -c 'import cProfile, contextlib, io, pstats, sys, time
sys.argv = ["p2ptop", "nccl", "--log", "/tmp/p2ptop-100mb.log"]
from p2ptop.cli import main
pr = cProfile.Profile(); c0 = time.process_time()
with contextlib.redirect_stdout(io.StringIO()):
    pr.enable(); rc = main(); pr.disable()
print(f"exit {rc}, {time.process_time() - c0:.2f} s CPU under the profiler")
pstats.Stats(pr).sort_stats("cumtime").print_stats(25)' 2>&1 | grep -v "^$" | head -40
echo "\$ python3 -m p2ptop nccl --log /tmp/p2ptop-100mb.log | head -5"
$PY -m p2ptop nccl --log /tmp/p2ptop-100mb.log > /tmp/p2ptop-100mb.out; head -5 /tmp/p2ptop-100mb.out

step "done in $(( $(date +%s) - T0 )) s"
