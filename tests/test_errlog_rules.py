"""Rules for errors and logs (third round of issue 22): each on real lines (source URL beside them) and
on the healthy or unrelated lines it must leave alone. Each test fails when its rule is taken out."""

from p2ptop.evidence import read_text
from p2ptop.knowledge.codes import codes_in_line, cuda_error

from .kbtools import answer, alarms, top3, bundled_kb

KB = bundled_kb()


# --- TensorFlow's informational peer lines -------------------------------------------------------------------------
# gpu_device.cc logs these with LOG(INFO) for every pair without P2P while it builds the DMA matrix, on healthy hosts
# (https://github.com/mozilla/DeepSpeech/issues/661, https://github.com/Fyusion/LLFF/issues/13).
TF_INFO = ("2017-06-28 16:04:54.002462: I tensorflow/core/common_runtime/gpu/gpu_device.cc:779] Peer access not supported between device ordinals 0 and 3\n"
           "2017-06-28 16:04:54.002509: I tensorflow/core/common_runtime/gpu/gpu_device.cc:779] Peer access not supported between device ordinals 1 and 2\n"
           "2017-06-28 16:04:54.004771: I tensorflow/core/common_runtime/gpu/gpu_device.cc:908] DMA: 0 1 2 3 \n"
           "2017-06-28 16:04:54.004792: I tensorflow/core/common_runtime/gpu/gpu_device.cc:918] 0:   Y Y N N \n")


def test_tensorflow_info_peer_lines_are_no_failure():
    assert alarms(TF_INFO) == []


def test_tensorflow_peer_access_errors_still_name_the_entry():
    # the Internal error TensorFlow raises when enabling peer access fails (gpu_device.cc EnablePeerAccess)
    text = "tensorflow.python.framework.errors_impl.InternalError: Unable to enable peer access between device ordinals 0 and 1, status: CUDA_ERROR_TOO_MANY_PEERS"
    assert "tensorflow/gpu-peer-access-error" in [a[3] for a in answer(text)]


# --- Fabric Manager ------------------------------------------------------------------------------------------------
# https://github.com/dstackai/dstack/issues/2348: the journal line as stored, cut after "don'"
FM_CUT = ("Feb 24 09:28:18 ip-172-31-92-157 systemd[1]: Starting NVIDIA fabric manager service...\n"
          "Feb 24 09:28:28 ip-172-31-92-157 nv-fabricmanager[1507]: fabric manager NVIDIA GPU driver interface version 535.183.01 don'")
# https://github.com/NVIDIA/gpu-operator/issues/544
FM_FULL = ("nv-fabricmanager[3228]: fabric manager NVIDIA GPU driver interface version 530.30.02 don't match with driver "
           "version 530.41.03. Please update with matching NVIDIA driver package.")
# https://github.com/dstackai/dstack/issues/2348 (PyTorch's wording of 802)
TORCH_802 = ("/opt/conda/envs/workflow/lib/python3.9/site-packages/torch/cuda/__init__.py:129: UserWarning: CUDA initialization: "
             "Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that "
             "might have already set an error? Error 802: system not yet initialized (Triggered internally at "
             "/pytorch/c10/cuda/CUDAFunctions.cpp:109.)\n  return torch._C._cuda_getDeviceCount() > 0\nCUDA available: False")


def test_fm_version_mismatch_read_when_the_line_is_cut():
    for text in (FM_CUT, FM_FULL):
        got = answer(text)
        assert got and got[0][3] == "fabric-manager/version-mismatch" and got[0][1] == "likely", got[:2]


def test_802_names_both_fabric_manager_causes_not_running_first():
    alone = TORCH_802.rsplit("\n", 1)[0]  # the error without the script's "CUDA available: False"
    got = [(a[3], a[1]) for a in answer(alone)]
    ids = [i for i, _ in got[:3]]
    assert ids[0] == "fabric-manager/not-running-system-not-initialized"
    assert ("fabric-manager/version-mismatch", "unsure") in got[:3]  # a shared code: named, never offered on it alone
    # "CUDA available: False" (an environment report's line, read since the eleventh session) is a symptom of its own, no
    # device: the entries it triggers rise, Fabric Manager not running stays first
    with_line = [a[3] for a in answer(TORCH_802)]
    assert with_line[0] == "fabric-manager/not-running-system-not-initialized"


def test_fm_version_regex_needs_the_verb_after_the_version():
    # FM's start-up line naming the interface version without the mismatch verb is no mismatch
    text = "nv-fabricmanager[1]: fabric manager NVIDIA GPU driver interface version 550.54.15 loaded"
    assert all(a[3] != "fabric-manager/version-mismatch" for a in answer(text))


# --- nvidia-peermem's harmless line ------------------------------------------------------------------------------
# https://github.com/Mellanox/nv_peer_memory/issues/120: the maintainer calls the line harmless
PEERMEM = "[25033.266922] nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, skipping further processing"


def test_peermem_invalid_context_is_named_but_benign():
    got = answer(PEERMEM)
    assert got and got[0][3] == "driver/peermem-invalid-context-n4272659" and got[0][2] is True
    assert alarms(PEERMEM) == []


# --- NCCL's ring check (src/graph/rings.cc) --------------------------------------------------------------------------
RING_1020 = "[7] graph/rings.cc:38 NCCL WARN Error : ring 0 does not loop back to start (13 != 15)."  # NVIDIA/nccl#1020
RING_577 = ("52: ip-0A0C04E3:76285:76947 [4] graph/rings.cc:38 NCCL WARN Error : ring 0 does not loop back to start (48 != 52)\n"
            "52: ip-0A0C04E3:76285:76947 [4] NCCL INFO graph/connect.cc:311 -> 3 \n")  # NVIDIA/nccl#577


def test_ring_check_names_a_bug_and_the_topology_variables():
    for text in (RING_1020, RING_577):
        classes = top3(text)
        assert classes[:2] == ["nccl_version_bug", "nccl_env_misconfig"], classes


def test_ring_check_with_a_topology_variable_set_puts_the_variables_first():
    text = "h:1:1 [0] NCCL INFO NCCL_HOSTID set by environment to node-a\n" + RING_1020
    assert top3(text)[0] == "nccl_env_misconfig"


def test_ring_lines_of_a_healthy_init_are_not_the_ring_check():
    healthy = ("h:1:2 [0] NCCL INFO Channel 00/02 :    0   1\nh:1:2 [0] NCCL INFO Connected all rings\n"
               "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
               "h:1:2 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/CUMEM/read\n"
               "h:1:2 [0] NCCL INFO ncclCommInitRank comm 0x55 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1b000 commId 0x1 - Init COMPLETE")
    assert alarms(healthy) == []


# --- the driver's PCIe mailbox P2P path (kern_bus_gm200.c) -----------------------------------------------------------
# https://github.com/aikitoria/open-gpu-kernel-modules/issues/7
MAILBOX = ("2025-11-12T08:16:18.303635+00:00 aiserver kernel: NVRM: nvAssertFailedNoLog: Assertion failed: ((base & RM_PAGE_MASK) == 0) @ kern_bus.c:295\n"
           "2025-11-12T08:16:18.303652+00:00 aiserver kernel: NVRM: nvAssertFailedNoLog: Assertion failed: remoteWMBoxLocalAddr != ~0ULL @ kern_bus_gm200.c:89")
# https://github.com/NVIDIA/open-gpu-kernel-modules/issues/934
STATIC_BAR1 = "[203935.404759] NVRM: kbusIsStaticBar1Supported_TU102: BAR1 size 266338304 is not large enough to map FB size23196598272"


def test_mailbox_assertions_and_static_bar1_message_say_bar1_too_small():
    for text in (MAILBOX, STATIC_BAR1):
        assert top3(text)[0] == "bar1_too_small"


def test_nvrm_lines_are_a_gpu_trace():
    assert read_text(MAILBOX.splitlines()[1]).gpu_related
    assert not read_text("kernel: usb 1-1: new high-speed USB device number 2 using xhci_hcd").gpu_related


def test_other_nvrm_assertions_are_not_the_mailbox():
    # https://github.com/NVIDIA/open-gpu-kernel-modules/issues/748: an assertion of another subsystem
    text = "NVRM: nvAssertFailedNoLog: Assertion failed: 0 @ mapping_cpu.c:127"
    assert "bar1_too_small" not in [a[0] for a in alarms(text)]


# --- 222: PTX newer than the driver ------------------------------------------------------------------------------------
def test_unsupported_ptx_toolchain_is_a_driver_too_old():
    # https://github.com/li-plus/chatglm.cpp/issues/12 (upgrading the driver fixed it)
    text = "CUDA error 222 at xxxxxx/chatglm.cpp/third_party/ggml/src/ggml-cuda.cu:1835: the provided PTX was compiled with an unsupported toolchain."
    assert top3(text)[0] == "driver_too_old_for_cuda"
    # the driver API's name, as a Rust binding prints it (https://github.com/chelsea0x3b/llama-dfdx/issues/6)
    text = ("thread 'main' panicked at 'called `Result::unwrap()` on an `Err` value: Driver(DriverError("
            "CUDA_ERROR_UNSUPPORTED_PTX_VERSION, \"the provided PTX was compiled with an unsupported toolchain.\"))'")
    assert top3(text)[0] == "driver_too_old_for_cuda"
    assert ("unsupportedptxversion", "error 222") in list(codes_in_line("cuda error 222 at ggml-cuda.cu:1835"))
    assert cuda_error(222) == (222, "cudaErrorUnsupportedPtxVersion")


def test_unrelated_cuda_errors_raise_no_alarm():
    for text in ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 23.69 GiB total capacity)",
                 "RuntimeError: CUDA error: operation not permitted when stream is capturing",
                 "node:1:2 [0] misc/ibvwrap.cc:160 NCCL WARN Call to ibv_reg_mr failed"):
        assert alarms(text) == [], text


# --- wrapped pastes (matcher.Log.wrapped_line) -----------------------------------------------------------------------
def _wrap(text, width, cut_words):
    import textwrap
    if cut_words:  # a terminal's copy: the line cut at the width, mid-word, nothing lost
        return "\n".join(line[i:i + width] for line in text.splitlines() for i in range(0, max(len(line), 1), width))
    return "\n".join(textwrap.fill(line, width) for line in text.splitlines())  # a reflowed paragraph: the space lost


def test_a_wrapped_message_still_matches_its_entry():
    for width in (64, 80):
        for cut in (True, False):
            got = answer(_wrap(FM_FULL, width, cut))
            assert got and got[0][3] == "fabric-manager/version-mismatch", (width, cut, got[:2])
            got = answer(_wrap(MAILBOX, width, cut))
            assert got and got[0][0] == "bar1_too_small", (width, cut, got[:2])


def test_records_of_their_own_are_not_joined():
    from p2ptop.knowledge.matcher import Log
    import re
    # two NCCL records, each with half of a message: a new record (host:pid:tid, a timestamp) is never a continuation
    log = Log("gpu-a:100:201 [0] NCCL INFO the first record of this log, long enough to have been wrapped: fabric manager\n"
              "gpu-a:100:201 [0] NCCL INFO NVIDIA GPU driver interface version 550.54.15 don't match with driver version\n"
              "2024-05-01 10:00:00 fabric manager NVIDIA GPU driver interface version 1 and a line long enough to wrap\n"
              "2024-05-01 10:00:01 don't match with driver version 2")
    assert log.first_line(re.compile("fabric manager NVIDIA GPU driver interface version", re.I)) == 3
    assert log.first_line(re.compile("fabric manager NVIDIA GPU driver interface version \\S+ don", re.I)) is None


def test_short_lines_are_not_joined():
    from p2ptop.knowledge.matcher import Log
    import re
    log = Log("peer access is not\nsupported between these two devices")  # a short first line: no wrap
    assert log.first_line(re.compile("peer access is not supported between", re.I)) is None


# --- NCCL results (nccl/log.py, evidence/errors.py) ---------------------------------------------------------------
def test_a_cuda_failure_on_an_nccl_line_is_an_unhandled_cuda_error():
    # https://github.com/vllm-project/vllm/issues/4411: CUDACHECK's WARN; 'invalid argument' is CUDA's (cudaErrorInvalidValue)
    text = "00127-desktop:212030:212030 [0] transport.cc:154 NCCL WARN Cuda failure 'invalid argument'\n" \
           "00127-desktop:212030:212030 [0] NCCL INFO init.cc:1032 -> 1"
    facts = read_text(text).facts_by_subject()["host"]
    assert facts["error.nccl"] == "ncclUnhandledCudaError" and facts["error.cuda"] == "cudaErrorInvalidValue"
    from p2ptop.nccl.log import read_nccl_log
    assert [m.result for m in read_nccl_log(text).messages][:1] == ["ncclUnhandledCudaError"]


def test_ncclgeterrorstring_texts_in_a_framework_error_are_still_read():
    text = "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, invalid argument, NCCL version 2.14.3"
    assert read_text(text).facts_by_subject()["host"]["error.nccl"] == "ncclInvalidArgument"
    text = "RuntimeError: NCCL error in: /pytorch/ProcessGroupNCCL.cpp:825, internal error, NCCL version 2.7.8"
    assert read_text(text).facts_by_subject()["host"]["error.nccl"] == "ncclInternalError"


# --- Intel IOMMU faults (drivers/iommu/intel/dmar.c dmar_fault_do_one) ---------------------------------------------
def test_dmar_faults_in_every_kernel_format_name_the_iommu_entry():
    lines = (
        # 5.x and later (https://bugzilla.kernel.org/show_bug.cgi?id=214259)
        "[    1.587809] DMAR: [DMA Write NO_PASID] Request device [05:00.0] fault addr 0x69974000 [fault reason 0x05] PTE Write access is not set",
        # the same with the bus written in hex (5.14-rc kernels)
        "[    3.148561] DMAR: [DMA Write NO_PASID] Request device [0x04:0x00.0] fault addr 0x69974000 [fault reason 0x05] PTE Write access is not set",
        # before 5.x
        "[    3.737790] DMAR: [DMA Write] Request device [04:00.0] PASID ffffffff fault addr 69974000 [fault reason 05] PTE Write access is not set",
    )
    for line in lines:
        got = [(a[3], a[1]) for a in answer(line)]
        assert got[0] == ("iommu/p2p-hang-or-corruption", "possible"), (line, got[:2])


def test_nvrm_bar1_unassigned_is_bar1():
    # NVIDIA's driver on a BAR1 the firmware left unassigned (quoted in the Arch wiki's PCI passthrough examples,
    # https://wiki.archlinux.org/title/PCI_passthrough_via_OVMF/Examples)
    text = ("NVRM: This PCI I/O region assigned to your NVIDIA device is invalid:\n"
            "NVRM: BAR1 is 0M @ 0x0 (PCI:0000:0a:00.0)\nnvidia: probe of 0000:0a:00.0 failed with error -1")
    assert top3(text)[0] == "bar1_too_small"
    # a BAR1 with a size is no such line
    assert "bar1_too_small" not in [a[0] for a in alarms("NVRM: BAR1 is 256M @ 0xe0000000 (PCI:0000:0a:00.0)")]


# --- ncclUnhandledCudaError only wraps the CUDA error named beside it (matcher WRAPPER_RESULTS) ----------------------
def test_the_cuda_error_behind_unhandled_cuda_error_decides():
    # https://github.com/hiyouga/LlamaFactory/issues/8968: 802 behind the NCCL result is no cuMem host-SHM 217
    text = ("[rank0]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:77, "
            "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.25.1\n"
            "[rank0]: ncclUnhandledCudaError: Call to CUDA function failed.\n[rank0]: Last error:\n"
            "[rank0]: Cuda failure 802 'system not yet initialized'")
    got = answer(text)
    assert got[0][0] == "fabric_manager_not_running"
    assert "nccl/cumem-host-shm-217" not in [a[3] for a in got]
    # https://github.com/hiyouga/EasyR1/issues/579: the same result with 217 behind it still names the cuMem entry
    text = ("(Runner pid=16018) ncclUnhandledCudaError: Call to CUDA function failed.\n(Runner pid=16018) Last error:\n"
            "(Runner pid=16018) Cuda failure 217 'peer access is not supported between these two devices'")
    assert "nccl/cumem-host-shm-217" in [a[3] for a in answer(text)[:3]]
    # the NCCL result alone (no CUDA error named) still counts for the entries that list it
    text = "ncclUnhandledCudaError: Call to CUDA function failed."
    assert "nccl/cumem-host-shm-217" in [a[3] for a in answer(text)]
