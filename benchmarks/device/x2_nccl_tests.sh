#!/usr/bin/env bash
# Issue 22 on two GPUs: nccl-tests' result tables as people paste them, real, under the settings that move NCCL off its
# P2P transport (NCCL_P2P_DISABLE=1: SHM; with NCCL_SHM_DISABLE=1 too: the network over loopback; NCCL_P2P_LEVEL=LOC),
# against the healthy run. Each table goes through `p2ptop explain --text-only` (what a ticket's reader has: the table
# alone) and `p2ptop explain` on the live host (the pair's link known). A healthy table must say no failure; a slow one
# should be read as slow. nccl-tests is built on the device from its source (.carry/nccl-tests.tar.gz, `git archive` of
# the NVIDIA/nccl-tests mirror) against the NCCL of PyTorch's nvidia-nccl wheel, for sm_90 only.
#
#   run(kind=nvidia-h200-x2, carry=[".whl", ".carry"]): P2PTOP_PY=/tmp/v/bin/python bash benchmarks/device/x2_nccl_tests.sh
#
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0), as the lent multi-GPU machines require. Tables to $OUT/x2-tables/,
# answers to $OUT/x2-nccl-tests.log. About 3 minutes.
OUT=${OUT:-/tmp/x2-nccl-tests-out}
. "$(dirname "$0")/x2_env.sh" x2-nccl-tests.log  # set -u, NVLink multicast off, PY, W, OUT, the log, T0
mkdir -p "$OUT/x2-tables"
nvidia-smi topo -m | head -4

# the NCCL PyTorch brings (nvidia-nccl-cuXX wheel): its headers and libnccl.so.2, as nccl-tests' Makefile wants them
NCCL_PKG=$(python3 -c "import nvidia.nccl as n; print(list(n.__path__)[0])" 2>/dev/null)
echo "== NCCL wheel: $NCCL_PKG ($(ls "$NCCL_PKG/lib" 2>/dev/null | tr '\n' ' '))"
mkdir -p "$W/nccl/lib" && ln -s "$NCCL_PKG/include" "$W/nccl/include" && ln -s "$NCCL_PKG/lib/libnccl.so.2" "$W/nccl/lib/libnccl.so"
mkdir -p "$W/tests" && tar xzf .carry/nccl-tests.tar.gz -C "$W/tests"
(cd "$W/tests" && timeout 300 make -j"$(nproc)" MPI=0 NCCL_HOME="$W/nccl" \
    NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" > "$OUT/x2-tables/build.log" 2>&1)
echo "== nccl-tests build rc=$? at $(( $(date +%s) - T0 )) s"
export LD_LIBRARY_PATH="$NCCL_PKG/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

table() {  # table NAME TEST [VAR=VALUE ...]: one nccl-tests run, 8 B to 512 MiB, both GPUs in one process
  local name=$1 test=$2; shift 2
  env "$@" timeout 150 "$W/tests/build/$test" -b 8 -e 512M -f 4 -g 2 > "$OUT/x2-tables/$name.txt" 2>&1
  echo; echo "================ $name: $test $* (exit $?); peak busbw: $(awk '$1 ~ /^[0-9]+$/ && NF >= 12 {if ($8 > m) m = $8} END {print m}' "$OUT/x2-tables/$name.txt") GB/s"
  grep -E "^#.*(Avg bus|Out of bounds)|NCCL WARN" "$OUT/x2-tables/$name.txt" | head -3
  echo "---- \$ p2ptop explain $name.txt --text-only --top 3"
  timeout 90 $PY -m p2ptop explain "$OUT/x2-tables/$name.txt" --text-only --top 3 2>&1 | grep -E "^[0-9]\. |^No sign|^Symptoms|slow|busbw" | cut -c1-220 | head -12
  timeout 90 $PY -m p2ptop explain "$OUT/x2-tables/$name.txt" --text-only --json 2>/dev/null | $PY "$(dirname "$0")/explain_top.py" 3
  echo "---- \$ p2ptop explain $name.txt --top 3   (live host)"
  timeout 90 $PY -m p2ptop explain "$OUT/x2-tables/$name.txt" --top 3 2>&1 | grep -E "^[0-9]\. |^No sign|^Symptoms|slow|busbw" | cut -c1-220 | head -12
  timeout 90 $PY -m p2ptop explain "$OUT/x2-tables/$name.txt" --json 2>/dev/null | $PY "$(dirname "$0")/explain_top.py" 3
}

table allreduce-healthy all_reduce_perf
table allreduce-p2p-disable all_reduce_perf NCCL_P2P_DISABLE=1
table allreduce-p2p-level-loc all_reduce_perf NCCL_P2P_LEVEL=LOC
table allreduce-p2p-shm-disable all_reduce_perf NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1
table sendrecv-healthy sendrecv_perf
table sendrecv-p2p-disable sendrecv_perf NCCL_P2P_DISABLE=1
# the same slow table with the variable in the paste, as people run it: NCCL_DEBUG=INFO names it and the transport
table allreduce-p2p-disable-info all_reduce_perf NCCL_P2P_DISABLE=1 NCCL_DEBUG=INFO
tar czf "$OUT/x2-tables.tar.gz" -C "$OUT" x2-tables 2>/dev/null
echo; echo "== done in $(( $(date +%s) - T0 )) s"
