"""Rules written after fresh9 was judged (2026-11-27), each from its own source, none for one paste alone.

1. libnvidia-container's refusal of a device list (src/cli/common.c, select_devices: a device string matching no GPU
   UUID, PCI bus id, index or MIG device -> "<dev>: unknown device", printed after "device error:"): a container asked
   for a GPU the host or the allocation does not have (NVIDIA maintainer on nvidia-docker#1283). A device that is a
   path (the volume-mount way of passing the list, nvidia-container-toolkit#108) is not this.
2. NVLink not found, in Chinese with the verb first (查不到/找不到/看不到 NVLink), and a bridge re-seated in Chinese
   with its aspect words (重新插了一次 NVLink), fixed when the next sentence says so (然后 ... 正常了)."""

from __future__ import annotations

import pytest

from p2ptop.commands.explain import explain

from .kbtools import bundled_kb, host_facts

KB = bundled_kb()


def first(text: str):
    ms = [m for m, _ in explain(KB, text, [], 3)]
    return (ms[0].entry.id, ms[0].confidence) if ms else (None, None)


@pytest.mark.parametrize("text", [
    "docker: Error response from daemon: OCI runtime create failed: ... stderr: nvidia-container-cli: device error: 1: unknown device\\n\"\"\": unknown.",
    "nvidia-container-cli.real: device error: MIG-GPU-932bfb2c-849a-2a22-1e84-9eff6bc02b39/1/0: unknown device",
    "enroot start fails: nvidia-container-cli: device error: GPU-6c3a1f0e-2b7d-4a51-9e3c-0d8f7b2a6e11: unknown device",
])
def test_container_cli_unknown_device(text):
    assert first(text) == ("container/visible-devices-unknown-device", "likely")


def test_container_cli_unknown_device_path_is_not_it():
    text = "nvidia-container-cli: device error: /var/run/nvidia-container-devices: unknown device: unknown"
    entry, confidence = first(text)
    assert entry != "container/visible-devices-unknown-device" or confidence == "unsure"  # a word lead at most


@pytest.mark.parametrize("text", [
    "装好以后用 nvidia-smi topo -m 查不到 NVLink，两块 3090。",
    "用检查命令查不到nvlink工作。",
    "后来断电关机，重新插了一次NVlink，听到咔哒一声。然后再开机，一切正常了。",
    "I reseated the NVLink bridge and now it works.",
])
def test_nvlink_down_read_in_words(text):
    assert host_facts(text).get("gpu.nvlink_down") == 1


@pytest.mark.parametrize("text", [
    "重新插了一次NVlink，还是不行。",  # re-seated, not fixed: no fact
    "nvidia-smi nvlink -s 能看到 NVLink 都是 25 GB/s。",
    "I reseated the NVLink bridge. It still does not work.",
])
def test_nvlink_down_not_read(text):
    assert host_facts(text).get("gpu.nvlink_down") is None


# 3. After fresh10 was judged: NCCL's "Failed to open libibverbs.so[.1]" is no failure (misc/ibvwrap.cc: WARN up to 2.10,
#    INFO from 2.11, then "Using network Socket"); AMD's Threadripper-only chipsets name the CPU vendor; a bare GeForce
#    number followed by its memory ("3090 24g*2") names the card.
def test_libibverbs_warn_is_no_symptom():
    text = ("host:1:1 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
            "host:1:1 [0] NCCL INFO Using network Socket\nNCCL version 2.10.3+cuda11.3\n")
    facts = host_facts(text)
    assert "error.text" not in facts and "symptom.fails" not in facts
    # a real failure WARN beside it still is one
    bad = text + "host:1:1 [0] misc/shmutils.cc:72 NCCL WARN Error: failed to extend /dev/shm/nccl-x to 9637892 bytes\n"
    assert "error.text" in host_facts(bad)


@pytest.mark.parametrize("text", ["ASUS Pro WS WRX80E-SAGE with two A6000", "Gigabyte X399 board", "a TRX40 workstation"])
def test_threadripper_chipsets_name_amd(text):
    assert host_facts(text).get("host.cpu_vendor") == "AMD"


@pytest.mark.parametrize("text, name", [("centos 7.9 3090 24g*2", "3090"), ("两台 4090 24GB", "4090")])
def test_geforce_number_with_its_memory_is_a_card(text, name):
    f = host_facts(text)
    assert f.get("gpu.name") == name and f.get("gpu.consumer") is True


def test_a_number_without_a_gpu_word_is_no_card():
    assert "gpu.name" not in host_facts("the service listens on port 3090 for 24 hours")


# 4. A launch asking for more processes per node than the GPUs the text gives (evidence/launch.py; torchrun's
#    --nproc-per-node, DeepSpeed's --num_gpus, Accelerate's num_processes, "over 8 workers"): the setup that explains
#    an invalid device ordinal; MIG's ranks entry (its setup, MIG, unsaid) stays unsure beside it.
@pytest.mark.parametrize("text", [
    "2x RTX 3090\ntorchrun --nproc_per_node=8 train.py\nRuntimeError: CUDA error: invalid device ordinal",
    "I only have one A10G GPU. The script distributes the load over 8 workers and I get "
    "RuntimeError: CUDA error: invalid device ordinal",
    "服务器是 4 卡 V100，deepspeed --num_gpus 8 train.py 报错 RuntimeError: CUDA error: invalid device ordinal",
])
def test_ranks_past_the_gpus_explain_an_invalid_ordinal(text):
    assert host_facts(text).get("host.ranks_exceed_gpus") is True
    ranked = [m for m, _ in explain(KB, text, [], 3)]
    assert (ranked[0].entry.id, ranked[0].confidence) == ("cuda/invalid-device-ordinal-hidden-gpu", "likely")
    assert all(m.confidence == "unsure" for m in ranked if m.entry.failure_class == "mig_p2p_unsupported")


@pytest.mark.parametrize("text", [
    "8x A100 node, torchrun --nproc_per_node=8 train.py hangs",       # as many ranks as GPUs
    "torchrun --nproc_per_node=8 train.py",                          # no GPU count given
    "one GPU per process, torchrun --nproc_per_node=4 on 4 GPUs",    # "per process" counts no host
    "DataLoader(num_workers=8) on one GPU",                          # a DataLoader's workers are no launch
])
def test_no_excess_read(text):
    assert "host.ranks_exceed_gpus" not in host_facts(text)


def test_mig_ranks_entry_still_likely_with_mig_said():
    text = "A100 with MIG enabled (3g.40gb x2), torchrun --nproc_per_node=2: RuntimeError: CUDA error: invalid device ordinal"
    ranked = [m for m, _ in explain(KB, text, [], 3)]
    assert ranked[0].entry.failure_class == "mig_p2p_unsupported" and ranked[0].confidence in ("likely", "possible")


def test_ranks_past_the_gpus_nvidia_smi_lists():
    """The GPUs a pasted `nvidia-smi -L` lists count as the text's (host.gpu_count, read before the launch)."""
    text = ("$ nvidia-smi -L\nGPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-2c8a6b16-b2c2-3df8-4a46-1c019335308d)\n"
            "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-962af040-706b-3db6-21a1-fe9ecdd84ccd)\n"
            "$ torchrun --standalone --nproc_per_node=4 r.py\n[rank2]: RuntimeError: CUDA error: invalid device ordinal\n")
    assert host_facts(text).get("host.ranks_exceed_gpus") is True
    assert host_facts(text.replace("nproc_per_node=4", "nproc_per_node=2")).get("host.ranks_exceed_gpus") is None


def test_real_torchrun_summary_with_more_ranks_than_gpus():
    """The failure summary torchrun printed on a real 2 x H100 host for --nproc_per_node=4 (its CUDA error is above the
    last 40 lines): the hidden-GPU entry comes first, unsure (its own text is absent), on the launch against the GPUs."""
    import pathlib

    text = (pathlib.Path(__file__).parent / "fixtures" / "device" / "h100x2-nccl" / "torchrun-nproc4-on-2-gpus.txt").read_text()
    assert host_facts(text).get("host.ranks_exceed_gpus") is True
    ranked = [m for m, _ in explain(KB, text, [], 3)]
    assert ranked[0].entry.id == "cuda/invalid-device-ordinal-hidden-gpu"


def test_verbs_local_protection_error_on_gpu_memory():
    """The verbs layer's own name of completion status 4 (rdma-core ibv_wc_status_str: IBV_WC_LOC_PROT_ERR ->
    "local protection error"), as UCX prints it for GPU memory, is the NCCL entry's 'error 4' (ACS and GPUDirect RDMA)."""
    text = ("osu_bw D D with CUDA device memory over mlx5_0 (GPUDirect RDMA)\n"
            "mlx5:  got completion with error:\nrc_verbs_iface.c:67   send completion with error: local protection error\n")
    ranked = [m for m, _ in explain(KB, text, [], 3)]
    assert ranked and ranked[0].entry.id == "nccl/ib-completion-error-4-acs-gdr"


@pytest.mark.parametrize("text, hang", [("进程会出现阻塞现象", True), ("all_reduce 时通信发生阻塞", True), ("非阻塞通信 isend 的用法", None)])
def test_blocking_said_in_chinese_is_a_hang(text, hang):
    assert host_facts(text).get("symptom.hang") is hang


@pytest.mark.parametrize("text", [
    "intel_iommu=on\nDMAR: [DMA Write] Request device [41:00.0] fault addr 0x7f3c0000 [fault reason 0x05] PTE Write access is not set",
    "intel_iommu=on\nDMAR:[DMA Read] Request device [  :  :  .  ] fault addr 1e0000\nDMAR:[fault reason 06] PTE Read access is not set",
])
def test_vt_d_fault_report_in_both_forms(text):
    """Intel VT-d's fault report (linux drivers/iommu/intel/dmar.c: one line, or the reason on its own line in older
    kernels; a bus id masked in a paste) makes the IOMMU entry an answer, not a lead."""
    ranked = [m for m, _ in explain(KB, text, [], 3)]
    assert ranked[0].entry.id == "iommu/p2p-hang-or-corruption" and ranked[0].confidence in ("likely", "possible")


def test_pytorch_watchdog_caveat_is_no_wrong_result():
    """PyTorch's watchdog says 'subsequent GPU operations might run on corrupted/incomplete data' after every NCCL
    timeout (ProcessGroupNCCL.cpp): a hang, no wrong result seen."""
    text = ("[E ProcessGroupNCCL.cpp:474] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, "
            "OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800108 milliseconds before timing out.\n"
            "[E ProcessGroupNCCL.cpp:488] Some NCCL operations have failed or timed out. Due to the asynchronous nature of "
            "CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.\n")
    facts = host_facts(text)
    assert facts.get("symptom.hang") is True and "symptom.wrong_results" not in facts
    assert host_facts("after all_reduce the tensors are corrupted on GPU1").get("symptom.wrong_results") is True


def test_shm_exhausted_with_resource_word():
    assert host_facts("当因共享内存资源不足导致程序错误时").get("symptom.shm_exhausted") is True
