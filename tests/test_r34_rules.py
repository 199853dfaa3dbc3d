"""Rules of the thirteenth session (2026-11-29, fourth), each written from a program's own source, never from one case.

1. The NVIDIA driver's own lines (open-gpu-kernel-modules 595.45.04): NVLink training, activation and wake failures
   (kernel_nvlinkcorelibtrain.c, p2p_api.c), recovery from an uncontained NVLink error (kernel_nvlink.c), a GPU's attach to
   a multicast object refused by the fabric (mem_multicast_fabric.c), the fabric probe's failure (gpu_fabric_probe.c),
   peer-ID exhaustion (p2p_api.c, kern_bus_gh100.c, kern_bus_gm107.c), p2papiConstruct's unknown connection type, BAR1
   resize unsupported (nv-pci.c) and an NVLink remote translation fault (kern_gmmu_ga100.c).
2. Schedulers that hold GPUs back from jobs (Slurm's gres_gpu.c, HTCondor's condor_gpu_discovery and startd, Flux's
   Rv1Pool.py, OpenPBS's job_info.cpp) and NVML's error 9 (driver not loaded); a program's "will not discover ... MIG
   instances" is no MIG mode.
3. From source-probe rounds 73-74 (NCCL's topology and graph code, CUDA's fabric handles as NCCL, PyTorch, TensorRT-LLM,
   NVSHMEM and MSCCL++ print them): a fabric-handle allocation, export or import refused with CUDA_ERROR_NOT_PERMITTED
   (CUDA driver API: no access to the IMEX channel) is the fact error.fabric_handle_refused, the IMEX entry's trigger; NCCL
   refusing a variable's value at WARN level (its XML reader on NCCL_TOPO_FILE / NCCL_GRAPH_FILE, an unknown value, an
   NCCL_ALGO list, NICs to merge that are not there) is nccl.setting_refused, the setting entry's trigger; a program's
   "non-zero status" is no message said absent.
   Rounds 75-78: the training frameworks' and JAX's own device checks (DeepSpeed's CPU fallback, Accelerate's device
   checks and launcher defaults, Lightning's "GPU available: False", NeMo's, verl's, JAX's meshes and "Unknown backend
   cuda") as fewer GPUs or none; XLA's interconnect status naming NVML's fabric state; XLA's multicast and load/store
   refusals; Megatron's NCCL setting checks.
4. After opening fresh34, fresh35 and fresh36 (labelled so): NCCL's symmetric memory returning wrong data in 2.28-2.30 (NCCL commits 2948185,
   the symmetric kernels' missing cudaGridDependencySynchronize under programmatic dependent launch, first in 2.30.6, and
   1e47331c, RMA proxy offsets of sub-windows, first in 2.31); CUDA's illegal-address error alone no longer offers the
   NCCL 2.26/2.27 Blackwell entry (its NCCL release and card are required); ComfyUI's prompt validation refusing a
   device ("Value not in list: device: 'cuda:1' not in ['cuda:0']", its execution.py format) and a device index said
   unseen ("I do not see cuda:2") are fewer GPUs.
"""

from __future__ import annotations

import pytest

from .kbtools import alarms, answer
from .kbtools import host_facts as _host


def _ids(text, n=3):
    return [a[3] for a in answer(text)[:n]]


def _classes(text, n=3):
    return [a[0] for a in answer(text)[:n]]


# ---- 1. the driver's NVLink, fabric and peer lines ------------------------------------------------------------------

@pytest.mark.parametrize("line, cls", [
    ("[   58.3] NVRM: GPU1 _knvlinkActivateDiscoveredConns: Failed to activate link9 on GPU1!!!", "nvlink_link_failure"),
    ("[ 2210.0] NVRM: GPU3 p2papiConstruct_IMPL: link training between GPU3 and SWITCH failed with status 77", "nvlink_link_failure"),
    ("[ 7741.1] NVRM: GPU0 _knvlinkExitSleep: Unable to wakeup the linkmask 0xf00 of GPU0 from SLEEP", "nvlink_link_failure"),
    ("[52210.4] NVRM: GPU5 knvlinkUncontainedErrorRecoveryUvmIdle_WORKITEM: Failed to idle UVM peer traffic with status 0x60. "
     "This will lead to NVLINK Degradation!", "nvlink_link_failure"),
    ("[ 3304.1] NVRM: GPU7 _memorymulticastfabricCtrlAttachGpu: Inband request Multicast Team Setup failed!", "nvls_multicast_failure"),
    ("[ 8710.5] NVRM: GPU1 _memorymulticastfabricCtrlAttachGpu: IMEX channel subscription is not available", "nvls_multicast_failure"),
    ("[  187.2] NVRM: GPU2 _gpuFabricProbeFullSanityCheck: Fabric Probe failed: 0x78", "fabric_manager_not_running"),
    ("[ 3912.2] NVRM: GPU0 _p2papiReservePeerID: GPU0: peerID not available for NVLink P2P", "too_many_peers"),
    ("[  802.1] NVRM: GPU9 kbusGetPeerIdFromTable_GM107: Peer number table doesn't support >8 GPUs", "too_many_peers"),
    ("[ 1187.6] NVRM: GPU0 p2papiConstruct_IMPL: Unknown connection type", "p2p_unsupported_topology"),
    ("[    5.1] NVRM: BAR resize resource not supported.", "bar1_too_small"),
    ("[41877.3] NVRM: Xid (PCI:0000:c3:00): 108, NVLink remote translation error: faulted @ 0x4_1a2c0000.", "nvlink_peer_memory_error"),
])
def test_driver_lines_name_their_class_on_the_entrys_own_regex(line, cls):
    got = answer(line)
    hit = next((a for a in got[:3] if a[0] == cls), None)
    assert hit, (line, [a[:2] for a in got[:3]])


def test_the_drivers_healthy_nvlink_lines_stay_quiet():
    for line in ("[ 15520.9] NVRM: GPU2 knvlinkEnterExitSleep_IMPL: Skipping L2 entry/exit since fabric is externally managed",
                 "[ 3360.2] NVRM: GPU0 knvlinkEnterExitSleep_IMPL: NVLink L2 is not supported. Returning",
                 "[ 96.4] NVRM: GPU0 knvlinkSetUniqueFabricBaseAddress_GV100: Fabric base addr 4000000000 is assigned to GPU 0"):
        assert not alarms(line), line


# ---- 2. schedulers holding GPUs back; NVML error 9 ------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "[2025-03-11T08:00:04.131] warning: The following autodetected GPUs are being ignored:",
    "diag: skipping 2 uuid=3b1e5c7a-9d24-4f61-8c0e-5a7b2d9e1f43 during CUDA enumeration because of index",
    "08/21/26 09:12:44 GPUs GPU-3b1e5c7a is now marked offline",
    "0.014s: job.exception f2Xq type=alloc severity=0 unsatisfiable request: need 2 node(s) with 8 cores and 16 GPUs each, only 0 eligible",
    "    comment = Can Never Run: Insufficient amount of resource: ngpus (R: 8 A: 4 T: 4)",
])
def test_schedulers_holding_gpus_back_are_fewer_gpus(text):
    assert _host(text).get("symptom.gpus_missing") is True, text


def test_pbs_waiting_for_busy_gpus_is_not_fewer_gpus():
    # asked for no more than the vnode's total: the job waits for GPUs in use, nothing is missing
    assert _host("comment = Not Running: Insufficient amount of resource: ngpus (R: 2 A: 0 T: 8)").get("symptom.gpus_missing") is None


def test_nvml_error_9_is_no_gpu_and_a_mig_mention_of_what_was_not_read_is_no_mig_mode():
    text = ("diag: cuInit found no CUDA-capable devices. code=100\n"
            "Warning: nvmlInit() failed with error 9; will not discover dynamic properties or MIG instances.\nDetectedGPUs=0")
    facts = _host(text)
    assert facts.get("symptom.no_cuda_device") is True
    assert facts.get("gpu.mig") is None
    assert "device_not_visible" in _classes(text, 1)
    assert _host("Warning: nvmlInit() failed with error 9; will not discover dynamic properties.").get("symptom.no_cuda_device") is True
    # MIG named as the setup still is MIG mode
    assert _host("We run the job on two MIG instances of one A100 and NCCL fails.").get("gpu.mig") is True


# ---- 4. after opening fresh34: NCCL symmetric memory returning wrong data in 2.28-2.30 ------------------------------

SYMM = "nccl/symmetric-memory-defects-2-28-2-30"


def test_wrong_results_with_nccl_symmetric_memory_in_the_affected_releases():
    for text in ("With symmetric memory enabled the all-reduce gives wrong results on 4x H100. NCCL version 2.28.3+cuda12.9",
                 "After registering buffers with ncclCommWindowRegister, outputs are silently wrong. NCCL 2.30.5, 8x B200."):
        got = answer(text)
        assert got[0][3] == SYMM and got[0][1] in ("likely", "possible"), [a[:4] for a in got[:3]]


def test_not_offered_outside_the_releases_or_without_its_symptom_or_memory():
    outside = "With symmetric memory enabled the all-reduce gives wrong results. NCCL version 2.27.7"
    fixed = "With symmetric memory enabled the all-reduce gives wrong results. NCCL version 2.31.2"
    hang = "With symmetric memory enabled the all-reduce hangs. NCCL version 2.29.7"
    plain = "The all-reduce gives wrong results on 8x H100. NCCL version 2.29.7"
    for text in (outside, fixed, hang, plain):
        assert SYMM not in [a[3] for a in answer(text) if a[1] in ("likely", "possible")], text


def test_an_illegal_address_alone_does_not_offer_the_nccl_blackwell_entry():
    bare = "terminate called after throwing an instance of 'c10::Error'\n  what():  CUDA error: an illegal memory access was encountered"
    assert "nccl/blackwell-pcie-illegal-access-512k" not in [a[3] for a in answer(bare) if a[1] in ("likely", "possible")]
    both = ("h:1:1 [0] NCCL INFO NCCL version 2.26.2+cuda12.8\nTwo NVIDIA GeForce RTX 5090 over PCIe.\n"
            "h:1:9 [0] enqueue.cc:1556 NCCL WARN Cuda failure 700 'an illegal memory access was encountered'")
    got = answer(both)
    assert got[0][3] == "nccl/blackwell-pcie-illegal-access-512k" and got[0][1] in ("likely", "possible")


def test_a_device_the_process_does_not_list_is_fewer_gpus():
    comfy = "Failed to validate prompt for output 9:\n* VAELoaderMultiGPU 33:\n  - Value not in list: device: 'cuda:1' not in ['cuda:0']"
    assert _host(comfy).get("symptom.gpus_missing") is True
    assert "device_not_visible" in _classes(comfy, 1)
    # another input's value missing from its list is no GPU
    assert _host("  - Value not in list: ckpt_name: 'model.safetensors' not in ['a.safetensors']").get("symptom.gpus_missing") is None
    said = "I have 3 gpus, a 3090, a 3080 and a P40. The device menu shows cuda:0 and I do not see cuda:2 ever."
    assert _host(said).get("symptom.gpus_missing") is True
    assert _host("I do not see cuda:0 being slower than cuda:1.").get("symptom.gpus_missing") is None


# ---- 3. fabric handles refused; NCCL refusing a setting; "non-zero status" -------------------------------------------

@pytest.mark.parametrize("text", [
    "RuntimeError: [TensorRT-LLM][ERROR] CUDA driver error in cuMemImportFromShareableHandle(&h, p, CU_MEM_HANDLE_TYPE_FABRIC): "
    "CUDA_ERROR_NOT_PERMITTED (/src/cpp/tensorrt_llm/runtime/mcastDeviceMemory.cpp:167)",
    "NVSHMEM INFO Symmetric Memory Heap Handle Type: Fabric Handle\n"
    "/build/nvshmem/src/host/mem/mem_heap.cpp:1251: non-zero status: 800 cuMemImportFromShareableHandle failed state->device_id : 1",
    "h:1:2 [2] transport/p2p.cc:236 (ncclP2pAllocateShareableBuffer) NCCL WARN Cuda failure 800 'operation not permitted'",
    "mscclpp._mscclpp.Error: MSCCLPP 22871 ERROR GPU gpu_ipc_mem.cc:429 Failed to open GpuIpcMemHandle (offered types: Fabric). "
    "The remote rank sent only a Fabric (MNNVL) handle, but this rank could not import it.",
])
def test_a_fabric_handle_refused_names_the_imex_entry_first(text):
    assert _host(text).get("error.fabric_handle_refused") is True
    got = answer(text)
    assert got[0][3] == "nccl/mnnvl-imex-not-working" and got[0][1] in ("likely", "possible"), [a[:4] for a in got[:3]]


def test_other_vmm_failures_are_no_fabric_refusal():
    for text in ("h:1:2 [0] transport/p2p.cc:236 NCCL WARN Cuda failure 2 'out of memory'",
                 "RuntimeError: CUDA driver error in cuMemCreate(&h, size, &prop, 0): CUDA_ERROR_OUT_OF_MEMORY"):
        assert _host(text).get("error.fabric_handle_refused") is None, text


def test_nccl_refusing_a_topology_file_or_a_value_is_a_setting_refused():
    topo = ("h:1:1 [0] NCCL INFO NCCL_TOPO_FILE set by environment to /etc/nccl/topo.xml\n"
            "h:1:1 [0] NCCL INFO Loading topology file /etc/nccl/topo.xml\n"
            "h:1:1 [0] graph/xml.cc:133 NCCL WARN XML Parse error : expecting '<', got '\t'\n"
            "h:1:1 [0] NCCL INFO graph/topo.cc:1424 -> 3")
    assert _host(topo).get("nccl.setting_refused") == "NCCL_TOPO_FILE"
    assert answer(topo)[0][0] == "nccl_env_misconfig"
    merge = "h:1:1 [0] graph/topo.cc:1757 (ncclTopoGetMergePolicy) NCCL WARN NCCL_NET_MERGE_POLICY: unknown value 'RAILS', defaulting to ALL"
    assert _host(merge).get("nccl.setting_refused") == "NCCL_NET_MERGE_POLICY"
    algo = ('h:1:1 [0] NCCL INFO NCCL_ALGO set by environment to Ring,Trees\n'
            'h:1:1 [0] graph/tuning.cc:104 NCCL WARN Unrecognized element token "Trees" when parsing "Ring,Trees"')
    assert _host(algo).get("nccl.setting_refused") == "NCCL_ALGO/NCCL_PROTO"
    # the XML reader's refusal without the file set in the log: no variable to blame
    bare = "h:1:1 [0] graph/xml.h:101 NCCL WARN Attribute busid of node nic not found"
    assert _host(bare).get("nccl.setting_refused") is None
    # NCCL adjusting a value at INFO level is no refusal
    info = ("h:1:1 [0] NCCL INFO NCCL_MIN_NCHANNELS set by environment to 128.\n"
            "h:1:1 [0] NCCL INFO User asked for a minimum of 128 channels, limiting to 64")
    assert _host(info).get("nccl.setting_refused") is None and not alarms(info)


def test_a_non_zero_status_line_is_not_a_message_said_absent():
    from p2ptop.knowledge.matcher import _ABSENT_BEFORE
    assert _ABSENT_BEFORE.search("mem_heap.cpp:1251: non-zero ") is None
    assert _ABSENT_BEFORE.search("We saw zero ") is not None and _ABSENT_BEFORE.search("* No ") is not None


# ---- rounds 75-78: the frameworks' own device checks, XLA's lines ----------------------------------------------------

@pytest.mark.parametrize("text, key", [
    ("[WARNING] [real_accelerator.py:214:get_accelerator] Setting accelerator to CPU. If you have GPU or other accelerator, "
     "we were unable to detect it.", "symptom.no_cuda_device"),
    ("GPU available: False, used: False\nTPU available: False, using: 0 TPU cores", "symptom.no_cuda_device"),
    ("RuntimeError: Unknown backend cuda. Available backends are ['cpu']", "symptom.no_cuda_device"),
    ("Device 4 is not available, available devices are [0, 1, 2, 3]", "symptom.gpus_missing"),
    ("ValueError: Total available GPUs 0 is less than total desired GPUs 8", "symptom.gpus_missing"),
    ("ValueError: Number of devices 7 must be >= the product of mesh_shape (8,)", "symptom.gpus_missing"),
    ("ValueError: Number of devices 6 must equal the product of mesh_shape (2, 4)", "symptom.gpus_missing"),
    ("numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: \n\nCUDA driver library cannot be found.", "symptom.no_cuda_device"),
    ("RuntimeError: No CUDA enabled device found. Please check your installation.", "symptom.no_cuda_device"),
    ("RuntimeError: PyNVML is installed, but NVML is not", "symptom.no_cuda_device"),
    ("amrex::Abort::0::No GPU device found !!!", "symptom.no_cuda_device"),
    ("[1748251002.014872] [node02:4519 :0]      cuda_alloc.c:38   UCX  ERROR Illegal cuda device 3 number of devices 2",
     "symptom.gpus_missing"),
    ("[0 - 7f8a1c3ff740]    0.000000 {6}{gpu}: requested cuda device id out of range: 3 >= 2", "symptom.gpus_missing"),
    ("Failed to load CUDA driver `libcuda.so.1`", "symptom.no_cuda_device"),
    ("starting... Error: the following required module is not loaded: nvidia", "symptom.no_cuda_device"),
    ("AssertionError: Distributed mode requires CUDA.", "symptom.no_cuda_device"),
    ("AssertionError: Requested 8 gpus, available 4.", "symptom.gpus_missing"),
    ("init.cu:nvshmemi_get_cucontext:528: cuda_device_id is set, but device at index 3 is not valid.", "symptom.gpus_missing"),
    ("torchrun --nproc-per-node=4 gemm.py\nLess than two devices\nLess than two devices", "symptom.gpus_missing"),
])
def test_frameworks_device_checks(text, key):
    assert _host(text).get(key) is True, text


def test_enough_devices_for_the_mesh_or_the_pool_is_no_missing_gpu():
    assert _host("ValueError: Number of devices 16 must equal the product of mesh_shape (2, 4)").get("symptom.gpus_missing") is None
    assert _host("Total available GPUs 8 is less than total desired GPUs 8").get("symptom.gpus_missing") is None


def test_xla_interconnect_status_names_the_fabric_state():
    text = ("E1129 12:10:03.410225  55102 nccl_symmetric_memory.cc:66] Interconnect Status: Fabric: state=IN_PROGRESS, "
            "status=Success, healthMask=0x0; NVLinks: 0:N, 1:N")
    assert _host(text).get("gpu.fabric_state") == "IN_PROGRESS"
    ok = text.replace("IN_PROGRESS", "COMPLETED")
    assert _host(ok).get("gpu.fabric_state") == "COMPLETED"


# ---- the host rules an NVLink link failure out where it has one GPU and no NVSwitch ---------------------------------

def test_nvlink_link_failure_is_ruled_out_on_one_gpu_without_nvswitch(tmp_path, capsys):
    import json
    import os

    from p2ptop import cli
    from p2ptop.knowledge.fact_roles import ruled_out

    from .conftest import FIXTURES

    facts = {"host.nvswitch_present": [False], "host.gpu_count": [1]}
    assert ruled_out("nvlink_link_failure", lambda k: facts.get(k, [])) is not None
    # two GPUs, or an NVSwitch, or a link count alone: nothing ruled out (links that are down are the symptom)
    for other in ({"host.nvswitch_present": [False], "host.gpu_count": [2]},
                  {"host.nvswitch_present": [True], "host.gpu_count": [1]},
                  {"pair.nvlink_count": [0], "host.gpu_count": [8]}):
        assert ruled_out("nvlink_link_failure", lambda k, o=other: o.get(k, [])) is None
    text = tmp_path / "t.txt"
    text.write_text("[ 58.3] NVRM: GPU1 _knvlinkActivateDiscoveredConns: Failed to activate link9 on GPU1!!!\n")
    h100 = os.path.join(FIXTURES, "captures", "h100x1-vm", "p2ptop-snapshot.json")
    assert cli.main(["explain", str(text), "--replay", h100, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert not [m for m in doc["matches"] if m["failure_class"] == "nvlink_link_failure" and m["confidence"] in ("likely", "possible")]
    assert any(r.get("entry") == "nvlink/links-inactive" for r in doc["ruled_out_by_host"]), doc["ruled_out_by_host"]


# ---- rounds 79-82: more programs' own device checks; Open MPI's return values; capability nodes are no GPU ----------


def test_open_mpi_accelerator_return_value_names_the_cuda_error():
    text = ("The call to cuMemcpyAsync failed. This is a unrecoverable error and will\ncause the program to abort.\n"
            "  cuMemcpyAsync(0x7f9a30000000, 0x7f51c8000000, 4194304) returned value 220\n")
    assert _host(text).get("error.cuda_code") == 220
    assert "nvlink_link_failure" in _classes(text)


def test_capability_device_nodes_missing_are_no_missing_gpu():
    assert _host("ls: cannot access '/dev/nvidia-caps-imex-channels': No such file or directory").get("symptom.no_cuda_device") is None
    assert _host("ls: cannot access '/dev/nvidia0': No such file or directory").get("symptom.no_cuda_device") is True


def test_cublasxt_peer_refusal_is_the_pairs_peer_query():
    text = "┌ Warning: cublasXt: CuDevice(1) cannot access memory on CuDevice(0); operations on device arrays may fail"
    from p2ptop.evidence import read_text

    facts = read_text(text).facts_by_subject()
    assert any(v.get("p2p.read") == "NOT_SUPPORTED" for v in facts.values()), facts


def test_a_sentence_about_fewer_devices_or_enough_gpus_is_not_the_check():
    assert _host("With less than two devices the P2P test is skipped.").get("symptom.gpus_missing") is None
    assert _host("Requested 4 gpus, available 8.").get("symptom.gpus_missing") is None


# ---- rounds 87-89: Slurm's GPU binding; dockerd's superseded CDI error ------------------------------------------------

@pytest.mark.parametrize("text", [
    "[2025-03-12T14:02:11.419] [48213.0] error: Bind request gres/gpu:map_gpu:0,1,2,3 does not specify any devices within "
    "the allocation for task 3. Binding to the first device in the allocation instead.",
    "[2025-03-12T15:20:07.902] [48230.0] error: Not enough gres to bind 2 per task",
    "[2025-03-13T07:55:21.008] error: _set_gres_device_desc: stat(/dev/nvidia7): No such file or directory",
    "[2025-03-13T11:27:02.114] error: _find_invalid_job_gres_on_node: Killing job 48340: gres/gpu type a100 not found on node gpu-b04",
])
def test_slurm_gpu_binding_and_device_checks_are_fewer_gpus(text):
    assert _host(text).get("symptom.gpus_missing") is True, text


def test_a_cdi_error_dockerd_ignored_after_the_hook_succeeded_is_no_alarm():
    ignored = ('time="2026-11-29T10:14:52Z" level=warning msg="Ignoring previous errors updating spec" '
               'error="CDI device injection failed: unresolvable CDI devices nvidia.com/gpu=all"')
    assert not alarms(ignored)
    failed = "docker: Error response from daemon: failed to inject CDI devices: unresolvable CDI devices nvidia.com/gpu=all."
    assert "container/toolkit-mode-cdi-or-hook-refused" in [a[3] for a in answer(failed) if a[1] in ("likely", "possible")]


def test_a_container_refused_the_donors_ipc_namespace_is_the_ipc_boundary():
    for text in ("docker: Error response from daemon: failed to join IPC namespace: container rank0: non-shareable IPC "
                 "(hint: use IpcMode:shareable for the donor container)",
                 "docker: Error response from daemon: failed to join IPC namespace: container rank0 is not running"):
        assert "cuda_ipc_cross_boundary" in _classes(text, 1), text
