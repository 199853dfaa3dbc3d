#!/usr/bin/env bash
# Text evidence and `p2ptop import` on a real GPU host (one GPU is enough). Prints every command and its
# output into one log ($OUT/evidence.log). Runs in under 3 minutes; needs nvidia-smi, python3; PyTorch and
# CuPy where present (each step says when it is skipped).
#  1. nvidia-smi topo -m / topo -p2p r,w,n,a,p / -q -x / the table, pasted together -> `p2ptop import`,
#     compared field by field with the live `p2ptop snapshot` of the same host;
#  2. the same outputs through read_text: the facts and the lines they came from;
#  3. real errors provoked on purpose (PyTorch and CuPy invalid device ordinal, an NCCL init with two ranks
#     on one GPU) and a real one-rank NCCL_DEBUG=INFO log of the installed NCCL: read_text / read_nccl_log;
#  4. the three text benchmarks on this (idle) machine.
set -u
export PYTHONPATH=$PWD
OUT=${OUT:-/tmp/evidence-out}
mkdir -p "$OUT"
LOG="$OUT/evidence.log"
W=$(mktemp -d)
exec > >(tee "$LOG") 2>&1
run() { echo; echo "\$ $*"; timeout 60 "$@"; echo "[exit $?]"; }

run nvidia-smi
run nvidia-smi topo -m
for c in r w n a p; do echo "\$ nvidia-smi topo -p2p $c"; nvidia-smi topo -p2p $c; done
{ nvidia-smi; nvidia-smi topo -m; for c in r w n a p; do echo "\$ nvidia-smi topo -p2p $c"; nvidia-smi topo -p2p $c; done; nvidia-smi -q -x; } > "$W/paste.txt" 2>&1
echo "paste: $(wc -l < "$W/paste.txt") lines"

run python3 -m p2ptop import "$W/paste.txt" -o "$W/imported.json"
run python3 -m p2ptop snapshot -o "$W/live.json"
run python3 - "$W/imported.json" "$W/live.json" <<'PY'
import sys
from p2ptop.model import load_snapshot
from p2ptop.fabric import Fabric
imp, live = load_snapshot(sys.argv[1]), load_snapshot(sys.argv[2])
print("imported:", imp.source.label)
bad = 0
def cmp(what, a, b):
    global bad
    ok = a == b
    bad += not ok
    print(f"  {'same' if ok else 'DIFFERENT':9} {what}: imported={a!r} live={b!r}")
cmp("driver", imp.driver_version, live.driver_version)
cmp("cuda driver", imp.cuda_driver_version, live.cuda_driver_version)
cmp("gpu count", len(imp.gpus), len(live.gpus))
for gi, gl in zip(imp.gpus, live.gpus):
    for f in ("name", "pci_bus_id", "uuid", "pcie_gen_max", "pcie_width_max", "virtualization_mode", "mig_mode", "cpu_affinity", "numa_node"):
        cmp(f"GPU{gi.index}.{f}", getattr(gi, f), getattr(gl, f))
    cmp(f"GPU{gi.index}.fabric.state", gi.fabric.state, gl.fabric.state)
fi, fl = Fabric(imp), Fabric(live)
for p in live.pairs:
    cmp(f"path {p.a}-{p.b}", fi.path_class(p.a, p.b), fl.path_class(p.a, p.b))
    pi = imp.pair(p.a, p.b)
    for cap in ("read", "write", "nvlink", "atomics", "pci"):
        cmp(f"p2p.{cap} {p.a}-{p.b}", pi.p2p.get(cap) if pi else None, p.p2p.get(cap))
print(f"{bad} differences")
PY
run python3 -m p2ptop doctor --replay "$W/imported.json"
run python3 - "$W/paste.txt" <<'PY'
import sys, time
from p2ptop.evidence import read_text
text = open(sys.argv[1]).read()
t0 = time.perf_counter(); ev = read_text(text); dt = time.perf_counter() - t0
print(f"read_text: kinds={ev.kinds} gpu_related={ev.gpu_related} failed={ev.failed_parsers} in {dt*1000:.0f} ms")
for s, d in ev.facts_by_subject().items():
    print(" ", s, d)
print("symptom findings (expect none on a healthy host):", [f.summary for f in ev.symptom_findings])
PY

# real errors, provoked on purpose
cat > "$W/errors.py" <<'PY'
import os, subprocess, sys, textwrap
cases = {
 "torch-set-device-7": "import torch; torch.cuda.set_device(7)",
 "torch-tensor-cuda9": "import torch; torch.zeros(1, device='cuda:9')",
 "torch-visible-0-device-1": "import torch; torch.zeros(1, device='cuda:1')",
 "cupy-device-5": "import cupy; cupy.cuda.Device(5).use(); cupy.zeros(1)",
 "cupy-can-access-peer-0-3": "import cupy; print(cupy.cuda.runtime.deviceCanAccessPeer(0, 3))",
}
env = dict(os.environ, CUDA_VISIBLE_DEVICES="0")
for name, code in cases.items():
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    out = (r.stdout + r.stderr)[-3000:]
    print(f"=== {name} (exit {r.returncode})\n{out}")
    open(os.path.join(sys.argv[1], name + ".txt"), "w").write(out)
PY
run python3 "$W/errors.py" "$W"
cat > "$W/nccl.py" <<'PY'
import os, sys, torch, torch.distributed as dist
rank, world = int(sys.argv[1]), int(sys.argv[2])
dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29611", rank=rank, world_size=world)
torch.cuda.set_device(0)
t = torch.ones(1, device="cuda:0"); dist.all_reduce(t); torch.cuda.synchronize()
print("rank", rank, "ok", t.item()); dist.destroy_process_group()
PY
echo; echo "\$ NCCL_DEBUG=INFO one rank"; NCCL_DEBUG=INFO timeout 60 python3 "$W/nccl.py" 0 1 > "$W/nccl-1rank.log" 2>&1; echo "[exit $?]"; tail -40 "$W/nccl-1rank.log"
echo; echo "\$ NCCL_DEBUG=WARN two ranks on one GPU (duplicate GPU)"; ( NCCL_DEBUG=WARN timeout 60 python3 "$W/nccl.py" 0 2 & NCCL_DEBUG=WARN timeout 60 python3 "$W/nccl.py" 1 2; wait ) > "$W/nccl-dup.log" 2>&1; echo "[exit $?]"; tail -40 "$W/nccl-dup.log"
run python3 - "$W" <<'PY'
import glob, os, sys
from p2ptop.evidence import read_text
from p2ptop.nccl import read_nccl_log
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.txt")) + glob.glob(os.path.join(sys.argv[1], "*.log"))):
    if path.endswith("paste.txt"):
        continue
    text = open(path).read()
    ev = read_text(text)
    h = ev.facts_by_subject().get("host", {})
    keep = {k: v for k, v in h.items() if k.startswith(("error.", "symptom.", "text.", "nccl.", "env."))}
    print(f"== {os.path.basename(path)}: kinds={ev.kinds} gpu_related={ev.gpu_related}\n   {keep}")
    for f in ev.symptom_findings[:4]:
        print("   ", f.id, f.facts, f.evidence)
    if path.endswith(".log"):
        log = read_nccl_log(text)
        print(f"   nccl: version={log.version} cuda={log.cuda} driver={log.cuda_driver} hosts={log.hosts} "
              f"ranks={[(r.rank, r.cuda_dev, r.bus_id) for r in log.ranks]} channels={len(log.channels)} "
              f"warnings={[m.message[:120] for m in log.warnings][:3]} env={log.env_values()}")
PY
for f in "$W"/torch-visible-0-device-1.txt "$W"/nccl-dup.log; do run python3 -m p2ptop explain "$f"; done

run python3 benchmarks/bench_nccl_log.py
run python3 benchmarks/bench_evidence.py
run python3 benchmarks/bench_import.py
echo "done"
