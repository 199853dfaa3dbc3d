#!/usr/bin/env bash
# Issue 22 on two GPUs: the CUDA samples people run to check peer access (simpleP2P, p2pBandwidthLatencyTest,
# topologyQuery, deviceQuery, simpleIPC), built on the device from NVIDIA/cuda-samples' sources (.carry/cuda-samples-p2p.tar.gz,
# `git archive` of the mirror: Common/*.h and those five samples) for sm_90, run on a healthy two-GPU host, each output
# through `p2ptop explain --text-only` and on the live host. Every answer should be healthy (no entry likely or
# possible), and the copy figures should not read slow. Outputs to $OUT/x2-samples/, answers to $OUT/x2-cuda-samples.log.
# Each sample runs under `timeout -k 2 $SAMPLE_TIMEOUT` (30 s; a sample stuck in the driver is killed) with stdin closed.
#
#   run(kind=nvidia-h200-x2, carry=[".whl", ".carry"]): P2PTOP_PY=/tmp/v/bin/python bash benchmarks/device/x2_cuda_samples.sh
OUT=${OUT:-/tmp/x2-samples-out}
. "$(dirname "$0")/x2_env.sh" x2-cuda-samples.log  # set -u, NVLink multicast off, PY, W, OUT, the log, T0
D="$OUT/x2-samples"
mkdir -p "$D"
tar xzf .carry/cuda-samples-p2p.tar.gz -C "$W"
S="$W/Samples"
build() {  # build NAME SOURCE [EXTRA...]
  local name=$1 src=$2; shift 2
  timeout 180 nvcc -O2 -std=c++17 -I "$W/Common" -gencode arch=compute_90,code=sm_90 -o "$W/$name" "$src" "$@" \
      > "$D/build-$name.log" 2>&1
  echo "-- build $name: rc=$? at $(( $(date +%s) - T0 )) s"
}
P=()
build simpleP2P "$S/0_Introduction/simpleP2P/simpleP2P.cu" & P+=($!)
build p2pBandwidthLatencyTest "$S/5_Domain_Specific/p2pBandwidthLatencyTest/p2pBandwidthLatencyTest.cu" & P+=($!)
build topologyQuery "$S/1_Utilities/topologyQuery/topologyQuery.cu" & P+=($!)
build deviceQuery "$S/1_Utilities/deviceQuery/deviceQuery.cpp" & P+=($!)
build simpleIPC "$S/0_Introduction/simpleIPC/simpleIPC.cu" "$W/Common/helper_multiprocess.cpp" & P+=($!)
wait "${P[@]}"  # the builds only: a bare `wait` also waits for the tee of `exec > >(tee ...)`, which never ends
for n in ${SAMPLES:-deviceQuery topologyQuery simpleP2P p2pBandwidthLatencyTest simpleIPC}; do
  [ -x "$W/$n" ] || { echo "-- $n: not built"; continue; }
  (cd "$W" && timeout -k 2 ${SAMPLE_TIMEOUT:-30} "./$n" < /dev/null > "$D/$n.txt" 2>&1); echo "-- run $n: exit $? ($(wc -l < "$D/$n.txt") lines; last: $(tail -n 1 "$D/$n.txt" | cut -c1-120))"
done
tar czf "$OUT/x2-samples.tar.gz" -C "$OUT" x2-samples 2>/dev/null
for f in "$D"/*.txt; do
  n=$(basename "$f" .txt)
  echo; echo "================ $n ($(wc -l < "$f") lines): $(grep -m2 -E 'Peer|P2P|GB/s|Result|PASS|FAIL|Verification' "$f" | tr '\n' ' ' | cut -c1-160)"
  printf '  text-only:'; timeout 60 $PY -m p2ptop explain "$f" --text-only --json 2>/dev/null | $PY "$(dirname "$0")/explain_top.py" 3
  printf '  live host:'; timeout 60 $PY -m p2ptop explain "$f" --json 2>/dev/null | $PY "$(dirname "$0")/explain_top.py" 3
  timeout 60 $PY -m p2ptop explain "$f" --text-only 2>&1 | grep -E "^Read in the text" | cut -c1-300
done
echo "== done in $(( $(date +%s) - T0 )) s"
