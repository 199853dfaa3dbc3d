"""One side of the cross-process CUDA IPC copy test: ``python -m p2ptop.bench.worker_ipc``. Imports CuPy.

Two of these run at once, started by ipc.py: the *export* side owns a buffer on GPU A and shares it,
the *import* side (GPU B; A may equal B) maps it and copies from it, as PyTorch multiprocessing, vLLM's
custom all-reduce and NCCL do. Both handle types are tried, one after the other:

- ``legacy``: ``cudaIpcGetMemHandle`` -> 64 bytes passed as hex through the parent -> ``cudaIpcOpenMemHandle``;
- ``cumem``: ``cuMemCreate`` with ``CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR`` ->
  ``cuMemExportToShareableHandle`` (a file descriptor) -> sent over a Unix socket with ``SCM_RIGHTS``
  (the path NCCL 2.19+ uses for P2P/CUMEM) -> ``cuMemImportFromShareableHandle``, ``cuMemMap``, ``cuMemSetAccess``.

The import side times ``copies`` device-to-device copies of the shared buffer into its own (CUDA events,
median of ``repeats``), checks the bytes against the pattern the export side wrote, and times the same
copy inside its own process (a buffer of its own on GPU A) as the baseline.

Input: a job line ``{"side": "export"|"import", "bus_a", "bus_b", "kinds", "size_mib", "copies", "repeats",
"warmup", "socket_dir"}``; the import side then gets ``{"handle": {...}}`` per kind, the export side
``{"release": kind}``. Output (JSON lines): ``hello`` (pid, namespaces: sent before any CUDA call), ``handle``, ``measurement`` (name, value GB/s,
min, max), ``integrity``, ``imported``, ``error`` (step, kind, name, code, text: CUDA's own words),
``released``, ``done``; ``fatal`` and exit 2 when nothing can run.
"""

from __future__ import annotations

import ctypes
import json
import os
import socket
import statistics
import sys
import time

from p2ptop.bench.worker_common import CudaError, device_by_bus, emit, import_cupy, read_job

SEED = 0x9E3779B1
CU_MEM_ALLOCATION_TYPE_PINNED = 1
CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 1
CU_MEM_LOCATION_TYPE_DEVICE = 1
CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3
CUDA_MEMCPY_DEFAULT = 4
IPC_LAZY_ENABLE_PEER_ACCESS = 1


# --- the driver API through ctypes (CuPy does not wrap cuMemCreate & co.) ----------------------

class _Location(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class _AllocFlags(ctypes.Structure):
    _fields_ = [("compressionType", ctypes.c_ubyte), ("gpuDirectRDMACapable", ctypes.c_ubyte),
                ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 4)]


class _Prop(ctypes.Structure):  # CUmemAllocationProp
    _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int), ("location", _Location),
                ("win32HandleMetaData", ctypes.c_void_p), ("allocFlags", _AllocFlags)]


class _Access(ctypes.Structure):  # CUmemAccessDesc
    _fields_ = [("location", _Location), ("flags", ctypes.c_int)]


class Driver:
    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")

    def call(self, fn: str, *args) -> None:
        rc = getattr(self.lib, fn)(*args)
        if rc != 0:
            name, text = ctypes.c_char_p(), ctypes.c_char_p()
            self.lib.cuGetErrorName(rc, ctypes.byref(name))
            self.lib.cuGetErrorString(rc, ctypes.byref(text))
            raise CudaError((name.value or b"CUDA_ERROR_UNKNOWN").decode(), rc,
                            f"{fn}: " + (text.value or b"").decode())

    def prop(self, dev: int) -> _Prop:
        p = _Prop()
        p.type = CU_MEM_ALLOCATION_TYPE_PINNED
        p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
        p.location = _Location(CU_MEM_LOCATION_TYPE_DEVICE, dev)
        return p

    def granularity(self, dev: int) -> int:
        g = ctypes.c_size_t()
        p = self.prop(dev)
        self.call("cuMemGetAllocationGranularity", ctypes.byref(g), ctypes.byref(p), ctypes.c_int(0))
        return g.value

    def create(self, dev: int, size: int) -> int:
        h = ctypes.c_ulonglong()
        p = self.prop(dev)
        self.call("cuMemCreate", ctypes.byref(h), ctypes.c_size_t(size), ctypes.byref(p), ctypes.c_ulonglong(0))
        return h.value

    def export_fd(self, handle: int) -> int:
        fd = ctypes.c_int(-1)
        self.call("cuMemExportToShareableHandle", ctypes.byref(fd), ctypes.c_ulonglong(handle),
                  ctypes.c_int(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), ctypes.c_ulonglong(0))
        return fd.value

    def import_fd(self, fd: int) -> int:
        h = ctypes.c_ulonglong()
        self.call("cuMemImportFromShareableHandle", ctypes.byref(h), ctypes.c_void_p(fd),
                  ctypes.c_int(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
        return h.value

    def map(self, handle: int, size: int, dev_access: list[int]) -> int:
        ptr = ctypes.c_ulonglong()
        self.call("cuMemAddressReserve", ctypes.byref(ptr), ctypes.c_size_t(size), ctypes.c_size_t(0), ctypes.c_ulonglong(0), ctypes.c_ulonglong(0))
        self.call("cuMemMap", ctypes.c_ulonglong(ptr.value), ctypes.c_size_t(size), ctypes.c_size_t(0), ctypes.c_ulonglong(handle), ctypes.c_ulonglong(0))
        descs = (_Access * len(dev_access))(*[_Access(_Location(CU_MEM_LOCATION_TYPE_DEVICE, d), CU_MEM_ACCESS_FLAGS_PROT_READWRITE) for d in dev_access])
        self.call("cuMemSetAccess", ctypes.c_ulonglong(ptr.value), ctypes.c_size_t(size), descs, ctypes.c_size_t(len(dev_access)))
        return ptr.value

    def unmap(self, ptr: int, size: int, handle: int) -> None:
        for fn, args in (("cuMemUnmap", (ctypes.c_ulonglong(ptr), ctypes.c_size_t(size))),
                         ("cuMemAddressFree", (ctypes.c_ulonglong(ptr), ctypes.c_size_t(size))),
                         ("cuMemRelease", (ctypes.c_ulonglong(handle),))):
            try:
                self.call(fn, *args)
            except CudaError:
                pass


# --- the two sides --------------------------------------------------------------------------

def _fill(cupy, ptr: int, nbytes: int, dev: int) -> None:
    with cupy.cuda.Device(dev):
        mem = cupy.cuda.UnownedMemory(ptr, nbytes, None, dev)
        arr = cupy.ndarray((nbytes // 4,), dtype=cupy.uint32, memptr=cupy.cuda.MemoryPointer(mem, 0))
        i = cupy.arange(nbytes // 4, dtype=cupy.uint64)
        arr[...] = ((i * 2654435761) ^ SEED).astype(cupy.uint32)
        cupy.cuda.runtime.deviceSynchronize()


def _check(cupy, ptr: int, nbytes: int, dev: int) -> tuple[int, int]:
    """(bad bytes, first bad offset or -1) of the copy against the pattern."""
    with cupy.cuda.Device(dev):
        mem = cupy.cuda.UnownedMemory(ptr, nbytes, None, dev)
        arr = cupy.ndarray((nbytes // 4,), dtype=cupy.uint32, memptr=cupy.cuda.MemoryPointer(mem, 0))
        i = cupy.arange(nbytes // 4, dtype=cupy.uint64)
        bad = arr != ((i * 2654435761) ^ SEED).astype(cupy.uint32)
        n = int(bad.sum())
        first = int(cupy.argmax(bad)) * 4 if n else -1
        return n * 4, first


def _recv_fd(path: str, timeout: float = 20.0) -> int:
    deadline = time.monotonic() + timeout
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
            break
        except OSError:
            s.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    with s:
        s.settimeout(timeout)
        _msg, fds, _flags, _addr = socket.recv_fds(s, 16, 1)
    if not fds:
        raise CudaError("fd passing failed", None, f"no file descriptor came over {path} (SCM_RIGHTS)")
    return fds[0]


def export_side(job: dict, cupy, runtime) -> int:
    dev = device_by_bus(runtime, job["bus_a"])
    runtime.setDevice(dev)
    runtime.memGetInfo()  # the primary context is current: the driver calls below need one
    size = int(job["size_mib"]) << 20
    drv = None
    for kind in job["kinds"]:
        sent = False
        try:
            if kind == "legacy":
                ptr = runtime.malloc(size)
                _fill(cupy, ptr, size, dev)
                handle = runtime.ipcGetMemHandle(ptr)
                emit({"type": "handle", "kind": kind, "handle": bytes(handle).hex(), "size": size})
                sent = True
                _wait_release(kind)
                runtime.free(ptr)
            else:
                drv = drv or Driver()
                gran = drv.granularity(dev)
                alloc = -(-size // gran) * gran
                h = drv.create(dev, alloc)
                ptr = drv.map(h, alloc, [dev])
                _fill(cupy, ptr, size, dev)
                fd = drv.export_fd(h)
                path = os.path.join(job["socket_dir"], f"cumem-{os.getpid()}.sock")
                srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                srv.bind(path)
                srv.listen(1)
                # half the runner's patience: an import side that failed before connecting is said in time
                srv.settimeout(max(1.0, float(job.get("timeout_s", 30)) / 2))
                emit({"type": "handle", "kind": kind, "socket": path, "size": size, "alloc": alloc})
                sent = True
                try:
                    conn, _ = srv.accept()
                    with conn:
                        socket.send_fds(conn, [b"fd"], [fd])
                except OSError as e:
                    raise CudaError("fd passing failed", None, f"SCM_RIGHTS over {path}: {e}") from None
                finally:
                    srv.close()
                    os.close(fd)
                _wait_release(kind)
                drv.unmap(ptr, alloc, h)
        except Exception as e:  # noqa: BLE001 - CUDA's own words are the evidence
            f = CudaError.of(e)
            emit({"type": "error", "step": "export", "kind": kind, "name": f.name, "code": f.code, "text": f.text})
            if not sent:  # the import side waits for this kind's handle: tell it there is none
                emit({"type": "handle", "kind": kind, "failed": True})
            _wait_release(kind)
        emit({"type": "released", "kind": kind})
    emit({"type": "done"})
    return 0


def _wait_release(kind: str) -> None:
    while True:
        line = sys.stdin.readline()
        if not line:
            os._exit(4)  # the parent is gone
        try:
            if json.loads(line).get("release") == kind:
                return
        except ValueError:
            continue


def _timed(cupy, runtime, dst: int, src: int, nbytes: int, dev: int, job: dict) -> dict:
    with cupy.cuda.Device(dev):
        stream = cupy.cuda.Stream(non_blocking=True)
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        samples = []
        for _ in range(int(job["repeats"])):
            for _ in range(int(job["warmup"])):
                runtime.memcpyAsync(dst, src, nbytes, CUDA_MEMCPY_DEFAULT, stream.ptr)
            start.record(stream)
            for _ in range(int(job["copies"])):
                runtime.memcpyAsync(dst, src, nbytes, CUDA_MEMCPY_DEFAULT, stream.ptr)
            end.record(stream)
            end.synchronize()
            samples.append(nbytes * int(job["copies"]) / (cupy.cuda.get_elapsed_time(start, end) / 1e3) / 1e9)
    return {"value": round(statistics.median(samples), 3), "min": round(min(samples), 3), "max": round(max(samples), 3)}


def import_side(job: dict, cupy, runtime) -> int:
    dev_a = device_by_bus(runtime, job["bus_a"])
    dev = device_by_bus(runtime, job["bus_b"])
    runtime.setDevice(dev)
    runtime.memGetInfo()
    size = int(job["size_mib"]) << 20
    dst = runtime.malloc(size)
    # the same copy inside one process: a buffer of our own on GPU A, copied into ours on GPU B
    try:
        with cupy.cuda.Device(dev_a):
            local = runtime.malloc(size)
        _fill(cupy, local, size, dev_a)
        if dev_a != dev:
            try:
                runtime.deviceEnablePeerAccess(dev_a)
            except Exception:  # noqa: BLE001 - already on, or not possible: the copy is staged then
                pass
        emit({"type": "measurement", "name": "in_process", **_timed(cupy, runtime, dst, local, size, dev, job)})
        with cupy.cuda.Device(dev_a):
            runtime.free(local)
    except Exception as e:  # noqa: BLE001
        f = CudaError.of(e)
        emit({"type": "error", "step": "in_process", "kind": "in_process", "name": f.name, "code": f.code, "text": f.text})
    drv = None
    for kind in job["kinds"]:
        msg = json.loads(sys.stdin.readline() or "{}").get("handle") or {}
        if msg.get("failed") or not msg:
            continue  # the export side said why
        ptr = h = None
        alloc = int(msg.get("alloc", size))
        step = "open"
        try:
            if kind == "legacy":
                ptr = runtime.ipcOpenMemHandle(bytes.fromhex(msg["handle"]), IPC_LAZY_ENABLE_PEER_ACCESS)
            else:
                drv = drv or Driver()
                step = "fd"
                fd = _recv_fd(msg["socket"], float(job.get("timeout_s", 30)))
                step = "open"
                try:
                    h = drv.import_fd(fd)
                finally:
                    os.close(fd)
                ptr = drv.map(h, alloc, sorted({dev, dev_a}))
            emit({"type": "imported", "kind": kind})
            step = "copy"
            emit({"type": "measurement", "name": f"ipc_{kind}", **_timed(cupy, runtime, dst, ptr, size, dev, job)})
            step = "integrity"
            bad, first = _check(cupy, dst, size, dev)
            emit({"type": "integrity", "kind": kind, "status": "corrupt" if bad else "ok", "bad_bytes": bad,
                  "first_bad_offset": first if bad else None, "checked_bytes": size})
        except Exception as e:  # noqa: BLE001
            f = CudaError.of(e)
            emit({"type": "error", "step": step, "kind": kind, "name": f.name, "code": f.code, "text": f.text})
        finally:
            try:
                if ptr is not None and kind == "legacy":
                    runtime.ipcCloseMemHandle(ptr)
                elif ptr is not None:
                    drv.unmap(ptr, alloc, h)
            except Exception:  # noqa: BLE001
                pass
            emit({"type": "finished", "kind": kind})
    runtime.free(dst)
    emit({"type": "done"})
    return 0


def main() -> int:
    job = read_job(lambda j: j["side"])
    if job is None:
        return 2
    side = job["side"]
    loaded = import_cupy("")
    if loaded is None:
        return 2
    cupy, runtime = loaded
    # the namespaces first, before any CUDA call: where CUDA fails at once (another PID namespace), they explain it
    emit({"type": "hello", "side": side, "pid": os.getpid(), "cupy": cupy.__version__, "ipc_ns": _ns("ipc"), "pid_ns": _ns("pid")})
    try:
        return export_side(job, cupy, runtime) if side == "export" else import_side(job, cupy, runtime)
    except Exception as e:  # noqa: BLE001
        f = CudaError.of(e)
        emit({"type": "error", "step": "setup", "kind": None, "name": f.name, "code": f.code, "text": f.text})
        return 3


def _ns(kind: str):
    try:
        return os.readlink(f"/proc/self/ns/{kind}")
    except OSError:
        return None


if __name__ == "__main__":
    sys.exit(main())
