#!/usr/bin/env bash
# (benchmarks/device: used by the session scripts to see the pair panel with an opened NCCL log, live)
# open an NCCL log in the dashboard through the command palette, select pair GPU0-GPU1, capture the screen
# usage: dash_log.sh PY LOGFILE OUTFILE [p2ptop args...]
PY=$1; LOG=$2; OUTF=$3; shift 3
tmux kill-session -t p2pd 2>/dev/null
tmux new-session -d -s p2pd -x ${DASH_COLS:-200} -y ${DASH_ROWS:-50} "$PY -m p2ptop $*"
sleep 4
tmux send-keys -t p2pd C-p; sleep 1
tmux send-keys -t p2pd -l "NCCL: open a job"; sleep 1
tmux send-keys -t p2pd Enter; sleep 1
tmux send-keys -t p2pd -l "$LOG"; sleep 0.5
tmux send-keys -t p2pd Enter; sleep 3
tmux send-keys -t p2pd Right; sleep 3
tmux capture-pane -t p2pd -p > "$OUTF"
tmux send-keys -t p2pd q; sleep 1
tmux kill-session -t p2pd 2>/dev/null
