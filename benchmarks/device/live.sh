#!/usr/bin/env bash
# The live path on a real one-GPU host (H100/H200), for issue 21. Run from the repository root; $OUT gets
# one log file (live.log). No internet needed; tmux is used for the dashboard. About 2 minutes.
set -u
OUT=${OUT:-/tmp/p2ptop-live-out}
mkdir -p "$OUT"
LOG="$OUT/live.log"
exec > >(tee "$LOG") 2>&1
export PYTHONPATH=$PWD
PY=python3
say() { echo; echo "### $*"; }
run() { echo "\$ $*"; "$@"; echo "(exit $?)"; }

say "host"
run date -u
run nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv
run $PY --version
say "install with compiled modules (as a user's pip install has them; PYTHONDONTWRITEBYTECODE is set here)"
echo "PYTHONDONTWRITEBYTECODE=${PYTHONDONTWRITEBYTECODE:-<unset>}"
(unset PYTHONDONTWRITEBYTECODE; run $PY -m compileall -q p2ptop)
run ls p2ptop/__pycache__ p2ptop/live/__pycache__

say "topo: p2ptop topo against nvidia-smi topo -m, as processes (target: ratio <= 2)"
run $PY benchmarks/device/live_probe.py procs 10 nvidia-smi topo -m / $PY -m p2ptop topo
say "--help against a bare python (target: ratio <= 2)"
run $PY benchmarks/device/live_probe.py procs 10 $PY -c pass / $PY -m p2ptop --help
say "doctor and snapshot (reference: nvidia-smi topo -m)"
run $PY benchmarks/device/live_probe.py procs 5 nvidia-smi topo -m / $PY -m p2ptop doctor
run $PY benchmarks/device/live_probe.py procs 5 nvidia-smi topo -m / $PY -m p2ptop snapshot
say "what each command imports (heavy modules only)"
for args in "--help" "topo" "snapshot" "doctor"; do
  $PY -c "
import sys, io, contextlib
from p2ptop.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    try: main('$args'.split())
    except SystemExit: pass
heavy = [m for m in ('networkx', 'textual', 'jsonschema', 'p2ptop.host', 'p2ptop.knowledge', 'p2ptop.ui') if m in sys.modules]
print('p2ptop $args imports:', heavy or 'none of', ('networkx', 'textual', 'jsonschema', 'p2ptop.host', 'p2ptop.knowledge', 'p2ptop.ui'))
" 2>/dev/null
done

say "in process: live snapshot (target <= 100 ms), refresh, NVML calls per refresh, NVML events"
run $PY benchmarks/device/live_probe.py inprocess
say "per-function NVML latency on this host (the fake's latency table format: benchmarks/data/)"
run $PY benchmarks/device/live_probe.py latency

say "dashboard: time to first frame, live (target <= 0.5 s), tmux 200x50"
for i in 1 2 3; do
  rm -f /tmp/p2ptop-ff
  t0=$($PY -c 'import time; print(f"{time.time():.6f}")')
  tmux new-session -d -s p2pff -x 200 -y 50 "P2PTOP_FIRST_FRAME_FILE=/tmp/p2ptop-ff PYTHONPATH=$PWD exec $PY -m p2ptop --interval 2"
  for _ in $(seq 100); do [ -s /tmp/p2ptop-ff ] && break; sleep 0.05; done
  if [ -s /tmp/p2ptop-ff ]; then
    $PY -c "print(f'run $i: first frame {(float(open(\"/tmp/p2ptop-ff\").read()) - $t0):.3f} s after start (tmux start included)')"
  else
    echo "run $i: no first-frame marker within 5 s"
  fi
  if [ "$i" = 1 ]; then sleep 2; echo "screen right after start (top):"; tmux capture-pane -p -t p2pff | head -8; fi
  tmux kill-session -t p2pff 2>/dev/null
done
t0=$($PY -c 'import time; print(f"{time.time():.6f}")')
tmux new-session -d -s p2pnoop -x 200 -y 50 "$PY -c 'import time; open(\"/tmp/p2ptop-ff0\",\"w\").write(str(time.time()))'; sleep 1"
sleep 1.5; $PY -c "print(f'reference: tmux start + bare python to its first line {(float(open(\"/tmp/p2ptop-ff0\").read()) - $t0):.3f} s')"
tmux kill-session -t p2pnoop 2>/dev/null

say "dashboard idle CPU, live, refresh every 2 s, over 20 s (target <= 0.5 % of a core), tmux 200x50"
tmux new-session -d -s p2pidle -x 200 -y 50 "PYTHONPATH=$PWD exec $PY -m p2ptop --interval 2"
sleep 8  # first read, knowledge base, first refreshes
PID=$(tmux list-panes -t p2pidle -F '#{pane_pid}' | head -1)
cpu() { awk '{print $14 + $15}' /proc/$PID/stat; }
HZ=$(getconf CLK_TCK)
c0=$(cpu); w0=$($PY -c 'import time; print(time.time())')
sleep 20
c1=$(cpu); w1=$($PY -c 'import time; print(time.time())')
$PY -c "print(f'dashboard pid $PID: {($c1 - $c0) / $HZ:.2f} s CPU in {$w1 - $w0:.1f} s = {100 * ($c1 - $c0) / $HZ / ($w1 - $w0):.2f} % of one core (utime+stime, /proc/$PID/stat)')"
grep VmRSS /proc/$PID/status
echo "screen after 28 s (top):"; tmux capture-pane -p -t p2pidle | head -12
tmux kill-session -t p2pidle 2>/dev/null
say "reference: nvidia-smi dmon-like poll cost: nvidia-smi -q once"
run $PY benchmarks/device/live_probe.py procs 3 $PY -c pass / nvidia-smi -q
echo; echo "done: $(date -u)"
