#!/usr/bin/env bash
# Issue 22's "no failure entry on healthy hosts and their outputs", on two GPUs: what the host's own tools print on a
# healthy two-GPU host, the common forms and the rarer ones people paste too (nvidia-smi's -mp matrix, nvlink -c/-e/-gt,
# the query CSV of PCIe fields, dmon's throughput, lspci's tree and link lines of the GPUs, the driver's /proc files,
# dmesg's NVRM lines), each through `p2ptop explain --text-only` and on the live host. Every answer should be healthy
# (no entry likely or possible). Outputs to $OUT/x2-sweep/, answers to $OUT/x2-tool-sweep.log. About 1 minute.
#
#   run(kind=nvidia-h200-x2, carry=[".whl"]): P2PTOP_PY=/tmp/v/bin/python bash benchmarks/device/x2_tool_sweep.sh
OUT=${OUT:-/tmp/x2-sweep-out}
. "$(dirname "$0")/x2_env.sh" x2-tool-sweep.log  # set -u, NVLink multicast off, PY, W, OUT, the log, T0
D="$OUT/x2-sweep"
mkdir -p "$D"

grab() {  # grab NAME COMMAND...: the command's output, with the command line first as people paste it
  local name=$1; shift
  { echo "\$ $*"; timeout 30 bash -c "$*" 2>&1; } > "$D/$name.txt"
}
grab topo-m "nvidia-smi topo -m"
grab topo-mp "nvidia-smi topo -mp"
grab topo-p2p-n "nvidia-smi topo -p2p n"
grab nvlink-s "nvidia-smi nvlink -s"
grab nvlink-c "nvidia-smi nvlink -c"
grab nvlink-e "nvidia-smi nvlink -e"
grab nvlink-gt "nvidia-smi nvlink -gt d"
grab query-pcie "nvidia-smi --query-gpu=index,name,pci.bus_id,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max --format=csv"
grab dmon-t "nvidia-smi dmon -s t -c 3"
grab smi-q-fabric "nvidia-smi -q | grep -i -A4 fabric"
grab smi "nvidia-smi"
grab lspci-tv "lspci -tv"
grab lspci-lnk "lspci -vvv -d 10de: | grep -E '^[0-9a-f]|LnkCap:|LnkSta:|ACSCtl'"
grab proc-info "cat /proc/driver/nvidia/gpus/*/information"
grab proc-version "cat /proc/driver/nvidia/version"
grab dmesg-nvrm "dmesg | grep -i -E 'nvrm|nvidia' | tail -40"
tar czf "$OUT/x2-sweep.tar.gz" -C "$OUT" x2-sweep 2>/dev/null
for f in "$D"/*.txt; do
  n=$(basename "$f" .txt)
  echo; echo "================ $n ($(wc -l < "$f") lines): $(sed -n 2p "$f" | cut -c1-120)"
  printf '  text-only:'; timeout 60 $PY -m p2ptop explain "$f" --text-only --json 2>/dev/null | $PY "$(dirname "$0")/explain_top.py" 3
  printf '  live host:'; timeout 60 $PY -m p2ptop explain "$f" --json 2>/dev/null | $PY "$(dirname "$0")/explain_top.py" 3
done
