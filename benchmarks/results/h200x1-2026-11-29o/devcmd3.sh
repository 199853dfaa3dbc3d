python3 -m venv /tmp/v && /tmp/v/bin/pip install -q --no-index --no-deps .whl/*.whl || exit 1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/jsonschema-*.whl .whl/jsonschema_specifications-*.whl .whl/referencing-*.whl .whl/rpds_py-*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site; cd /tmp
{ echo "## nvidia-smi topo -m"; nvidia-smi topo -m; echo "## p2ptop topo"; /tmp/v/bin/p2ptop topo; echo "## p2ptop doctor (tail)"; /tmp/v/bin/p2ptop doctor 2>&1 | tail -4
  echo "## p2ptop snapshot + topo --replay"; /tmp/v/bin/p2ptop snapshot -o /tmp/s.json >/dev/null 2>&1; /tmp/v/bin/p2ptop topo --replay /tmp/s.json | sed -n 3,4p
  echo "## flattened log on the live host"; echo "It hangs at init. vm:1065:1065 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to LOC vm:1065:1065 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct vm:1065:1065 [1] NCCL INFO Channel 00 : 1[1] -> 0[0] via SHM/direct/direct vm:1065:1065 [0] NCCL INFO Connected all rings" | /tmp/v/bin/p2ptop explain - 2>&1 | grep -E "^Note|^[0-9]\. " | head -5
  echo "## import of a bridged 4-GPU paste"; printf '\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\nGPU0\t X \tPHB\tNV4\tPHB\t0-31\nGPU1\tPHB\t X \tPHB\tNV4\t0-31\nGPU2\tNV4\tPHB\t X \tPHB\t0-31\nGPU3\tPHB\tNV4\tPHB\t X \t0-31\n' > /tmp/p.txt; /tmp/v/bin/p2ptop import /tmp/p.txt -o /tmp/i.json; /tmp/v/bin/p2ptop topo --replay /tmp/i.json | sed -n 3,7p; } > $OUT/review.log 2>&1
cat $OUT/review.log
