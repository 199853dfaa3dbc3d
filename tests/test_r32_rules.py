"""Rules of the twelfth session (2026-11-29, third), each written from a library's own source, never from one case.

1. An NCCL build without the GPU's architecture: NCCL's kernel look-up (src/enqueue.cc, ncclInitKernelsForDevice) failing
   with CUDA's messages for a kernel the loaded image lacks (500, 98, 209), PyTorch's capability check
   (torch/cuda/__init__.py _check_capability) and the CUDA releases that compile for each architecture (NCCL's
   makefiles/common.mk, CUDA's release notes).
"""

from __future__ import annotations

from p2ptop.evidence import builds

from .kbtools import alarms, answer, explained
from .kbtools import host_facts as _host


def _ids(text, n=3):
    return [a[3] for a in answer(text)[:n]]


# ---- 1. an NCCL build without the GPU's architecture -----------------------------------------------------------------

def test_nccl_kernel_lookup_failures_name_the_build_entry_in_each_format():
    lines = [
        "h:1:2 [0] enqueue.cc:58 NCCL WARN Cuda failure 'named symbol not found'",            # 2.18-2.21
        "h:1:2 [0] enqueue.cc:42 NCCL WARN Cuda failure 500 'named symbol not found'",        # 2.19+: with the number
        "h:1:2 [1] enqueue.cc:47 NCCL WARN Cuda failure 'invalid device function'",
        "h: Test CUDA failure common.cu:892 'no kernel image is available for execution on the device'",  # nccl-tests
        "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled cuda error "
        "(run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\nncclUnhandledCudaError: Call to CUDA function "
        "failed.\nLast error:\nCuda failure 'named symbol not found'",
    ]
    for text in lines:
        assert _ids(text, 1) == ["nccl/build-lacks-gpu-architecture"], text
        assert answer(text)[0][0] == "nccl_version_bug"


def test_other_cuda_failures_in_nccl_do_not_name_it():
    for text in ("h:1:2 [0] transport/p2p.cc:238 NCCL WARN Cuda failure 'peer access is not supported between these two devices'",
                 "h:1:2 [0] enqueue.cc:58 NCCL WARN Cuda failure 'out of memory'"):
        assert "nccl/build-lacks-gpu-architecture" not in _ids(text), text
    # a framework's own kernel missing is no NCCL line: at most a candidate on its words, never likely or possible
    assert not [a for a in answer("RuntimeError: CUDA error: named symbol not found")
                if a[3] == "nccl/build-lacks-gpu-architecture" and a[1] in ("likely", "possible")]


def test_pytorch_capability_warnings_say_the_build_lacks_the_gpu():
    new = ("UserWarning:\nNVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch "
           "installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.")
    assert _host(new)["host.build_lacks_gpu_arch"] is True
    old = ("UserWarning:\n    Found GPU0 Tesla K80 which is of cuda capability 3.7.\n    PyTorch no longer supports this GPU "
           "because it is too old.\n    The minimum cuda capability supported by this library is 5.0.")
    assert _host(old)["host.build_lacks_gpu_arch"] is True
    # context only: the warning alone offers no failure entry
    assert not alarms(new) and not alarms(old)


def test_a_cuda_build_older_or_newer_than_the_gpus_architecture():
    # NCCL built with CUDA 11.8 on a Blackwell GPU: CUDA 12.8 is the first to compile for it
    text = "Two RTX 5090 GPUs.\nh:1:1 [0] NCCL INFO NCCL version 2.14.3+cuda11.8\n"
    assert _host(text)["host.build_lacks_gpu_arch"] is True
    # CUDA 13 no longer compiles for Volta
    assert _host("8x V100 SXM2\nNCCL version 2.28.3+cuda13.0\n")["host.build_lacks_gpu_arch"] is True
    # PyTorch's collect_env: CUDA 11.7 on H100 (11.8 is the first for Hopper)
    env = ("CUDA used to build PyTorch: 11.7\nIs CUDA available: True\nGPU models and configuration:\nGPU 0: NVIDIA H100 80GB HBM3\n"
           "GPU 1: NVIDIA H100 80GB HBM3\nNvidia driver version: 535.104.05\n")
    assert _host(env)["host.build_lacks_gpu_arch"] is True
    # builds that know the GPU: nothing
    for ok in ("8x H100\nNCCL version 2.21.5+cuda12.4\n", "2x RTX 5090\nNCCL version 2.26.2+cuda12.8\n",
               "Tesla V100\nNCCL version 2.18.1+cuda12.1\n", "NCCL version 2.14.3+cuda11.8\n"):
        assert "host.build_lacks_gpu_arch" not in _host(ok), ok


def test_the_build_fact_ranks_the_entry_over_a_bare_cuda_failure():
    bare = "h:1:2 [0] enqueue.cc:58 NCCL WARN Cuda failure 'named symbol not found'"
    with_build = "2x RTX 5090\nNCCL version 2.14.3+cuda11.8\n" + bare
    (top_bare, c_bare), (top_build, c_build) = explained(bare)[0], explained(with_build)[0]
    assert top_bare == top_build == "nccl_version_bug"
    assert c_build in ("likely",) and c_bare in ("likely", "possible")


def test_architectures_of_compute_capabilities():
    assert [builds.arch_of_sm(s) for s in (35, 52, 61, 70, 75, 80, 86, 89, 90, 100, 120, 121)] == [
        "Kepler", "Maxwell", "Pascal", "Volta", "Turing", "Ampere", "Ampere", "Ada", "Hopper", "Blackwell", "Blackwell",
        "Blackwell"]


# ---- 2. NCCL_P2P_LEVEL below the pair's path ---------------------------------------------------------------------------

def _level_log(level, path, transport="SHM/direct/direct"):
    return (f"$ nvidia-smi topo -m\n        GPU0    GPU1    CPU Affinity    NUMA Affinity\nGPU0     X      {path}     0-31            0\n"
            f"GPU1    {path}      X      0-31            0\n"
            f"host:100:200 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to {level}\n"
            f"host:100:200 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via {transport}\n")


def test_nccl_levels_follow_ncclGetLevel():
    from p2ptop.nccl import levels
    assert [levels.level_name(v) for v in ("nvl", "PXB", "0", "1", "2", "3", "4", "7", "x")] == [
        "NVL", "PXB", "LOC", "PIX", "PXB", "PHB", "SYS", "SYS", None]
    assert [levels.path_type(p) for p in ("NV18", "PIX", "PXB", "NODE", "PHB", "SYS", "X")] == [
        "NVL", "PIX", "PXB", "PHB", "PHB", "SYS", None]
    assert levels.below_path("NVL", "PXB") and levels.below_path("PXB", "NODE") and levels.below_path("2", "SYS")
    assert not levels.below_path("PHB", "NODE") and not levels.below_path("SYS", "SYS") and not levels.below_path("NVL", "NV4")


def test_a_level_below_the_path_is_the_settings_entry():
    from .kbtools import text_facts
    for level, path in (("NVL", "PIX"), ("NVL", "PHB"), ("PIX", "PXB"), ("PXB", "NODE"), ("PHB", "SYS"), ("1", "PXB")):
        text = _level_log(level, path)
        assert text_facts(text)["pair:0-1"]["nccl.p2p_off_by_level"] is True, (level, path)
        assert _ids(text, 1) == ["nccl/p2p-level-below-pair-path"], (level, path)
        assert answer(text)[0][1] in ("likely", "possible")


def test_no_level_fact_where_the_level_allows_the_path_or_p2p_is_used():
    from .kbtools import text_facts
    for level, path, tr in (("SYS", "PHB", "SHM/direct/direct"), ("PHB", "NODE", "SHM/direct/direct"),
                            ("NVL", "NV4", "SHM/direct/direct"), ("NVL", "PIX", "P2P/CUMEM")):
        facts = text_facts(_level_log(level, path, tr)).get("pair:0-1", {})
        assert "nccl.p2p_off_by_level" not in facts, (level, path, tr)
    # LOC has its own entry; NCCL_P2P_DISABLE=1 wins over any level
    assert "nccl/p2p-level-below-pair-path" not in _ids(_level_log("LOC", "PIX"))
    off = _level_log("NVL", "PXB").replace("NCCL INFO NCCL_P2P_LEVEL", "NCCL INFO NCCL_P2P_DISABLE set by environment to 1\n"
                                           "host:100:200 [0] NCCL INFO NCCL_P2P_LEVEL")
    assert "nccl.p2p_off_by_level" not in text_facts(off).get("pair:0-1", {})


def test_the_live_hosts_path_with_the_texts_level(tmp_path):
    """The matcher applies the rule with the host's pair facts where the paste gives no path."""
    from p2ptop.findings import Finding
    from p2ptop.knowledge.matcher import match
    from .kbtools import bundled_kb
    text = ("host:100:200 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to NVL\n"
            "host:100:200 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct\n")
    host = [Finding("pair.facts", "pair:0-1", "ok", "pair facts", ["live host"], {"pair.path": "PXB", "p2p.read": "OK"})]
    ranked = match(bundled_kb(), text, host)
    assert ranked and ranked[0].entry.id == "nccl/p2p-level-below-pair-path"


def test_nccl_tables_reason_reads_old_level_numbers_as_nccl_does():
    from p2ptop.nccl.findings import _reasons
    ev, _facts = _reasons({"env": {"NCCL_P2P_LEVEL": "2"}, "env_lines": {"NCCL_P2P_LEVEL": 3}}, {"worst": "SHM"}, "PXB", None)
    assert not any("below this pair's path" in e for e in ev)  # 2 is PXB (levelsOldToNew), not PIX
    ev, _facts = _reasons({"env": {"NCCL_P2P_LEVEL": "1"}, "env_lines": {"NCCL_P2P_LEVEL": 3}}, {"worst": "SHM"}, "PXB", None)
    assert any("below this pair's path" in e for e in ev)


# ---- 3. after opening fresh31 (general rules; the part was judged blind first) ------------------------------------------

def test_no_gain_from_more_gpus_is_slowness_not_a_failure():
    for text in ("Training doesn't get any faster with 2 GPUs.", "The model does not run faster with multiple GPUs.",
                 "There is no speedup with 4 GPUs at all.", "With two cards it runs at the same speed as one GPU.",
                 "8 GPUs are as slow as a single GPU for this model.", "Our epoch time is much longer than the paper's with 4 GPUs.",
                 "两张卡训练，多卡没有变快"):
        facts = _host(text)
        assert facts.get("symptom.slow") is True, text
        assert "symptom.fails" not in facts, text
    for text in ("It runs faster with 2 GPUs.", "The job does not run on GPU 1."):
        assert _host(text).get("symptom.slow") is None, text
    assert _host("The job does not run on GPU 1.").get("symptom.fails") is True


def test_tesla_m_series_are_maxwell_data_centre_gpus():
    from p2ptop.evidence.gpus import classify
    assert classify("Tesla M40 24GB") == ("data-centre", "Maxwell")
    assert classify("Tesla M60") == ("data-centre", "Maxwell")
    facts = _host("I train on eight Tesla M40 cards and it is slow.")
    assert facts["gpu.architecture"] == "Maxwell" and facts["gpu.consumer"] is False


# ---- 4. rounds 63-64 (RL post-training stacks; KV-cache transfer): general readings their probes asked for -----------

def test_rl_stacks_device_checks_are_fewer_gpus_seen():
    for text in ("RuntimeError: GPU id 6 is not valid under CUDA_VISIBLE_DEVICES=0,1,2,3. Expected one of [0, 1, 2, 3]",
                 "GPUAllocationError: Requested 8 GPUs but only 4 available",
                 "AssertionError: num_gpus 16 > available_gpu 8.0",
                 "Exception: Invalid device_uuid=3b1f9c2e-7a41-5d0e-9c6b-1f2a8e4d7c90",
                 "LocalScheduler WARNING: Invalid CUDA_VISIBLE_DEVICES: GPU-8d1f0a3c,GPU-1c9e7b20, using default [0]"):
        assert _host(text).get("symptom.gpus_missing") is True, text
        assert answer(text)[0][0] == "device_not_visible", text


def test_expert_parallel_kernels_timeouts_are_hangs_and_nixl_names_gpus():
    from p2ptop.evidence import read_text
    for text in ("DeepEP dispatch NVL receiver timeout, channel: 3, RDMA: 0, nvl: 2, src NVL: 5, head: 117, tail: 117",
                 "DeepEP timeout for dispatch receivers, rank 0, responsible_channel = 3, tokens remained: 12",
                 "Warning: NixlEP timeout for barrier, rank 1, thread 6, dst_rank 6, expected value 4, actual value 3"):
        assert _host(text).get("symptom.hang") is True, text
    assert read_text("nixl_agent: registration failed for VRAM").gpu_related
    assert _host("the receive timeout is 30 s").get("symptom.hang") is None


# ---- 5. after opening fresh32: NCCL's graph-capture refusal (src/misc/strongstream.cc), build or driver ----------------

_GRAPH = ("NCCL cannot be captured in a graph if either it wasn't built with CUDA runtime >= 11.3 or if the installed CUDA "
          "driver < R465.")


def test_graph_capture_refusal_names_the_build_and_doubts_it_on_a_driver_older_than_r465():
    wrapped = ("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:2395, invalid usage (run with "
               "NCCL_DEBUG=WARN for details), NCCL version 2.19.3\nncclInvalidUsage: This usually reflects invalid usage of "
               "NCCL library.\nLast error:\n" + _GRAPH)
    assert _ids(wrapped, 1) == ["nccl/graph-capture-needs-cuda-11-3-build"]
    built_old = "NCCL version 2.19.3+cuda11.0\n" + _GRAPH + "\nDriver Version: 535.104.05"
    assert answer(built_old)[0][:2] == ("nccl_version_bug", "likely")
    # a driver older than R465 is the check's other half: the build entry stays in doubt (unsure) and says so
    old_driver = "Driver Version: 460.32.03\n" + _GRAPH
    top = answer(old_driver)
    assert top[0][3] == "nccl/graph-capture-needs-cuda-11-3-build" and top[0][1] == "unsure"


# ---- 6. confidential computing: one GPU per confidential VM outside protected PCIe (NVIDIA's CC release notes) ---------

def test_cc_mode_as_each_tool_prints_it():
    admin = "2025-11-03,14:22:07.512 INFO     GPU 0000:c3:00.0 H100 0x2330 BAR0 0xa4000000 CC mode is on"
    assert _host(admin)["host.cc_mode"] == "on"
    assert _host(admin.replace("CC mode is on", "PPCIe mode is on"))["host.cc_mode"] == "ppcie"
    assert _host(admin.replace("is on", "is off"))["host.cc_mode"] == "off"
    assert _host("$ nvidia-smi conf-compute -f\nCC status: ON")["host.cc_mode"] == "on"
    assert _host("nvidia-smi conf-compute -mgm\nMulti-GPU Mode: Protected PCIe")["host.cc_mode"] == "ppcie"
    assert _host("kubectl label node n1 nvidia.com/cc.mode=ppcie --overwrite")["host.cc_mode"] == "ppcie"
    assert _host("h:1:2 [0] NCCL INFO CC On, workFifoBytes 0")["host.cc_mode"] == "enabled"
    assert "host.cc_mode" not in _host("h:1:2 [0] NCCL INFO CC Off, workFifoBytes 1073741824")
    assert _host("Two H100 with confidential computing enabled in one TDX VM")["host.cc_mode"] == "on"
    assert "host.cc_mode" not in _host("the scc mode is on")


def test_several_cc_gpus_in_one_vm_is_the_cc_entry_never_on_context_alone():
    cc_217 = ("h:1:2 [0] NCCL INFO CC On, workFifoBytes 0\nh:1:2 [0] transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC "
              "handle : 217 peer access is not supported between these two devices")
    assert _ids(cc_217, 1) == ["vm/confidential-computing-one-gpu-per-vm"] and answer(cc_217)[0][1] == "likely"
    hang = "GPU 0000:c3:00.0 H100 0x2330 BAR0 0xa4000000 CC mode is on\nNCCL all_reduce hangs between the 2 GPUs."
    assert _ids(hang, 1) == ["vm/confidential-computing-one-gpu-per-vm"]
    # the multi-GPU mode is what several GPUs per VM need: never this entry
    assert "vm/confidential-computing-one-gpu-per-vm" not in _ids(hang.replace("CC mode", "PPCIe mode"))
    # a 217 without any CC mode said does not name it; CC mode with nothing failing offers nothing
    assert "vm/confidential-computing-one-gpu-per-vm" not in _ids(cc_217.split("\n", 1)[1])
    assert not alarms("CC mode is on. Everything works fine with one GPU.")


def test_round_65_device_messages_of_mlc_and_realm():
    assert _host("ValueError: Device is not found on your local environment: cuda").get("symptom.no_cuda_device") is True
    assert _host("[0 - 7f2e9c5fd000]    0.000000 {6}{gpu}: 4 GPUs requested, but only 2 available!").get("symptom.gpus_missing") is True


def test_the_live_hosts_cc_mode_with_a_pasted_hang():
    """The host's NVML CC state (snapshot.cc_mode) joins a pasted log's symptom, as the text's own would."""
    from p2ptop.findings import Finding
    from p2ptop.knowledge.matcher import match
    from .kbtools import bundled_kb
    host = [Finding("host.facts", "host", "info", "host facts", ["live host"], {"host.cc_mode": "on", "host.gpu_count": 2})]
    ranked = match(bundled_kb(), "NCCL all_reduce hangs between the two GPUs after init.", host)
    assert ranked and ranked[0].entry.id == "vm/confidential-computing-one-gpu-per-vm"
    off = [Finding("host.facts", "host", "info", "host facts", ["live host"], {"host.cc_mode": "off", "host.gpu_count": 2})]
    assert "vm/confidential-computing-one-gpu-per-vm" not in [m.entry.id for m in match(bundled_kb(), "NCCL all_reduce hangs.", off)]


def test_round_66_nccl_2_30_refusals_of_a_setting_and_of_a_buffer():
    for text in ("h:1:1 [0] NCCL INFO NCCL_NVLINK_UTIL_CENTRIC_SCHED_ENABLE 2 is not valid, leaving it set at -2147483648",
                 "h:1:1 [0] NCCL INFO NCCL_MAX_P2P_PEERS 0 is too low, leaving it set at -2147483648",
                 "h:1:1 [0] NCCL INFO nvlsCTAs 0 is not a valid value, NCCL will decide the default value automatically",
                 "h:1:1 [0] mem_manager.cc:940 (ncclCommSuspend) NCCL WARN MemManager: Suspend not supported, memory manager is disabled"):
        assert _ids(text, 1) == ["nccl/setting-not-usable"], text
    assert _host("job:1:1 [0] os/linux.cc:615 (ncclOsNvmlOpen) NCCL WARN Failed to open libnvidia-ml.so.1: libnvidia-ml.so.1: "
                 "cannot open shared object file: No such file or directory").get("symptom.no_cuda_device") is True
    seg = ("h:1:1 [0] dev_runtime_segments.cc:78 (ncclDevrValidateHandleLocationType) NCCL WARN Segment 1 has unsupported "
           "location type 2. Symmetric memory currently only supports CU_MEM_LOCATION_TYPE_HOST_NUMA and CU_MEM_LOCATION_TYPE_DEVICE.")
    assert _host(seg).get("error.text", "").startswith("Segment 1 has unsupported location type")


def test_round_68_userbuffers_timeouts_are_hangs_and_nemo_counts_gpus():
    for text in ("[userbuffers.cu:kuserbuffers_pushrecv:2073] pushrecv [grank dst:1 global src:0][nvrank(GPU) dst: 1 src: 0]: "
                 "expecting 3, observed 0",
                 "[userbuffers.cu:userbuffers_fp16_sum_inplace_gpu_rw_ag:1352] [0] Allgather: SM 15 [1]: expecting 1 got 0"):
        assert _host(text).get("symptom.hang") is True, text
    assert _host("AssertionError: Not enough GPUs, requesting 4").get("symptom.gpus_missing") is True


def test_round_67_paddle_and_oneflow_device_checks_and_paddles_peer_refusals():
    from .kbtools import text_facts
    for text in ("RuntimeError: the number of visible devices(2) is less than the number of spawn processes(4)",
                 "ValueError: The selected gpu card 2 cannot found in CUDA_VISIBLE_DEVICES (0,1).",
                 "AssertionError: Can't find your selected_gpus 6 in CUDA_VISIBLE_DEVICES[0,1,2,3].",
                 "AssertionError: The device id 3 exceeds gpu card number 2",
                 "[Hint: Expected id < GetGPUDeviceCount(), but received id:2 >= GetGPUDeviceCount():2.]",
                 "E1120 11:02:45.880213  9921 place.cc:386] Invalid CUDAPlace(4), must inside [0, 4), because GPU number on your machine is 4",
                 "RuntimeError: Error: Check failed: (2 < 2) Placement is invalid because device id must be less than num devices on node"):
        assert _host(text).get("symptom.gpus_missing") is True, text
    assert _host("RuntimeError: Error: Placement is invalid because there is no device!").get("symptom.no_cuda_device") is True
    w = "W1120 10:21:33.118476  4521 parallel_executor.cc:664] Cannot enable P2P access from 2 to 0"
    assert text_facts(w)["pair:0-2"]["p2p.read"] == "NOT_SUPPORTED"
    v = "I1120 10:40:02.551270  7310 cuda_virtual_mem_allocator.cc:58] device(0) can not access peer to device(3)"
    assert text_facts(v)["pair:0-3"]["p2p.read"] == "NOT_SUPPORTED"


def test_round_70_health_checkers_xids_and_counts():
    gke = ("I1129 06:20:51.011377       1 health_checker.go:323] XIDCritialError Condition not exists, adding:%!(EXTRA uint64=79)")
    facts = _host(gke)
    assert facts["host.xid_codes"] == "79" and facts["gpu.lost"] is True
    cond = '  XidCriticalError     True    Sat, 29 Nov 2026 06:25:51 +0000   Sat, 29 Nov 2026 06:20:51 +0000   {"79":true}   3f9c2e1a'
    assert _host(cond)["host.xid_codes"] == "79"
    for text in ('fatal: [a3m-login-001]: FAILED! => {"changed": false, "msg": "GPU count did not match 8"}',
                 "[FAIL] 3-topology-check: Topology GPU count mismatch: expected=8, topo=7 (severity: ISOLATE)"):
        assert _host(text).get("symptom.gpus_missing") is True, text
    assert "symptom.gpus_missing" not in _host("[FAIL] 3-topology-check: Topology GPU count mismatch: expected=8, topo=8")
    assert _host("ERROR:  nhc:  Health check failed:  check_nvsmi_healthmon:  nvidia-smi:  NVIDIA driver not loaded. "
                 "FaultCode: NHCNA").get("symptom.no_cuda_device") is True


def test_round_69_open_mpi_ipc_calls_yaksa_and_htcondor():
    ompi = ("[node05:41877] error in cuIpcOpenMemHandle\n[node05:41877] open_ipc_handle failed: base=(nil) (remote "
            "base=0x7f8e24000000,size=16777216)\n[node05:41877] mca_smsc_accelerator_copy: Failed to register remote memory, ret=-1")
    assert _host(ompi)["error.cuda_call"] == "cuIpcOpenMemHandle"
    assert "cuda_ipc_cross_boundary" in [a[0] for a in answer(ompi)[:3]]
    yaksa = "[yaksa] CUDA is setup in exclusive compute mode, but CUDA_VISIBLE_DEVICES is not set"
    assert _ids(yaksa, 1) == ["cuda/devices-busy-exclusive-compute-mode"]
    assert _host("diag: cuInit found no CUDA-capable devices. code=100").get("symptom.no_cuda_device") is True


def test_round_71_driver_lines_of_fabric_manager_and_multicast():
    for text in ("[ 9127.550318] NVRM: _clearFmState: nvidia-fabricmanager daemon shutdown detected, robust channel recovery invoked!",
                 "[  412.018902] NVRM: GPU2 knvlinkCheckNvswitchP2pConfig_IMPL: GPU 2 doesn't have a fabric address"):
        assert _ids(text, 1) == ["fabric-manager/not-running-system-not-initialized"], text
    mc = "[ 5120.771342] NVRM: GPU4 _memMulticastFabricAttachGpuPostProcessor: Insufficient mcAddressSize returned from Fabric Manager"
    assert "nccl/nvls-multicast-setup-failed" in _ids(mc)
    ok = "[  96.414352] NVRM: GPU3 knvlinkSetUniqueFabricBaseAddress_GV100: Fabric base addr 10000000000 is assigned to GPU 3"
    assert not alarms(ok)
