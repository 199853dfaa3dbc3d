"""The real NVML reader driven by a fake built from the H200 capture, and by fault injection."""

import pytest

from p2ptop.sources.capture import ERRORS, NVML_FUNCTIONS, FakeNvml
from p2ptop.sources.nvml import NvmlReader, NvmlUnavailable, read_snapshot


def read(capture, **kw):
    return read_snapshot(FakeNvml(capture, **kw), sysfs_root="/nonexistent", hostname="test")


def test_capture_reads_as_the_host_printed(h200_capture):
    snap = read(h200_capture)
    assert snap.driver_version == "580.159.04"
    assert snap.cuda_driver_version == "13.0"
    assert [g.name for g in snap.gpus] == ["NVIDIA H200", "NVIDIA H200"]
    g0 = snap.gpus[0]
    assert g0.pci_bus_id == "00000000:00:06.0"
    assert g0.uuid == "GPU-0dbd5f15-329b-308d-7134-42c062ba3072"
    assert g0.memory_total_mib == 143771
    assert (g0.pcie_gen_cur, g0.pcie_width_cur) == (5, 16)
    assert g0.cpu_affinity == "0-31"
    assert g0.numa_node == 0
    assert g0.gpu_numa_id is None and g0.na["gpu_numa_id"] == "Not Supported"
    assert g0.virtualization_mode == "PASSTHROUGH"
    assert g0.fabric.state == "COMPLETED" and g0.fabric.status == "Success"
    assert len(g0.nvlinks) == 18  # link 18 answers Invalid Argument: past the last link
    assert all(l.active and l.version == 6 and l.remote_type == "NVSWITCH" and l.remote_hidden for l in g0.nvlinks)
    assert snap.gpus[1].pcie_replay_counter == 1
    pair = snap.pair(0, 1)
    assert pair.ancestor == "HOSTBRIDGE"
    assert pair.p2p == {"read": "OK", "write": "OK", "nvlink": "OK", "atomics": "OK", "pci": "NOT_SUPPORTED"}
    # what the capture did not record is N/A with the reason, never a guess
    assert g0.compute_capability is None and "not recorded" in g0.na["compute_capability"]


def test_fabric_info_is_passed_by_reference(h200_capture):
    fake = FakeNvml(h200_capture)
    snap = read_snapshot(fake, sysfs_root="/nonexistent")
    assert "nvmlDeviceGetGpuFabricInfoV" in fake.calls
    assert snap.gpus[0].fabric.na == {}  # a struct passed by value would have raised BindingTrap


#: calls a full read does not depend on: the live path's refresh shortcut and NVML events (tests/test_live.py)
NOT_IN_FULL_READ = ("nvmlInit", "nvmlShutdown", "nvmlDeviceGetFieldValues", "nvmlEventSetCreate", "nvmlEventSetFree",
                    "nvmlEventSetWait_v2", "nvmlDeviceRegisterEvents", "nvmlDeviceGetSupportedEventTypes")


@pytest.mark.parametrize("function", [f for f in NVML_FUNCTIONS if f not in NOT_IN_FULL_READ])
@pytest.mark.parametrize("error", ["NOT_SUPPORTED", "INVALID_ARGUMENT", "GPU_IS_LOST", "FUNCTION_NOT_FOUND", "UNKNOWN", "MISSING"])
def test_every_call_failing_still_gives_a_snapshot(h200_capture, function, error):
    # without field values, so that every value is asked by its own call (their failing is tested in test_live.py)
    fake = FakeNvml(h200_capture, faults={function: error, "nvmlDeviceGetFieldValues": "MISSING"})
    snap = read_snapshot(fake, sysfs_root="/nonexistent")
    assert snap.source.kind == "nvml"
    # the failure is visible as an N/A reason somewhere in the snapshot
    text = snap.to_json()
    expected = "not in these NVML bindings" if error == "MISSING" else ERRORS[error][1]
    if function not in ("nvmlDeviceGetNvLinkState",) or error not in ("INVALID_ARGUMENT",):
        assert expected in text, f"{function} raising {error} left no trace"
    if function == "nvmlDeviceGetCount":
        assert snap.gpus == []
    elif function == "nvmlDeviceGetHandleByIndex":
        assert len(snap.gpus) == 2 and all("handle" in g.na for g in snap.gpus)
    else:
        assert len(snap.gpus) == 2


def test_init_failure_is_nvml_unavailable(h200_capture):
    with pytest.raises(NvmlUnavailable, match="Driver Not Loaded"):
        read(h200_capture, init_error="DRIVER_NOT_LOADED")


def test_p2p_index_is_a_plain_int(h200_capture):
    # the fake raises ctypes.ArgumentError for the (0,) tuple of nvidia-ml-py 13.x
    snap = read(h200_capture)
    assert all(p.na == {} for p in snap.pairs)


def test_reason_of_unexpected_exception_is_kept():
    class Boom:
        NVMLError = RuntimeError

        def nvmlDeviceGetName(self, h):
            raise ValueError("bad bytes")

    value, why = NvmlReader(Boom()).call("nvmlDeviceGetName", 0)
    assert value is None and why == "ValueError: bad bytes"


def test_live_session_keeps_nvml_open_between_reads(h200_capture):
    from p2ptop.live import LiveSource

    fake = FakeNvml(h200_capture)
    session = LiveSource(fake, sysfs_root="/nonexistent", host_facts=False, events=False)
    first, second = session.read(), session.read()
    assert fake.calls.count("nvmlInit") == 1
    assert [g.uuid for g in first.gpus] == [g.uuid for g in second.gpus]
    session.close()
    assert fake.calls.count("nvmlShutdown") == 1


def test_confidential_computing_state_is_read_where_nvml_gives_it(h200_capture):
    """nvmlSystemGetConfComputeState: ccFeature 1 is CC mode (devToolsMode 1 its devtools variant); a capture that did not
    record it leaves the mode N/A with the reason, never 'off'."""
    import copy

    from p2ptop.diagnose import host_facts

    snap = read(h200_capture)
    assert snap.cc_mode is None and "not" in snap.na["cc_mode"].lower()
    for state, mode in (({"ccFeature": 1, "devToolsMode": 0}, "on"), ({"ccFeature": 1, "devToolsMode": 1}, "devtools"),
                        ({"ccFeature": 0, "devToolsMode": 0}, "off")):
        cap = copy.deepcopy(h200_capture)
        cap.probe["cc_state"] = state
        snap = read(cap)
        assert snap.cc_mode == mode and host_facts(snap)["host.cc_mode"] == mode
