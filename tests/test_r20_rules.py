"""Rules of 2026-11-29 (eighth session), each general, none for one paste. The texts here are written from the
programs' format strings, not taken from the evaluation corpus.

Before fresh25 was opened, from source probes (tests/data/source_probes.json, round 20):
1. NCCL's ncclMemAlloc line "P2P not supported between GPU%d and GPU%d" (src/allocator.cc) is a decision of the one NCCL
   reader and gives that pair p2p.read NOT_SUPPORTED; CuPy's "Peer access is unavailable between these devices"
   (cupy/_core/_kernel.pyx) likewise, for the two devices it names.
2. A CUDA error under PyTorch's rebuild_cuda_tensor / _new_shared_cuda frames came from cudaIpcOpenMemHandle
   (error.cuda_call), which the CUDA-IPC entry triggers on (in doubt when CUDA says 217: the pair, not the boundary).
3. Further messages of their own entries: symmetric memory's "Failed to send fd" (IPC), NCCL's "Failed to multicast-bind
   user buffer" (NVLS), CUDA.jl's "was unexpectedly already enabled" (704), gdrcopy's "No address space left for BAR1
   mapping" (BAR1; gdrdrv/gdrcopy/GPUDirect/BAR1/NVLSM count as GPU words). NCCL 2.29's NVLS out-of-memory is possible
   without its version, likely with it.
From source probes, round 21 (MPI/HPC and communication libraries; still before fresh26 was judged):
7. Open MPI smcuda's "--> ACCESS=0" / "Not sending GPU IPC ACK, no P2P support" is the peer query saying no; a CUDA call
   "failed with error N" / "returned N" names CUDA's error N (NVSHMEM's "cudaIpcOpenMemHandle failed with error 217");
   NVSHMEM's "file:function:line:" error lines are errors; userbuffers' socket (/tmp/ub-ipc-socket-*) is a GPU word.
8. Further messages: UCX's "is in a different pid namespace" and Open MPI's cuIpcOpenEventHandle help text (IPC), MSCCL++'s
   "NVLS is not supported on this device" (multicast), Userbuffers' C++ "CUDA Error: operation not supported" at
   create_communicator (TE multicast), DeepSpeed's "Unable to proceed, no GPU resources available" (no device) and "No
   slot 'N' specified on host" (invalid ordinal); new entry deepep/pcie-gpus-need-nvlink-between-pairs (DeepEP's
   check_nvlink_connections asserts). A 217 from an IPC open alone makes nccl/ipc-peer-gpu-not-visible possible, not likely.
From source probes, round 22 (node tools and the container/cluster GPU stack; after fresh26 was judged):
9. DCGM: every message also read from dcgmi's wrapped table cells, joined; the P2P test's newer wording ("wrote data to
   GPU N over NVLink"); the effective BER over threshold; the fabric training and probe state (host.fabric_manager,
   gpu.fabric_state). NVML's numeric fabric state in a library's line (UCX, the DRA driver). Xids as the device plugin
   ("Xid=79") and DCGM exporter (err_code="74") print them. nvbandwidth 0.8's bare "Waived: " (peer pairs filter), simpleIPC's
   "not peer capable", nccl-tests' "Invalid number of GPUs" (fewer GPUs visible). New entry container/toolkit-mode-cdi-
   or-hook-refused; NVRM's resized-BAR1 and probe-not-called lines; nvbandwidth's multicast CU_ASSERT. The GeForce
   P2P-verification entry is in doubt on non-GeForce cards; the peer-memory entry is excluded when CUDA names another
   error for the copy.
From source probes, round 23 (training and serving frameworks):
10. More GPUs asked for than the process sees, in the frameworks' own checks (Lightning, TGI, exllamav2, LMDeploy's
    parallel config where tp exceeds the devices): fewer GPUs; none visible (Lightning, ollama's discovery): no device.
    ollama's driver/library mismatch (803) and "NVIDIA driver too old"; Accelerate's RTX 4000 old-driver P2P warning;
    Megatron's multimem "requires a Hopper+ GPU with NVLink"; SGLang's POSIX-fd exchange and Apex's peer_memory IPC.
From source probes, round 24 (a sweep of NCCL's own WARN and fallback lines, 2.18 to 2.30):
11. NCCL 2.30 prints the function after the location ("transport/p2p.cc:309 (p2pSendConnect) NCCL WARN", "file:line
    (func) -> N"): both NCCL readers and the KB's location regexes take it. New entries nccl/mnnvl-imex-not-working
    (IMEX channel or daemon, src/mnnvl.cc) and nccl/setting-not-usable (an invalid value, SHM locality, a topology or
    graph file NCCL cannot use). NCCL's symmetric-memory multicast lines join the multicast entry, which says multicast
    is absent (so GPUs before Hopper confirm it); NCCL's driver-too-old lines (one-sided RMA, symmetric kernels skipped);
    NVML's "Driver Not Loaded"; "Mismatched NCCL version detected" (the duplicate-GPU entry in doubt on it); the shm.cc
    217 entry no longer likely on the codes alone; WARNs of no transport/path and unsatisfied registration are failures,
    "falling back to simple order" is not.
From source probes, round 25 (vLLM, SGLang and PyTorch's distributed Python, from their wheels):
12. The serving frameworks' symmetric-memory and MNNVL multicast messages join the multicast entry; vLLM's /dev/shm check
    and SGLang's fallback join the /dev/shm entry; more GPUs asked for than seen (vLLM's placement group and DP rank,
    PyTorch elastic's virtual local rank, init_process_group's device_id); symmetric memory, MNNVL, NVLS and VLLM_*/SGLANG_*
    variables are GPU words; torchrun's path form (torch/distributed/...) is a multi-process job of the SIGBUS entry.
From source probes, round 26 (GPUDirect RDMA: NCCL's network side, aws-ofi-nccl, peer-memory modules, gdrcopy, UCX):
13. NVRM's "dma-buf attach failed: PCI topology not supported" is the platform refusing peer access; UCX's ERROR lines,
    and its WARN and gdrcopy's kernel lines that say something failed, are errors; an NCCL WARN "not compiled with"
    support is a failure. The BAR1 entry says its peer may be a NIC (one GPU does not rule it out).
From source probes, round 27 (Ray, JAX, TensorFlow, Paddle, cuda-python, pynvml, from their wheels):
14. More "fewer GPUs" checks (Ray's collective tensor list and raylet, TensorFlow's visible device index and
    tf.distribute, Paddle's launcher) and "none visible" (JAX's unknown 'gpu' backend, Ray's NCCL actor, RLlib's "Found 0
    GPUs"); pynvml's DriverNotLoaded / LibRmVersionMismatch / Unknown exceptions join their entries (pynvml is a GPU
    word); cuda-python's driver-major warning is a driver too old; Paddle's NCCL >= 2.8.4 check ties trouble to NCCL's
    release.
From source probes, round 28 (Slurm, HAMi, Volcano, the device plugin): Slurm's "gres/gpu count too low" and kin are fewer
    GPUs; HAMi-core's "cuInit failed:100" names CUDA's 100; the device plugin's "unknown device" allocation refusal and
    NVML's GPU_IS_LOST join their entries; HAMi's asymmetric-NVLink warning the links-inactive entry.
After opening fresh25 (labelled so):
4. NVLSM's own failure lines (libibumad's "is ib_umad module loaded?") offer the NVLSM entry; GPUs older than Blackwell
   exclude it (NVLink 5 and NVLSM come with Blackwell).
5. Fewer GPUs seen, said by naming the one seen ("only the RTX A6000 is recognized") or as some missing ("some CUDA devices
   are not shown").
6. Symmetric memory failing on GPUs without CUDA multicast (kb torch/symmetric-memory-needs-multicast, FlashInfer's
   SymmDeviceMemory messages); the GeForce symmetric-memory entry is excluded for data-centre GPUs.
"""

from __future__ import annotations

from p2ptop.evidence import read_text

from .kbtools import answer, explained
from .kbtools import text_facts as _facts

PAIR_217 = {"p2p_unsupported_topology", "p2p_unsupported_consumer_gpu", "vm_p2p_unavailable"}


# ---- 1. the peer-access query said no, in NCCL's and CuPy's words ----------------------------------------------------

def test_ncclmemalloc_says_a_pair_has_no_p2p():
    t = ("node7:3301:3301 [2] NCCL INFO P2P not supported between GPU2 and GPU0\n"
         "node7:3301:3301 [2] NCCL INFO P2P not supported between GPU2 and GPU3\n")
    f = _facts(t)
    assert f["pair:0-2"]["p2p.read"] == "NOT_SUPPORTED"
    assert f["pair:2-3"]["p2p.read"] == "NOT_SUPPORTED"
    assert "pair:0-3" not in f
    assert {c for c, _ in explained(t)[:3]} & PAIR_217


def test_the_reference_nccl_reader_reads_the_same_decision():
    from p2ptop.nccl.log import read_nccl_log

    from .nccl_log_reference import read_nccl_log as reference_read

    t = "h:1:1 [0] NCCL INFO P2P not supported between GPU0 and GPU1\n"
    ours = [(d.kind, d.devs) for d in read_nccl_log(t).decisions]
    ref = [(d.kind, d.devs) for d in reference_read(t).decisions]
    assert ours == ref == [("p2p_unsupported", (0, 1))]


def test_cupys_peer_unavailable_names_the_pair():
    t = ("  File \"cupy/_core/_kernel.pyx\", line 140, in cupy._core._kernel._check_peer_access\n"
         "ValueError: The device where the array resides (3) is different from the current device (1). "
         "Peer access is unavailable between these devices.\n")
    assert _facts(t)["pair:1-3"]["p2p.read"] == "NOT_SUPPORTED"
    assert {c for c, _ in explained(t)[:3]} & PAIR_217


def test_cupys_warning_that_peer_access_was_activated_is_no_fault():
    t = ("PerformanceWarning: The device where the array resides (1) is different from the current device (0). "
         "Peer access has been activated automatically.")
    assert not any(conf in ("likely", "possible") for _c, conf in explained(t))
    assert all("p2p.read" not in v for v in _facts(t).values())


# ---- 2. PyTorch's CUDA-IPC frames name the call -----------------------------------------------------------------------

_IPC_TRACE = ("Traceback (most recent call last):\n"
              "  File \"/usr/lib/python3.11/multiprocessing/queues.py\", line 122, in get\n"
              "    return _ForkingPickler.loads(res)\n"
              "  File \"/opt/venv/lib/python3.11/site-packages/torch/multiprocessing/reductions.py\", line 181, in rebuild_cuda_tensor\n"
              "    storage = storage_cls._new_shared_cuda(\n"
              "RuntimeError: CUDA error: {msg}\n")


def test_an_error_under_rebuild_cuda_tensor_came_from_cudaipcopenmemhandle():
    t = _IPC_TRACE.format(msg="invalid resource handle")
    assert _facts(t)["host"]["error.cuda_call"] == "cudaIpcOpenMemHandle"
    first = [(c, conf) for c, conf in explained(t) if conf in ("likely", "possible")]
    assert first and first[0][0] == "cuda_ipc_cross_boundary"


def test_217_from_cudaipcopenmemhandle_leaves_the_boundary_in_doubt():
    t = _IPC_TRACE.format(msg="peer access is not supported between these two devices")
    offered = [c for c, conf in explained(t) if conf in ("likely", "possible")]
    assert "cuda_ipc_cross_boundary" not in offered
    assert {c for c, _ in explained(t)[:3]} & PAIR_217


def test_a_python_frame_far_above_the_error_is_not_its_call():
    t = ("  File \"x.py\", line 3, in rebuild_cuda_tensor\n" + "  File \"y.py\", line 9, in step\n" * 14 +
         "RuntimeError: CUDA error: invalid argument\n")
    assert "error.cuda_call" not in _facts(t)["host"]


# ---- 3. more messages of their entries ------------------------------------------------------------------------------

def test_symmetric_memorys_fd_exchange_failing_is_an_ipc_boundary():
    t = ("[rank0]: RuntimeError: Failed to send fd: Connection refused\n"
         "[rank0]: Exception raised from send_fd at /pytorch/torch/csrc/distributed/c10d/symm_mem/"
         "CUDASymmetricMemoryUtils.cpp:127 (most recent call first):\n")
    assert explained(t)[0] == ("cuda_ipc_cross_boundary", "possible")


def test_nccls_multicast_bind_of_a_user_buffer():
    t = "dgx:1:1 [5] NCCL INFO Failed to multicast-bind user buffer: CUDA error 999 'unknown error'"
    assert explained(t)[0][0] == "nvls_multicast_failure"


def test_cuda_jl_words_peer_access_already_enabled():
    t = "┌ Warning: Peer-to-peer access between CuDevice(2) and CuDevice(3) was unexpectedly already enabled"
    assert explained(t)[0] == ("peer_access_already_enabled", "likely")


def test_gdrcopy_out_of_bar1_space_is_bar1():
    t = "[  812.4411] gdrdrv:__gdrdrv_pin_buffer:No address space left for BAR1 mapping."
    assert read_text(t).gpu_related
    assert explained(t)[0][0] == "bar1_too_small"


def test_nccl_229_nvls_out_of_memory_needs_its_version_to_be_likely():
    line = ("h:1:1 [0] transport/nvls.cc:160 NCCL WARN Failed to bind NVLink SHARP (NVLS) Multicast memory of size "
            "536870912 : CUDA error 2 'out of memory'.")
    alone = dict((e, conf) for _c, conf, _b, e in answer(line))
    with_version = dict((e, conf) for _c, conf, _b, e in answer("h:1:1 [0] NCCL INFO NCCL version 2.29.3+cuda12.9\n" + line))
    assert alone["nccl/nvls-multicast-slots-exhausted-2-29"] == "possible"
    assert with_version["nccl/nvls-multicast-slots-exhausted-2-29"] == "likely"


# ---- 4. NVLSM (after opening fresh25) ---------------------------------------------------------------------------------

_NVLSM = "node3: nvlsm: ibwarn: [7] umad_init: can't read ABI version from /sys/class/infiniband_mad/abi_version (No such file or directory): is ib_umad module loaded?"


def test_nvlsms_own_failure_line_offers_the_nvlsm_entry():
    ids = [(e, conf) for _c, conf, _b, e in answer(_NVLSM)]
    assert ids[0] == ("fabric-manager/nvlsm-missing-nvlink5", "likely")


def test_an_umad_warning_of_another_tool_is_not_nvlsm():
    t = "ibwarn: [7] umad_init: can't read ABI version from /sys/class/infiniband_mad/abi_version: is ib_umad module loaded?"
    assert "fabric-manager/nvlsm-missing-nvlink5" not in [e for *_x, e in answer(t)]


def test_hopper_gpus_rule_the_nvlsm_entry_out():
    t = ("GPU: 8 x NVIDIA H100 80GB HBM3 with 4 NVSwitches\n"
         "Job for nvidia-fabricmanager.service failed because the control process exited with error code.\n")
    ids = [e for *_x, e in answer(t)]
    assert "fabric-manager/not-running-system-not-initialized" in ids
    assert "fabric-manager/nvlsm-missing-nvlink5" not in ids


# ---- 5. fewer GPUs seen, in more words (after opening fresh25) ---------------------------------------------------------

def test_the_one_gpu_seen_named_instead_of_counted():
    for t in ("nvidia-smi lists two cards but only the RTX A6000 is recognized by the app",
              "We have two GPUs installed, yet only my second device is detected",
              "Some CUDA devices are not shown in the settings"):
        assert _facts(t)["host"].get("symptom.gpus_missing") is True, t
        assert explained(t)[0][0] == "device_not_visible", t


def test_only_the_first_of_something_else_is_not_a_missing_gpu():
    for t in ("only the first epoch is shown in the log on my GPU", "only the last error is seen on GPU 1"):
        assert "symptom.gpus_missing" not in _facts(t).get("host", {}), t


# ---- 6. symmetric memory without multicast (after opening fresh25) ----------------------------------------------------

def test_flashinfers_multicast_message():
    t = ("  File \"/usr/lib/python3/dist-packages/flashinfer/comm/mnnvl.py\", line 787, in __init__\n"
         "    raise RuntimeError(\n"
         "RuntimeError: [SymmDeviceMemory] Device does not support multicasting.")
    assert explained(t)[0] == ("nvls_multicast_failure", "likely")


_SYMM = ("torch.distributed._symmetric_memory.rendezvous(buf, group)\n"
         "RuntimeError: CUDA driver error: invalid device ordinal\n")


def test_symmetric_memory_on_geforce_cards_is_the_geforce_entry():
    ids = [(e, conf) for _c, conf, _b, e in answer("2 x NVIDIA GeForce RTX 4090\n" + _SYMM)]
    assert ids[0] == ("torch/symm-mem-no-p2p-invalid-device", "likely")


def test_symmetric_memory_on_data_centre_pcie_cards_is_not_the_geforce_entry():
    got = [(e, conf) for _c, conf, _b, e in answer("2 x NVIDIA H100 PCIe\n" + _SYMM)]
    ids = [e for e, _ in got]
    assert "torch/symm-mem-no-p2p-invalid-device" not in ids
    assert ("torch/symmetric-memory-needs-multicast", "possible") in got


def test_symmetric_memory_words_without_an_error_offer_nothing():
    t = "We use torch symmetric memory (symm_mem) for the all-reduce on 8 H100 GPUs and it is fast."
    assert "torch/symmetric-memory-needs-multicast" not in [e for _c, conf, _b, e in answer(t) if conf in ("likely", "possible")]


# ---- 7. and 8. source probes, round 21 -----------------------------------------------------------------------------

def test_open_mpi_smcuda_says_the_pair_has_no_p2p():
    t = ("[gpu-ws:04417] Analyzed GPU IPC request: myrank=0, mydev=2, peerrank=1, peerdev=3 --> ACCESS=0\n"
         "[gpu-ws:04417] Not sending GPU IPC ACK, no P2P support\n")
    assert _facts(t)["pair:2-3"]["p2p.read"] == "NOT_SUPPORTED"


def test_a_cuda_call_failing_with_a_number_names_the_error():
    assert _facts("mem_heap.cpp:1275: non-zero status: 217 cudaIpcOpenMemHandle failed with error 217")["host"][
        "error.cuda"] == "cudaErrorPeerAccessUnsupported"
    assert _facts("horovod: cudaSetDevice returned 101")["host"]["error.cuda"] == "cudaErrorInvalidDevice"
    assert "error.cuda" not in _facts("the copy failed with error 217 times in a row").get("host", {})


def test_217_from_an_ipc_open_alone_is_not_likely_one_gpu_per_process():
    t = "src/host/mem/mem_heap.cpp:1275: non-zero status: 217 cudaIpcOpenMemHandle failed with error 217"
    assert not [c for c, conf in explained(t) if conf == "likely"]
    assert {c for c, _ in explained(t)[:3]} & PAIR_217


def test_ucx_and_open_mpi_ipc_messages():
    for t in ("[1731408112.550913] [trainer-1:88 :0] cuda_ipc_cache.c:479 UCX DEBUG posix_fd import: peer pid=91 is in a "
              "different pid namespace (remote=4026532812 local=4026532707)",
              "The call to cuIpcOpenEventHandle failed. This is a unrecoverable error and will\ncause the program to abort.\n"
              "  cuIpcOpenEventHandle return value:   201\nCheck the cuda.h file for what the return value means."):
        assert explained(t)[0][0] == "cuda_ipc_cross_boundary", t


def test_userbuffers_socket_refused_is_gpu_ipc():
    t = "UDS: Sending data over socket /tmp/ub-ipc-socket-1-4e2f00aa failed : Connection refused (111)"
    assert read_text(t).gpu_related
    assert explained(t)[0][0] == "cuda_ipc_cross_boundary"


def test_multicast_lacking_in_mscclpp_and_userbuffers():
    t1 = ("what():  MSCCLPP ERROR GPU gpu_ipc_mem.cc:377 NVLS is not supported on this device (requires CUDA version >= "
          "12.3 and Linux kernel version >= 5.6.0) (mscclpp failure: InvalidUsage)")
    t2 = ("RuntimeError: /opt/te/transformer_engine/common/comm_gemm_overlap/userbuffers/userbuffers-host.cpp:254 in "
          "function create_communicator_grouped2: CUDA Error: operation not supported")
    assert explained(t1)[0][0] == "nvls_multicast_failure"
    assert [e for *_x, e in answer(t2)][0] == "transformer-engine/ub-no-cuda-multicast"


def test_deepspeeds_launcher_words_for_missing_gpus():
    assert explained("RuntimeError: Unable to proceed, no GPU resources available")[0][0] == "device_not_visible"
    assert explained("ValueError: No slot '6' specified on host 'localhost'")[0][0] == "device_not_visible"


def test_deepep_needs_nvlink_between_every_pair_of_pcie_gpus():
    for t in ("AssertionError: PCIe GPUs only have pairwise NVLink connections",
              "[rank0]: AssertionError: GPU 0 and GPU 3 are not connected via NVLink"):
        first = [(e, conf) for _c, conf, _b, e in answer(t)][0]
        assert first[0] == "deepep/pcie-gpus-need-nvlink-between-pairs" and first[1] in ("likely", "possible"), t


def test_an_nvshmem_error_exit_line_gets_an_answer():
    t = "src/host/comm/putget.cpp:nvshmemi_prepare_and_post_rma:263: [0] rma not supported on transport to pe: 1"
    assert _facts(t)["host"]["error.text"].startswith("src/host/comm/putget.cpp")
    assert explained(t)


# ---- 9. source probes, round 22 -------------------------------------------------------------------------------------

def test_dcgm_messages_wrapped_in_its_table_are_read():
    t = ("+-----  Integration  -------+------------------------------------------------+\n"
         "| pcie                      | Fail                                           |\n"
         "| Warning                   | NvSwitch 1 - Only 10 NvLinks are up out of th  |\n"
         "|                           | e expected 18 Ensure Fabric Manager is runnin  |\n"
         "|                           | g.                                             |\n"
         "+---------------------------+------------------------------------------------+\n")
    assert _facts(t)["host"]["gpu.nvlink_down"] == 8


def test_dcgm_fabric_training_and_state():
    t1 = "Warning: Fabric Manager (Cluster UUID: 0000, Clique ID: 0, Health Mask: 0): training not started."
    t2 = "GPU 2: Fabric State is In Progress (2). Fabric Manager training in progress."
    h1 = _facts(t1)["host"]
    assert h1["host.fabric_manager"] == "not running" and h1["host.nvswitch_present"] is True
    assert _facts(t2)["gpu:2"]["gpu.fabric_state"] == "IN_PROGRESS"
    assert explained(t1)[0][0] == "fabric_manager_not_running"


def test_nvml_numeric_fabric_state_in_a_librarys_line():
    t = ("Error: error creating driver: error getting fabric information from one or more devices: NVLink fabric not "
         "attached (device 0/GPU-5e6f): state=1, refusing to start")
    assert _facts(t)["host"]["gpu.fabric_state"] == "NOT_STARTED"
    assert "gpu.fabric_state" not in _facts("fabric_info: state=0 status=0").get("host", {})


def test_xids_as_the_device_plugin_and_dcgm_exporter_print_them():
    t1 = "I0611 08:14:22.481190 1 health.go:169] XidCriticalError: Xid=79 on Device=GPU-4b1e; marking device as unhealthy."
    t2 = ('DCGM_FI_DEV_XID_ERRORS{gpu="5",UUID="GPU-8c2d",modelName="NVIDIA A100-SXM4-80GB",err_code="74",'
          'err_msg="NVLINK Error"} 74')
    assert explained(t1)[0][0] == "gpu_fallen_off_bus"
    assert explained(t2)[0][0] == "nvlink_link_failure"


def test_nvbandwidth_08_waives_without_naming_the_test():
    t = ("nvbandwidth Version: v0.8\nDevice 0: NVIDIA A100 80GB PCIe (00000000:17:00)\n"
         "Device 1: NVIDIA A100 80GB PCIe (00000000:ca:00)\n\nRunning host_to_device_memcpy_ce.\n"
         "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n          0         1\n 0     24.61     24.58\n\n"
         "Waived: \nWaived: \n")
    assert _facts(t)["pair:0-1"]["p2p.read"] != "OK"
    assert {c for c, _ in explained(t)[:3]} & PAIR_217


def test_simpleipc_and_nccl_tests_say_what_the_process_cannot_see():
    assert _facts("Device 2 is not peer capable with some other selected peers, skipping")["host"]["p2p.read"] == "NOT_SUPPORTED"
    t = "# Using devices\nInvalid number of GPUs: 8 requested but only 4 were found.\n"
    assert _facts(t)["host"]["symptom.gpus_missing"] is True
    assert explained(t)[0][0] == "device_not_visible"


def test_the_container_toolkits_mode_and_cdi_refusals():
    for t in ("stderr: invoking the NVIDIA Container Runtime Hook directly (e.g. specifying the docker --gpus flag) is not "
              "supported. Please use the NVIDIA Container Runtime (e.g. specify the --runtime=nvidia flag) instead.: unknown.",
              "error modifying OCI spec: failed to inject CDI devices: unresolvable CDI devices nvidia.com/gpu=all: unknown."):
        assert [e for *_x, e in answer(t)][0] == "container/toolkit-mode-cdi-or-hook-refused", t


def test_nvrm_lines_of_bar1_and_of_gpus_another_driver_holds():
    assert explained("[    5.12] NVRM: No address space to allocate resized BAR1.")[0][0] == "bar1_too_small"
    assert explained("[    3.99] NVRM: The NVIDIA probe routine was not called for 2 device(s).")[0][0] == "device_not_visible"


def test_simplep2p_wrong_data_on_workstation_cards_is_not_a_likely_driver_regression():
    t = ("> Peer access from NVIDIA RTX A6000 (GPU0) -> NVIDIA RTX A6000 (GPU1) : Yes\n"
         "Verification error @ element 1: val = 0.000000, ref = 4.000000\nTest failed!\n")
    assert not [c for c, conf in explained(t) if conf == "likely"]
    assert "iommu_acs_p2p_broken" in [c for c, _ in explained(t)[:3]]
    geforce = t.replace("NVIDIA RTX A6000", "NVIDIA GeForce RTX 4090")
    assert explained(geforce)[0] == ("p2p_driver_regression", "likely")


def test_a_peer_copy_failing_on_an_nvlink_error_is_not_memory_the_context_cannot_access():
    t = ("GPU 2 unsuccessfully wrote data to GPU 5 over NVLink in a peer-to-peer test: Failed on cudaDeviceSynchronize "
         "after cudaMemcpyPeer (268435456 bytes): cudaErrorNvlinkUncorrectable")
    assert explained(t)[0][0] == "nvlink_link_failure"


# ---- 10. source probes, round 23 ------------------------------------------------------------------------------------

def test_frameworks_asking_for_more_gpus_than_the_process_sees():
    for t in ("lightning.fabric.utilities.exceptions.MisconfigurationException: You requested gpu: [0, 1, 2]\n But your machine only has: [0]",
              "ValueError: You requested to find 4 devices but this machine only has 2 GPUs.",
              'Error: NotEnoughCUDADevices("`sharded` is true but only found 1 CUDA devices")',
              "AssertionError: Each process is one gpu",
              " ## Error: Too many entries in gpu_split. 1 CUDA devices are available.",
              "AssertionError: no valid parallel config: dp=1, tp=4, ep=1, cp=1, device_num=None, available_devices=2"):
        assert _facts(t)["host"].get("symptom.gpus_missing") is True, t
        assert explained(t)[0][0] == "device_not_visible", t
    t = "AssertionError: no valid parallel config: dp=2, tp=2, ep=1, cp=1, device_num=None, available_devices=8"
    assert "symptom.gpus_missing" not in _facts(t).get("host", {})


def test_frameworks_seeing_no_gpu_at_all():
    for t in ("MisconfigurationException: GPUs requested but none are available.",
              "ValueError: You requested to find 2 devices but there are no visible CUDA devices on this machine.",
              'level=INFO source=gpu.go:602 msg="no nvidia devices detected by library /usr/lib/x86_64-linux-gnu/libcuda.so.550.127.05"'):
        assert _facts(t)["host"].get("symptom.no_cuda_device") is True, t
        assert explained(t)[0][0] == "device_not_visible", t


def test_ollamas_driver_messages():
    t1 = ('level=WARN source=gpu.go:599 msg="version mismatch between driver and cuda driver library - reboot or upgrade may '
          'be required: library /usr/lib/x86_64-linux-gnu/libcuda.so.570.133.20"')
    t2 = 'level=WARN source=cuda_compat.go:65 msg="NVIDIA driver too old" device="NVIDIA RTX A5000" driver=535 required_driver="550 or newer"'
    assert explained(t1)[0][0] == "driver_too_old_for_cuda"
    assert explained(t2)[0][0] == "driver_too_old_for_cuda"


def test_accelerate_megatron_sglang_and_apex_messages():
    assert explained("We've detected an older driver with an RTX 4000 series GPU. These drivers have issues with P2P. "
                     "This can affect the multi-gpu inference when using accelerate device_map.")[0][0] == "p2p_driver_regression"
    assert explained("AssertionError: multimem_reduce_scatter_v requires a Hopper+ GPU with NVLink (SM >= 9).")[0][0] == \
        "nvls_multicast_failure"
    t = ('  File "/usr/local/lib/python3.11/dist-packages/sglang/srt/utils/cuda_vmm_utils.py", line 844, in exchange_posix_fds\n'
         "    sock.connect(peer_path)\nFileNotFoundError: [Errno 2] No such file or directory")
    assert explained(t)[0][0] == "cuda_ipc_cross_boundary"
    t = "worker-1: CUDA failure /opt/apex/apex/contrib/csrc/peer_memory/peer_memory_cuda.cu:347 'invalid device context'"
    assert explained(t)[0][0] == "cuda_ipc_cross_boundary"


# ---- 11. source probes, round 24 (NCCL) -----------------------------------------------------------------------------

def test_nccl_230_function_after_the_location():
    from p2ptop.nccl.log import read_nccl_log

    from .nccl_log_reference import read_nccl_log as reference_read

    t = ("n1:9:9 [1] transport/nvls.cc:254 (nvlsGroupBindMem) NCCL WARN Cuda failure 1 'invalid argument'\n"
         "n1:9:9 [1] NCCL INFO transport/nvls.cc:300 (nvlsSetup) -> 1\n")
    log = read_nccl_log(t)
    assert [(m.host, m.location) for m in log.messages] == [("n1", "transport/nvls.cc:254"), ("n1", "transport/nvls.cc:300")]
    assert log.messages[1].result == "ncclUnhandledCudaError"  # the "(func) -> 1" trace line
    assert log.to_dict() == reference_read(t).to_dict()
    assert explained(t)[0][0] == "nvls_multicast_failure"


def test_imex_not_working_for_multi_node_nvlink():
    for t in ("gb:1:2 [1] mnnvl.cc:74 (ncclMnnvlCheck) NCCL WARN MNNVL (cliqueSize 72) is available but not working on this "
              "system. Check the IMEX channel configuration (/dev/nvidia-caps-imex-channels). Set NCCL_MNNVL_ENABLE=0 to ignore this issue.",
              "gb:1:2 [1] mnnvl.cc:69 NCCL WARN MNNVL (cliqueSize 72) is available but not supported on this system. Check the IMEX configuration."):
        first = [(e, c) for _c, c, _b, e in answer(t)][0]
        assert first[0] == "nccl/mnnvl-imex-not-working" and first[1] in ("likely", "possible"), t


def test_nccl_settings_it_cannot_use():
    for t in ("n:1:1 [0] NCCL INFO Invalid value 4x for NCCL_NCHANNELS_PER_NET_PEER, using default 2.",
              "n:1:1 [0] transport/shm.cc:298 NCCL WARN Ignoring SHM locality, must be 1 (sender side) or 2 (receiver side, default)",
              "n:1:1 [0] NCCL INFO NCCL_TOPO_FILE set by environment to /opt/topo.xml\n"
              "n:1:1 [0] NCCL INFO Could not open XML topology file /opt/topo.xml : No such file or directory",
              "n:1:1 [0] graph/search.cc:919 NCCL WARN XML Import Channel : dev 6 not found."):
        assert [e for *_x, e in answer(t)][0] == "nccl/setting-not-usable", t


def test_nccls_symmetric_multicast_lines_on_gpus_without_multicast():
    t = ("l40s:1:1 [0] NCCL INFO NVLS multicast support is not available on dev 0\n"
         "l40s:1:1 [0] dev_runtime.cc:401 (symTeamObtain) NCCL WARN Multicast support requested for team but none available on system.")
    assert explained(t)[0][0] == "nvls_multicast_failure"


def test_nccl_and_nvml_on_drivers():
    assert explained("n:1:1 [0] enqueue.cc:2820 (rmaTaskAppend) NCCL WARN One-sided RMA requires CUDA driver 12.5 or later "
                     "(found 12.2).")[0][0] == "driver_too_old_for_cuda"
    assert explained("c:1:1 [0] misc/nvmlwrap.cc:142 (ncclNvmlEnsureInitialized) NCCL WARN nvmlInit_v2() failed: Driver Not "
                     "Loaded")[0][0] == "device_not_visible"


def test_ranks_with_different_nccl_versions():
    t = ("Mismatched NCCL version detected : rank 4 version 22105 rank 0 version 22703\n"
         "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, invalid usage, NCCL version 2.27.3")
    got = explained(t)
    assert got[0][0] == "nccl_version_bug"
    assert ("device_not_visible", "possible") not in got and ("device_not_visible", "likely") not in got


def test_a_217_elsewhere_in_nccl_is_not_the_shm_cc_entry():
    t = ("n:1:2 [1] transport/net.cc:476 (sendConnect) NCCL WARN failed to peer with device 0: 217 peer access is not "
         "supported between these two devices\nncclUnhandledCudaError: Call to CUDA function failed.")
    assert "nccl/cumem-host-shm-217" not in [e for _c, conf, _b, e in answer(t) if conf in ("likely", "possible")]
    assert {c for c, _ in explained(t)[:3]} & PAIR_217


def test_nccl_warns_that_fail_and_one_that_goes_on():
    assert _facts("n:1:1 [0] proxy.cc:585 (SaveProxy) NCCL WARN Rank 0 has no transport for send peer 1 on channel 0/0")[
        "host"].get("error.text")
    t = "n:1:1 [0] graph/search.cc:1036 NCCL WARN Could not find a path for pattern 4, falling back to simple order"
    assert "error.text" not in _facts(t).get("host", {})


# ---- 12. source probes, round 25 ------------------------------------------------------------------------------------

def test_serving_frameworks_without_multicast():
    for t in ("(Worker_TP0 pid=1) WARNING [symm_mem.py:107] SymmMemCommunicator: symmetric memory multicast operations are not supported.",
              "[2026-06-11 10:20:03 TP0] TorchSymmMemCommunicator: torch symmetric memory multicast operations are not supported.",
              "WARNING [custom_all_reduce.py:350] Custom collectives are disabled because this multi-node group does not support MNNVL multicast.",
              "RuntimeError: CUTLASS GEMM-RS requires NVSwitch multicast mapping"):
        assert read_text(t).gpu_related, t
        assert explained(t)[0][0] == "nvls_multicast_failure", t


def test_vllms_dev_shm_check():
    t = ("RuntimeError: Insufficient space in /dev/shm for shared-memory allocation: 160 MiB required, 63 MiB free. "
         "Increase /dev/shm (e.g. --shm-size or --ipc=host).")
    assert explained(t)[0][0] == "shm_exhausted"


def test_more_gpus_asked_for_in_vllm_and_pytorch():
    for t in ("ValueError: The number of required GPUs exceeds the total number of available GPUs in the placement group. "
              "Required number of devices: 8. Total number of devices: 4.",
              "AssertionError: DP adjusted local rank 2 is out of bounds for 2 devices.",
              "ValueError: local_rank 2 exceeds available GPUs in CUDA_VISIBLE_DEVICES=0,1",
              "ValueError: device_id cuda:5 is out of range. Please use a device index less than the number of accelerators available: 4."):
        assert _facts(t)["host"].get("symptom.gpus_missing") is True, t
        assert explained(t)[0][0] == "device_not_visible", t


def test_torchrun_sigbus_named_by_path():
    t = ("E0611 14:05:12 torch/distributed/elastic/multiprocessing/api.py:836] torch.multiprocessing.spawn."
         "ProcessExitedException: process 2 terminated with signal SIGBUS")
    assert read_text(t).gpu_related
    assert "shm_exhausted" in [c for c, _ in explained(t)[:3]]


# ---- 13. source probes, round 26 (GPUDirect RDMA) ------------------------------------------------------------------

def test_nvrm_dma_buf_attach_refused_for_the_topology():
    t = "[ 6604.181120] NVRM: dma-buf attach failed: PCI topology not supported for dma-buf"
    assert explained(t)[0][0] == "p2p_unsupported_topology"


def test_ucx_and_gdrcopy_lines_that_fail_are_errors():
    t1 = ("[1731502300.550219] [cn-31:61077:0]  ib_md.c:316  UCX  ERROR ibv_reg_dmabuf_mr(address=0x7fa2c0000000, "
          "length=33554432, access=0x10000f) failed: Bad address")
    t2 = "[ 8801.220415] gdrdrv:__gdrdrv_pin_buffer:incompatible page table version 0x00020000"
    t3 = "[ 1402.663108] gdrdrv:gdrdrv_init:loading gdrdrv version 2.5"
    assert _facts(t1)["host"]["error.text"].startswith("[1731502300.550219]")
    assert _facts(t2)["host"]["error.text"]
    assert "error.text" not in _facts(t3).get("host", {})


# ---- 14. source probes, round 27 ------------------------------------------------------------------------------------

def test_more_gpus_asked_for_in_ray_tensorflow_and_paddle():
    for t in ("RuntimeError: Tensor list cannot be larger than the numberof available GPUs. Got 4 > 2.",
              "ValueError: Attempting to start raylet with 8 GPU, but CUDA_VISIBLE_DEVICES contains ['0', '1', '2', '3'].",
              "ValueError: Invalid visible device index: 3",
              "AssertionError: Can't find your gpus 4 in CUDA_VISIBLE_DEVICES[0,1,2,3]."):
        assert _facts(t)["host"].get("symptom.gpus_missing") is True, t


def test_pynvml_exceptions():
    assert explained("pynvml.NVMLError_DriverNotLoaded: Driver Not Loaded")[0][0] == "device_not_visible"
    assert explained("pynvml.NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version mismatch.")[0][0] == \
        "driver_too_old_for_cuda"
    t = "pynvml.NVMLError_Unknown: Unknown Error"
    assert read_text(t).gpu_related
    assert explained(t)[0][0] == "device_not_visible"


def test_cuda_python_says_the_driver_is_older_than_its_build():
    t = ("UserWarning: cuda-bindings was built for CUDA major version 13, but the NVIDIA driver only supports up to CUDA 12. "
         "Some cuda-bindings features may not work correctly.")
    assert explained(t)[0][0] == "driver_too_old_for_cuda"


def test_jax_unknown_gpu_backend_alone_is_no_device():
    t = "RuntimeError: Unknown backend: 'gpu' requested, but no platforms that are instances of gpu are present. Platforms present are: cpu"
    assert _facts(t)["host"].get("symptom.no_cuda_device") is True


# ---- source probes, round 28 ----------------------------------------------------------------------------------------

def test_schedulers_that_see_fewer_or_lost_gpus():
    t = "[2025-03-11T09:14:02.512] error: Setting node gpu-a07 state to INVAL with reason:gres/gpu count too low (6 < 8)"
    assert _facts(t)["host"].get("symptom.gpus_missing") is True
    assert _facts("[HAMI-core ERROR (pid:57 libvgpu.c:940)]: cuInit failed:100")["host"]["error.cuda"] == "cudaErrorNoDevice"
    assert explained("I0312 02:11:48 health.go:143] Error waiting for event: ERROR_GPU_IS_LOST")[0][0] == "gpu_fallen_off_bus"
    t = ('Allocate failed due to rpc error: code = Unknown desc = invalid allocation request for "nvidia.com/gpu": invalid '
         "request: unknown device: GPU-2b3c4d5e")
    assert explained(t)[0][0] == "device_not_visible"
