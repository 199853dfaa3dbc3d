"""A stand-in for one NCCL rank (``python -m p2ptop.bench.worker_nccl``) that misbehaves on request (no GPU, no NCCL).

    python fake_nccl_worker.py MODE

Speaks the rank protocol (job on stdin, unique id from rank 0 through the parent) and writes NCCL-format
INFO lines on stderr, as the real worker's NCCL does. The lines' transport is $FAKE_NCCL_VIA (default
P2P/CUMEM), its speed $FAKE_NCCL_GBPS (default 300); $FAKE_NCCL_ENV ("NAME=V,NAME=V") adds "set by environment" lines. These are SIMULATED logs.
MODE: ok, hang (rank 1 hangs after init), crash (rank 1 segfaults after init), garbage (rank 0 prints junk),
fatal (every rank: no NCCL), init_error (rank 1: ncclSystemError at init; rank 0 waits as NCCL would),
grandchild (rank 0 starts a sleeping child, then hangs). $FAKE_PIDFILE collects the pids.
"""

import json
import os
import signal
import subprocess
import sys
import time


def emit(ev):
    sys.stdout.write(json.dumps(ev) + "\n")
    sys.stdout.flush()


def info(rank, text):
    sys.stderr.write(f"fakehost:{os.getpid()}:{os.getpid()} [{rank}] NCCL INFO {text}\n")
    sys.stderr.flush()


def main():
    mode = sys.argv[1]
    job = json.loads(sys.stdin.readline())
    rank, n = job["rank"], job["nranks"]
    pids = [os.getpid()]
    if mode == "grandchild" and rank == 0:
        pids.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"]).pid)
    if os.environ.get("FAKE_PIDFILE"):
        with open(os.environ["FAKE_PIDFILE"], "a") as f:
            f.write("".join(f"{p}\n" for p in pids))
    if mode == "fatal":
        emit({"type": "fatal", "message": "NCCL cannot be loaded through CuPy (ImportError: libnccl.so.2)"})
        return 2
    emit({"type": "hello", "pid": os.getpid(), "rank": rank, "cupy": "fake", "cuda_device": job["gpu"], "nccl_version": "2.28.9"})
    info(rank, "NCCL version 2.28.9+cuda13.0")
    for kv in filter(None, os.environ.get("FAKE_NCCL_ENV", "").split(",")):
        k, v = kv.split("=", 1)
        info(rank, f"{k} set by environment to {v}.")
    if rank == 0:
        emit({"type": "unique_id", "id": list(range(-64, 64))})
    else:
        uid = json.loads(sys.stdin.readline())["unique_id"]
        assert len(uid) == 128
    if mode == "garbage" and rank == 0:
        print("not json at all \x1b[31m")
    bus = job["bus_id"] or "0000:00:00.0"
    busid = bus.split(":", 1)[1].replace(":", "").replace(".", "").lstrip("0") or "0"
    info(rank, f"ncclCommInitRankConfig comm 0x1 rank {rank} nranks {n} cudaDev {job['gpu']} nvmlDev {job['gpu']} busId {busid} commId 0xabc - Init START")
    if mode == "init_error" and rank == 1:
        emit({"type": "error", "step": "init", "name": "ncclSystemError", "code": 2, "text": "unhandled system error"})
        return 3
    if mode in ("init_error", "grandchild"):
        time.sleep(600)
    emit({"type": "init_done"})
    via = os.environ.get("FAKE_NCCL_VIA", "P2P/CUMEM")
    peer = (rank + 1) % n
    for ch in range(2):
        info(rank, f"Channel {ch:02d}/0 : {rank}[{job['gpu']}] -> {peer}[{peer}] via {via}")
    if mode == "hang" and rank == 1:
        time.sleep(600)
    if mode == "crash" and rank == 1:
        os.kill(os.getpid(), signal.SIGSEGV)
    for op in job["ops"]:
        for nbytes in job["sizes"]:
            gbps = float(os.environ.get("FAKE_NCCL_GBPS", "300"))
            emit({"type": "result", "op": op, "bytes": nbytes, "count": nbytes // 4, "seconds": 20e-6 + nbytes / (gbps * 1e9)})
            emit({"type": "progress", "fraction": 0.5, "message": f"{op} {nbytes} B"})
    emit({"type": "done"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
