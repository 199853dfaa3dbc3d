#!/usr/bin/env bash
# The live path on a real one-GPU host (H100/H200), for issue 21. Run from the repository root; $OUT gets
# one log file (live.log). No internet needed; tmux is used for the dashboard. About 2 minutes.
# Also run by benchmarks/device/live2.sh with: LIVE_SECTIONS (names below, space-separated; default all),
# LIVE_LOG (the log's name; appended to), LIVE_N (runs per process timing), LIVE_IDLE_S (idle window),
# P2PTOP_PY (the python to use; default python3).
set -u
OUT=${OUT:-/tmp/p2ptop-live-out}
mkdir -p "$OUT"
LOG="$OUT/${LIVE_LOG:-live.log}"
exec > >(tee -a "$LOG") 2>&1
export PYTHONPATH=$PWD
PY=${P2PTOP_PY:-python3}
N=${LIVE_N:-10}
IDLE_S=${LIVE_IDLE_S:-20}
say() { echo; echo "### $*"; }
run() { echo "\$ $*"; "$@"; echo "(exit $?)"; }
want() { [ "${LIVE_SECTIONS:-all}" = all ] || [[ " ${LIVE_SECTIONS} " == *" $1 "* ]]; }

if want host; then
say "host"
run date -u
run nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv
run $PY --version
fi
if want compile; then
say "install with compiled modules (as a user's pip install has them; PYTHONDONTWRITEBYTECODE is set here)"
echo "PYTHONDONTWRITEBYTECODE=${PYTHONDONTWRITEBYTECODE:-<unset>}"
(unset PYTHONDONTWRITEBYTECODE; run $PY -m compileall -q p2ptop)
run ls p2ptop/__pycache__ p2ptop/live/__pycache__
echo "dependencies (a user's pip install compiles them; an uncompiled pynvml alone costs ~0.1 s per start):"
$PY benchmarks/device/live_probe.py compiled
for dep in pynvml textual rich networkx jsonschema; do
  f=$($PY -c "import importlib.util as u, os; s = u.find_spec('$dep'); print(os.path.dirname(s.origin) if s and s.origin.endswith('__init__.py') else (s.origin if s else ''))" 2>/dev/null)
  [ -n "$f" ] && (unset PYTHONDONTWRITEBYTECODE; $PY -m compileall -q "$f" >/dev/null 2>&1 || echo "  could not compile $f (read-only?)")
done
echo "after compileall of the dependencies:"
$PY benchmarks/device/live_probe.py compiled
fi

if want topo; then
say "topo: p2ptop topo against nvidia-smi topo -m, as processes (target: ratio <= 2)"
run $PY benchmarks/device/live_probe.py procs $N --target 2 nvidia-smi topo -m / $PY -m p2ptop topo
echo "where p2ptop topo spends its time (in process, a fresh interpreter each; python -c pass is the rest):"
for i in 1 2 3; do echo "run $i:"; $PY benchmarks/device/live_probe.py phases; done
fi
if want help; then
say "--help against a bare python (target: ratio <= 2)"
run $PY benchmarks/device/live_probe.py procs $N --target 2 $PY -c pass / $PY -m p2ptop --help
fi
if want doctor; then
say "doctor and snapshot (reference: nvidia-smi topo -m; doctor was 0.54-0.79 s before this round's work, 1.8 s on 2026-11-24)"
echo "doctor runs twice first: the knowledge base's validation is remembered (~/.cache/p2ptop/kb-valid.json) from the first run on"
$PY -m p2ptop doctor >/dev/null 2>&1; $PY -m p2ptop doctor >/dev/null 2>&1
run $PY benchmarks/device/live_probe.py procs 5 nvidia-smi topo -m / $PY -m p2ptop doctor
run $PY benchmarks/device/live_probe.py procs 5 nvidia-smi topo -m / $PY -m p2ptop snapshot
echo "doctor, profiled (cumulative, top 30; the profiler slows it down):"
$PY -m cProfile -s cumtime -m p2ptop doctor 2>&1 | grep -A32 "Ordered by" | cut -c1-160
echo "snapshot, profiled (cumulative, top 20):"
$PY -m cProfile -s cumtime -m p2ptop snapshot -o /tmp/p2ptop-snap.json 2>&1 | grep -A22 "Ordered by" | cut -c1-160
fi
if want imports; then
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

fi

if want inprocess; then
say "in process: live snapshot (target <= 100 ms), refresh, NVML calls per refresh, NVML events"
run $PY benchmarks/device/live_probe.py inprocess
fi
if want latency; then
say "per-function NVML latency on this host (the fake's latency table format: benchmarks/data/)"
run $PY benchmarks/device/live_probe.py latency
fi

if want firstframe; then
say "dashboard: time to first frame, live (target <= 0.5 s), tmux 200x50"
for i in 1 2 3; do
  rm -f /tmp/p2ptop-ff
  t0=$($PY -c 'import time; print(f"{time.time():.6f}")')
  tmux new-session -d -s p2pff -x 200 -y 50 "P2PTOP_FIRST_FRAME_FILE=/tmp/p2ptop-ff PYTHONPATH=$PWD exec $PY -m p2ptop --interval 2"
  for _ in $(seq 100); do [ -s /tmp/p2ptop-ff ] && break; sleep 0.05; done
  if [ -s /tmp/p2ptop-ff ]; then
    $PY -c "x = float(open(\"/tmp/p2ptop-ff\").read()) - $t0; print(f'run $i: first frame {x:.3f} s after start (tmux start included)   target <= 0.5 s: ' + ('MET' if x <= 0.5 else 'MISSED'))"
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
fi

if want idle; then
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
IDLE_TARGET=$([ "$NGPU" -ge 2 ] && echo 1.5 || echo 0.5)  # issue 21: 0.5 % on one GPU, 1.5 % on 2 H200s
say "dashboard idle CPU, live, refresh every 2 s, over $IDLE_S s (target <= $IDLE_TARGET % of a core at $NGPU GPU(s)), tmux 200x50"
tmux new-session -d -s p2pidle -x 200 -y 50 "PYTHONPATH=$PWD exec $PY -m p2ptop --interval 2"
sleep 8  # first read, knowledge base, first refreshes
PID=$(tmux list-panes -t p2pidle -F '#{pane_pid}' | head -1)
cpu() { awk '{print $14 + $15}' /proc/$PID/stat; }
HZ=$(getconf CLK_TCK)
c0=$(cpu); w0=$($PY -c 'import time; print(time.time())')
sleep $IDLE_S
c1=$(cpu); w1=$($PY -c 'import time; print(time.time())')
$PY -c "p = 100 * ($c1 - $c0) / $HZ / ($w1 - $w0); print(f'dashboard pid $PID: {($c1 - $c0) / $HZ:.2f} s CPU in {$w1 - $w0:.1f} s = {p:.2f} % of one core (utime+stime, /proc/$PID/stat)   target <= $IDLE_TARGET %: ' + ('MET' if p <= $IDLE_TARGET else 'MISSED'))"
echo "threads of the dashboard (the NVML events thread waits 5 s at a time; clock events are not asked for):"
ls /proc/$PID/task | while read t; do echo "  $(cat /proc/$PID/task/$t/comm) utime+stime $(awk '{print $14 + $15}' /proc/$PID/task/$t/stat) ticks"; done
echo "events log lines saying 'clock change' (expected 0): $(tmux capture-pane -p -t p2pidle | grep -c 'clock change')"
grep VmRSS /proc/$PID/status
echo "screen after $((IDLE_S + 8)) s (top):"; tmux capture-pane -p -t p2pidle | head -12
echo "events log lines about NVLink counters (how this host's are read):"; tmux capture-pane -p -t p2pidle | grep -i "nvlink error counters" | head -3
tmux kill-session -t p2pidle 2>/dev/null
fi
if want smi; then
say "reference: nvidia-smi dmon-like poll cost: nvidia-smi -q once"
run $PY benchmarks/device/live_probe.py procs 3 $PY -c pass / nvidia-smi -q
fi
echo; echo "done: $(date -u)"
