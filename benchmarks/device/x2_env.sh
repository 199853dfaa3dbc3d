# The start every two-GPU device script shares, sourced after it sets OUT:  . "$(dirname "$0")/x2_env.sh" LOG
# NVLink multicast off (NCCL_NVLS_ENABLE=0 and kin), as the lent multi-GPU machines require; PY, p2ptop's python
# (P2PTOP_PY; torchrun and nvcc are the device's own); W, a scratch folder; $OUT made; everything the script prints also
# to $OUT/LOG; T0, its start; a first line naming the GPUs.
set -u
export PYTHONPATH=${PYTHONPATH:-} NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p "$OUT"
PY=${P2PTOP_PY:-python3}
W=$(mktemp -d)
exec > >(tee "$OUT/$1") 2>&1
T0=$(date +%s)
echo "== $(date -u) $(nvidia-smi -L 2>&1 | tr '\n' ' ')"
