"""The copy-test worker: ``python -m p2ptop.bench.worker``. The only module that imports CuPy.

It runs in its own process, started by runner.py, so that a hung P2P copy can be killed, the CUDA
contexts stay out of the dashboard, and a crash becomes a result instead of a crashed screen.

Input: one JSON object on stdin: ``{"pairs": [[a, b], ...], "pci_bus_ids": {"0": "00000000:3A:00.0"},
"cpu_affinity": {"0": "0-31"}, "gate": true, "options": {...BenchOptions.job()...}}``. GPU numbers are
NVML's; the worker maps them to CUDA ordinals by PCI bus id (so CUDA_VISIBLE_DEVICES or CUDA's own
ordering cannot swap them). With ``"gate"``, it waits after its imports, before any CUDA call, for a
second line ``{"pairs": [...]}`` (the pairs to run: the contention check, which reads the idle GPUs
while the worker starts, may have left some out) and says in ``hello`` how long it waited
(``gate_wait_s``: the time the check added to the test); at EOF or without ``pairs`` it exits 0.

Output: JSON lines on stdout, one event each:

- ``{"type": "hello", "pid", "cupy", "cuda_runtime", "cuda_driver", "devices"}``
- ``{"type": "fatal", "message"}``: nothing can run (no CuPy, no GPU); the worker exits 2
- ``{"type": "pair_start", "a", "b", "params"}`` then, for that pair,
  ``{"type": "progress", "step", "fraction", "message"}``, ``{"type": "params", "params"}`` (more
  scalars for the pair's params: a host link's CPU binding and warm-up rates),
  ``{"type": "measurement", "name", "value", "unit", "min", "max", "samples", "error"}``,
  ``{"type": "error", "step", "code", "name", "text"}`` (the exact CUDA error, kept as evidence),
  ``{"type": "integrity", "status": "ok"|"corrupt", "first_bad_offset", "checked_bytes", "bad_bytes"}``,
  ``{"type": "pair_end", "status": "ok"|"failed"}``
- after a CUDA error that leaves the context unusable (illegal address, ...), the pair ends
  ``failed`` and the worker exits 3; the runner goes on with the remaining pairs in a fresh worker.

The method follows NVIDIA's nvbandwidth, so that the figures compare: per sample, the stream is held
by a spin kernel while ``warmup`` untimed and ``copies`` timed copies of the whole buffer are queued
behind it, then released; the time between two CUDA events around the timed copies gives
``size x copies / time``; the figure is the median of ``repeats`` samples, with min and max.
Copy-engine copies are issued on the destination GPU's stream (nvbandwidth's
device_to_device_memcpy_read_ce); the bidirectional total is both sizes over the time from the first
start to the last end. Latency follows p2pBandwidthLatencyTest: ``latency_copies`` 16-byte
cudaMemcpyPeerAsync queued behind the spin kernel on the source's stream, time / count.

A pair ``[a, a]`` is GPU a's host link (``HostLink``), measured as nvbandwidth's
host_to_device_memcpy_ce and device_to_host_memcpy_ce do: the thread bound to the GPU's CPUs, then
cudaMemcpyAsync between pinned host memory (cudaHostAlloc, portable) and the GPU on one of its streams,
a pattern written into both buffers before each sample, the stream held by the spin kernel while the
copies are queued, timed by CUDA events; untimed batches first until the rate is steady; each direction
also while the other runs on a second stream (nvbandwidth's host_to_device_bidirectional_memcpy_ce and
device_to_host_bidirectional_memcpy_ce); 4-byte copies for latency; integrity: a pattern filled on the
GPU, copied to the host and back to a second GPU buffer, checked there.
Its steps (``progress`` events: h2d, d2h, host_bidirectional, ...) let the runner read the PCIe
link's generation and width while the copies run.
"""

from __future__ import annotations

import ctypes
import json
import os
import statistics
import sys
import threading
import time
from functools import partial
from typing import Optional

from p2ptop.bench.catalog import HOST_TESTS as HOST_TEST_TEXT
from p2ptop.bench.catalog import TESTS
from p2ptop.bench.worker_common import bus_key, emit, exit_with_parent, read_job, safe

try:
    import cupy
    import numpy
    from cupy.cuda import runtime
except Exception as e:  # ImportError, or a CuPy that cannot find its CUDA libraries
    cupy = None
    _IMPORT_ERROR = f"{type(e).__name__}: {e}"

KERNELS = r"""
extern "C" __global__ void spin(volatile int* flag, unsigned long long timeout_ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (*flag == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > timeout_ns) break;
    }
}

// 16-byte loads and stores, grid-stride, 4 independent loads in flight per thread.
extern "C" __global__ void copy16(const uint4* __restrict__ src, uint4* __restrict__ dst, unsigned long long n) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned long long s = (unsigned long long)gridDim.x * blockDim.x;
    for (; i + 3 * s < n; i += 4 * s) {
        uint4 a = __ldcg(src + i), b = __ldcg(src + i + s), c = __ldcg(src + i + 2 * s), d = __ldcg(src + i + 3 * s);
        __stcg(dst + i, a); __stcg(dst + i + s, b); __stcg(dst + i + 2 * s, c); __stcg(dst + i + 3 * s, d);
    }
    for (; i < n; i += s) __stcg(dst + i, __ldcg(src + i));
}

// One thread follows a chain of indices: every load depends on the one before.
extern "C" __global__ void chase(const unsigned long long* buf, unsigned long long hops, unsigned long long* out) {
    volatile const unsigned long long* p = buf;
    unsigned long long i = 0;
    for (unsigned long long h = 0; h < hops; ++h) i = p[i];
    *out = i;
}

__device__ __forceinline__ unsigned int pattern(unsigned long long i, unsigned int seed) {
    unsigned int x = (unsigned int)(i * 2654435761ull) ^ seed ^ (unsigned int)(i >> 32);
    x ^= x << 13; x ^= x >> 17; x ^= x << 5;
    return x;
}

extern "C" __global__ void fill(unsigned int* p, unsigned long long n, unsigned int seed) {
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x)
        p[i] = pattern(i, seed);
}

extern "C" __global__ void verify(const unsigned int* p, unsigned long long n, unsigned int seed,
                                  unsigned long long* first_bad, unsigned long long* bad) {
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x)
        if (p[i] != pattern(i, seed)) { atomicMin(first_bad, i); atomicAdd(bad, 1ull); }
}
"""

THREADS = 512
BLOCKS_PER_SM = 4  # 2048 threads per SM: full occupancy on Hopper and Ampere
SPIN_TIMEOUT_NS = 5_000_000_000  # a spin kernel never holds a stream longer than this
HOST_MIN_SAMPLES = 5  # one-way host figures: at least this many samples (host memory is shared with everything else)
WARM_BATCH = 4  # copies per untimed warm-up batch of a host link
WARM_STEADY = 0.03  # two warm-up batches within 3 % of each other: the rate is steady
WARM_MAX_BATCHES = 16  # at most this many warm-up batches (about 0.7 s at 50 GB/s with 512 MiB)
CHASE_BYTES = 2 << 20  # pointer-chase buffer (nvbandwidth's latency test uses 2 MiB)
CHASE_STRIDE = 4096 + 8  # bytes between dependent reads: a new line and page each hop
STICKY = {700, 701, 702, 710, 713, 714, 715, 716, 717, 718, 719, 720, 999}  # errors that poison the context
HOST_ALLOC_PORTABLE_MAPPED = 1 | 2
HOST_ALLOC_PORTABLE = 1
H2D, D2H = 1, 2  # cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost
MEMORY_ALLOCATION = 2


class CudaFailure(Exception):
    """A CUDA call failed: its code, name and text, as CUDA said them."""

    def __init__(self, code: int, name: str, text: str):
        super().__init__(f"{name} ({code}): {text}")
        self.code, self.name, self.text = code, name, text

    @classmethod
    def of(cls, e: Exception) -> "CudaFailure":
        if isinstance(e, CudaFailure):
            return e
        if isinstance(e, cupy.cuda.memory.OutOfMemoryError):
            return cls(MEMORY_ALLOCATION, "cudaErrorMemoryAllocation", str(e))
        code = getattr(e, "status", -1)
        name, _, text = str(e).partition(": ")
        if not text:
            name, text = type(e).__name__, str(e)
        return cls(int(code) if isinstance(code, int) else -1, name, text)


def cuda_ordinals(pci_bus_ids: dict) -> dict[int, int]:
    """NVML index -> CUDA ordinal, matched by PCI bus id; NVML index itself where no bus id was given."""
    by_bus = {}
    for ordinal in range(runtime.getDeviceCount()):
        by_bus[bus_key(runtime.deviceGetPCIBusId(ordinal))] = ordinal
    out = {}
    for index, bus in pci_bus_ids.items():
        key = bus_key(bus)
        if key in by_bus:
            out[int(index)] = by_bus[key]
    return out


def _fail(state: dict, step: str, e: Exception, names: tuple = ()) -> None:
    """Say a failed CUDA call (and the measurements it leaves without a figure); mark the pair failed, and the
    context poisoned when the error is sticky."""
    f = CudaFailure.of(e)
    emit({"type": "error", "step": step, "code": f.code, "name": f.name, "text": f.text})
    for n in names:
        emit({"type": "measurement", "name": n, "error": f"{f.name} ({f.code}): {f.text}"})
    state["failed"] = True
    state["sticky"] = state["sticky"] or f.code in STICKY


def _timed(w: "Worker", dev: int, stream, enqueue, nbytes: int, count: int, samples: int, warmup: int,
           hold: bool, before=None) -> list[float]:
    """nvbandwidth's timing: per sample, ``before()`` (a fresh pattern), the stream held by the spin kernel
    (``hold``) while ``warmup`` untimed and ``count`` timed enqueue(i) calls are queued, CUDA events around
    the timed ones. Samples of GB/s, or seconds per op when nbytes == 0."""
    out = []
    with cupy.cuda.Device(dev):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        for _ in range(samples):
            if before is not None:
                before()
            if hold:
                w.hold((dev, stream))
            for i in range(warmup):
                enqueue(i)
            start.record(stream)
            for i in range(count):
                enqueue(i)
            end.record(stream)
            w.release()
            end.synchronize()
            seconds = cupy.cuda.get_elapsed_time(start, end) / 1e3
            out.append(nbytes * count / seconds / 1e9 if nbytes else seconds / count)
    return out


class Pair:
    """The buffers, streams and kernels of one ordered pair A->B (CUDA ordinals a, b)."""

    def __init__(self, worker: "Worker", a: int, b: int):
        self.w, self.a, self.b = worker, a, b
        self.o = worker.options
        self.size = self.o["size_mib"] << 20
        self.allocs: list[tuple[int, int]] = []
        self.peer_on = False
        self.streams = {}
        for dev in (a, b):
            with cupy.cuda.Device(dev):
                self.streams[dev] = cupy.cuda.Stream(non_blocking=True)

    # -- memory --
    def malloc(self, dev: int, nbytes: int) -> int:
        with cupy.cuda.Device(dev):
            ptr = runtime.malloc(nbytes)
        self.allocs.append((dev, ptr))
        return ptr

    def release(self) -> None:
        for dev, ptr in reversed(self.allocs):
            with cupy.cuda.Device(dev):
                runtime.free(ptr)
        self.allocs.clear()
        if self.peer_on:
            self.set_peer(False)

    def set_peer(self, on: bool) -> None:
        for dev, peer in ((self.a, self.b), (self.b, self.a)):
            with cupy.cuda.Device(dev):
                try:
                    (runtime.deviceEnablePeerAccess(peer) if on else runtime.deviceDisablePeerAccess(peer))
                except runtime.CUDARuntimeError as e:
                    if e.status not in (704, 705):  # already enabled / not enabled
                        raise
        self.peer_on = on

    # -- timing, as nvbandwidth does it --
    def timed(self, dev: int, enqueue, nbytes: int, count: int) -> list[float]:
        """Samples of GB/s (or seconds per op when nbytes == 0) for `count` enqueue(i) calls on dev's stream.

        The stream is held only while peer access is on: a copy staged through the host makes the host
        thread wait for the stream, which would wait for the spin kernel until its time-out.
        """
        return _timed(self.w, dev, self.streams[dev], enqueue, nbytes, count, self.o["repeats"], self.o["warmup"],
                      hold=self.peer_on)

    def copy_ce(self, dst: int, dst_dev: int, src: int, src_dev: int, stream_dev: int, nbytes: int):
        stream = self.streams[stream_dev].ptr
        return lambda i: runtime.memcpyPeerAsync(dst, dst_dev, src, src_dev, nbytes, stream)

    def copy_sm(self, dev: int, dst: int, src: int, nbytes: int):
        with cupy.cuda.Device(dev):  # a module is loaded per device: take dev's copy of the kernel
            kernel = self.w.kernel("copy16")
        grid = self.w.sm_count(dev) * BLOCKS_PER_SM
        n = nbytes // 16
        stream = self.streams[dev]
        return lambda i: kernel((grid,), (THREADS,), (_p(src), _p(dst), _u(n)), stream=stream)


class HostLink:
    """Pinned host buffers, GPU buffers and two streams of one GPU (CUDA ordinal dev), for its host link.

    nvbandwidth's host tests, step by step (memcpy.cpp, testcases_ce.cpp of v0.8): the process bound to the
    GPU's CPUs before the host buffers are allocated (``set_affinity``); before each sample a kernel writes
    a pattern into the sample's source and destination buffers, the pinned host ones included (through
    their own address: "All host memory allocated through all devices using cudaMallocHost() and
    cudaHostAlloc() is always directly accessible from all devices that support unified addressing",
    https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__UNIFIED.html), then the stream is held, ``warmup``
    copies and the timed copies queued, released. Our additions: untimed batches until the rate is steady
    (``warm``: an idle GPU's first copies run before its clocks are up), and at least ``HOST_MIN_SAMPLES``.
    """

    def __init__(self, worker: "Worker", dev: int):
        self.w, self.dev = worker, dev
        self.o = worker.options
        self.size = self.o["size_mib"] << 20
        self.dev_allocs: list[int] = []
        self.host_allocs: list[int] = []
        with cupy.cuda.Device(dev):
            self.streams = [cupy.cuda.Stream(non_blocking=True), cupy.cuda.Stream(non_blocking=True)]

    def malloc(self, nbytes: int) -> int:
        with cupy.cuda.Device(self.dev):
            ptr = runtime.malloc(nbytes)
        self.dev_allocs.append(ptr)
        return ptr

    def pinned(self, nbytes: int) -> int:
        with cupy.cuda.Device(self.dev):
            ptr = runtime.hostAlloc(nbytes, HOST_ALLOC_PORTABLE)
        self.host_allocs.append(ptr)
        return ptr

    def release(self) -> None:
        with cupy.cuda.Device(self.dev):
            for ptr in reversed(self.dev_allocs):
                runtime.free(ptr)
            for ptr in reversed(self.host_allocs):
                runtime.freeHost(ptr)
        self.dev_allocs.clear()
        self.host_allocs.clear()

    def copy(self, dst: int, src: int, nbytes: int, kind: int, stream: "cupy.cuda.Stream"):
        return lambda i: runtime.memcpyAsync(dst, src, nbytes, kind, stream.ptr)

    def fill(self, *ptrs: int) -> None:
        """nvbandwidth's memsetPattern: a kernel writes a pattern into each buffer (host ones too), then waits."""
        s0 = self.streams[0]
        with cupy.cuda.Device(self.dev):
            grid = (self.w.sm_count(self.dev) * BLOCKS_PER_SM,)
            for k, ptr in enumerate(ptrs):
                self.w.kernel("fill")(grid, (THREADS,), (_p(ptr), _u(self.size // 4), numpy.uint32(0xBAADF00D + k)), stream=s0)
            s0.synchronize()

    def warm(self, enqueue, nbytes: int) -> list[float]:
        """Untimed batches of WARM_BATCH copies until two in a row agree within WARM_STEADY (at most
        WARM_MAX_BATCHES); their GB/s, to show how far the first copies were from the steady rate."""
        stream = self.streams[0]
        rates: list[float] = []
        with cupy.cuda.Device(self.dev):
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            for _ in range(WARM_MAX_BATCHES):
                start.record(stream)
                for i in range(WARM_BATCH):
                    enqueue(i)
                end.record(stream)
                end.synchronize()
                rates.append(nbytes * WARM_BATCH / (cupy.cuda.get_elapsed_time(start, end) / 1e3) / 1e9)
                if len(rates) >= 2 and abs(rates[-1] - rates[-2]) <= WARM_STEADY * max(rates[-1], rates[-2]):
                    break
        return rates

    def timed(self, enqueue, nbytes: int, count: int, fill: tuple = (), samples: int = 0) -> list[float]:
        """Samples of GB/s (seconds per op when nbytes == 0) of `count` enqueue(i) on stream 0, held while
        queued; the buffers in `fill` get a fresh pattern before each sample."""
        return _timed(self.w, self.dev, self.streams[0], enqueue, nbytes, count, samples or self.o["repeats"],
                      self.o["warmup"], hold=True, before=(lambda: self.fill(*fill)) if fill else None)

    def against(self, measured, interfering, nbytes: int, count: int, fill: tuple = ()) -> list[float]:
        """nvbandwidth's bidirectional host tests: GB/s of `measured` (stream 0) while `interfering` (stream 1,
        the other direction) runs twice as many copies, started together, so it covers the whole timed span
        (nvbandwidth doubles the interfering copy's size instead); only the measured stream is timed."""
        s0, s1 = self.streams
        out = []
        with cupy.cuda.Device(self.dev):
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            for _ in range(self.o["repeats"]):
                if fill:
                    self.fill(*fill)
                self.w.hold((self.dev, s0), (self.dev, s1))
                for i in range(self.o["warmup"]):
                    measured(i)
                    interfering(i)
                start.record(s0)
                s1.wait_event(start)
                for i in range(count):
                    measured(i)
                end.record(s0)
                for i in range(2 * count):
                    interfering(i)
                self.w.release()
                end.synchronize()
                s1.synchronize()
                seconds = cupy.cuda.get_elapsed_time(start, end) / 1e3
                out.append(nbytes * count / seconds / 1e9)
        return out


def cpu_list(text: str) -> set[int]:
    """'0-3,8,10-11' (sysfs and NVML's form) -> {0, 1, 2, 3, 8, 10, 11}; ValueError when it is not one."""
    out: set[int] = set()
    for part in text.strip().split(","):
        lo, _, hi = part.strip().partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def _restore_affinity(old: Optional[set]) -> None:
    if old:
        try:
            os.sched_setaffinity(0, old)
        except OSError:
            pass


def set_affinity(cpus: Optional[str]) -> tuple[Optional[set], str]:
    """Bind this thread to the GPU's CPUs, as nvbandwidth does (nvmlDeviceSetCpuAffinity) before it allocates host
    buffers, so they come from the GPU's NUMA node. (the previous set or None, what was done, for the params)."""
    if not cpus:
        return None, "not set: the GPU's CPU affinity is not known"
    try:
        wanted = cpu_list(cpus)
        old = os.sched_getaffinity(0)
        use = wanted & old
        if not use:
            return None, f"not set: the GPU's CPUs {cpus} are not allowed to this process"
        os.sched_setaffinity(0, use)
        return old, f"{cpus}" + ("" if use == wanted else f" ({len(use)} of its {len(wanted)} CPUs allowed here)")
    except (ValueError, OSError, AttributeError) as e:
        return None, f"not set: {e}"


def _p(value: int):
    """A pointer or size as the kernels take it (unsigned 64-bit)."""
    return numpy.uint64(value)


_u = _p


def _stats(samples: list[float], scale: float = 1.0) -> dict:
    vals = [s * scale for s in samples]
    return {"value": round(statistics.median(vals), 4), "min": round(min(vals), 4), "max": round(max(vals), 4),
            "samples": [round(v, 4) for v in vals]}


class Worker:
    def __init__(self, job: dict):
        self.options = job["options"]
        self.pairs = [tuple(p) for p in job["pairs"]]
        self.bus = job.get("pci_bus_ids", {})
        self.affinity = job.get("cpu_affinity") or {}  # NVML index (str) -> "0-31,64-95"
        self._module = None
        self._sms: dict[int, int] = {}
        self.flag = runtime.hostAlloc(4, HOST_ALLOC_PORTABLE_MAPPED)
        self._flag_int = ctypes.c_int.from_address(self.flag)
        self._flag_int.value = 1

    def kernel(self, name: str):
        if self._module is None:
            self._module = cupy.RawModule(code=KERNELS, options=("-std=c++17",))
        return self._module.get_function(name)

    def sm_count(self, dev: int) -> int:
        if dev not in self._sms:
            self._sms[dev] = runtime.getDeviceProperties(dev)["multiProcessorCount"]
        return self._sms[dev]

    def hold(self, *streams: tuple[int, "cupy.cuda.Stream"]) -> None:
        """Hold (device, stream)s with a spin kernel until release(), so queued work starts at once."""
        self._flag_int.value = 0
        for dev, stream in streams:
            with cupy.cuda.Device(dev):
                self.kernel("spin")((1,), (1,), (_p(self.flag), _u(SPIN_TIMEOUT_NS)), stream=stream)

    def release(self) -> None:
        self._flag_int.value = 1

    def not_visible(self, g_nvml: int) -> bool:
        """The pair ends failed: CUDA does not see GPU g_nvml (the worker goes on with the next pair)."""
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        emit({"type": "error", "step": "setup", "code": None, "name": "GPU not visible to CUDA",
              "text": f"GPU{g_nvml} (PCI {self.bus.get(str(g_nvml))}) is not among the GPUs CUDA sees"
                      + (f" (CUDA_VISIBLE_DEVICES={visible})" if visible is not None else "")})
        emit({"type": "pair_end", "status": "failed"})
        return True

    # -- one host link --
    def run_host(self, g_nvml: int, ordinals: dict[int, int]) -> bool:
        """Run the host-link tests of one GPU; False when the context is poisoned and the worker must exit."""
        tests = [t for t in self.options.get("host_tests", [])]
        g = ordinals.get(g_nvml, g_nvml if not self.bus else None)
        params = {"size_mib": self.options["size_mib"], "copies": self.options["copies"], "repeats": self.options["repeats"],
                  "warmup": self.options["warmup"], "cuda_a": g if g is not None else -1, "method": "pinned cudaHostAlloc, cudaMemcpyAsync"}
        emit({"type": "pair_start", "a": g_nvml, "b": g_nvml, "params": params})
        if g is None:
            return self.not_visible(g_nvml)
        state = {"failed": False, "sticky": False}
        fail = partial(_fail, state)

        link = None
        old_cpus, bound = set_affinity(self.affinity.get(str(g_nvml)))
        emit({"type": "params", "params": {"cpu_affinity": bound}})
        try:
            emit({"type": "progress", "step": "setup", "fraction": 0.0, "message": "allocating pinned host and GPU buffers"})
            link = HostLink(self, g)
            n = link.size
            bufs = {"host_src": link.pinned(n), "host_dst": link.pinned(n), "dev_dst": link.malloc(n), "dev_src": link.malloc(n)}
        except Exception as e:  # noqa: BLE001
            fail("setup", e)
            if link is not None:
                safe(link.release)
            _restore_affinity(old_cpus)
            emit({"type": "pair_end", "status": "failed"})
            return not state["sticky"]
        c = self.options["copies"]
        s0, s1 = link.streams
        h2d = link.copy(bufs["dev_dst"], bufs["host_src"], n, H2D, s0)
        d2h = link.copy(bufs["host_dst"], bufs["dev_src"], n, D2H, s0)
        one_way = max(self.options["repeats"], HOST_MIN_SAMPLES)

        def warm_then_time(name: str, enqueue, fill: tuple) -> list[float]:
            rates = link.warm(enqueue, n)
            emit({"type": "params", "params": {f"warm_{name}_gbps": ", ".join(f"{r:.1f}" for r in rates)}})
            return link.timed(enqueue, n, c, fill, one_way)

        for k, test in enumerate(tests, start=1):
            if state["sticky"]:
                break
            emit({"type": "progress", "step": test, "fraction": k / (len(tests) + 1), "message": HOST_TEST_TEXT.get(test, test)})
            if test == "h2d":
                self._measure("h2d", lambda: warm_then_time("h2d", h2d, (bufs["host_src"], bufs["dev_dst"])), fail)
            elif test == "d2h":
                self._measure("d2h", lambda: warm_then_time("d2h", d2h, (bufs["dev_src"], bufs["host_dst"])), fail)
            elif test == "host_bidirectional":  # each direction timed while the other runs (nvbandwidth's *_bidirectional_memcpy_ce)
                every = tuple(bufs.values())
                self._measure("h2d_bidir", lambda: link.against(h2d, link.copy(bufs["host_dst"], bufs["dev_src"], n, D2H, s1), n, c, every), fail)
                self._measure("d2h_bidir", lambda: link.against(d2h, link.copy(bufs["dev_dst"], bufs["host_src"], n, H2D, s1), n, c, every), fail)
            elif test == "host_latency":
                nb, count = self.options["latency_bytes"], self.options["latency_copies"]
                self._measure("latency_h2d_us", lambda: link.timed(link.copy(bufs["dev_dst"], bufs["host_src"], nb, H2D, s0), 0, count), fail, 1e6)
                self._measure("latency_d2h_us", lambda: link.timed(link.copy(bufs["host_dst"], bufs["dev_src"], nb, D2H, s0), 0, count), fail, 1e6)
            elif test == "host_integrity":
                self._host_integrity(link, bufs, fail)
        try:
            link.release()
        except Exception as e:  # noqa: BLE001
            fail("cleanup", e)
        _restore_affinity(old_cpus)
        emit({"type": "progress", "step": "done", "fraction": 1.0, "message": "done"})
        emit({"type": "pair_end", "status": "failed" if state["failed"] else "ok"})
        return not state["sticky"]

    def _host_integrity(self, link: HostLink, bufs, fail) -> None:
        nbytes = min(self.options["integrity_mib"] << 20, link.size)
        words = nbytes // 4
        seed = 0x5EED4321
        s0 = link.streams[0]
        try:
            with cupy.cuda.Device(link.dev):
                grid = (self.sm_count(link.dev) * BLOCKS_PER_SM,)
                self.kernel("fill")(grid, (THREADS,), (_p(bufs["dev_src"]), _u(words), numpy.uint32(seed)), stream=s0)
                self.kernel("fill")(grid, (THREADS,), (_p(bufs["dev_dst"]), _u(words), numpy.uint32(~seed & 0xFFFFFFFF)), stream=s0)
                runtime.memcpyAsync(bufs["host_dst"], bufs["dev_src"], nbytes, D2H, s0.ptr)
                runtime.memcpyAsync(bufs["dev_dst"], bufs["host_dst"], nbytes, H2D, s0.ptr)
                result = cupy.array([2**64 - 1, 0], dtype=cupy.uint64)
                cupy.cuda.Stream.null.synchronize()  # its initial value is in place before verify reads it
                s0.synchronize()
                self.kernel("verify")(grid, (THREADS,), (_p(bufs["dev_dst"]), _u(words), numpy.uint32(seed),
                                                         _p(result.data.ptr), _p(result.data.ptr + 8)), stream=s0)
                s0.synchronize()
                fb, nb = (int(x) for x in result.get())
        except Exception as e:  # noqa: BLE001
            fail("host_integrity", e)
            return
        emit({"type": "integrity", "status": "corrupt" if nb else "ok", "first_bad_offset": fb * 4 if nb else None,
              "checked_bytes": nbytes * 2, "bad_bytes": nb * 4})

    # -- one pair --
    def run_pair(self, a_nvml: int, b_nvml: int, ordinals: dict[int, int]) -> bool:
        """Run the tests of one pair; False when the context is poisoned and the worker must exit."""
        if a_nvml == b_nvml:
            return self.run_host(a_nvml, ordinals)
        # host_staged first: it needs peer access off, the others on (turning it off and on costs time)
        tests = sorted(self.options["tests"], key=lambda t: t != "host_staged")
        steps = ["setup"] + tests
        a, b = ordinals.get(a_nvml, a_nvml if not self.bus else None), ordinals.get(b_nvml, b_nvml if not self.bus else None)
        params = {"size_mib": self.options["size_mib"], "copies": self.options["copies"], "repeats": self.options["repeats"],
                  "warmup": self.options["warmup"], "cuda_a": a if a is not None else -1, "cuda_b": b if b is not None else -1}
        emit({"type": "pair_start", "a": a_nvml, "b": b_nvml, "params": params})
        missing = [n for n, o in ((a_nvml, a), (b_nvml, b)) if o is None]
        if missing:
            return self.not_visible(missing[0])
        state = {"failed": False, "sticky": False}
        pair = None
        fail = partial(_fail, state)

        try:
            emit({"type": "progress", "step": "setup", "fraction": 0.0, "message": "allocating buffers"})
            pair = Pair(self, a, b)
            size = pair.size
            bufs = {"srcA": pair.malloc(a, size), "dstB": pair.malloc(b, size), "srcB": pair.malloc(b, size), "dstA": pair.malloc(a, size)}
            with cupy.cuda.Device(a):
                can = runtime.deviceCanAccessPeer(a, b) and runtime.deviceCanAccessPeer(b, a)
        except Exception as e:  # noqa: BLE001 - every CUDA failure becomes evidence
            fail("setup", e)
            if pair is not None:
                safe(pair.release)
            emit({"type": "pair_end", "status": "failed"})
            return not state["sticky"]

        peer_error = None
        for k, test in enumerate(tests, start=1):
            emit({"type": "progress", "step": test, "fraction": k / len(steps), "message": TESTS[test]})
            if state["sticky"]:
                break
            if test != "host_staged" and not pair.peer_on and peer_error is None:
                try:
                    if not can:
                        raise CudaFailure(217, "cudaErrorPeerAccessUnsupported",
                                          "peer access is not supported between these two devices (cudaDeviceCanAccessPeer = 0)")
                    pair.set_peer(True)
                except Exception as e:  # noqa: BLE001
                    f = CudaFailure.of(e)
                    peer_error = f
                    emit({"type": "error", "step": "peer_access", "code": f.code, "name": f.name, "text": f.text})
                    state["sticky"] = f.code in STICKY
            getattr(self, f"test_{test}")(pair, bufs, peer_error, fail)
        try:
            pair.release()
        except Exception as e:  # noqa: BLE001
            fail("cleanup", e)
        emit({"type": "progress", "step": "done", "fraction": 1.0, "message": "done"})
        emit({"type": "pair_end", "status": "failed" if state["failed"] else "ok"})
        return not state["sticky"]

    def _measure(self, name: str, fn, fail, scale: float = 1.0) -> None:
        try:
            stats = _stats(fn(), scale)
        except Exception as e:  # noqa: BLE001
            fail(name, e, (name,))
            return
        emit({"type": "measurement", "name": name, **stats})

    def test_ce(self, p: Pair, bufs, peer_error, fail) -> None:
        n, c = p.size, self.options["copies"]
        self._measure("ce_one_way", lambda: p.timed(p.b, p.copy_ce(bufs["dstB"], p.b, bufs["srcA"], p.a, p.b, n), n, c), fail)
        self._measure("ce_reverse", lambda: p.timed(p.a, p.copy_ce(bufs["dstA"], p.a, bufs["srcB"], p.b, p.a, n), n, c), fail)

    def test_bidirectional(self, p: Pair, bufs, peer_error, fail) -> None:
        self._measure("ce_bidirectional", lambda: self._bidirectional(p, bufs), fail)

    def _bidirectional(self, p: Pair, bufs) -> list[float]:
        n, c = p.size, self.options["copies"]
        to_b = p.copy_ce(bufs["dstB"], p.b, bufs["srcA"], p.a, p.b, n)
        to_a = p.copy_ce(bufs["dstA"], p.a, bufs["srcB"], p.b, p.a, n)
        sb, sa = p.streams[p.b], p.streams[p.a]

        def both(i: int) -> None:
            with cupy.cuda.Device(p.b):
                to_b(i)
            with cupy.cuda.Device(p.a):
                to_a(i)

        out = []
        with cupy.cuda.Device(p.b):
            start, total_end = cupy.cuda.Event(), cupy.cuda.Event()
        with cupy.cuda.Device(p.a):
            start_a, end_a = cupy.cuda.Event(disable_timing=True), cupy.cuda.Event(disable_timing=True)
        for _ in range(self.options["repeats"]):
            if p.peer_on:
                self.hold((p.b, sb), (p.a, sa))
            for i in range(self.options["warmup"]):
                both(i)
            with cupy.cuda.Device(p.b):
                start.record(sb)
            with cupy.cuda.Device(p.a):
                sa.wait_event(start)
                start_a.record(sa)
            for i in range(c):
                both(i)
            with cupy.cuda.Device(p.a):
                end_a.record(sa)
            with cupy.cuda.Device(p.b):
                sb.wait_event(end_a)
                total_end.record(sb)
            self.release()
            total_end.synchronize()
            seconds = cupy.cuda.get_elapsed_time(start, total_end) / 1e3
            out.append(2 * n * c / seconds / 1e9)
        return out

    def test_sm(self, p: Pair, bufs, peer_error, fail) -> None:
        if peer_error is not None:
            for name in ("sm_read", "sm_write"):
                emit({"type": "measurement", "name": name, "error": f"not run: peer access unavailable ({peer_error.name})"})
            return
        n, c = p.size, self.options["copies"]
        self._measure("sm_read", lambda: p.timed(p.b, p.copy_sm(p.b, bufs["dstB"], bufs["srcA"], n), n, c), fail)
        self._measure("sm_write", lambda: p.timed(p.a, p.copy_sm(p.a, bufs["dstB"], bufs["srcA"], n), n, c), fail)

    def test_latency(self, p: Pair, bufs, peer_error, fail) -> None:
        nbytes, count = self.options["latency_bytes"], self.options["latency_copies"]
        self._measure("latency_copy_us", lambda: p.timed(p.a, p.copy_ce(bufs["dstB"], p.b, bufs["srcA"], p.a, p.a, nbytes), 0, count), fail, 1e6)
        if peer_error is not None:
            emit({"type": "measurement", "name": "latency_kernel_us", "error": f"not run: peer access unavailable ({peer_error.name})"})
            return
        self._measure("latency_kernel_us", lambda: self._chase(p, bufs), fail, 1e6)

    def _chase(self, p: Pair, bufs) -> list[float]:
        words = CHASE_BYTES // 8
        step = CHASE_STRIDE // 8
        chain = ((numpy.arange(words, dtype=numpy.uint64) + step) % words).astype(numpy.uint64)
        with cupy.cuda.Device(p.a):
            runtime.memcpy(bufs["srcA"], chain.ctypes.data, CHASE_BYTES, runtime.memcpyHostToDevice)
        hops = self.options["latency_hops"]
        out_ptr = bufs["dstB"]
        stream = p.streams[p.b]
        samples = []
        with cupy.cuda.Device(p.b):
            kernel = self.kernel("chase")
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            kernel((1,), (1,), (_p(bufs["srcA"]), _u(100), _p(out_ptr)), stream=stream)  # warm: load, map
            for _ in range(self.options["repeats"]):
                start.record(stream)
                kernel((1,), (1,), (_p(bufs["srcA"]), _u(hops), _p(out_ptr)), stream=stream)
                end.record(stream)
                end.synchronize()
                samples.append(cupy.cuda.get_elapsed_time(start, end) / 1e3 / hops)
        return samples

    def test_host_staged(self, p: Pair, bufs, peer_error, fail) -> None:
        if p.peer_on:
            p.set_peer(False)
        n = p.size
        self._measure("host_staged", lambda: p.timed(p.b, p.copy_ce(bufs["dstB"], p.b, bufs["srcA"], p.a, p.b, n), n,
                                                      self.options["staged_copies"]), fail)

    def test_integrity(self, p: Pair, bufs, peer_error, fail) -> None:
        nbytes = min(self.options["integrity_mib"] << 20, p.size)
        words = nbytes // 4
        seed = 0x5EED1234
        try:
            first_bad, bad = None, 0
            methods = ["ce"] + (["sm_read"] if peer_error is None else [])
            for method in methods:
                self._grid(p, p.a, "fill", (_p(bufs["srcA"]), _u(words), numpy.uint32(seed)))
                self._grid(p, p.b, "fill", (_p(bufs["dstB"]), _u(words), numpy.uint32(~seed & 0xFFFFFFFF)))
                p.streams[p.a].synchronize()
                with cupy.cuda.Device(p.b):
                    if method == "ce":
                        p.copy_ce(bufs["dstB"], p.b, bufs["srcA"], p.a, p.b, nbytes)(0)
                    else:
                        p.copy_sm(p.b, bufs["dstB"], bufs["srcA"], nbytes)(0)
                    result = cupy.array([2**64 - 1, 0], dtype=cupy.uint64)
                    self._grid(p, p.b, "verify", (_p(bufs["dstB"]), _u(words), numpy.uint32(seed),
                                                  _p(result.data.ptr), _p(result.data.ptr + 8)))
                    p.streams[p.b].synchronize()
                    fb, nb = (int(x) for x in result.get())
                if nb:
                    first_bad = fb * 4 if first_bad is None else min(first_bad, fb * 4)
                    bad += nb * 4
        except Exception as e:  # noqa: BLE001
            fail("integrity", e)
            return
        emit({"type": "integrity", "status": "corrupt" if bad else "ok", "first_bad_offset": first_bad,
              "checked_bytes": nbytes * len(methods), "bad_bytes": bad})

    def _grid(self, p: Pair, dev: int, name: str, args) -> None:
        with cupy.cuda.Device(dev):
            self.kernel(name)((self.sm_count(dev) * BLOCKS_PER_SM,), (THREADS,), args, stream=p.streams[dev])


def main() -> int:
    if cupy is None:
        emit({"type": "fatal", "message": f"CuPy cannot be imported ({_IMPORT_ERROR}); install it: "
                                          'pip install "p2ptop[cuda12]" or pip install "p2ptop[cuda13]"'})
        return 2
    job = read_job()
    if job is None:
        return 2
    gate_wait = None
    if job.get("gate"):  # the runner's contention check reads the idle GPUs while we start: no CUDA call before its go
        t_gate = time.monotonic()
        try:
            go = json.loads(sys.stdin.readline() or "{}")
        except ValueError:
            go = {}
        gate_wait = round(time.monotonic() - t_gate, 4)
        if not isinstance(go.get("pairs"), list):
            return 0  # the runner is gone, or ran nothing
        job["pairs"] = go["pairs"]
    threading.Thread(target=exit_with_parent, daemon=True).start()
    try:
        count = runtime.getDeviceCount()
        hello = {"type": "hello", "pid": os.getpid(), "cupy": cupy.__version__, "cuda_runtime": runtime.runtimeGetVersion(),
                 "cuda_driver": runtime.driverGetVersion(), "devices": count}
        if gate_wait is not None:
            hello["gate_wait_s"] = gate_wait
        emit(hello)
        worker = Worker(job)
        ordinals = cuda_ordinals(worker.bus) if worker.bus else {}
    except Exception as e:  # noqa: BLE001
        f = CudaFailure.of(e)
        emit({"type": "fatal", "message": f"CUDA cannot start: {f.name} ({f.code}): {f.text}"})
        return 2
    t0 = time.monotonic()
    for a, b in worker.pairs:
        if not worker.run_pair(a, b, ordinals):
            return 3
    emit({"type": "done", "seconds": round(time.monotonic() - t0, 3)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
