#!/usr/bin/env bash
# Issue 22 on a one-GPU H100/H200: errors that PyTorch, CuPy and NCCL print there for real, provoked on purpose
# (several of each), each through `p2ptop explain` on the live host (and --json for the top entry), then `doctor`
# on that healthy host and `explain` on its own healthy NCCL log: no failure entry may be likely or possible
# unless the error itself says so. Everything goes to $OUT/diagnosis.log. Under 3 minutes.
set -u
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} NCCL_NVLS_ENABLE=0
OUT=${OUT:-/tmp/diagnosis-out}
mkdir -p "$OUT"
W=$(mktemp -d)
exec > >(tee "$OUT/diagnosis.log") 2>&1
T0=$(date +%s)
echo "== $(date -u) $(hostname) $(nvidia-smi -L | head -1)"

cat > "$W/cases.py" <<'PY'
import os, subprocess, sys
D = sys.argv[1]
cases = {
  # PyTorch
  "torch-tensor-cuda1": ("import torch; torch.zeros(4, device='cuda:1')", {}),
  "torch-set-device-7": ("import torch; torch.cuda.set_device(7)", {}),
  "torch-visible-0-to-cuda1": ("import torch; a = torch.ones(4, device='cuda:0'); a.to('cuda:1')", {"CUDA_VISIBLE_DEVICES": "0"}),
  "torch-can-access-peer": ("import torch; print(torch.cuda.can_device_access_peer(0, 1))", {}),
  "torch-no-gpu-visible": ("import torch; torch.zeros(1, device='cuda')", {"CUDA_VISIBLE_DEVICES": ""}),
  # CuPy
  "cupy-device-1": ("import cupy; cupy.cuda.Device(1).use()", {}),
  "cupy-peer-to-itself": ("import cupy; cupy.cuda.runtime.deviceEnablePeerAccess(0)", {}),
  "cupy-disable-peer-not-enabled": ("import cupy; cupy.cuda.runtime.deviceDisablePeerAccess(0)", {}),
  "cupy-can-access-peer-0-1": ("import cupy; print(cupy.cuda.runtime.deviceCanAccessPeer(0, 1))", {}),
  "cupy-memcpy-peer-to-1": ("import cupy; x = cupy.zeros(4); cupy.cuda.runtime.memcpyPeer(x.data.ptr, 1, x.data.ptr, 0, 16)", {}),
  "cupy-no-gpu-visible": ("import cupy; print(cupy.cuda.runtime.getDeviceCount())", {"CUDA_VISIBLE_DEVICES": ""}),
  # what a user prints when CUDA sees no GPU (symptom.no_cuda_device): PyTorch's own queries, hidden GPUs
  "torch-is-available-none-visible": ("import torch; print('torch.cuda.is_available():', torch.cuda.is_available()); "
                                      "print('torch.cuda.device_count():', torch.cuda.device_count())", {"CUDA_VISIBLE_DEVICES": ""}),
}
for name, (code, env) in cases.items():
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=90, env=dict(os.environ, **env))
    open(os.path.join(D, name + ".txt"), "w").write((r.stdout + r.stderr)[-6000:])
    print(f"{name}: exit {r.returncode}")
PY
python3 "$W/cases.py" "$W"

# NCCL: two ranks on one GPU (Duplicate GPU), a world of 2 where the second rank never comes (init timeout), an
# invalid rank, and a healthy one-rank log with NCCL_DEBUG=INFO
cat > "$W/nccl.py" <<'PY'
import os, sys, datetime, torch, torch.distributed as dist
rank, world, port = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                        timeout=datetime.timedelta(seconds=int(os.environ.get("T", "60"))))
torch.cuda.set_device(0)
t = torch.ones(1, device="cuda:0"); dist.all_reduce(t); torch.cuda.synchronize(); print("rank", rank, t.item())
dist.destroy_process_group()
PY
( NCCL_DEBUG=WARN timeout 90 python3 "$W/nccl.py" 0 2 29621 & NCCL_DEBUG=WARN timeout 90 python3 "$W/nccl.py" 1 2 29621; wait ) > "$W/nccl-duplicate-gpu.txt" 2>&1
NCCL_DEBUG=INFO T=10 timeout 40 python3 "$W/nccl.py" 0 2 29622 > "$W/nccl-peer-never-came.txt" 2>&1
NCCL_DEBUG=WARN timeout 40 python3 "$W/nccl.py" 3 2 29623 > "$W/nccl-invalid-rank.txt" 2>&1
NCCL_DEBUG=INFO timeout 60 python3 "$W/nccl.py" 0 1 29624 > "$W/nccl-healthy-1rank.log" 2>&1
echo "NCCL cases written"
# nvidia-smi's own words for a GPU index it does not have (the list and the table), as a user pastes them
nvidia-smi -L -i 7 > "$W/smi-list-no-such-gpu.txt" 2>&1
nvidia-smi -i 7 > "$W/smi-no-such-gpu.txt" 2>&1

for f in "$W"/*.txt "$W"/*.log; do
  n=$(basename "$f")
  echo; echo "================ $n (last lines of what it printed)"
  tail -n 6 "$f" | cut -c1-240
  echo "---- \$ p2ptop explain $n   (live host)"
  timeout 60 python3 -m p2ptop explain "$f" --top 3 2>&1 | cut -c1-240
  echo "[exit ${PIPESTATUS[0]}]"
  timeout 60 python3 -m p2ptop explain "$f" --json 2>/dev/null | python3 "$(dirname "$0")/explain_top.py" 3
done

echo; echo "================ doctor on this healthy host (no failure entry may be offered)"
timeout 90 python3 -m p2ptop doctor 2>&1 | tail -25
echo "[exit ${PIPESTATUS[0]}]"
echo; echo "================ the single-GPU H100 capture (../shared) and the H200 replay through explain"
for r in tests/fixtures/captures/h100x1-vm/p2ptop-snapshot.json .carry/h100x1-p2ptop-snapshot.json tests/fixtures/captures/h200x2-live/p2ptop-snapshot.json; do
  [ -f "$r" ] || continue
  echo "---- explain --replay $r on the PyTorch invalid ordinal"
  timeout 60 python3 -m p2ptop explain "$W/torch-tensor-cuda1.txt" --replay "$r" --top 3 2>&1 | cut -c1-200
done
echo; echo "done in $(( $(date +%s) - T0 )) s"
