#!/usr/bin/env bash
# What NCCL prints when its build holds no code for the GPU (issue 22: the NCCL-build entry). Builds NCCL from source with
# NVCC_GENCODE for sm_80 only (no PTX) and a few kernels (ONLY_FUNCS), builds nccl-tests against it, and runs all_reduce_perf
# on the device's Hopper GPU (sm_90): the real messages land in $OUT/arch-VERSION.txt for `p2ptop explain`.
# The sources travel as archives of the mirrors (git archive TAG): .carry/nccl-VERSION.tar.gz, .carry/nccl-tests.tar.gz.
#   run(kind=nvidia-h200, carry=[".carry"]): bash benchmarks/device/nccl_without_arch.sh 2.21.5 2.30.7
set -u
W=/tmp/narch
mkdir -p "$W"
{ nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv; nvcc --version | tail -2; } > "$OUT/arch-host.txt" 2>&1
for V in "$@"; do
  S="$W/nccl-$V"
  mkdir -p "$S" && tar xzf ".carry/nccl-$V.tar.gz" -C "$S" || continue
  start=$(date +%s)
  (cd "$S" && timeout 300 make -j"$(nproc)" src.build NVCC_GENCODE="-gencode=arch=compute_80,code=sm_80" \
      ONLY_FUNCS="AllReduce Sum f32 * *" > "$OUT/nccl-$V-build.log" 2>&1)
  echo "nccl $V build rc=$? in $(( $(date +%s) - start )) s" >> "$OUT/arch-host.txt"
  T="$W/tests-$V"
  mkdir -p "$T" && tar xzf .carry/nccl-tests.tar.gz -C "$T"
  (cd "$T" && timeout 200 make -j"$(nproc)" MPI=0 NCCL_HOME="$S/build" > "$OUT/nccl-tests-$V-build.log" 2>&1)
  echo "nccl-tests against $V rc=$?" >> "$OUT/arch-host.txt"
  # the library's architectures, as cuobjdump lists them
  cuobjdump --list-elf "$S"/build/lib/libnccl.so.2 2>/dev/null | grep -o 'sm_[0-9]*' | sort | uniq -c >> "$OUT/arch-host.txt"
  LD_LIBRARY_PATH="$S/build/lib" NCCL_DEBUG=WARN timeout 60 "$T/build/all_reduce_perf" -g 1 -b 8 -e 1M -f 4 \
      > "$OUT/arch-$V.txt" 2>&1
  echo "all_reduce_perf with $V rc=$?" >> "$OUT/arch-host.txt"
done
