"""SIMULATED cupy.cuda.runtime: allocations are counters, copies are log lines."""
import ctypes
import json
import os

memcpyHostToDevice, memcpyDeviceToHost = 1, 2
_next = [0x1000]
_host = []


def _log(*what):
    path = os.environ.get("FAKE_CUPY_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(list(what)) + "\n")


class CUDARuntimeError(Exception):
    status = 0


def getDeviceCount():
    return 1


def deviceGetPCIBusId(ordinal):
    return "0000:00:06.0"


def runtimeGetVersion():
    return 13000


def driverGetVersion():
    return 13000


def getDeviceProperties(dev):
    return {"multiProcessorCount": 132}


def malloc(n):
    _next[0] += 0x100000
    _log("malloc", _next[0], n)
    return _next[0]


def hostAlloc(n, flags):
    buf = ctypes.create_string_buffer(max(int(n), 8) if n <= 64 else 8)  # the flag word is really written
    _host.append(buf)
    ptr = ctypes.addressof(buf)
    _log("hostAlloc", ptr, n, flags)
    return ptr


def free(ptr):
    _log("free", ptr)


def freeHost(ptr):
    _log("freeHost", ptr)


def memcpyAsync(dst, src, n, kind, stream):
    _log("memcpyAsync", dst, src, n, kind, stream)
