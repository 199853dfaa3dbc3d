"""Rules of 2026-11-29 (tenth session), each general, none for one paste. The texts here are written from the
programs' format strings and the frameworks' APIs, not taken from the evaluation corpus.

From source probes, round 43 (the C++ runtimes of TensorRT-LLM, FlashInfer's comm module, PyTorch's c10d, ONNX Runtime):
1. CUDA multicast said missing in the runtimes' own words reaches the symmetric-memory / multicast entry: TensorRT-LLM's
   "[McastDeviceMemory] Device does not support multicasting." and "Switch multicast is not supported on this system.",
   PyTorch's "Only a subset of ranks in the group has multicast support", and a CUDA error that TensorRT-LLM's CUCHECK
   prints with the source file of the failing call when that file's name says NVLS or multicast.
2. Two ranks on one GPU in FlashInfer's and PyTorch's words ("ranks 0 and 1 share the same physical GPU", "detected
   allocations from overlapping devices from different ranks", "participants have overlapping devices") reach the
   duplicate-GPU entry, as NCCL's "Duplicate GPU detected" does.
3. FlashInfer's "no P2P access from rank R (GPU-uuid) to rank S" is CUDA's peer query answering no (the host's p2p.read;
   ranks, not device numbers, so no pair is named).
From source probes, round 44 (Caffe, MXNet, CUDALibrarySamples, DGL, FBGEMM) and round 45 (whole outputs of cuda-samples,
nvbandwidth, nccl-tests, gpu-burn):
7. Caffe's "GPU 1 does not have p2p access to GPU 0" and FBGEMM's "Failed to init p2p access for node 0,1" are the pair's
   p2p.read; MXNet's "No cuda driver detected" and cudaOpenMP's "no CUDA capable devices were detected" are no device;
   cuBLASMp's "not enough visible CUDA devices" and FBGEMM's "target_device_index=3, num_gpus=2" are fewer GPUs seen.
8. The tools' figures are judged as p2pBandwidthLatencyTest's already were: simpleP2P's "cudaMemcpyPeer / cudaMemcpy between
   GPU0 and GPU1: X GB/s" against the pair's link (said, or as its GPUs are built); topologyQuery's pairs (a pair of the
   listed devices that is not listed has no peer access); nvbandwidth's device-to-device cells printed N/A off the diagonal
   (the pair's peer access failed); pinned copies between the CPU and a GPU (bandwidthTest, nvbandwidth's CPU(row)
   matrices) under a quarter of the GPU's link or of a sibling of the same model: tool.host_copy_slow, a trigger of the
   PCIe-link-degraded entry; simpleIPC's "Verification mismatch" is wrong data; conjugateGradientMultiDeviceCG waiving
   with one suitable device listed is fewer than two GPUs; nccl-tests' "Avg bus bandwidth : X FAILED" is slow.
From source probes, round 46 (the NVIDIA kernel modules' own lines) and round 47 (NVML's and DCGM's failure paths):
9. A GPU the module did not bring up (the probe failing, "RmInitAdapter failed!", a GPU not supported by the open module or
   the release, its registers claimed, no IRQ or interrupts, bound to vfio-pci, excluded) is fewer GPUs seen, in doubt where
   the text shows the BAR without an address that made the probe fail; "No NVIDIA GPU found" and nvidia-smi's "couldn't
   communicate with the NVIDIA driver", DCGM's "NVML doesn't exist on this system" / "Cannot load NVML", an NVML init
   failing with ERROR_LIBRARY_NOT_FOUND are no device; GSP's "may need to be reset" and NVML's / DCGM's "GPU requires
   reset" reach the reset entry; "API mismatch: the client" and the modules' "Version mismatch" reach the driver-mismatch
   entry; RM's BAR resize and BAR1-full lines the BAR1 entry; "no peer IDs available" the peer limit; its IOMMU peer-mapping
   failures the IOMMU entry; Xid 136 and "Links failed to train" the NVLink entry; "P2P is Disabled, cannot create
   mappings" is the host's p2p.read; dcgmi discovery's "Status: LOST" a lost GPU. dcgm-exporter's DCGM_EXP_P2P_STATUS is
   the NVLink P2P status: TopologyNotSupported on a PCIe pair is no fault.
From source probes, round 48 (DeepSpeed, Megatron-LM, ColossalAI, Accelerate, Lightning, Horovod, a second pass) and
round 49 (NCCL's RAS, cuMem, proxy, symmetric-memory and topology lines):
10. DeepSpeed's ds_report line "shared memory (/dev/shm) size .... 64.00 MB" is host.shm_mb; "Megatron requires CUDA.",
    Lightning's "No supported gpu backend found!" and Accelerate's "- PyTorch accelerator: N/A" are no device; Lightning's
    "devices ... are occupied by other processes" fewer GPUs; Megatron's sniff test with a communication measurement's
    ranks at half their median or less is slow. NCCL's RAS "declaring peer ... as DEAD" is a decision of both NCCL readers
    and symptom.crash. ncclInvalidUsage alone (NCCL returns it from many API checks) no longer offers the duplicate-GPU
    entry: it answers its own messages.
From source probes, round 50 (the NVIDIA driver failing to build or load) and round 51 (PyTorch's shared memory,
DataLoader, multiprocessing and CUDA IPC):
11. The driver that does not load is part of the no-device entry: nvidia-installer's "Unable to load the kernel module
    'nvidia.ko'", its Secure Boot and nouveau lines, modprobe's "could not insert 'nvidia': ..." whatever the errno text,
    "Module nvidia not found in directory", DKMS's build and header failures, the kernel's lockdown refusal; a
    nvidia-peermem that cannot load for ib_register_peer_memory_client reaches the no-peer-memory entry. A line that
    names no GPU and no NVIDIA module still gets no answer.
12. PyTorch's "unable to write to file </torch_...>: No space left on device" is /dev/shm full; "device N is not visible
    (CUDA_VISIBLE_DEVICES=...)" fewer GPUs seen; a CUDA error under Event.from_ipc_handle is cudaIpcOpenEventHandle's,
    a trigger of the CUDA IPC entry like the memory handle's.
From source probes, round 52 (TensorFlow, XLA, JAX, a second pass) and round 53 (vLLM, SGLang, a second pass):
13. TensorFlow's "Device interconnect StreamExecutor with strength 1 edge matrix" is read (an N between two devices: no
    peer access; a Y: peer access); XLA's "Allowed device set contains N devices, but platform only sees M", TF's
    "Ignoring visible gpu device" and its invalid visible_device_list, vLLM's visible-ordinal and physical-device refusals
    are fewer GPUs seen; JAX's "Backend 'cuda' provides no devices", TF's "Could not find cuda drivers on your machine" and
    vLLM's "Failed to infer device type" are no device; CUDA 804 (forward compatibility on unsupported hardware) is an
    error code of the insufficient-driver entry; "Insufficient space in /dev/shm" and "shared memory ... No space left on
    device" are /dev/shm full; "MNNVL / NVLink multicast is unavailable" and SGLang's multimem fallback reach the
    multicast entry, and "multimem" is a GPU word.
From source probes, round 54 (Ray, KubeRay, a second pass) and round 55 (llama.cpp, ik_llama.cpp, ollama, exllama):
14. Ray's resource waits where the GPUs asked for exceed those the cluster has, "Accelerator 'GPU' is not available on all
    workers", "CUDA_VISIBLE_DEVICES set incorrectly. expected to include N", llama.cpp's "invalid value for main_gpu" are
    fewer GPUs seen; ollama's "no compatible GPUs were discovered" and a llama.cpp "compiled without CUDA" are no device;
    Ray's "/dev/shm has only N bytes available" is host.shm_mb; Ray Direct Transport's "CUDA IPC transport only supports
    tensors on the same node" reaches the CUDA IPC entry.
From source probes, round 56 (containers and Kubernetes, a second pass: their configuration refusals stay known gaps, as
rounds 36-37's did) and round 57 (WSL 2 and Windows):
15. nvidia-ctk's WSL driver discoverer failing (dxcore, the driver store, libcuda.so.1.1) leaves no driver, so no device;
    xoscar's "no CUDA device will be enabled" is no device. Native Windows' WDDM/TCC driver-model lines have no entry yet
    (their probes were dropped: a new entry needs threads to cite).
From source probes, round 58 (DCGM's tool outputs, a second pass) and round 59 (lspci, setpci, lstopo):
16. DCGM's "Detected %ld %s for GPU %u which is above the threshold %ld" for an NVLink counter (its wrapped cell joined)
    is gpu.nvlink_replay_recovery or gpu.nvlink_errors; lspci's "(rev ff)" on an NVIDIA function and "!!! Unknown header
    type 7f" (configuration space read as all ones) reach the fallen-off-the-bus entry. DCGM's other table layouts (health
    trees, nvlink -e counters, PCIe replays) and setpci's raw registers, lstopo's link figures stay known gaps.
After fresh29 was judged blind and opened:
4. A pasted program that selects two or more GPUs by number (torch.cuda.set_device, cudaSetDevice, CUDA.device!,
   cupy.cuda.Device, .to("cuda:N"), tf.device("/gpu:N")) and fails with an illegal memory access (700) is the CUDA
   programming guide's peer pointer used without peer access: the peer-access-not-enabled entry's trigger. One GPU
   selected, or a device named in a message, is not a selection.
5. A GPU past the first said not shown by its index ("doesn't report GPU 1") or the second GPU said ignored is fewer GPUs
   seen than installed.
6. A program that finds no GPU while the text says nvidia-smi (or another framework) sees them is a failed
   cudaGetDeviceCount in that program's runtime: the insufficient-driver entry is among the candidates (35), beside a
   hidden device.
"""

from __future__ import annotations

from .kbtools import answer, explained
from .kbtools import text_facts as _facts


def _top(text, n=3):
    return [c for c, _ in explained(text)[:n]]


def _entries(text, n=3):
    return [a[3] for a in answer(text)[:n]]


# ---- 1. multicast missing, in the C++ runtimes' words --------------------------------------------------------------

MCAST = ("[TensorRT-LLM][INFO] TP group is intra-node for rank 0\n"
         "RuntimeError: [McastDeviceMemory] Device does not support multicasting. "
         "(/src/tensorrt_llm/cpp/tensorrt_llm/runtime/mcastDeviceMemory.cpp:59)\n")
SWITCH = ("RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: Switch multicast is not supported on this system. "
          "(/src/tensorrt_llm/cpp/tensorrt_llm/runtime/ipcNvlsMemory.cu:517)\n")
SUBSET = ("[rank4]:[W1129 06:10:44.120937713 CUDASymmetricMemory.cu:247] Only a subset of ranks in the group has multicast "
          "support: [0, 1, 2, 3] (world_size=8). Skipping multicast initialization because this is unexpected.\n")
CUCHECK = "Failed: Cuda error /src/tensorrt_llm/cpp/tensorrt_llm/runtime/ipcNvlsMemory.cu:364 'operation not supported'\n"
CUCHECK_OTHER = "Failed: Cuda error /src/app/kernels/gemm.cu:364 'operation not supported'\n"


def test_multicast_missing_in_the_runtimes_words_reaches_the_multicast_entry():
    for t in (MCAST, SWITCH, SUBSET, CUCHECK):
        assert _top(t, 1) == ["nvls_multicast_failure"], t


def test_a_cuda_error_in_a_file_that_is_not_about_multicast_is_not_read_so():
    assert "torch/symmetric-memory-needs-multicast" not in _entries(CUCHECK_OTHER)


# ---- 2. two ranks on one GPU -----------------------------------------------------------------------------------------

SHARED = ("flashinfer.comm.ulysses_topology.UlyssesBackendError: backend='nvlink' requested but ranks 0 and 1 share the "
          "same physical GPU GPU-3f1a9c2e-7b44-5d0e-9a61-2c8e4f0b7d15\n")
OVERLAP = ("RuntimeError: CUDASymmetricMemoryAllocator::rendezvous: detected allocations from overlapping devices from "
           "different ranks.\n")
INTRA = ("[rank1]:[W1129 06:20:05.773610142 intra_node_comm.cpp:200] Skipping IntraNodeComm::rendezvous() because "
         "participants have overlapping devices. To resolve this, call torch.cuda.set_device() before "
         "init_process_group().\n")


def test_two_ranks_on_one_gpu_in_other_words_reach_the_duplicate_gpu_entry():
    for t in (SHARED, OVERLAP, INTRA):
        assert _entries(t, 1) == ["nccl/duplicate-gpu-detected"], t


# ---- 3. FlashInfer's peer query ----------------------------------------------------------------------------------------

NO_P2P = ("flashinfer.comm.ulysses_topology.UlyssesBackendError: backend='nvlink' requested but no P2P access from rank 0 "
          "(GPU-3f1a9c2e-7b44-5d0e-9a61-2c8e4f0b7d15) to rank 1 (GPU-a9d04e51-1c3b-8f27-60e2-b5f9c4a17e08)\n")


def test_flashinfer_no_p2p_access_is_the_peer_query_answering_no():
    f = _facts(NO_P2P)
    assert f["host"]["p2p.read"] == "NOT_SUPPORTED"
    assert not any(s.startswith("pair:") for s in f)  # ranks are no device numbers
    assert set(_top(NO_P2P)) & {"p2p_unsupported_consumer_gpu", "p2p_unsupported_topology", "vm_p2p_unavailable"}


# ---- 4. an illegal address in a program that uses two GPUs --------------------------------------------------------------

JULIA = ("julia> CUDA.device!(0)\nCuDevice(0): NVIDIA A100-SXM4-40GB\n\njulia> a = CUDA.rand(4);\n\n"
         "julia> CUDA.device!(1)\nCuDevice(1): NVIDIA A100-SXM4-40GB\n\njulia> b = a .+ 1\n"
         "ERROR: CUDA error: an illegal memory access was encountered (code 700, ERROR_ILLEGAL_ADDRESS)\n")
TORCH = ("x = torch.ones(4).cuda(0)\ntorch.cuda.set_device(1)\ny = my_kernel(x)\n"
         "RuntimeError: CUDA error: an illegal memory access was encountered\n")
ONE_GPU = "torch.cuda.set_device(0)\ny = my_kernel(x)\nRuntimeError: CUDA error: an illegal memory access was encountered\n"
MESSAGE = ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cuda:1!\n"
           "RuntimeError: CUDA error: an illegal memory access was encountered\n")
NO_ERROR = "torch.cuda.set_device(0)\na = torch.ones(4, device='cuda:0')\nb = a.to('cuda:1')\nprint(b)\n"


def test_two_gpus_selected_and_an_illegal_address_is_the_peer_access_trigger():
    for t in (JULIA, TORCH):
        f = _facts(t)["host"]
        assert f["code.devices_selected"] == 2 and f["symptom.illegal_address_across_devices"] is True
        assert _entries(t, 1) == ["cuda/peer-pointer-without-enable-peer-access"], t
        assert explained(t)[0] == ("peer_access_not_enabled", "possible")


def test_one_gpu_a_message_or_no_error_is_no_such_symptom():
    for t in (ONE_GPU, MESSAGE):
        assert "symptom.illegal_address_across_devices" not in _facts(t).get("host", {}), t
    f = _facts(NO_ERROR)["host"]
    assert f["code.devices_selected"] == 2 and "symptom.illegal_address_across_devices" not in f


# ---- 5. a GPU missing, by its index or said ignored ---------------------------------------------------------------------

def test_a_gpu_not_shown_by_index_or_ignored_is_fewer_gpus_seen():
    for t in ("With the open driver nvidia-smi doesn't report `GPU 1: NVIDIA RTX A4000`, only GPU 0.",
              "The 560 driver ignores the second GPU installed in the box."):
        assert _facts(t)["host"].get("symptom.gpus_missing") is True, t
        assert _top(t, 1) == ["device_not_visible"], t
    for t in ("nvidia-smi doesn't report GPU utilisation for processes in containers.",
              "nvidia-smi does not show GPU 0 processes."):
        assert "symptom.gpus_missing" not in _facts(t).get("host", {}), t


# ---- 6. no GPU in the program, the driver sees them ----------------------------------------------------------------------

NO_DEV = "ggml_init_cublas: no CUDA devices found, CUDA will be disabled\n"


def test_no_device_while_nvidia_smi_works_puts_the_driver_among_the_causes():
    for said in ("nvidia-smi works correctly and nvcc is available.", "GPU support works for other programs via PyTorch.",
                 "`nvidia-smi` shows both cards."):
        t = NO_DEV + said + "\n"
        assert _facts(t)["host"].get("symptom.no_cuda_device_driver_sees_gpus") is True, said
        top = _top(t)
        assert "driver_too_old_for_cuda" in top and "device_not_visible" in top, (said, top)


def test_no_device_alone_or_nvidia_smi_failing_is_not_read_so():
    for t in (NO_DEV, NO_DEV + "nvidia-smi shows no devices either.\n", NO_DEV + "nvidia-smi reports an error.\n"):
        assert "symptom.no_cuda_device_driver_sees_gpus" not in _facts(t).get("host", {}), t


# ---- 7. the libraries' own peer and device messages ------------------------------------------------------------------------

def test_caffe_and_fbgemm_peer_lines_are_the_pairs_p2p_status():
    for t in ("I1129 10:20:41.602913 24871 parallel.cpp:234] GPU 1 does not have p2p access to GPU 0\n",
              "RuntimeError: at::cuda::get_p2p_access(i, j) INTERNAL ASSERT FAILED at \"merge_pooled_embedding_ops_gpu.cpp\":661, "
              "please report a bug to PyTorch. Failed to init p2p access for node 0,1\n"):
        assert _facts(t)["pair:0-1"]["p2p.read"] == "NOT_SUPPORTED", t


def test_the_libraries_no_device_and_fewer_gpu_messages():
    for t in ("[11:05:40] src/base.cc:46: Please install cuda driver for GPU use.  No cuda driver detected.\n",
              "./cudaOpenMP Starting...\n\nno CUDA capable devices were detected\n"):
        assert _facts(t)["host"].get("symptom.no_cuda_device") is True, t
    for t in ("Error: not enough visible CUDA devices for requested SPMG placement\n",
              "RuntimeError: target_device_index=3, num_gpus=2\n"):
        assert _facts(t)["host"].get("symptom.gpus_missing") is True, t


# ---- 8. the tools' figures ---------------------------------------------------------------------------------------------------

def _simplep2p(rate):
    return ("[./simpleP2P] - Starting...\nChecking for multiple GPUs...\nCUDA-capable device count: 2\n"
            "> Peer access from NVIDIA A100 80GB PCIe (GPU0) -> NVIDIA A100 80GB PCIe (GPU1) : Yes\n"
            "> Peer access from NVIDIA A100 80GB PCIe (GPU1) -> NVIDIA A100 80GB PCIe (GPU0) : Yes\n"
            "Enabling peer access between GPU0 and GPU1...\n"
            f"cudaMemcpyPeer / cudaMemcpy between GPU0 and GPU1: {rate}GB/s\nTest passed\n")


def test_simplep2p_rate_is_judged_against_the_pairs_link():
    slow = _facts(_simplep2p("0.91"))
    assert slow["pair:0-1"]["bench.verdict"] == "slow" and slow["host"]["symptom.slow"] is True
    ok = _facts(_simplep2p("24.87"))
    # (the paste does not say the link: only a figure far under what the GPUs are built with says something)
    assert ok.get("pair:0-1", {}).get("bench.verdict") != "slow" and "symptom.slow" not in ok["host"]


_TQ_CPU = "".join(f"GPU{g} <-> CPU:\n  * Atomic Supported: no\n" for g in range(4))


def _tq(pairs):
    return "".join(f"GPU{a} <-> GPU{b}:\n  * Atomic Supported: no\n  * Perf Rank: 0\n" for a, b in pairs) + _TQ_CPU


def test_topologyquery_pairs_not_listed_have_no_peer_access():
    f = _facts(_tq([(0, 1), (1, 0), (2, 3), (3, 2)]))
    assert f["pair:0-1"]["p2p.read"] == "OK" and f["pair:2-3"]["p2p.read"] == "OK"
    assert all(f[p]["p2p.read"] == "NOT_SUPPORTED" for p in ("pair:0-2", "pair:0-3", "pair:1-2", "pair:1-3"))
    full = _facts(_tq([(a, b) for a in range(4) for b in range(4) if a != b]))
    assert all(v.get("p2p.read", "OK") == "OK" for k, v in full.items() if k.startswith("pair:"))


_NVB_HEAD = ("nvbandwidth Version: v0.8\n\nDevice 0: NVIDIA A100 80GB PCIe (00000000:17:00)\n"
             "Device 1: NVIDIA A100 80GB PCIe (00000000:31:00)\nDevice 2: NVIDIA A100 80GB PCIe (00000000:b1:00)\n\n")


def test_nvbandwidth_na_cells_and_host_matrices():
    d2d = (_NVB_HEAD + "Running device_to_device_memcpy_write_ce.\nmemcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)\n"
           "           0         1         2\n 0       N/A     25.21       N/A\n 1     25.21       N/A       N/A\n"
           " 2       N/A       N/A       N/A\n\nSUM device_to_device_memcpy_write_ce 50.42\n")
    f = _facts(d2d)
    assert f.get("pair:0-1", {}).get("p2p.read") != "NOT_SUPPORTED"
    assert f["pair:0-2"]["p2p.read"] == "NOT_SUPPORTED" and f["pair:1-2"]["p2p.read"] == "NOT_SUPPORTED"
    h2d = (_NVB_HEAD + "Running host_to_device_memcpy_ce.\nmemcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n"
           "           0         1         2\n 0     24.62     24.58      3.08\n\nSUM host_to_device_memcpy_ce 52.28\n")
    f = _facts(h2d)
    assert f["gpu:2"]["tool.host_copy_slow"] is True
    assert "tool.host_copy_slow" not in f["gpu:0"] and "tool.host_copy_slow" not in f["gpu:1"]
    assert _top(h2d, 1) == ["pcie_link_degraded"]


def _bwt(kind, rate):
    return ("[CUDA Bandwidth Test] - Starting...\nRunning on...\n\n Device 0: NVIDIA A100 80GB PCIe\n Quick Mode\n\n"
            f" Host to Device Bandwidth, 1 Device(s)\n {kind} Memory Transfers\n   Transfer Size (Bytes)\tBandwidth(GB/s)\n"
            f"   32000000\t\t\t{rate}\n\nResult = PASS\n")


def test_bandwidthtest_pinned_host_copies_far_under_the_link():
    assert _facts(_bwt("PINNED", "3.1"))["gpu:0"]["tool.host_copy_slow"] is True
    for t in (_bwt("PINNED", "24.9"), _bwt("PAGEABLE", "3.1")):
        assert "tool.host_copy_slow" not in _facts(t).get("gpu:0", {}), t


def test_simpleipc_mismatch_cg_waive_and_nccl_tests_verdict():
    ipc = "Process 0: verifying...\nProcess 0: Verification mismatch at 0: 0 != 1\n"
    assert _facts(ipc)["host"]["symptom.wrong_results"] is True
    cg = ("Starting [conjugateGradientMultiDeviceCG]...\nGPU Device 0: \"NVIDIA A100-SXM4-80GB\" with compute capability 8.0\n"
          "No two or more GPUs with same architecture capable of concurrentManagedAccess found. \nWaiving the sample\n")
    assert _facts(cg)["host"]["tool.fewer_than_two_gpus"] == 1
    two = cg.replace("No two", "GPU Device 1: \"NVIDIA V100-SXM2-32GB\" with compute capability 7.0\nNo two")
    assert "tool.fewer_than_two_gpus" not in _facts(two).get("host", {})  # two GPUs of different architectures
    avg = "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 76.3898 FAILED\n#\n"
    assert _facts(avg)["host"]["symptom.slow"] is True
    assert "symptom.slow" not in _facts(avg.replace("FAILED", "OK")).get("host", {})


# ---- 9. the kernel module's lines, NVML's and DCGM's failures ------------------------------------------------------------------

def test_gpus_the_module_did_not_bring_up_are_fewer_gpus_seen():
    for t in ("[  212.421204] NVRM: GPU 0000:41:00.0: RmInitAdapter failed! (0x62:0x40:2168)\n",
              "[    6.118339] NVRM: The NVIDIA probe routine failed for 1 device(s).\n"
              "[    6.118342] NVRM: None of the NVIDIA devices were initialized.\n",
              "[    4.772102] NVRM: GPU 0000:81:00.0 is already bound to vfio-pci.\n",
              "[    4.937880] NVRM: The NVIDIA GPU 0000:02:00.0 (PCI ID: 10de:1b06)\n"
              "               NVRM: installed in this system is not supported by open\n"
              "               NVRM: nvidia.ko because it does not include the required GPU\n"):
        assert _entries(t, 1) == ["gpu/fewer-gpus-visible-than-installed"], t


def test_a_bar_without_address_before_the_probe_failure_is_the_cause():
    t = ("[   10.120430] NVRM: This PCI I/O region assigned to your NVIDIA device is invalid:\n"
         "[   10.120430] NVRM: BAR1 is 0M @ 0x0 (PCI:0000:03:00.0)\n"
         "NVRM: The NVIDIA probe routine failed for 4 device(s).\nNVRM: None of the NVIDIA devices were initialized.\n")
    assert explained(t)[0][0] == "bar1_too_small"


def test_driver_unreachable_reset_and_mismatch_lines():
    for t in ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA "
              "driver is installed and running.\n",
              "2026/11/29 05:41:07 failed to init NVML: ERROR_LIBRARY_NOT_FOUND\n",
              "Error: Unable to complete diagnostic for group 0. Return: (-56) : Cannot perform the requested operation because "
              "NVML doesn't exist on this system.\n",
              "[  911.204501] NVRM: No NVIDIA GPU found.\n"):
        assert _entries(t, 1) == ["cuda/no-device-visible"], t
    for t in ("Error: Unable to complete diagnostic for group 0. Return: (-19) : GPU requires reset\n",
              "NVRM: GPU2 _kgspBootGspRm: (the GPU is likely in a bad state and may need to be reset)\n"):
        assert "gpu/reset-required-after-fault" in _entries(t), t
    for t in ("[ 1893.202214] NVRM: API mismatch: the client has the version 570.133.20, but\n",
              "[  402.771903] nvidia-modeset: Version mismatch: nvidia.ko(580.95.05) nvidia-modeset.ko(580.105.08)\n"):
        assert _entries(t, 1) == ["cuda/system-driver-mismatch"], t


def test_rm_p2p_bar_peer_iommu_and_nvlink_lines():
    cases = {
        "[    5.201774] NVRM: BAR resizing failed with error `-22`.\n": "pcie/bar1-cannot-assign-no-space",
        "NVRM: GPU2 RmThirdPartyP2PBAR1GetPages: no space for BAR1 mappings, length: 0x4000000\n": "pcie/bar1-cannot-assign-no-space",
        "NVRM: GPU0 kbusCreateP2PMappingForMailbox_GM200: no peer IDs available\n": "cuda/too-many-peers",
        "NVRM: GPU0 _kbusCreateStaticBar1IOMMUMappingForGpuPair: IOMMU mapping failed from GPU0 to GPU3\n": "iommu/p2p-hang-or-corruption",
        "NVRM: Xid (PCI:0000:4e:00): 136, pid=30117, name=python3, NVLink: Link training failed for link 6(0x1, 0x0)\n":
            "nvlink/links-inactive",
    }
    for t, entry in cases.items():
        assert entry in _entries(t), (t, _entries(t))
    f = _facts("[ 3301.772015] NVRM: GPU1 p2papiConstruct_IMPL: ERROR: P2P is Disabled, cannot create mappings\n")
    assert f["host"]["p2p.read"] == "NOT_SUPPORTED"


def test_dcgm_discovery_lost_and_the_exporters_nvlink_p2p_status():
    lost = ("| 1      | Status: LOST                                                         |\n"
            "|        | Name: NVIDIA H100 80GB HBM3 (last known)                             |\n")
    assert _entries(lost, 1) == ["xid/79-gpu-fallen-off-bus"]
    assert "xid/79-gpu-fallen-off-bus" not in _entries("The connection status: lost, retrying the NVIDIA H100 node\n")


# ---- 10. the training frameworks' and NCCL's newer lines ------------------------------------------------------------------------

def test_ds_report_shm_and_the_frameworks_no_device_lines():
    f = _facts("DeepSpeed general environment info:\nshared memory (/dev/shm) size .... 64.00 MB\n")
    assert f["host"]["host.shm_mb"] == 64
    assert _facts("shared memory (/dev/shm) size .... 1.50 GB\n")["host"]["host.shm_mb"] == 1536
    for t in ("AssertionError: Megatron requires CUDA.\n", "RuntimeError: No supported gpu backend found!\n",
              "- PyTorch version: 2.6.0+cu124\n- PyTorch accelerator: N/A\n- System RAM: 1007.53 GB\n"):
        assert _facts(t)["host"].get("symptom.no_cuda_device") is True, t
    t = ("RuntimeError: You requested to find 4 devices but only 2 are currently available. The devices [0, 1] are occupied "
         "by other processes and can't be used at the moment.\n")
    assert _facts(t)["host"].get("symptom.gpus_missing") is True


_SNIFF = ("CUDA device: NVIDIA H100 80GB HBM3\n"
          "  GEMM throughput (8192x8192x8192, bf16) [TFLOP/s/GPU]: median=711.80, mean=710.52, min=699.47, max=718.93\n"
          "  All-to-all busbw (EP PG, size=8, 268 MB) [GB/s]: median=330.95, mean=256.37, min=31.72, max=335.40\n"
          "    OUTLIER rank 16 (node-17): 32.08 (-90.3%)\n  Result: OUTLIERS DETECTED\n")


def test_megatron_sniff_test_communication_outliers_are_slow():
    assert _facts(_SNIFF)["host"]["symptom.slow"] is True
    gemm = _SNIFF.replace("  All-to-all busbw (EP PG, size=8, 268 MB) [GB/s]: median=330.95, mean=256.37, min=31.72, max=335.40\n", "")
    assert "symptom.slow" not in _facts(gemm).get("host", {})  # a slow GEMM is no communication
    mild = _SNIFF.replace("32.08 (-90.3%)", "290.10 (-12.3%)")
    assert "symptom.slow" not in _facts(mild).get("host", {})


_RAS = "dgx07:61204:61291 [0] NCCL INFO RAS declaring peer 10.40.0.7<52311> as DEAD; rasDeadPeersHash 0x9c1e44d07a2b3f65\n"


def test_ras_dead_peer_is_a_decision_of_both_readers_and_a_crash():
    from p2ptop.nccl.log import read_nccl_log

    from .nccl_log_reference import read_nccl_log as reference_read

    assert [d.kind for d in read_nccl_log(_RAS).decisions] == [d.kind for d in reference_read(_RAS).decisions] == ["ras_peer_dead"]
    assert _facts(_RAS)["host"]["symptom.crash"] is True


def test_nccl_invalid_usage_alone_offers_no_duplicate_gpu():
    t = ("h100x8:5120:5120 [0] scheduler/symmetric_sched.cc:83 NCCL WARN Error: no symmetric kernel available for function "
         "AllReduce. NCCL_SYM_KERNEL was set to AllReduce_RSxLDMC_AGxSTMC\nh100x8:5120:5120 [0] NCCL INFO enqueue.cc:361 -> 5\n")
    assert not [a for a in answer(t) if a[3] == "nccl/duplicate-gpu-detected" and a[1] in ("likely", "possible")]
    dup = "init.cc:904 NCCL WARN Duplicate GPU detected : rank 15 and rank 7 both on CUDA device e4000\n"
    assert _entries(dup, 1) == ["nccl/duplicate-gpu-detected"]


# ---- 11. the driver that does not load ------------------------------------------------------------------------------------------

def test_a_driver_that_does_not_load_is_no_device():
    for t in ("$ sudo modprobe nvidia\nmodprobe: ERROR: could not insert 'nvidia': Key was rejected by service\n",
              "modprobe: FATAL: Module nvidia not found in directory /lib/modules/6.8.0-51-generic\n",
              "ERROR: Unable to load the kernel module 'nvidia.ko'.  This happens most\n",
              "WARNING: The Nouveau kernel driver is currently in use by your system.  This\n",
              "Error! Bad return status for module build on kernel: 6.11.0-9-generic (x86_64)\n"
              "Consult /var/lib/dkms/nvidia/550.127.05/build/make.log for more information.\n",
              "$ sudo modprobe nvidia\n[   41.207713] Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7\n"):
        assert _entries(t, 1) == ["cuda/no-device-visible"], t
    assert _entries("depmod: WARNING: /lib/modules/5.15.0-125-generic/kernel/drivers/video/nvidia-peermem.ko needs unknown "
                    "symbol ib_register_peer_memory_client\n", 1) == ["nccl/gdr-disabled-no-peer-memory-module"]
    # (explain's gate: the line names no GPU and no NVIDIA module, so nothing is offered)
    assert explained("Error! Your kernel headers for kernel 6.8.0-51-generic cannot be found at /lib/modules/6.8.0-51-generic/build\n") == []


# ---- 12. PyTorch's shared memory and CUDA IPC --------------------------------------------------------------------------------------

def test_pytorch_shm_full_hidden_device_and_ipc_event():
    t = "RuntimeError: unable to write to file </torch_3321_2875193601_17>: No space left on device (28)\n"
    assert _facts(t)["host"].get("symptom.shm_exhausted") is True
    assert "symptom.shm_exhausted" not in _facts("RuntimeError: unable to write to file </data/ckpt.pt>: No space left on "
                                                 "device (28)\n").get("host", {})
    assert _facts("RuntimeError: device 2 is not visible (CUDA_VISIBLE_DEVICES=[4, 5])\n")["host"]["symptom.gpus_missing"] is True
    ev = ('  File "/usr/local/lib/python3.11/site-packages/torch/cuda/streams.py", line 181, in from_ipc_handle\n'
          "    return super().from_ipc_handle(device, handle)\nRuntimeError: CUDA error: invalid resource handle\n")
    assert _facts(ev)["host"]["error.cuda_call"] == "cudaIpcOpenEventHandle"
    assert "cuda_ipc_cross_boundary" in _top(ev)


# ---- 13. TensorFlow's peer matrix, the frameworks' device lines ------------------------------------------------------------------

def _tf(rows):
    head = "2019-06-12 10:20:31.880102: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1045] "
    out = head + "Device interconnect StreamExecutor with strength 1 edge matrix:\n" + head + "     0 1 2 \n"
    return out + "".join(f"{head}{i}:   {r} \n" for i, r in enumerate(rows))


def test_tensorflow_interconnect_matrix_is_the_pairs_peer_access():
    f = _facts(_tf(["N Y N", "Y N N", "N N N"]))
    assert f["pair:0-1"]["p2p.read"] == "OK"
    assert f["pair:0-2"]["p2p.read"] == "NOT_SUPPORTED" and f["pair:1-2"]["p2p.read"] == "NOT_SUPPORTED"
    assert not [a for a in answer(_tf(["N Y Y", "Y N Y", "Y Y N"])) if a[1] in ("likely", "possible") and not a[2]]


def test_the_frameworks_device_lines():
    for t in ("W1129 10:20:30.001944  620412 platform_util.cc:155] Allowed device set contains 4 devices, but platform only sees 2\n",
              "tensorflow.python.framework.errors_impl.InvalidArgumentError: 'visible_device_list' listed an invalid Device id '3' "
              "but visible device count is 2\n",
              "IndexError: visible device ordinal 2 is out of range for CUDA_VISIBLE_DEVICES=0,1\n"):
        assert _facts(t)["host"].get("symptom.gpus_missing") is True, t
    for t in ("RuntimeError: Unable to initialize backend 'cuda': Backend 'cuda' provides no devices.\n",
              "I external/xla/xla/tsl/cuda/cudart_stub.cc:31] Could not find cuda drivers on your machine, GPU will not be used.\n"):
        assert _facts(t)["host"].get("symptom.no_cuda_device") is True, t
    t804 = ("RuntimeError: Unable to initialize backend 'cuda': INTERNAL: CUDA error: Failed call to cuInit: "
            "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: forward compatibility was attempted on non supported HW\n")
    assert _entries(t804, 1) == ["cuda/insufficient-driver"]


def test_shm_and_multicast_fallback_wordings():
    for t in ("RuntimeError: Insufficient space in /dev/shm for Engram tables: 18944 MiB required, 64 MiB free.\n",
              "Failed to allocate shared memory for multimodal feature transport ([Errno 28] No space left on device)\n"):
        assert _facts(t)["host"].get("symptom.shm_exhausted") is True, t
    t = "[2026-06-12 15:02:11 TP0] multimem all-gather disabled (no multicast for world_size=8)\n"
    assert _entries(t, 1) == ["torch/symmetric-memory-needs-multicast"]


# ---- 14. Ray and the local-LLM runtimes ----------------------------------------------------------------------------------------------

def test_ray_and_llama_cpp_gpu_counts():
    fewer = ("(autoscaler) WARNING insufficient_resources_manager.py:163 -- Training has not started in the last 60 seconds. "
             "You asked for 5.0 CPUs and 4.0 GPUs, but the cluster only has 48.0 CPUs and 2.0 GPUs available.\n")
    assert _facts(fewer)["host"].get("symptom.gpus_missing") is True
    enough = fewer.replace("4.0 GPUs, but", "2.0 GPUs, but").replace("48.0 CPUs and 2.0 GPUs", "4.0 CPUs and 2.0 GPUs")
    assert "symptom.gpus_missing" not in _facts(enough).get("host", {})  # short of CPUs, not of GPUs
    v2 = ('InsufficientClusterResourcesError: The worker group requires {"GPU": 8.0} but the cluster only has a maximum of '
          '{"GPU": 4.0} resources.\n')
    assert _facts(v2)["host"].get("symptom.gpus_missing") is True
    assert _facts("llama_model_load_from_file_impl: invalid value for main_gpu: 1 (available devices: 1)\n")["host"].get(
        "symptom.gpus_missing") is True
    assert _facts('time=2025-08-07T12:20:11.702Z level=INFO source=gpu.go:377 msg="no compatible GPUs were discovered"\n')[
        "host"].get("symptom.no_cuda_device") is True


def test_ray_shm_size_and_cross_node_ipc():
    t = ("WARNING services.py:2248 -- WARNING: The object store is using /tmp instead of /dev/shm because /dev/shm has only "
         "67108864 bytes available.\n")
    assert _facts(t)["host"]["host.shm_mb"] == 64
    ipc = ("ValueError: CUDA IPC transport only supports tensors on the same node, but the current node ID: 3f9a and the "
           "sender node ID: 8e2c are different.\n")
    assert _entries(ipc, 1) == ["cuda-ipc/open-handle-across-containers"]


# ---- 15. WSL 2 ------------------------------------------------------------------------------------------------------------------------

def test_wsl_driver_discovery_failing_is_no_device():
    t = ("$ sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml\nINFO[0000] Auto-detected mode as 'wsl'\n"
         "ERRO[0000] failed to generate CDI spec: failed to create edits common for entities: failed to create discoverer for "
         "WSL driver: failed to initialize dxcore: failed to initialize dxcore context\n")
    assert explained(t)[0][0] == "device_not_visible"
    x = "2025-01-18 09:41:22,517 xoscar.nvutils 1873 WARNING  Failed to load libnvidia-ml: Driver Not Loaded, no CUDA device will be enabled\n"
    assert _facts(x)["host"].get("symptom.no_cuda_device") is True


# ---- 16. DCGM's NVLink counters, lspci's all-ones configuration space -------------------------------------------------------------------

def test_dcgm_nvlink_field_threshold_and_lspci_rev_ff():
    t = ("| Warning: GPU5             | Detected 3 nvlink_recovery_error_count_total   |\n"
         "|                           | for GPU 5 which is above the threshold 0 Chec  |\n")
    assert _facts(t)["gpu:5"]["gpu.nvlink_replay_recovery"] == 3
    ff = ("41:00.0 3D controller: NVIDIA Corporation GA100 [A100 PCIe 80GB] (rev ff) (prog-if ff)\n"
          "\t!!! Unknown header type 7f\n")
    assert _entries(ff, 1) == ["xid/79-gpu-fallen-off-bus"]
    ok = "41:00.0 3D controller: NVIDIA Corporation GA100 [A100 PCIe 80GB] (rev a1)\n\tSubsystem: NVIDIA Corporation Device 1463\n"
    assert "xid/79-gpu-fallen-off-bus" not in _entries(ok)
