#!/usr/bin/env bash
# A healthy one-GPU host's own outputs, each pasted to `p2ptop explain` as a user would paste them: none is a report of
# trouble, so each answer should be "No sign of P2P trouble" (or nothing GPU-related), on the live host and text alone.
# The forty-sixth round found the full `nvidia-smi -q` read as slowness and MIG ("HW Slowdown : Not Active", "MIG
# Mode"); this sweeps the other outputs people paste (the forty-seventh round added three grep'd excerpts of -q without
# its GPU header). Each line of $OUT/sweep.log: the command, the first line of each
# answer, and the symptom facts read (read_text). Outputs that got an answer other than "No sign" are kept in $OUT.
# Expects p2ptop's wheel in .whl/ (installs it into /tmp/v when missing).
[ -x /tmp/v/bin/python ] || { python3 -m venv /tmp/v && /tmp/v/bin/pip install -q --no-index --no-deps .whl/*.whl >/dev/null 2>&1; }
export PYTHONPATH=$PWD:/tmp/site
R=/tmp/sweep; mkdir -p $R
BUS=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1 | sed 's/^0000//; s/^0000://' | tr 'A-F' 'a-f')
i=0
sweep() {
  i=$((i + 1)); f="$R/out$i.txt"
  bash -c "$1" > "$f" 2>&1
  live=$(timeout 60 /tmp/v/bin/python -m p2ptop explain "$f" 2>&1 | grep -m1 -E "^[0-9]\. |No sign|Nothing|Not a GPU|no trace" | cut -c1-110)
  alone=$(timeout 60 /tmp/v/bin/python -m p2ptop explain --text-only "$f" 2>&1 | grep -m1 -E "^[0-9]\. |No sign|Nothing|Not a GPU|no trace" | cut -c1-110)
  sym=$(timeout 60 /tmp/v/bin/python -c "
import sys
from p2ptop.evidence import read_text
ev = read_text(open(sys.argv[1]).read())
print(sorted({k + '=' + str(v) for f in ev.findings for k, v in f.facts.items()
              if k.startswith(('symptom.', 'error.', 'tool.', 'bench.', 'nccl.p2p_fallback', 'gpu.mig', 'gpu.lost', 'gpu.nvlink_down'))}))" "$f")
  echo "== [$i] $1 ($(wc -l < "$f") lines)"; echo "   live:  $live"; echo "   alone: $alone"; echo "   facts: $sym"
  case "$live$alone" in *"1. "*) cp "$f" "$OUT/out$i.txt";; esac
}
{
sweep "nvidia-smi"
sweep "nvidia-smi -q"
sweep "nvidia-smi -q -d PERFORMANCE"
sweep "nvidia-smi -q -d CLOCK"
sweep "nvidia-smi -q -d ECC"
sweep "nvidia-smi -q -d ROW_REMAPPER,PAGE_RETIREMENT"
sweep "nvidia-smi -q -d MEMORY,UTILIZATION,TEMPERATURE,POWER"
sweep "nvidia-smi -q -d RESET_STATUS"
sweep "nvidia-smi -q -x"
sweep "nvidia-smi -q | grep -i slowdown"
sweep "nvidia-smi -q | grep -A8 Temperature"
sweep "nvidia-smi -q | grep -A10 'Clocks Event Reasons'"
sweep "nvidia-smi -L"
sweep "nvidia-smi topo -m"
sweep "nvidia-smi topo -p2p r"
sweep "nvidia-smi topo -p2p n"
sweep "nvidia-smi nvlink -s"
sweep "nvidia-smi nvlink -e"
sweep "nvidia-smi nvlink -c"
sweep "nvidia-smi mig -lgi"
sweep "nvidia-smi --query-gpu=name,pci.bus_id,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,clocks_event_reasons.hw_slowdown,ecc.errors.uncorrected.volatile.total --format=csv"
sweep "lspci -vvv -s $BUS"
sweep "lspci -tv"
sweep "dmesg 2>&1 | grep -i -E 'nvrm|nvidia|iommu|dmar|amd-vi' | tail -40"
sweep "cat /proc/driver/nvidia/version; cat /proc/driver/nvidia/params | head -40"
sweep "python3 -m torch.utils.collect_env"
sweep "python3 -c 'import torch; print(torch.cuda.is_available(), torch.cuda.device_count(), torch.cuda.nccl.version(), torch.cuda.get_device_name(0))'"
sweep "python3 -c 'import torch; print(torch.cuda.can_device_access_peer(0, 0))'"
} > "$OUT/sweep.log" 2>&1
cat "$OUT/sweep.log"
