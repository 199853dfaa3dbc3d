"""One NCCL rank: ``python -m p2ptop.bench.worker_nccl``. Imports CuPy and its NCCL module, in its own process.

Started by runner.py, one process per GPU, as frameworks run NCCL. NCCL writes its ``NCCL_DEBUG`` lines
to stdout; this worker moves them to stderr (fd 1 becomes fd 2) and speaks its own JSON lines on a
copy of the original stdout, so the runner gets the events and the log apart.

Input (stdin): a job line ``{"rank", "nranks", "gpu", "bus_id", "ops", "sizes", "warmup", "iters"}``;
ranks other than 0 then get ``{"unique_id": [128 ints]}``, which rank 0 made and printed.

Output (JSON lines): ``hello`` (pid, nccl_version, cupy, cuda_device), ``unique_id`` (rank 0),
``init_done``, per operation and size ``result`` (op, bytes, count, seconds: one op's average over
``iters`` timed as nccl-tests does), ``progress``, ``error`` (step, name, code, text), ``done``.
Exit status: 0 done, 2 nothing can run (no CuPy/NCCL, bad job), 3 an NCCL or CUDA call failed.
"""

from __future__ import annotations

import ctypes
import glob
import json
import os
import sys
import threading
import time

from p2ptop.bench.worker_common import CudaError, device_by_bus, emit, exit_with_parent, import_cupy, read_job, safe, split_stdout

NCCL_FLOAT32 = 7
NCCL_SUM = 0


def _load_nccl():
    """CuPy's NCCL module; where CuPy cannot find libnccl itself, the nvidia-nccl-cu12/-cu13 wheel's copy."""
    try:
        from cupy.cuda import nccl
        if getattr(nccl, "available", True):
            return nccl, None
    except Exception as e:  # noqa: BLE001 - any failure to load is said below
        first = f"{type(e).__name__}: {e}"
    else:
        first = "cupy.cuda.nccl says NCCL is not available"
    for base in sys.path:
        for lib in sorted(glob.glob(os.path.join(base, "nvidia", "nccl", "lib", "libnccl.so*"))):
            try:
                ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
                import importlib

                import cupy_backends.cuda.libs.nccl as raw  # noqa: F401 - retried with the library loaded
                importlib.reload(raw)
                from cupy.cuda import nccl
                return nccl, None
            except Exception:  # noqa: BLE001
                continue
    return None, first


def _error(step: str, e: Exception) -> dict:
    f = CudaError.of(e)
    return {"type": "error", "step": step, "name": f.name, "code": f.code, "text": f.text[:600]}


def uid_from_json(values, nccl) -> object:
    """The NCCL unique id rank 0 printed (a list of ints), in the type this CuPy's NcclCommunicator takes:
    bytes in CuPy 14 (seen on 2 H200s: a tuple there fails with "Argument 'commId' has incorrect type
    (expected bytes, got tuple)"), a tuple of signed chars in older CuPy."""
    if isinstance(nccl.get_unique_id(), (bytes, bytearray)):
        return bytes(int(v) & 0xFF for v in values)
    return tuple(int(v) for v in values)


def main() -> int:
    split_stdout()
    job = read_job(lambda j: (int(j["rank"]), int(j["nranks"])))
    if job is None:
        return 2
    rank, nranks = int(job["rank"]), int(job["nranks"])
    loaded = import_cupy("nccl-")
    if loaded is None:
        return 2
    cupy, runtime = loaded
    nccl, why = _load_nccl()
    if nccl is None:
        emit({"type": "fatal", "message": f"NCCL cannot be loaded through CuPy ({why}); install the NCCL wheel: "
                                          'pip install "p2ptop[nccl-cuda12]" or pip install "p2ptop[nccl-cuda13]"'})
        return 2
    try:
        dev = device_by_bus(runtime, job["bus_id"]) if job.get("bus_id") else int(job.get("gpu", rank))
        runtime.setDevice(dev)
        version = nccl.get_version()
    except Exception as e:  # noqa: BLE001
        ev = _error("setup", e)
        emit(ev)
        where = " ".join(w for w in (f"GPU{job['gpu']}" if job.get("gpu") is not None else f"rank {rank}",
                                      f"({job['bus_id']})" if job.get("bus_id") else "") if w)
        emit({"type": "fatal", "message": f"{where}: {ev['name']}: {ev['text']}"})
        return 3
    emit({"type": "hello", "pid": os.getpid(), "rank": rank, "cupy": cupy.__version__, "cuda_device": dev,
          "nccl_version": f"{version // 10000}.{version // 100 % 100}.{version % 100}" if version >= 10000 else str(version)})
    try:
        if rank == 0:
            uid = nccl.get_unique_id()
            emit({"type": "unique_id", "id": list(uid)})
        else:
            uid = uid_from_json(json.loads(sys.stdin.readline())["unique_id"], nccl)
    except Exception as e:  # noqa: BLE001
        emit(_error("unique_id", e))
        return 3
    threading.Thread(target=exit_with_parent, daemon=True).start()
    try:
        comm = nccl.NcclCommunicator(nranks, uid, rank)
    except Exception as e:  # noqa: BLE001
        emit(_error("init", e))
        return 3
    emit({"type": "init_done"})
    sizes = [int(s) for s in job["sizes"]]
    warmup, iters = int(job.get("warmup", 5)), int(job.get("iters", 20))
    stream = cupy.cuda.Stream(non_blocking=True)
    top = max(sizes)
    send = cupy.ones(top // 4, dtype=cupy.float32)
    recv = cupy.zeros(top // 4, dtype=cupy.float32)
    peer_to, peer_from = (rank + 1) % nranks, (rank - 1 + nranks) % nranks
    f32, op_sum = getattr(nccl, "NCCL_FLOAT32", NCCL_FLOAT32), getattr(nccl, "NCCL_SUM", NCCL_SUM)

    def op_fn(op: str, nbytes: int):
        count = nbytes // 4
        if op == "all_reduce":
            return lambda: comm.allReduce(send.data.ptr, recv.data.ptr, count, f32, op_sum, stream.ptr)

        def sendrecv():
            nccl.groupStart()
            comm.send(send.data.ptr, count, f32, peer_to, stream.ptr)
            comm.recv(recv.data.ptr, count, f32, peer_from, stream.ptr)
            nccl.groupEnd()
        return sendrecv

    barrier = op_fn("all_reduce", 4)
    ops = [o for o in job["ops"] if o in ("sendrecv", "all_reduce")]
    total, done = len(ops) * len(sizes), 0
    for op in ops:
        for nbytes in sizes:
            step = f"{op} {nbytes} B"
            try:
                fn = op_fn(op, nbytes)
                for _ in range(warmup):
                    fn()
                barrier()
                stream.synchronize()
                t0 = time.perf_counter()
                for _ in range(iters):
                    fn()
                stream.synchronize()
                seconds = (time.perf_counter() - t0) / iters
            except Exception as e:  # noqa: BLE001
                emit(_error(step, e))
                safe(comm.abort)
                return 3
            done += 1
            emit({"type": "result", "op": op, "bytes": nbytes, "count": nbytes // 4, "seconds": seconds})
            emit({"type": "progress", "fraction": done / total, "message": step})
    safe(comm.destroy)
    emit({"type": "done"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
