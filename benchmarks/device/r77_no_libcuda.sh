#!/usr/bin/env bash
# The forty-eighth round: CUDA with no driver library, for real. A container started without the NVIDIA Container
# Toolkit's mounts has no libcuda.so.1 (CUDA images carry no driver); here the host's libcuda.so.1 is hidden the same way
# in a private mount namespace (/dev/null bound over it), CuPy's, PyTorch's and a bare cudaGetDeviceCount's errors are
# captured, and each goes through `p2ptop explain`: the error alone (text only), the error as pasted from a container
# (a `docker run` line before it; text only and on the live host). Written to $OUT/nolib.log, the captured errors to
# $OUT/nolib_*.txt. Expects p2ptop in /tmp/v (session_check.sh / texts_on_host.sh install it).
set -u
[ -x /tmp/v/bin/python ] || { python3 -m venv /tmp/v && /tmp/v/bin/pip install -q --no-index --no-deps .whl/*.whl >/dev/null 2>&1; }
export PYTHONPATH=$PWD:/tmp/site
LIB=$(ldconfig -p | awk '/libcuda\.so\.1 /{print $NF; exit}')
REAL=$(readlink -f "$LIB")
echo "libcuda.so.1: $LIB -> $REAL"; [ -n "$REAL" ] || { echo "no libcuda.so.1 in ldconfig: nothing to hide"; exit 0; }
# how to get a private mount namespace here: as root, or as an unprivileged user in a user namespace of its own
if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then NS="unshare -m --propagation private"
elif unshare -rm --propagation private true 2>/dev/null; then NS="unshare -rm --propagation private"
else echo "no private mount namespace here (unshare refused): nothing hidden, nothing provoked"; exit 0; fi
echo "namespace: $NS"
nolib() {  # nolib NAME PYTHON-CODE: run the code with libcuda.so.1 hidden, its output into $OUT/nolib_NAME.txt
  $NS sh -c "mount --bind /dev/null '$REAL' && python3 -c \"\$1\"" sh "$2" > "$OUT/nolib_$1.txt" 2>&1
  echo "== $1 (exit $?): $(grep -m1 -iE 'error|insufficient|driver' "$OUT/nolib_$1.txt" | cut -c1-160)"
}
nolib cudart "import ctypes, ctypes.util, glob
paths = glob.glob('/usr/local/lib/python3*/dist-packages/nvidia/cuda_runtime/lib/libcudart.so*') + glob.glob('/usr/local/cuda/lib64/libcudart.so*') + glob.glob('/usr/local/lib/python3*/site-packages/nvidia/cuda_runtime/lib/libcudart.so*')
rt = ctypes.CDLL(sorted(paths)[0])
n = ctypes.c_int(0)
err = rt.cudaGetDeviceCount(ctypes.byref(n))
rt.cudaGetErrorName.restype = rt.cudaGetErrorString.restype = ctypes.c_char_p
print(f'cudaGetDeviceCount returned {err}')
print(f'-> {rt.cudaGetErrorString(err).decode()} ({rt.cudaGetErrorName(err).decode()})')"
nolib cupy "import cupy
print(cupy.cuda.runtime.getDeviceCount())"
nolib torch "import torch
print('cuda available:', torch.cuda.is_available())
torch.zeros(1, device='cuda')"
# nvidia-smi needs NVML (libnvidia-ml), not libcuda: it still works in that namespace, as in a container given the
# toolkit's 'utility' capability without 'compute'
$NS sh -c "mount --bind /dev/null '$REAL' && nvidia-smi -L" > "$OUT/nolib_smi.txt" 2>&1; echo "== nvidia-smi -L with libcuda hidden: $(head -1 "$OUT/nolib_smi.txt")"
for name in cudart cupy torch; do
  f="$OUT/nolib_$name.txt"
  { echo "\$ docker run --rm -it myimage python3 repro.py"; cat "$f"; } > "/tmp/docker_$name.txt"
  echo "### $name: the error alone (text only)"
  timeout 60 /tmp/v/bin/python -m p2ptop explain --text-only "$f" 2>&1 | grep -E "^[0-9]\. |No sign|Nothing|Note: the" | head -4
  echo "### $name: pasted from a container (text only)"
  timeout 60 /tmp/v/bin/python -m p2ptop explain --text-only "/tmp/docker_$name.txt" 2>&1 | grep -E "^[0-9]\. |No sign|Nothing" | head -4
  echo "### $name: pasted from a container (live host)"
  timeout 60 /tmp/v/bin/python -m p2ptop explain "/tmp/docker_$name.txt" 2>&1 | grep -E "^[0-9]\. |No sign|Nothing|^Note: text and host" | head -4
done
