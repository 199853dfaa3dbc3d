"""Rules of the twenty-fifth session: DDP and a Windows path to torch\\distributed are traces of GPU communication, and
PyTorch's build without libuv in words."""

import os

import pytest

from p2ptop.commands.explain import answer, explain
from p2ptop.knowledge import load_kb


@pytest.fixture(scope="module")
def kb():
    return load_kb()


def test_a_windows_path_to_torch_distributed_is_a_trace(kb):
    # a Windows report naming no GPU: its traceback's path is torch\\distributed, the message PyTorch's TCPStore's own
    text = ("I've installed on Windows 11 with python 3.11 and Pytorch 2.5.1, but training will not start:\n"
            "  File \"C:\\\\x\\\\lib\\\\site-packages\\\\torch\\\\distributed\\\\rendezvous.py\", line 185, in _create_c10d_store\n"
            "RuntimeError: use_libuv was requested but PyTorch was build without libuv support")
    got = answer(kb, text, [], 3)
    assert got["kind"] == "matches"
    assert got["results"][0][0].entry.failure_class == "nccl_unavailable_platform"


@pytest.mark.parametrize("text", [
    "the build is stuck at 99 % and nothing happens",
    "the docs build hangs on Windows after the update, the same on macOS",
])
def test_no_gpu_words_and_no_entrys_message_stays_silent(kb, text):
    got = answer(kb, text, [], 3)
    assert got["kind"] == "no_gpu_trace" and not got["results"]


@pytest.mark.parametrize("text", [
    "DDPStrategy under windows is complaining about missing libuv: PyTorch is not built with libuv.",
    "On Windows the PyTorch wheel was built without libuv, so torchrun cannot start the TCPStore.",
])
def test_a_build_without_libuv_in_words(kb, text):
    got = explain(kb, text, [], 3)
    assert got and got[0][0].entry.failure_class == "nccl_unavailable_platform"


def test_libuv_words_do_not_fire_on_a_build_that_has_it(kb):
    got = explain(kb, "TCPStore: using the libuv backend (use_libuv=True) on 8 GPUs; all_reduce hangs", [], 3)
    assert all(m.entry.id != "platform/no-nccl-in-windows-builds" or m.confidence == "unsure" for m, _ in got)


@pytest.mark.parametrize("text", [
    # torch/csrc/distributed/c10d/TCPStore.cpp, quoted in a report that names no GPU and no path
    'Training on Windows 10 fails with: "RuntimeError: use_libuv was requested but PyTorch was built without libuv support, '
    'run with USE_LIBUV=0 to disable it."',
    # the elastic launcher's note (torch/distributed/elastic/multiprocessing/redirects.py) beside the same error
    "NOTE: Redirects are currently not supported in Windows or MacOs.\n"
    "Runtime Error: use_libuv was requested but PyTorch was build without libuv support",
])
def test_torch_distributed_own_words_on_windows_are_a_trace(kb, text):
    got = answer(kb, text, [], 3)
    assert got["kind"] == "matches"
    assert got["results"][0][0].entry.failure_class == "nccl_unavailable_platform"


@pytest.mark.parametrize("text", [
    # torch/distributed/distributed_c10d.py's message, cut after "NCCL" in an issue's title
    'RuntimeError:"Distributed package doesn\'t have NCCL" ???',
    # Paddle binds NCCLParallelContext only where built with CUDA and not for Windows (paddle/fluid/pybind/imperative.cc)
    '  File "C:\\\\Python38\\\\lib\\\\site-packages\\\\paddle\\\\distributed\\\\parallel.py", line 192, in init_parallel_env\n'
    "    core.NCCLParallelContext(strategy, place))\n"
    "AttributeError: module 'paddle.fluid.core_avx' has no attribute 'NCCLParallelContext'",
])
def test_builds_without_nccl_cut_or_in_paddles_words(kb, text):
    got = explain(kb, text, [], 3)
    assert got and got[0][0].entry.failure_class == "nccl_unavailable_platform"
    assert got[0][0].confidence in ("likely", "possible")


def test_other_packages_without_a_backend_are_not_read_as_nccl(kb):
    got = explain(kb, "RuntimeError: Distributed package doesn't have MPI built in. MPI is only included if you build "
                      "PyTorch from source on a host that has MPI installed.", [], 3)
    assert all(m.entry.id != "platform/no-nccl-in-windows-builds" or m.confidence == "unsure" for m, _ in got)


def test_nvbandwidths_waived_device_copies_said_in_words_are_a_p2p_refusal(kb):
    # nvbandwidth waives a device_to_device test when no GPU pair can access each other (filterHasAccessiblePeerPairs)
    got = answer(kb, "All the device_to_device test cases are waived on our 8-GPU server. Why?", [], 3)
    assert got["kind"] == "unsure" and got["results"]
    classes = {m.entry.failure_class for m, _ in got["results"][:3]}
    assert "p2p_unsupported_topology" in classes
    assert any(s.startswith("p2p.read = NOT_SUPPORTED") for s in got["symptoms"])


def test_a_single_gpus_waived_device_copies_are_no_p2p_trouble(kb):
    # the form of nvbandwidth v0.8's output on one GPU (benchmarks/results/h100x1-2026-11-24/probe1.log): no pair exists
    text = ("nvbandwidth Version: v0.8\nBuilt from Git version: 59bd94c\n\nCUDA Runtime Version: 13000\n"
            "CUDA Driver Version: 13000\nDriver Version: 580.159.04\n\nDevice 0: NVIDIA H100 80GB HBM3 (00000000:00:06)\n\n"
            "Running host_to_device_memcpy_ce.\nmemcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n           0\n"
            " 0     52.96\n\nSUM host_to_device_memcpy_ce 52.96\n\n"
            "Running device_to_device_memcpy_read_ce.\nWaived.\n\nRunning device_to_device_memcpy_write_ce.\nWaived.\n")
    got = answer(kb, text, [], 3)
    assert not any(m.confidence in ("likely", "possible") for m, _ in got["results"])
    assert not any(s.startswith("p2p.read") for s in got["symptoms"])


NVB_1GPU = os.path.join(os.path.dirname(__file__), "fixtures", "captures", "h200x1-vm", "nvbandwidth-1gpu.txt")


@pytest.mark.parametrize("cut", [False, True])
def test_real_one_gpu_nvbandwidth_is_healthy_whole_or_without_its_device_list(kb, cut):
    # the real output of nvbandwidth v0.8 on one H200: a bare "Waived: " per device test, no pair to refuse
    with open(NVB_1GPU, encoding="utf-8") as f:
        text = f.read()
    assert "Waived:" in text
    if cut:
        text = "\n".join(line for line in text.split("\n") if not line.startswith("Device"))
    got = answer(kb, text, [], 3)
    assert got["kind"] == "healthy" and not got["results"]


def test_naming_nccl_is_no_context_for_the_contained_error(kb):
    # nccl/contained-during-collective needs cudaErrorContained (226); "a multi-rank NCCL job" only keeps it to such jobs:
    # a text that says an NCCL error and nothing of 226 must not lead with it
    got = explain(kb, "After upgrading, every run ends in an NCCL error on our 4-GPU node.", [], 3)
    assert all(m.entry.id != "nccl/contained-during-collective" for m, _ in got[:1])
    got = explain(kb, "[rank1]: RuntimeError: CUDA error: Invalid access of peer GPU memory over nvlink or a hardware "
                      "error was encountered\n[rank1]: torch.distributed.DistBackendError: NCCL error", [], 3)
    assert got and got[0][0].entry.failure_class == "nvlink_peer_memory_error"


CAPTURES = os.path.join(os.path.dirname(__file__), "fixtures", "captures")
RAY_LIKE = (  # the form of NCCL 2.7's init and IPC lines (src/init.cc, transport/p2p.cc), two Ray workers of one host
    "(pid=909608) z-pc:909608:910337 [0] NCCL INFO comm 0x7f1 rank 1 nranks 2 cudaDev 0 busId 2e000 - Init COMPLETE\n"
    "(pid=909597) z-pc:909597:910336 [0] NCCL INFO comm 0x7f2 rank 0 nranks 2 cudaDev 0 busId 2d000 - Init COMPLETE\n"
    "(pid=909608) z-pc:909608:910337 [0] NCCL INFO Channel 00 : 0[2d000] -> 1[2e000] via P2P/IPC\n"
    "(pid=909608) z-pc:909608:910337 [0] transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle : 217 peer access "
    "is not supported between these two devices\n")


def _one_gpu_each(text):
    from p2ptop.evidence.read import read_text
    return [f for f in read_text(text).findings if "host.one_gpu_per_process" in f.facts]


def test_ranks_of_one_host_on_the_same_cuda_device_of_different_gpus_see_one_gpu_each(kb):
    found = _one_gpu_each(RAY_LIKE)
    assert found and found[0].evidence[0].startswith("inferred from")
    got = explain(kb, RAY_LIKE, [], 3)
    assert got[0][0].entry.id == "nccl/ipc-peer-gpu-not-visible"


@pytest.mark.parametrize("path", [
    ("h200x2-nccl-2026-11-29", "healthy.log"),  # torchrun: every GPU visible, cudaDev 0 and 1
    ("h200x2-nvswitch-vm", "nccl-2.28-allreduce-default.log"),
])
def test_real_logs_with_every_gpu_visible_say_no_such_thing(path):
    with open(os.path.join(CAPTURES, *path), encoding="utf-8") as f:
        assert not _one_gpu_each(f.read())


def test_one_process_driving_two_gpus_is_not_one_gpu_each():
    text = ("host:100:100 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1a000 - Init COMPLETE\n"
            "host:100:100 [1] NCCL INFO comm 0x2 rank 1 nranks 2 cudaDev 1 busId 1b000 - Init COMPLETE\n")
    assert not _one_gpu_each(text)


@pytest.mark.parametrize("name", ["masked.log", "masked-cumem-off.log"])
def test_real_two_h200_logs_of_processes_seeing_one_gpu_each_read_the_setup_and_stay_healthy(kb, name):
    # two processes with CUDA_VISIBLE_DEVICES=0 / =1 on two H200s (NCCL 2.28.9): via P2P/CUMEM or P2P/IPC, sums right
    with open(os.path.join(CAPTURES, "h200x2-masked", name), encoding="utf-8") as f:
        text = f.read()
    assert _one_gpu_each(text)
    got = answer(kb, text, [], 3)
    assert got["kind"] == "healthy" and not got["results"]


def test_paddles_newer_process_group_without_nccl(kb):
    # paddle/fluid/pybind/distributed_py.cc binds ProcessGroupNCCL only with PADDLE_WITH_NCCL (or RCCL)
    text = ('  File "C:\\\\Anaconda3\\\\lib\\\\site-packages\\\\paddle\\\\distributed\\\\collective.py", line 157, in '
            "_new_process_group_impl\n    pg = core.ProcessGroupNCCL.create(\n"
            "AttributeError: module 'paddle.base.libpaddle' has no attribute 'ProcessGroupNCCL'")
    got = explain(kb, text, [], 3)
    assert got and got[0][0].entry.failure_class == "nccl_unavailable_platform"
    assert got[0][0].confidence in ("likely", "possible")


def test_waived_device_tests_beside_a_one_gpu_listing_are_no_refusal(kb):
    # nvidia-smi -L counts one GPU: nvbandwidth's device tests are waived for want of a pair, not of peer access
    got = answer(kb, "nvidia-smi -L\nGPU 0: NVIDIA H200 (UUID: GPU-1)\nAll the device_to_device test cases are waived. Why?", [], 3)
    assert not any(s.startswith("p2p.read") for s in got["symptoms"])
