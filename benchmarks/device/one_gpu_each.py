#!/usr/bin/env python3
"""Two ranks on a host of two GPUs, all-reducing 256 MiB twenty times, timed: with every GPU visible to both ranks (each
picks its own with set_device), and with each rank given only its own GPU (CUDA_VISIBLE_DEVICES=<rank>, as Slurm's
--gpus-per-task=1, Ray's workers or one GPU per container give it). For x2_one_gpu_each.sh; prints each rank's bus
bandwidth (all-reduce's 2(n-1)/n rule) and leaves NCCL's log (NCCL_DEBUG=INFO) on stderr.

    python3 benchmarks/device/one_gpu_each.py all|own|isolated

isolated: as own, and each rank's process also loses the peer's device node (/dev/nvidia<peer> under /dev/null in a
private mount namespace: unshare -m, root), as Slurm's per-task cgroup or a one-GPU container takes it away."""

import os
import subprocess
import sys


def rank_main(rank: int, mode: str) -> None:
    import time
    import torch
    import torch.distributed as dist

    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29533", rank=rank, world_size=2)
    torch.cuda.set_device(rank if mode == "all" else 0)
    x = torch.ones(64 << 20, device="cuda")  # 256 MiB of float32
    for _ in range(3):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(20):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    dt = (time.perf_counter() - t) / 20
    n = 2  # ranks
    busbw = x.numel() * 4 / dt / 1e9 * 2 * (n - 1) / n  # nccl-tests' all-reduce rule
    print(f"rank {rank} ({mode}): CUDA sees {torch.cuda.device_count()} GPU(s); all_reduce 256 MiB "
          f"{dt * 1e3:.2f} ms, busbw {busbw:.1f} GB/s, x[0] = {x[0].item()}", flush=True)
    dist.destroy_process_group()


def main(argv=None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if len(args) == 2 and args[0] in ("all", "own") and args[1] in ("0", "1"):
        rank_main(int(args[1]), args[0])
        return 0
    mode = args[0]
    procs = []
    for rank in (0, 1):
        env = dict(os.environ)
        cmd = [sys.executable, __file__, "all" if mode == "all" else "own", str(rank)]
        if mode in ("own", "isolated"):
            env["CUDA_VISIBLE_DEVICES"] = str(rank)
        if mode == "isolated":
            # the peer's device node hidden too, as a cgroup or a container's device list hides it: a private mount
            # namespace with /dev/null over /dev/nvidia<peer> (needs root)
            cmd = ["unshare", "-m", "sh", "-c", f"mount --bind /dev/null /dev/nvidia{1 - rank} && exec \"$0\" \"$@\""] + cmd
        procs.append(subprocess.Popen(cmd, env=env))
    return max(p.wait() for p in procs)


if __name__ == "__main__":
    sys.exit(main())
