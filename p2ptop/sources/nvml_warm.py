"""NVML's first calls made early, in a thread, while Python still imports: for a command that reads the host
once and ends at once (``cli.QUICK_EXIT``, `p2ptop topo`).

The first calls a process makes to NVML pay for the driver's own set-up, not for what they return: on an
H100 host (driver 580, 2026-11-27, ``benchmarks/results/h100x1-2026-11-27b/topo-detail.log``) ``nvmlInit``
took ~11 ms, the first device handle ~7 ms and the first CPU affinity ~11 ms, about 29 ms of a ~110 ms
`p2ptop topo`, while the imports before the read (pynvml, the model) took ~30 ms more. ctypes lets go of the
GIL during a foreign call, so the two can overlap: this thread makes those first calls through the library
itself (the answers are thrown away), and by the time :class:`~p2ptop.sources.nvml.NvmlReader` asks through
pynvml, NVML is set up in this process.

Nothing here is trusted: any failure (no library, no driver, an old driver without a function) ends the
thread quietly and the reader finds and reports it as usual. The thread's ``nvmlInit`` is never shut down,
so it is only started where the process ends right after the command (``os._exit``: the exit releases NVML).
"""

from __future__ import annotations

import threading

#: the library NVML is loaded from (pynvml loads the same name on Linux)
LIBRARY = "libnvidia-ml.so.1"


def start() -> threading.Thread:
    """Start the warm-up; the caller never needs to wait for it (NVML serialises its own set-up)."""
    thread = threading.Thread(target=warm, name="p2ptop-nvml-warm", daemon=True)
    thread.start()
    return thread


def warm(library: str = LIBRARY) -> int:
    """nvmlInit, then every GPU's handle and CPU affinity; returns the GPUs warmed (0 where any step failed)."""
    try:
        import ctypes

        lib = ctypes.CDLL(library)
        if lib.nvmlInit_v2() != 0:
            return 0
        count = ctypes.c_uint(0)
        if lib.nvmlDeviceGetCount_v2(ctypes.byref(count)) != 0:
            return 0
        warmed = 0
        for index in range(count.value):
            handle = ctypes.c_void_p()
            if lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(index), ctypes.byref(handle)) != 0:
                continue
            cpus = (ctypes.c_ulong * 64)()  # 4096 CPUs
            lib.nvmlDeviceGetCpuAffinity(handle, ctypes.c_uint(64), cpus)
            warmed += 1
        return warmed
    except Exception:  # noqa: BLE001 - a warm-up only: the reader meets and reports any real failure
        return 0
