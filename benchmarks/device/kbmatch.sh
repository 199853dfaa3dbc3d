#!/usr/bin/env bash
# Diagnosis on a real single-GPU host (issue 22, "How it is checked"): errors that PyTorch, CuPy and NCCL
# print there for real, provoked on purpose, each through `p2ptop explain` on the LIVE host (text + NVML +
# host facts) and `--text-only`; then `doctor` on that healthy host, which must offer no failure entry.
# Prints every command and its output into one log ($OUT/kbmatch.log); under 3 minutes. Needs nvidia-smi and
# python3; PyTorch and CuPy where present (a missing one is said and skipped).
# What to look for: no entry marked likely/possible whose class needs NVSwitch or a second GPU
# (nvls_multicast_failure, fabric_manager_*, p2p_*, vm_p2p_unavailable, iommu_*) and no entry on "inside
# a container" alone; each error answered by its own class (device_not_visible for invalid device ordinal)
# or by `unsure` candidates / "no entry fits" with the symptom named; doctor: "0 of N entries match".
set -u
export PYTHONPATH=$PWD
OUT=${OUT:-/tmp/kbmatch-out}
mkdir -p "$OUT"
LOG="$OUT/kbmatch.log"
W=$(mktemp -d)
exec > >(tee "$LOG") 2>&1
run() { echo; echo "\$ $*"; timeout 60 "$@"; echo "[exit $?]"; }

run nvidia-smi -L
run python3 -m p2ptop doctor
run python3 -m p2ptop doctor --json

provoke() {  # name, then the command; its stdout+stderr is the error text to explain
  local name=$1; shift
  echo; echo "=== provoke $name: $*"
  timeout 90 "$@" > "$W/$name.txt" 2>&1
  echo "[exit $?]"; tail -n 15 "$W/$name.txt"
  if [ ! -s "$W/$name.txt" ]; then echo "(no output: skipped)"; return; fi
  run python3 -m p2ptop explain "$W/$name.txt" --top 3
  run python3 -m p2ptop explain "$W/$name.txt" --text-only --top 3
  run python3 - "$W/$name.txt" <<'PY'
import json, subprocess, sys
doc = json.loads(subprocess.run([sys.executable, "-m", "p2ptop", "explain", sys.argv[1], "--json"], capture_output=True, text=True).stdout)
print("answer:", doc["answer"], "| symptoms:", doc["symptoms"][:4], "| next:", doc["next_command"])
for m in doc["matches"]:
    print(f"  {m['confidence']:8} {m['id']} [{m['failure_class']}] on {m['where']}: {m['reasons'][:3]}")
bad = [m["id"] for m in doc["matches"] if m["confidence"] in ("likely", "possible") and m["failure_class"] in
       ("nvls_multicast_failure", "fabric_manager_not_running", "fabric_manager_version_mismatch", "vm_p2p_unavailable",
        "p2p_unsupported_topology", "p2p_unsupported_consumer_gpu", "iommu_acs_p2p_broken")]
print("CHECK context-only/ruled-out classes offered:", bad or "none")
PY
}

if python3 -c "import torch" 2>/dev/null; then
  provoke torch-set-device python3 -c "import torch; torch.cuda.set_device(1)"
  provoke torch-tensor-cuda1 python3 -c "import torch; torch.zeros(4, device='cuda:1')"
  provoke torch-hidden-gpu env CUDA_VISIBLE_DEVICES=7 python3 -c "import torch; torch.zeros(4, device='cuda')"
  provoke torch-peer python3 -c "import torch; print(torch.cuda.can_device_access_peer(0, 1))"
  provoke torch-nccl-two-ranks-one-gpu env MASTER_ADDR=127.0.0.1 MASTER_PORT=29533 NCCL_DEBUG=INFO python3 -c "
import os, torch, torch.distributed as dist, torch.multiprocessing as mp
def work(rank):
    os.environ.update(RANK=str(rank), WORLD_SIZE='2')
    torch.cuda.set_device(0)
    dist.init_process_group('nccl', rank=rank, world_size=2, device_id=torch.device('cuda', 0))
    t = torch.ones(4, device='cuda'); dist.all_reduce(t); torch.cuda.synchronize()
mp.spawn(work, nprocs=2)"
  provoke torch-nccl-one-rank env MASTER_ADDR=127.0.0.1 MASTER_PORT=29534 NCCL_DEBUG=INFO python3 -c "
import os, torch, torch.distributed as dist
os.environ.update(RANK='0', WORLD_SIZE='1'); dist.init_process_group('nccl')
t = torch.ones(4, device='cuda'); dist.all_reduce(t); torch.cuda.synchronize(); print('ok', t.tolist())"
else
  echo "PyTorch not installed: its errors skipped"
fi
if python3 -c "import cupy" 2>/dev/null; then
  provoke cupy-device1 python3 -c "import cupy; cupy.cuda.Device(1).use()"
  provoke cupy-peer-self python3 -c "import cupy; cupy.cuda.runtime.deviceEnablePeerAccess(0)"
  provoke cupy-peer-1 python3 -c "import cupy; print(cupy.cuda.runtime.deviceCanAccessPeer(0, 1))"
else
  echo "CuPy not installed: its errors skipped"
fi
echo; echo "done; the answers above are what the note records"
