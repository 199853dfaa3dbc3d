#!/usr/bin/env bash
# The twenty-eighth session's rules on real output of one GPU: each program below runs for real, its output goes through
# `p2ptop explain` on the live host. Expects p2ptop's wheel installed in /tmp/v (session_check.sh / texts_on_host.sh do it).
#   ldd:    ldd on a copy of PyTorch's libtorch_cuda.so alone in a folder: its $ORIGIN-relative run path then finds none of
#           its neighbours, so ldd prints "libnccl.so.2 => not found" (a library the loader does not find, as on a host
#           without the NCCL wheel)
#   cupy:   CuPy's cupy.cuda.nccl with its NCCL backend import blocked (sys.modules entry None: the ImportError a build
#           without NCCL raises): CuPy's own try/except leaves the stub, the call raises AttributeError
#   torch:  torch.cuda.get_device_properties(1) for a device this one-GPU process does not have (torch 2.11 checks the index
#           in Python first; its C++ assert is not reachable from Python there: h200x1-2026-11-30ah's run also tried
#           torch._C._cuda_getDeviceProperties, which 2.11 does not have, and that step was dropped)
#   nccl:   a one-rank NCCL communicator with NCCL_DEBUG=INFO (its "Check P2P Type" line names no pair: no fact)
export PYTHONPATH=$PWD:/tmp/site
ex() { timeout 60 /tmp/v/bin/python -m p2ptop explain "$1" 2>&1 | grep -E "^[0-9]\. |No sign|Nothing|Unsure|Symptoms|NCCL warned|in doubt" | head -4; }
{
echo "### ldd"
T=$(python3 -c "import torch, os; print(os.path.join(os.path.dirname(torch.__file__), 'lib', 'libtorch_cuda.so'))")
mkdir -p /tmp/lddcopy && cp "$T" /tmp/lddcopy/ && ldd /tmp/lddcopy/libtorch_cuda.so > "$OUT/ldd.txt" 2>&1
grep -E "nccl|not found" "$OUT/ldd.txt" | head -6
ex "$OUT/ldd.txt"
echo "### cupy"
python3 -c "
import sys; sys.modules['cupy_backends.cuda.libs.nccl'] = None
from cupy.cuda import nccl
print('available', nccl.available)
nccl.get_unique_id()" > "$OUT/cupy.txt" 2>&1; echo "rc $?"; tail -2 "$OUT/cupy.txt"
ex "$OUT/cupy.txt"
echo "### torch get_device_properties(1)"
python3 -c "import torch; torch.cuda.get_device_properties(1)" > "$OUT/torch_props.txt" 2>&1; echo "rc $?"; tail -1 "$OUT/torch_props.txt"
ex "$OUT/torch_props.txt"
echo "### nccl one rank, INFO"
NCCL_DEBUG=INFO timeout 120 python3 -c "
import torch, torch.distributed as dist, os
os.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT='29533')
dist.init_process_group('nccl', rank=0, world_size=1, device_id=torch.device('cuda:0'))
t = torch.ones(4, device='cuda'); dist.all_reduce(t); torch.cuda.synchronize(); print('sum', t.sum().item())
dist.destroy_process_group()" > "$OUT/nccl1.txt" 2>&1; echo "rc $?"; grep -E "Check P2P Type|NCCL version" "$OUT/nccl1.txt" | head -3
ex "$OUT/nccl1.txt"
} > "$OUT/r67.log" 2>&1
cat "$OUT/r67.log"
