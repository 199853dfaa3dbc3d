"""Rules of the thirtieth session.

A cause that lives in a setup of its own (NVLS multicast, Fabric Manager, an NVLink link or its peer memory: NVLink or
NVSwitch hardware; nccl_env_misconfig: an NCCL variable forcing a transport) is an unsure candidate on a generic symptom
(a hang), its context or its words. Where neither the text nor the host says that setup, it ranks under the candidates
whose setup may be there (matcher.SETUP_UNSAID_FACTOR), and says why; where the text names it, nothing changes."""

import pytest
from .kbtools import flat_facts, bundled_kb

from p2ptop.commands.explain import explain
from p2ptop.knowledge import matcher

NVLINK_REASON = "neither the text nor the host names NVLink or NVSwitch hardware"
ENV_REASON = "neither the text nor the host names an NCCL variable"


@pytest.fixture(scope="module")
def kb():
    return bundled_kb()


def ranked(kb, text, n=8):
    return [m for m, _ in explain(kb, text, [], n)]


def test_a_hang_on_unnamed_hardware_puts_nvlink_and_variable_causes_last(kb):
    got = ranked(kb, "NCCL all_reduce hangs on our server with 4 GPUs.")
    assert got and all(m.confidence == "unsure" for m in got)
    demoted = [m for m in got if any(r.startswith((NVLINK_REASON, ENV_REASON)) for r in m.reasons)]
    assert {m.entry.failure_class for m in demoted} & (matcher.NVLINK_CLASSES | {"nccl_env_misconfig"})
    first = got[0]
    assert first.entry.failure_class not in matcher.NVLINK_CLASSES | {"nccl_env_misconfig"}
    # the first three name causes whose setup may be there
    assert not any(m in demoted for m in got[:3])


@pytest.mark.parametrize("text", [
    "NCCL all_reduce hangs on our HGX H100 server with 8 GPUs.",
    "NCCL all_reduce hangs on our server with 8 GPUs connected by NVSwitch.",
    "NCCL all_reduce hangs on our server; nvidia-smi topo -m shows NV18 between every pair.",
    "NCCL all_reduce hangs on a DGX with 8 GPUs.",
])
def test_nvlink_hardware_named_keeps_its_causes_where_they_were(kb, text):
    for m in ranked(kb, text):
        assert not any(r.startswith(NVLINK_REASON) for r in m.reasons), (m.entry.id, text)


def test_an_nccl_variable_named_keeps_the_variable_causes(kb):
    for m in ranked(kb, "NCCL all_reduce hangs on our server with 4 GPUs. We set NCCL_P2P_LEVEL=SYS."):
        assert not any(r.startswith(ENV_REASON) for r in m.reasons), m.entry.id


def test_an_entry_on_its_own_line_is_not_demoted(kb):
    # NVLS's own WARN names its setup in its words; the code's own NVLink words need no other mention
    text = "NCCL WARN Cuda failure 'operation not supported' : cuMulticastCreate failed"
    for m in ranked(kb, text):
        if m.hits:
            assert not any(r.startswith(NVLINK_REASON) for r in m.reasons), m.entry.id


def test_a_data_centre_gpu_of_an_nvlink_generation_counts_as_named_hardware(kb):
    text = "Training hangs at the first all_reduce with 8 A100 GPUs."
    for m in ranked(kb, text):
        assert not any(r.startswith(NVLINK_REASON) for r in m.reasons), m.entry.id


def test_a_gpu_without_nvlink_parts_does_not(kb):
    # L40S (Ada) has no NVLink: an NVLink-class candidate there is demoted, if one is offered at all
    text = "Training hangs at the first all_reduce with 4 L40S GPUs."
    for m in ranked(kb, text):
        if m.entry.failure_class in matcher.NVLINK_CLASSES and m.confidence == "unsure" and not m.hits:
            assert any(r.startswith(NVLINK_REASON) for r in m.reasons), m.entry.id


def test_an_absence_said_is_no_setup_said(kb):
    facts = matcher.Facts([], matcher.prepare("a hang"), "host")
    facts.values["host.no_nvlink_hardware"] = [True]
    facts.values["host.nvswitch_present"] = [False]
    assert not matcher._setup_said(matcher._NVLINK_SETUP, facts, matcher.prepare("a hang"))
    facts.values["host.nvswitch_present"] = [True]
    assert matcher._setup_said(matcher._NVLINK_SETUP, facts, matcher.prepare("a hang"))


# --- after fresh79 was judged: builds without the distributed package or NCCL, drivers older than a build's CUDA ---

from .kbtools import first_entry  # noqa: E402


@pytest.mark.parametrize("text", [
    "AttributeError: module 'torch.distributed' has no attribute 'is_initialized'",
    "我的环境安装好后出现了这个问题：AttributeError: module \"torch.distributed' has no attribute \"ReduceOp“，请问该如何解决呢？",
    "    print(f'is_nccl_available={td.is_nccl_available()}')\nAttributeError: module 'torch.distributed' has no attribute 'is_nccl_available'",
    "ImportError: cannot import name 'ProcessGroup' from 'torch.distributed' (/usr/lib/python3/dist-packages/torch/distributed/__init__.py)",
    "On the Jetson, torch.distributed.is_available() returns False, so DDP cannot start.",
])
def test_a_pytorch_build_without_the_distributed_package(kb, text):
    assert first_entry(text)[0] == "platform/pytorch-built-without-distributed"


@pytest.mark.parametrize("text", [
    # subpackages and APIs newer than the c10d core: their absence says an older PyTorch, not a build without c10d
    "AttributeError: module 'torch.distributed' has no attribute 'checkpoint'",
    "AttributeError: module 'torch.distributed' has no attribute 'device_mesh'",
    "print(torch.distributed.is_available())  # True",
])
def test_names_a_build_without_c10d_does_not_explain(kb, text):
    got = [m.entry.id for m, _ in explain(kb, text, [], 3)]
    assert "platform/pytorch-built-without-distributed" not in got


@pytest.mark.parametrize("text", [
    "nvidia-docker | 2016/08/22 12:54:02 Error: unsupported CUDA version: driver 7.5 < image 8.0",
    "UserWarning: cudaGetDeviceCount() returned cudaErrorNotSupported, likely using older driver or on CPU machine "
    "(Triggered internally at C:\\actions-runner\\_work\\pytorch\\pytorch\\c10\\cuda\\CUDAFunctions.cpp:88.)",
])
def test_the_tools_own_words_for_a_driver_too_old(kb, text):
    assert first_entry(text) == ("cuda/insufficient-driver", "likely")


def test_nvidia_docker_refusing_a_docker_version_is_not_the_driver(kb):
    got = [m.entry.id for m, _ in explain(kb, "nvidia-docker | 2017/03/02 16:51:26 Error: unsupported Docker version", [], 3)
           if m.confidence in ("likely", "possible")]
    assert "cuda/insufficient-driver" not in got


def test_a_wheels_cuda_tag_against_an_older_driver(kb):
    text = ("torch/cuda/__init__.py:52: UserWarning: CUDA initialization: CUDA driver initialization failed, you might not have "
            "a CUDA gpu.\nubuntu16.04, GeForce GTX 1080 Ti, torch 1.8.1+cu111, Driver version: 440.82")
    assert flat_facts(text).get("host.driver_below_cuda_build") is True  # CUDA 11.1 needs 450.80.02 or newer
    got = [m.entry.id for m, _ in explain(kb, text, [], 3)]
    assert "cuda/insufficient-driver" in got


@pytest.mark.parametrize("text", [
    "torch==1.13.1+cu117 on driver 470.82.01: RuntimeError: CUDA error: an illegal memory access was encountered",
    "torch 2.1.0+cu121, Driver Version: 535.104.05",
])
def test_a_driver_new_enough_for_the_wheel_is_not_below_it(text):
    assert "host.driver_below_cuda_build" not in flat_facts(text)


def test_paddle_without_its_nccl_op_on_windows(kb):
    text = ("我的笔记本是window10 x64, 显卡是NVIDIA GeForce GTX 1650.\npython -m paddle.distributed.launch --selected_gpus=\"0\" "
            "tools/train.py\n结果提示 ”gen_nccl_id ” has not been registered,")
    assert first_entry(text)[0] == "platform/no-nccl-in-windows-builds"


def test_cmake_finding_no_nccl_beside_a_release_named_in_words(kb):
    text = ("cmake .. -DUSE_CUDA=ON -DUSE_NCCL=ON -DNCCL_ROOT=\"c:/dev/nccl\"\n"
            "The nccl is from https://developer.nvidia.com/nccl, version NCCL 2.2.12 O/S agnostic and CUDA 9.2.\n"
            "Error:  Could NOT find Nccl (missing: NCCL_LIBRARY)")
    assert first_entry(text)[0] == "platform/nccl-library-not-found"


def test_nccls_own_log_still_says_nccl_ran(kb):
    # NCCL printing its own INFO lines is NCCL loaded: a missing-library entry stays ruled out beside them
    text = ("node1:2001:2050 [0] NCCL INFO NCCL version 2.18.3+cuda12.2\n"
            "node1:2001:2050 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.\n"
            "CMake Error: Could NOT find NCCL (missing: NCCL_INCLUDE_DIR)")
    got = [m.entry.id for m, _ in explain(kb, text, [], 5) if m.confidence in ("likely", "possible")]
    assert "platform/nccl-library-not-found" not in got


# --- after fresh80 was judged: containers started without their GPUs, drivers older than a container's CUDA ---

@pytest.mark.parametrize("text", [
    "==========\n== CUDA ==\n==========\n\nCUDA Version 11.4.3\n\nWARNING: The NVIDIA Driver was not detected.  GPU functionality will "
    "not be available.\n   Use the NVIDIA Container Toolkit to start this container with GPU support; see\n"
    "   https://docs.nvidia.com/datacenter/cloud-native/ .",
    "WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.\n   Use 'nvidia-docker run' to start "
    "this container; see\n   https://github.com/NVIDIA/nvidia-docker/wiki/nvidia-docker .",
])
def test_an_nvidia_image_started_without_its_gpus_says_so(kb, text):
    assert first_entry(text)[0] == "container/docker-no-nvidia-runtime"


def test_an_nvidia_image_on_a_legacy_driver_in_compatibility_mode_is_not_that(kb):
    got = [m.entry.id for m, _ in explain(kb, "NOTE: Legacy NVIDIA Driver detected.  Compatibility mode ENABLED.", [], 3)]
    assert "container/docker-no-nvidia-runtime" not in got


def test_nvidia_smi_missing_inside_a_container(kb):
    text = ("after connected to container with command `docker run -it anibali/pytorch:1.4.0-cuda10.1 sh`\n"
            "both nvcc and nvidia-smi not found.")
    assert flat_facts(text).get("symptom.container_without_driver") is True
    assert first_entry(text)[0] == "container/docker-no-nvidia-runtime"


def test_nvidia_smi_missing_on_a_host_is_no_container_fault(kb):
    assert "symptom.container_without_driver" not in flat_facts("bash: nvidia-smi: command not found")
    got = [m.entry.id for m, _ in explain(kb, "bash: nvidia-smi: command not found", [], 3) if m.confidence in ("likely", "possible")]
    assert "container/docker-no-nvidia-runtime" not in got


@pytest.mark.parametrize("text", [
    "Cuda failure in file 'yolo_layer.cu' line 51: 35\n/etc/s6-overlay/s6-rc.d/trt-model-prepare/run: line 82:   204 Aborted",
    "ERROR: LoadError: CUDA 10.0 is not supported by\nyour driver (which supports up to 9.0)",
])
def test_a_driver_older_than_the_containers_cuda(kb, text):
    assert first_entry(text)[0] == "cuda/insufficient-driver"


def test_a_check_macros_line_number_is_not_the_code(kb):
    # "line 35:" names where it failed; the status after it (700, an illegal address) is no driver fault
    got = [m.entry.id for m, _ in explain(kb, "Cuda failure in file 'plugin.cu' line 35: 700", [], 3)
           if m.confidence in ("likely", "possible")]
    assert "cuda/insufficient-driver" not in got


# --- "it fails" that is an error line's own words ---

@pytest.mark.parametrize("text", [
    "Two GeForce RTX 3090 cards. When I run dist.barrier(), `RuntimeError: ProcessGroupNCCL does not support barrier` occurs.\n"
    "RuntimeError: ProcessGroupNCCL does not support barrier",
    "TITAN V, pytorch 1.0.0.dev20181009\nRuntimeError: ProcessGroupNCCL does not support barrier",
])
def test_a_framework_error_read_as_it_fails_is_not_the_geforce(kb, text):
    got = [(m.entry.failure_class, m.confidence) for m, _ in explain(kb, text, [], 3)]
    assert ("p2p_unsupported_consumer_gpu", "possible") not in got and ("p2p_unsupported_consumer_gpu", "likely") not in got


def test_p2p_said_not_to_work_on_a_geforce_is_still_the_geforce(kb):
    got = [(m.entry.failure_class, m.confidence) for m, _ in explain(kb, "P2P does not work between my two GeForce RTX 3090 cards.", [], 3)]
    assert got and got[0][0] == "p2p_unsupported_consumer_gpu" and got[0][1] in ("likely", "possible")


# --- a terminal's wrap that leaves "(" or "<" at the start of the continued line ---

@pytest.mark.parametrize("text", [
    "miniconda3/envs/chatglm3/lib/python3.10/site-packages/torch/cuda/__init__.py:138\n: UserWarning: CUDA initialization: "
    "The NVIDIA driver on your system is too old \n(found version 11030). Please update your GPU driver by downloading and installi",
    "nvidia-docker | 2016/08/22 12:54:02 Error: unsupported CUDA version: driver 7.5 \n< image 8.0",
])
def test_a_wrapped_driver_message_is_read_across_its_bracket(kb, text):
    assert first_entry(text)[0] == "cuda/insufficient-driver"


def test_records_that_start_with_a_bracket_are_not_joined():
    long = "x" * (matcher.WRAP_MIN + 5)
    for nxt in ("(pid=4242) NCCL INFO ring 0", "(RayTrainWorker pid=77) hello", "(venv) $ python train.py",
                "(base) root@host:~# nvidia-smi", "<stdout>: rank 1", "<product_name>NVIDIA H100 80GB HBM3</product_name>"):
        assert matcher._flat_texts([long, nxt]) == [], nxt
    assert matcher._flat_texts([long, "(found version 11030). Please update"]) != []
    assert matcher._flat_texts([long, "< image 8.0"]) != []


def test_console_or_collect_env_saying_cuda_is_available_stops_the_wheel_tag_reading():
    # forward compatibility: a newer CUDA that runs on an older data-centre driver is no fault
    for said in (">>> torch.cuda.is_available()\nTrue", "Is CUDA available: True"):
        text = f"torch 2.1.0+cu121\nNvidia driver version: 470.256.02\n{said}\n"
        assert flat_facts(text).get("host.cuda_available") is True
        assert "host.driver_below_cuda_build" not in flat_facts(text)
