"""SIMULATED CuPy for the worker's logic tests (tests/fake_cupy/README.md)."""
import json
import os

from . import cuda  # noqa: F401

__version__ = "fake"
uint64 = "uint64"


def _log(*what):
    path = os.environ.get("FAKE_CUPY_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(list(what)) + "\n")


class _Data:
    def __init__(self, ptr):
        self.ptr = ptr


class _Array:
    def __init__(self, values):
        self.values = list(values)
        self.data = _Data(cuda.runtime.malloc(8 * len(self.values)))

    def get(self):
        return list(self.values)


def array(values, dtype=None):
    return _Array(values)


class RawModule:
    def __init__(self, code="", options=()):
        pass

    def get_function(self, name):
        def launch(grid, block, args, stream=None):
            _log("kernel", name, cuda.Device.current, [int(a) for a in args], getattr(stream, "ptr", None))
        return launch
