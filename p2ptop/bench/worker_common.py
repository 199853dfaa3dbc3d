"""What the GPU-side worker processes share (bench/worker.py, worker_ipc.py, worker_nccl.py).

Finding a GPU by PCI bus id, the JSON-lines channel to the parent, importing CuPy (or saying how to install
it), naming a CUDA or NCCL error as CUDA and NCCL name it, exiting with the parent. Lives beside the workers
because it imports CuPy (only inside :func:`import_cupy`, so the parent can import this module without it).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Optional, TextIO

#: ncclResult_t (nccl.h): the names NCCL gives its return codes
NCCL_RESULTS = {1: "ncclUnhandledCudaError", 2: "ncclSystemError", 3: "ncclInternalError", 4: "ncclInvalidArgument",
                5: "ncclInvalidUsage", 6: "ncclRemoteError", 7: "ncclInProgress"}

_out: Optional[TextIO] = None  # the JSON channel when it is not sys.stdout (see split_stdout)


def emit(ev: dict) -> None:
    """One JSON line to the parent."""
    out = _out or sys.stdout
    out.write(json.dumps(ev) + "\n")
    out.flush()


def split_stdout() -> None:
    """JSON on a copy of fd 1; fd 1 (where NCCL prints its INFO lines) goes to stderr from now on."""
    global _out
    fd = os.dup(1)
    os.dup2(2, 1)
    _out = os.fdopen(fd, "w", buffering=1)
    sys.stdout = sys.stderr


def read_job(check=None) -> Optional[dict]:
    """The job line on stdin (``check(job)`` raising KeyError, TypeError or ValueError where a field is missing or
    wrong); None after a ``fatal`` line saying what is wrong with it."""
    try:
        job = json.loads(sys.stdin.readline())
        if not isinstance(job, dict):
            raise TypeError(f"expected an object, got {type(job).__name__}")
        if check is not None:
            check(job)
    except (ValueError, KeyError, TypeError) as e:
        emit({"type": "fatal", "message": f"bad job on stdin: {e}"})
        return None
    return job


def bus_key(bus: str):
    """'00000000:3A:00.0' and '0000:3a:00.0' -> (0, 0x3a, 0, 0); None when it is not a bus id."""
    try:
        dom, b, rest = bus.strip().split(":")
        d, f = rest.split(".")
        return int(dom, 16), int(b, 16), int(d, 16), int(f, 16)
    except (ValueError, AttributeError):
        return None


def device_by_bus(runtime, bus: str) -> int:
    """The CUDA ordinal of the GPU at PCI bus id ``bus`` (NVML's 8-digit domain or CUDA's 4-digit one)."""
    want = bus_key(bus)
    for ordinal in range(runtime.getDeviceCount()):
        if bus_key(runtime.deviceGetPCIBusId(ordinal)) == want:
            return ordinal
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    raise LookupError(f"the GPU at {bus} is not among the GPUs CUDA sees"
                      + (f" (CUDA_VISIBLE_DEVICES={visible})" if visible is not None else ""))


def import_cupy(extras: str) -> Optional[tuple[Any, Any]]:
    """(cupy, cupy.cuda.runtime); None after a ``fatal`` line that says how to install it (``p2ptop[<extras>-cuda12]``)."""
    try:
        import cupy
        from cupy.cuda import runtime
    except Exception as e:  # noqa: BLE001 - any failure to import is said
        emit({"type": "fatal", "message": f"CuPy cannot be imported ({type(e).__name__}: {e}); install it: "
                                          f'pip install "p2ptop[{extras}cuda12]" or pip install "p2ptop[{extras}cuda13]"'})
        return None
    return cupy, runtime


class CudaError(Exception):
    """A CUDA (or NCCL) call failed: its name, code and text, as CUDA and NCCL say them."""

    def __init__(self, name: str, code, text: str):
        super().__init__(f"{name} ({code}): {text}")
        self.name, self.code, self.text = name, code, text

    @classmethod
    def of(cls, e: Exception) -> "CudaError":
        """CuPy's ``CUDARuntimeError('cudaErrorX: text')`` -> cudaErrorX; ``NcclError`` -> NCCL's ncclResult_t name;
        anything else by its type name."""
        if isinstance(e, CudaError):
            return e
        status = getattr(e, "status", None)
        code = status if isinstance(status, int) else None
        name = NCCL_RESULTS.get(code) if "Nccl" in type(e).__name__ else None
        text = str(e)
        if name is None:
            head, _, rest = text.partition(": ")
            name, text = (head, rest) if rest and " " not in head else (type(e).__name__, text)
        return cls(name, code, text)


def exit_with_parent() -> None:
    """The parent keeps our stdin open while it lives: at EOF it is gone (killed, crashed), and so are we.
    Run it in a daemon thread once the job has been read."""
    sys.stdin.read()
    os._exit(4)


def safe(fn) -> None:
    """Call ``fn``, ignoring its failure (cleaning up after an error already reported)."""
    try:
        fn()
    except Exception:  # noqa: BLE001
        pass
