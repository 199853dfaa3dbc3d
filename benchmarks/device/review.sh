#!/usr/bin/env bash
# Issue 23 on a one-GPU H100/H200: a review of the host-link test of the live GPU, tried twice, in tmux.
# The dashboard opens on GPU0's host link (a one-GPU host); Enter runs the host-link test; v opens the review;
# t tries the first fix, Enter re-tests, n says it did not help; down, t, Enter re-tests the second, y confirms
# the suggested outcome. Each screen is captured as text; then `p2ptop review list/show/export` and the trail in
# `p2ptop report`. Everything goes to $OUT/review.log. Under 3 minutes.
set -u
export PYTHONPATH=$PWD NCCL_NVLS_ENABLE=0 P2PTOP_DATA_DIR=$(mktemp -d)
OUT=${OUT:-/tmp/review-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/review.log") 2>&1
S=p2ptop-review
cap() { echo; echo "==== screen: $1"; tmux capture-pane -p -t $S | sed 's/[[:space:]]*$//'; }
keys() { tmux send-keys -t $S "$@"; }
tmux kill-session -t $S 2>/dev/null
tmux new-session -d -s $S -x 120 -y 40 "env PYTHONPATH=$PYTHONPATH P2PTOP_DATA_DIR=$P2PTOP_DATA_DIR python3 -m p2ptop"
sleep 6; cap "after start (one GPU: the host link is selected)"
keys Enter; sleep 12; cap "after the host-link test (before)"
keys v; sleep 2; cap "review opened"
keys t; sleep 1; keys Enter; sleep 14; cap "first fix tried, re-tested"
keys n; sleep 1; cap "first fix: did not help"
keys Down; sleep 0.5; keys t; sleep 1; keys Enter; sleep 14; cap "second fix tried, re-tested (before and after)"
keys y; sleep 1; cap "second fix: outcome confirmed"
keys Escape; sleep 1; keys q; sleep 2; tmux kill-session -t $S 2>/dev/null
echo; echo "\$ p2ptop review list"; python3 -m p2ptop review list
echo; echo "\$ p2ptop review show 1"; python3 -m p2ptop review show 1
echo; echo "\$ p2ptop review export 1 --redact"; python3 -m p2ptop review export 1 --redact
echo; echo "\$ p2ptop report | (the trail)"; python3 -m p2ptop report 2>&1 | sed -n '/## Fixes tried/,/^## [A-Z]/p' | head -30
