"""Pieces of the GPU-side workers that run without a GPU: bus-id lookup, NCCL error naming, the struct layout."""

import ctypes

import pytest

from p2ptop.bench import worker_common, worker_ipc
from p2ptop.bench import worker_nccl as nccl_worker


class FakeRuntime:
    def __init__(self, buses):
        self.buses = buses

    def getDeviceCount(self):
        return len(self.buses)

    def deviceGetPCIBusId(self, i):
        return self.buses[i]


def test_the_workers_share_one_bus_lookup_and_one_error_naming():
    assert worker_ipc.device_by_bus is nccl_worker.device_by_bus is worker_common.device_by_bus
    assert worker_ipc.CudaError is nccl_worker.CudaError is worker_common.CudaError


def test_gpus_are_found_by_bus_id_whatever_the_domain_width(monkeypatch):
    mod = worker_common
    rt = FakeRuntime(["0000:07:00.0", "0000:06:00.0"])
    assert mod.device_by_bus(rt, "00000000:06:00.0") == 1  # NVML's 8-digit domain, CUDA's 4-digit one
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    with pytest.raises(LookupError, match="CUDA_VISIBLE_DEVICES=1"):
        mod.device_by_bus(rt, "00000000:3a:00.0")


def test_nccl_errors_are_named_as_nccl_names_them():
    class NcclError(RuntimeError):
        def __init__(self, status):
            super().__init__("NCCL_ERROR_INVALID_USAGE: invalid usage (run with NCCL_DEBUG=WARN for details)")
            self.status = status

    ev = nccl_worker._error("init", NcclError(5))
    assert ev["name"] == "ncclInvalidUsage" and ev["code"] == 5 and "invalid usage" in ev["text"]


def test_cuda_errors_are_named_as_cuda_names_them():
    class CUDARuntimeError(RuntimeError):  # CuPy's: 'cudaErrorX: text', status = the cudaError_t
        status = 217

    f = worker_common.CudaError.of(CUDARuntimeError("cudaErrorPeerAccessUnsupported: peer access is not supported"))
    assert (f.name, f.code, f.text) == ("cudaErrorPeerAccessUnsupported", 217, "peer access is not supported")
    g = worker_common.CudaError.of(OSError("fd passing failed: no descriptor"))  # a head with spaces is no CUDA name
    assert (g.name, g.code) == ("OSError", None) and g.text == "fd passing failed: no descriptor"


def test_cumem_structs_have_the_c_layout():
    # CUmemAllocationProp: type, requestedHandleTypes, location{type,id}, win32HandleMetaData, allocFlags (cuda.h)
    assert ctypes.sizeof(worker_ipc._Prop) == 32
    assert worker_ipc._Prop.location.offset == 8 and worker_ipc._Prop.win32HandleMetaData.offset == 16
    assert ctypes.sizeof(worker_ipc._Access) == 12  # CUmemAccessDesc: location, flags


def test_unique_id_from_json_takes_the_type_this_cupy_uses():
    """On 2 H200s with CuPy 14 the second rank failed: 'commId' expected bytes, got tuple."""
    from types import SimpleNamespace

    from p2ptop.bench.worker_nccl import uid_from_json

    ids = list(range(-64, 64))
    as_bytes = uid_from_json(ids, SimpleNamespace(get_unique_id=lambda: bytes(128)))
    assert isinstance(as_bytes, bytes) and len(as_bytes) == 128 and as_bytes[0] == 256 - 64
    as_tuple = uid_from_json(ids, SimpleNamespace(get_unique_id=lambda: tuple([0] * 128)))
    assert as_tuple == tuple(ids)


@pytest.mark.parametrize("line, said", [("nope\n", "Expecting value"), ("[1]\n", "expected an object"),
                                        ('{"rank": "x", "nranks": 1}\n', "invalid literal")])
def test_a_bad_job_line_is_one_fatal_event(line, said, monkeypatch, capsys):
    import io
    import json

    monkeypatch.setattr("sys.stdin", io.StringIO(line))
    assert worker_common.read_job(lambda j: (int(j["rank"]), int(j["nranks"]))) is None
    ev = json.loads(capsys.readouterr().out)
    assert ev["type"] == "fatal" and ev["message"].startswith("bad job on stdin: ") and said in ev["message"]
