#!/usr/bin/env bash
# The live dashboard as its user sees it, on a one-GPU host: tmux at 200x50 and 80x24 (after start, after the
# host-link test, the help screen), then a screenshot bundle of this host through scripts/make_screenshots.py
# (SVG; the PNG is drawn where cairosvg is installed). Text to $OUT/screens.log, the SVG to $OUT/. Under 2 minutes.
set -u
export PYTHONPATH=$PWD NCCL_NVLS_ENABLE=0
OUT=${OUT:-/tmp/screens-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/screens.log") 2>&1
S=p2ptop-screens
cap() { echo; echo "==== $1"; tmux capture-pane -p -t $S | sed 's/[[:space:]]*$//'; }
for size in 200x50 80x24; do
  tmux kill-session -t $S 2>/dev/null
  tmux new-session -d -s $S -x ${size%x*} -y ${size#*x} "env PYTHONPATH=$PYTHONPATH python3 -m p2ptop"
  sleep 5; cap "$size after start"
  tmux send-keys -t $S Enter; sleep 10; cap "$size after the host-link test (Enter)"
  tmux send-keys -t $S '?'; sleep 1; cap "$size help"
  tmux send-keys -t $S Escape; sleep 0.5; tmux send-keys -t $S q; sleep 1
done
tmux kill-session -t $S 2>/dev/null
W=$(mktemp -d)
python3 scripts/make_screenshots.py --live --name h100x1-live --out "$W"; echo "[make_screenshots exit $?]"
ls -la "$W"
cp "$W"/h100x1-live.svg "$W"/h100x1-live.txt "$OUT"/ 2>/dev/null
ls -la "$OUT"
