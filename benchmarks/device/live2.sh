#!/usr/bin/env bash
# The live path's second round (issue 21; issue 20 point 6 on one GPU) on a one-GPU H100/H200 host. Run from the
# repository root; $OUT gets one log file (live2.log). About 2 minutes; tmux for the dashboard.
#
#   P2PTOP_PY=/tmp/v/bin/python bash benchmarks/device/live2.sh   # a clean venv (python start ~10 ms)
#
# P2PTOP_PY: the python to use (default python3; the device's python3 starts in ~48 ms because of its
# site .pth files, a clean venv's in ~10 ms). p2ptop runs from this checkout (PYTHONPATH=$PWD), compiled
# in place first (PYTHONDONTWRITEBYTECODE is set on these machines), its dependencies from that python.
# It reuses benchmarks/device/live.sh's sections (host, compile, topo, help, inprocess, latency, firstframe, idle)
# and live_probe.py, then adds: topo's matrix beside nvidia-smi's, topo's imports, python's own start.
set -u
OUT=${OUT:-/tmp/p2ptop-live2-out}
mkdir -p "$OUT"
export LIVE_LOG=live2.log
LOG="$OUT/$LIVE_LOG"
: > "$LOG"
export P2PTOP_PY=${P2PTOP_PY:-python3}
export PYTHONPATH=$PWD
PY=$P2PTOP_PY
echo "### live2.sh: P2PTOP_PY=$PY ($($PY -c 'import sys; print(sys.executable, sys.version.split()[0])'))" >> "$LOG"

# 1. live.sh's sections: topo vs nvidia-smi topo -m and --help vs python -c pass (interleaved, medians of 9,
#    ratios), topo's phases in process, the live snapshot / refresh calls and times / how NVLink counters are read /
#    field-value answers / NVML events (in process), per-function NVML latency (a table for benchmarks/data/; on a
#    GPU with NVLink also a field-values call's cost by its NVLink fields), first frame (tmux), idle CPU at a 2 s
#    refresh over 30 s (tmux)
OUT=$OUT LIVE_SECTIONS="host compile topo help inprocess latency firstframe idle" LIVE_N=9 LIVE_IDLE_S=30 \
  bash benchmarks/device/live.sh

# 2. additions
exec > >(tee -a "$LOG") 2>&1
say() { echo; echo "### $*"; }
say "python's own start (medians of 9): what the 2x targets stand on"
$PY benchmarks/device/live_probe.py procs 9 $PY -S -c pass / $PY -c pass
BIN=$(dirname "$($PY -c 'import sys; print(sys.executable)')")/p2ptop
if [ -x "$BIN" ]; then
  say "the console script $BIN, as a user runs it (no runpy); PYTHONPATH makes it run this checkout"
  (cd /tmp && $PY "$OLDPWD/benchmarks/device/live_probe.py" procs 9 --target 2 nvidia-smi topo -m / "$BIN" topo)
  (cd /tmp && $PY "$OLDPWD/benchmarks/device/live_probe.py" procs 9 --target 2 $PY -c pass / "$BIN" --help)
  (cd /tmp && "$BIN" --version)
fi
say "p2ptop topo's path matrix beside nvidia-smi topo -m's (ANSI codes and trailing blanks dropped)"
nvidia-smi topo -m > /tmp/live2-smi.txt 2>&1
$PY -m p2ptop topo > /tmp/live2-p2p.txt 2>&1; echo "p2ptop topo exit $?"
$PY - <<'PY'
import re
def matrix(path, skip_header):
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", l).rstrip() for l in open(path, encoding="utf-8", errors="replace")]
    if skip_header:
        lines = lines[2:]  # p2ptop's "# p2ptop topo: ..." line and a blank line
    out = []
    for l in lines:
        if not l.strip():
            break
        out.append(" ".join(l.split()))
    return out
smi, ours = matrix("/tmp/live2-smi.txt", False), matrix("/tmp/live2-p2p.txt", True)
print("nvidia-smi:", *smi, sep="\n  ")
print("p2ptop:    ", *ours, sep="\n  ")
print("path matrix (cells, CPU/NUMA affinity, GPU NUMA ID):", "EQUAL" if smi == ours else "DIFFERENT")
PY
say "what p2ptop topo imports, fastest of 5 runs (module self and cumulative ms)"
$PY benchmarks/device/live_probe.py importtime 5 topo
say "the same for p2ptop --help"
$PY benchmarks/device/live_probe.py importtime 5 --help
echo; echo "live2.sh done: $(date -u)"
