"""Rules of the fourth round for errors, logs and tool outputs: an entry is confident only on its own symptom.
Each test uses real lines (source URL beside them) and the healthy lines the rule must leave alone; each fails when
its rule is taken out."""

from p2ptop.knowledge import match
from p2ptop.knowledge.fact_roles import is_setting_line

from .kbtools import answer, alarms, bundled_kb

KB = bundled_kb()


# --- a setting is context: NCCL's INFO echo of a variable it read (src/misc/param.cc, "%s set by environment to %s") --
# P2P and SHM switched off on purpose for a GPUDirect RDMA test (https://github.com/Mellanox/nv_peer_memory/issues/78)
SETTINGS_ON_PURPOSE = (
    "k69a05298:85517:85517 [0] NCCL INFO Using network IB\n"
    "NCCL version 2.7.8+cuda11.0\n"
    "k69a05298:85517:85801 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to LOC\n"
    "k69a05298:85517:85801 [0] NCCL INFO NCCL_SHM_DISABLE set by environment to 1.\n"
    "k69a05298:85517:85802 [1] NCCL INFO threadThresholds 8/8/64 | 16/8/64 | 8/8/64\n")


def test_setting_lines():
    assert is_setting_line("k69a05298:85517:85801 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to LOC")
    assert is_setting_line("$ export NCCL_SHM_DISABLE=1 NCCL_P2P_DISABLE=1")
    assert is_setting_line("-x NCCL_P2P_DISABLE=1")
    assert not is_setting_line("host:1:2 [0] transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle : 217")
    assert not is_setting_line("NCCL_P2P_DISABLE=1 did not help, still error 217")


def test_a_setting_alone_offers_no_entry():
    assert alarms(SETTINGS_ON_PURPOSE) == []
    # still a candidate: the setting is what would explain a complaint the text does not show
    assert "nccl_env_misconfig" in [a[0] for a in answer(SETTINGS_ON_PURPOSE)[:3]]


def test_a_setting_beside_a_complaint_is_offered():
    # the same echo with the slowness the reporter complained of (https://github.com/NVIDIA/nccl-tests/issues/228:
    # 'NCCL_P2P_LEVEL set by environment to LOC' on an NVLink A100 host, all_reduce far below the links' bandwidth)
    text = ("node:1:1 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to LOC\n"
            "node:1:1 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct\n"
            "the all_reduce bandwidth is very slow, only 20 GB/s\n")
    assert ("nccl_env_misconfig", "likely") in [a[:2] for a in answer(text)]


# --- cudaErrorCallRequiresNewerDriver (36): CUDA runtime API enum cudaError, "API call is not supported in the installed
# CUDA driver": a runtime or library newer than the driver (https://github.com/NVIDIA/nccl/issues/955,
# https://github.com/InternLM/lmdeploy/issues/708, https://github.com/lllyasviel/Fooocus/issues/95)
def test_call_requires_newer_driver_is_a_driver_too_old():
    for text in ("RuntimeError: CUDA error: API call is not supported in the installed CUDA driver",
                 "node:1:2 [0] enqueue.cc:802 NCCL WARN Cuda failure 'API call is not supported in the installed CUDA driver'",
                 "cudaErrorCallRequiresNewerDriver: API call is not supported in the installed CUDA driver"):
        assert answer(text)[0][:2] == ("driver_too_old_for_cuda", "likely"), text


# --- the first failure of a log is the cause, the later ones follow from it (NCCL's WARN chain) ---------------------
# https://github.com/NVIDIA/nccl/issues/496: the driver lacks an entry point of the CUDA 11.3 runtime; every later
# call then fails with an invalid device ordinal
WARN_CHAIN = (
    "[1,0]<stdout>:8470dd07de42:174:239 [0] enqueue.cc:802 NCCL WARN Cuda failure 'API call is not supported in the installed CUDA driver'\n"
    "[1,0]<stdout>:8470dd07de42:174:239 [0] misc/argcheck.cc:39 NCCL WARN Broadcast : invalid root 0 (root should be in the 0..-1 range)\n"
    "[1,0]<stdout>:8470dd07de42:174:239 [0] init.cc:895 NCCL WARN Cuda failure 'invalid device ordinal'\n")


def test_first_failure_ranks_first():
    ms = {m.entry.id: m for m in match(KB, WARN_CHAIN)}
    assert ms["cuda/insufficient-driver"].first_failure
    assert not ms["cuda/invalid-device-ordinal-hidden-gpu"].first_failure
    assert answer(WARN_CHAIN)[0][0] == "driver_too_old_for_cuda"
    # in the other order the invalid ordinal is the first failure
    swapped = "\n".join(reversed(WARN_CHAIN.strip().splitlines()))
    ms = {m.entry.id: m for m in match(KB, swapped)}
    assert ms["cuda/invalid-device-ordinal-hidden-gpu"].first_failure
    assert not ms["cuda/insufficient-driver"].first_failure


def test_a_second_error_counts_on_its_own_line_only():
    # the invalid ordinal of line 3 is one hit (its regex on line 3), not also "a code on line 1" (the error.cuda fact's
    # origin is the first error line for all its values)
    m = {m.entry.id: m for m in match(KB, WARN_CHAIN)}["cuda/invalid-device-ordinal-hidden-gpu"]
    assert not any("on line 1" in r for r in m.reasons), m.reasons


# --- SIGBUS in an NCCL job: /dev/shm (tmpfs) too small (https://github.com/deepspeedai/DeepSpeed/issues/2638,
# https://github.com/FlagOpen/FlagEmbedding/issues/635, https://github.com/NVIDIA/nccl/issues/983) -------------------
def test_bus_error_in_an_nccl_job_is_shm():
    text = ("cf0b62962198:378934:382525 [2] NCCL INFO 24 coll channels, 32 p2p channels, 32 p2p channels per peer\n"
            "[cf0b62962198:378934:0:382579] Caught signal 7 (Bus error: nonexistent physical address)\n")
    assert answer(text)[0][:2] == ("shm_exhausted", "possible")
    text = ("Bus error: nonexistent physical address\n"
            "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -7) local_rank: 0 (pid: 53138) of binary: /usr/bin/python\n")
    assert answer(text)[0][0] == "shm_exhausted"


def test_pcie_bus_error_and_a_bare_bus_error_are_not_shm():
    # the kernel's AER line says "PCIe Bus Error" (drivers/pci/pcie/aer.c): no signal
    aer = "pcieport 0000:00:01.0: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)\nNCCL INFO Init COMPLETE"
    assert "shm_exhausted" not in [a[0] for a in answer(aer)]
    # a bus error with no GPU job named: a candidate at most
    assert [a for a in alarms("Bus error (core dumped)") if a[0] == "shm_exhausted"] == []


# --- a CUDA that cannot start is the cause wherever NCCL meets it (codes.CUDA_UNUSABLE) ------------------------------
# https://github.com/NVIDIA/nccl/issues/1029: the workers' CUDA was not set up; NCCL's first CUDA call, in nvls.cc, fails
NVLS_INIT_ERROR = ("worker-1:2918:4483 [4] transport/nvls.cc:245 NCCL WARN Cuda failure 'initialization error'\n"
                   "worker-1:2918:4483 [4] NCCL INFO init.cc:872 -> 1\n")


def test_cuda_that_cannot_start_is_no_transport_failure():
    assert "nvls_multicast_failure" not in [a[0] for a in alarms(NVLS_INIT_ERROR)]
    # the same regex on an NVLS failure of its own (https://github.com/NVIDIA/nccl/issues/1788)
    own = "node004:27907:27907 [1] transport/nvls.cc:254 NCCL WARN Cuda failure 401 'the operation cannot be performed in the present state'\n"
    assert answer(own)[0][0] == "nvls_multicast_failure"
    # and an unusable CUDA goes to the entry that lists its error: 802 on an NVSwitch host
    text = "node:1:1 [0] transport/nvls.cc:245 NCCL WARN Cuda failure 'system not yet initialized'\n"
    assert answer(text)[0][0] == "fabric_manager_not_running"


# --- a message several causes share says "one of them" (the shared-code rule for messages) --------------------------
# CUDA's 217 message alone (https://github.com/ggml-org/llama.cpp/issues/3230: a program enabling access it was told is
# unavailable; the same line comes from GeForce cards, VMs, pairs across sockets)
MSG_217 = "CUDA error 217 at ggml-cuda.cu:6292: peer access is not supported between these two devices"


def test_a_shared_message_alone_is_one_of_several():
    assert alarms(MSG_217) == []
    ms = match(KB, MSG_217)
    assert any(m.shared_line for m in ms)
    # its candidates are still the causes of 217, ahead of candidates on shared words
    assert {"p2p_unsupported_topology", "p2p_unsupported_consumer_gpu", "vm_p2p_unavailable"} & {a[0] for a in answer(MSG_217)[:3]}


def test_the_shared_message_with_its_setup_is_offered():
    # the same line beside the setup that decides: two GeForce cards
    text = ("Device 0: NVIDIA GeForce RTX 4090\nDevice 1: NVIDIA GeForce RTX 4090\n" + MSG_217)
    top = answer(text)[0]
    assert top[0] == "p2p_unsupported_consumer_gpu" and top[1] in ("likely", "possible")


# --- an informational line is no failure (NCCL INFO, glog "I") without a complaint beside it ------------------------
# https://github.com/sgl-project/sglang/issues/565: NCCL set up over SHM and connected; the thread's failure was elsewhere
P2P_DISABLED_INFO = (
    "ip-172-16-1-166:32494:32647 [1] NCCL INFO P2P is disabled between connected GPUs 1 and 0. You can repress this message with NCCL_IGNORE_DISABLED_P2P=1.\n"
    "ip-172-16-1-166:32494:32647 [1] NCCL INFO Channel 00 : 1[1] -> 0[0] via SHM/direct/direct\n"
    "ip-172-16-1-166:32496:32645 [3] NCCL INFO Connected all trees\n")
# https://github.com/tensorflow/tensorflow/issues/231: TensorFlow logs it at INFO and goes on without peer access
TF_CANNOT_ENABLE_INFO = (
    "I tensorflow/core/common_runtime/gpu/gpu_init.cc:45] cannot enable peer access from device ordinal 0 to device ordinal 1\n"
    "I tensorflow/core/common_runtime/gpu/gpu_init.cc:112] DMA: 0 1 \n")


def test_info_lines_alone_offer_no_entry():
    assert alarms(P2P_DISABLED_INFO) == []
    assert alarms(TF_CANNOT_ENABLE_INFO) == []
    # still candidates: the line says what would explain a complaint
    assert "p2p_unsupported_topology" in [a[0] for a in answer(P2P_DISABLED_INFO)[:3]]


def test_info_lines_beside_a_complaint_are_offered():
    text = P2P_DISABLED_INFO + "the all_reduce is very slow, only 3 GB/s busbw\n"
    assert [a for a in alarms(text) if a[0] == "p2p_unsupported_topology"]
    # the WARN form of the same TensorFlow failure is an error line of its own (gpu_device.cc EnablePeerAccess)
    warn = "W tensorflow/core/common_runtime/gpu/gpu_device.cc:123] Unable to enable peer access between device ordinals 0 and 1"
    assert alarms(warn)


# --- a generic CUDA error (codes.CUDA_GENERIC) is every program bug's message -----------------------------------------
# https://github.com/torch/cutorch/issues/239: cutorch's multi-GPU copy assumed peer access (no NCCL, no Blackwell)
ILLEGAL_ONLY = ("|  ==> multi_gpu_copy_noncontigcuda runtime error (77) : an illegal memory access was encountered at "
                "/tmp/luarocks_cutorch-scm-1-4103/cutorch/lib/THC/THCStorage.c:122\n")


def test_a_generic_cuda_message_alone_offers_no_entry():
    assert alarms(ILLEGAL_ONLY) == []


def test_a_generic_cuda_message_with_the_entrys_conditions_is_offered():
    # a constructed text holding the entry's own conditions (kb/nccl__blackwell-pcie-illegal-access-512k.json: NCCL
    # 2.26/2.27 and a Blackwell workstation GPU) beside the same generic message
    text = ("NCCL version 2.26.2+cuda12.8\nDevice 0: NVIDIA RTX PRO 6000 Blackwell Workstation Edition\n"
            "Failed: Cuda error 'an illegal memory access was encountered'\n")
    assert ("nccl_version_bug" in [a[0] for a in alarms(text)])
