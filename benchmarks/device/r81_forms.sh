#!/usr/bin/env bash
# The forty-second session's check on a one-GPU machine: errors PyTorch, CuPy and NCCL print there for real (provoked on
# purpose) and a healthy NCCL INFO log of this host, each through `p2ptop explain` on the live host as printed and as a
# log system hands it over (benchmarks/perturb_corpus.py's changes: JSON-lines records, a service's answer printed by jq,
# Loki's and journalctl -r's newest-first lines with their times, Kibana's rows, a blank line after every line; and this
# session's: a page's markdown escapes, less -N's and vim's line numbers, Ansible's results, a list of lines, the
# journal's JSON). For each
# the first answer line as printed and whether every form gives the same; everything into $OUT/forms.log.
# Run after session_check.sh (its /tmp/v holds the p2ptop wheel) from the repository root:
#   run(kind=nvidia-h200, carry=[".whl", ".carry"]): bash benchmarks/device/r81_forms.sh
# FORMS (comma-separated perturb_corpus changes) picks the forms; r80_record_forms.sh is this script with the last round's.
set -u
W=$(mktemp -d)
export NCCL_NVLS_ENABLE=0
python3 - "$W" <<'PY'
import os, subprocess, sys
D = sys.argv[1]
cases = {
    "torch-tensor-cuda1": ("import torch; torch.zeros(4, device='cuda:1')", {}),
    "torch-visible-0-to-cuda1": ("import torch; a = torch.ones(4, device='cuda:0'); a.to('cuda:1')", {"CUDA_VISIBLE_DEVICES": "0"}),
    "cupy-device-1": ("import cupy; cupy.cuda.Device(1).use()", {}),
    "cupy-peer-to-itself": ("import cupy; cupy.cuda.runtime.deviceEnablePeerAccess(0)", {}),
}
for name, (code, env) in cases.items():
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=90, env=dict(os.environ, **env))
    open(os.path.join(D, name + ".txt"), "w").write((r.stdout + r.stderr)[-6000:])
PY
cat > "$W/nccl.py" <<'PY'
import os, sys, datetime, torch, torch.distributed as dist
rank, world, port = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                        timeout=datetime.timedelta(seconds=60))
torch.cuda.set_device(0)
t = torch.ones(1, device="cuda:0"); dist.all_reduce(t); torch.cuda.synchronize(); print("rank", rank, t.item())
dist.destroy_process_group()
PY
( NCCL_DEBUG=WARN timeout 90 python3 "$W/nccl.py" 0 2 29631 & NCCL_DEBUG=WARN timeout 90 python3 "$W/nccl.py" 1 2 29631; wait ) > "$W/nccl-duplicate-gpu.txt" 2>&1
NCCL_DEBUG=INFO timeout 60 python3 "$W/nccl.py" 0 1 29634 > "$W/nccl-healthy-1rank.txt" 2>&1
mkdir -p "$OUT/forms" && cp "$W"/*.txt "$OUT/forms/"  # the outputs themselves, to read the forms again off the device
PYTHONPATH=$PWD/benchmarks:/tmp/site timeout 400 /tmp/v/bin/python - "$W" <<'PY' > "$OUT/forms.log" 2>&1
import glob, os, subprocess, sys
import perturb_corpus as pc
FORMS = os.environ.get("FORMS", "jsonl,jq,jsonstr,newest,journalr,kibana,blankdouble,dockerjson,mdescape,lessn,vimnu,"
                       "ansible,ansiblefail,pylist,yamlcb,journaljson").split(",")
def first(text):
    r = subprocess.run([sys.executable, "-m", "p2ptop", "explain", "-", "--top", "3"], input=text, capture_output=True,
                       text=True, timeout=60)
    lines = [l for l in r.stdout.splitlines() if l[:3] in ("1. ", "2. ", "3. ") or l.startswith(("Nothing", "No sign"))]
    return " | ".join(l.split("  score")[0] for l in lines[:3]) or "(no answer line)"
same = total = 0
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.txt"))):
    text = open(path).read().rstrip("\n")
    plain = first(text)
    print(f"== {os.path.basename(path)} ({len(text.splitlines())} lines): {plain}")
    for form in FORMS:
        got = first(pc.CHANGES[form](text))
        total += 1; same += got == plain
        print(f"   {form:11} {'same' if got == plain else 'DIFFERENT: ' + got}")
print(f"forms giving the plain text's first three answers: {same} of {total}")
PY
tail -1 "$OUT/forms.log"
