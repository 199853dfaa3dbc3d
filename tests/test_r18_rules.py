"""Rules of 2026-11-28 (sixth session), each from its own source, none for one paste.

Before the fresh20 part was judged (source audits):
1. The kernel's PCI link report (drivers/pci/pci.c __pcie_print_link_status: "... Gb/s available PCIe bandwidth,
   limited by 8.0 GT/s PCIe x8 link at ... (capable of ... with 16.0 GT/s PCIe x16 link)") of an NVIDIA function (the
   line's driver is nvidia, or the enumeration line gives vendor 10de with a display/3D class) gives its link's speed and
   width against its capability, the facts lspci's LnkSta/LnkCap give; another device's line gives nothing.
2. DCGM's output has its own reader (evidence/dcgm.py) for the messages of dcgmlib/dcgm_errors.h: NVLink error counters
   over DCGM's threshold, a counter that must stay zero, a PCIe generation/width below DCGM's minimum under load, an Xid
   DCGM saw; DCGM's PCIe replay, NvSwitch fatal and SXID messages are regexes of their entries.
After opening fresh20 (labelled so):
3. A speedup over GPUs said below the count ("a 1.6x speedup instead of 2x", "only 1.3x faster", "sub-linear scaling",
   加速比只有) is slow.
4. The Unix-socket IPC helpers' own failures (cuda-samples helper_multiprocess and NVSHMEM: "IPC failure: Sending data
   over socket failed", NVSHMEM's NVSHMEMI_IPC_CHECK "Fatal IPC Failure") are the CUDA IPC entry's, as NCCL's UDS ones.
And the matcher keeps the lines an entry's own text hit on the match (Match.hits), not only in its reasons' words.
After opening fresh21 (labelled so):
5. "I get an error" where the only warning of the pasted NCCL log is one NCCL prints on healthy hosts ("Failed to open
   libibverbs.so", a WARN up to 2.10 and an INFO since; NCCL goes on over sockets) is no symptom; explain says why.
6. An entry whose setup (MIG, a GeForce, a VM, a pair across sockets) is not said, and whose own words are absent from
   the text (the MIG entry's "MIG"), stays unsure on an error it shares with other classes ("invalid device ordinal")."""

from __future__ import annotations

import pytest

from p2ptop.evidence import read_text

from .kbtools import bundled_kb, classes, explained, host_facts


def _gpu_facts(text, gpu="gpu:0"):
    return read_text(text).facts_by_subject().get(gpu, {})


def test_kernel_link_report_of_an_nvidia_gpu():
    f = _gpu_facts("[    1.2] pci 0000:41:00.0: [10de:2204] type 00 class 0x030000\n"
                   "[    1.3] pci 0000:41:00.0: 63.008 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x8 link at "
                   "0000:40:01.1 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)")
    assert (f["gpu.pcie_gen_cur"], f["gpu.pcie_gen_max"], f["gpu.pcie_width_cur"], f["gpu.pcie_width_max"]) == (3, 4, 8, 16)
    assert "pcie_link_degraded" in classes("[    1.2] pci 0000:41:00.0: [10de:2204] type 00 class 0x030000\n"
                                           "[    1.3] pci 0000:41:00.0: 63.008 Gb/s available PCIe bandwidth, limited by "
                                           "8.0 GT/s PCIe x8 link at 0000:40:01.1 (capable of 252.048 Gb/s with 16.0 GT/s "
                                           "PCIe x16 link)")[:1]


def test_kernel_link_report_wrapped_by_journalctl():
    f = _gpu_facts("Nov 02 10:41:26 node7 kernel: nvidia 0000:c1:00.0: 31.504 Gb/s available PCIe bandwidth, limited by "
                   "8.0 GT/s PCIe x4 link at\n0000:c0:03.1 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)")
    assert (f["gpu.pcie_width_cur"], f["gpu.pcie_width_max"]) == (4, 16)


def test_kernel_link_report_at_capability_is_healthy():
    text = ("[    1.2] pci 0000:41:00.0: [10de:2330] type 00 class 0x030200\n"
            "[    1.3] pci 0000:41:00.0: 504.112 Gb/s available PCIe bandwidth (32.0 GT/s PCIe x16 link)")
    f = _gpu_facts(text)
    assert f["gpu.pcie_width_cur"] == f["gpu.pcie_width_max"] == 16
    assert not [c for c, conf in explained(text) if conf in ("likely", "possible")]


@pytest.mark.parametrize("text", [
    # an NVMe drive, an x1 NIC: no NVIDIA function, nothing about a GPU's link
    "[    1.0] pci 0000:01:00.0: [1e0f:0001] type 00 class 0x010802\n[    1.1] pci 0000:01:00.0: 2.000 Gb/s available "
    "PCIe bandwidth, limited by 2.5 GT/s PCIe x1 link at 0000:00:01.0 (capable of 31.504 Gb/s with 8.0 GT/s PCIe x4 link)",
    "mlx5_core 0000:17:00.0: 63.008 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x8 link at 0000:16:02.0 "
    "(capable of 126.016 Gb/s with 8.0 GT/s PCIe x16 link)",
])
def test_kernel_link_report_of_another_device_says_nothing(text):
    ev = read_text(text)
    assert not any(k.startswith("gpu.pcie") for facts in ev.facts_by_subject().values() for k in facts)
    assert not [c for c, conf in explained(text) if conf in ("likely", "possible")]


def test_dcgm_messages_give_facts():
    by = read_text(
        "GPU 6: NVLink system: Failure: Detected 3 Recovery NvLink errors on GPU 6's NVLink (should be 0)\n"
        "Warning: GPU 2 Detected 1542 CRC FLIT NvLink errors on GPU 2's NVLink which exceeds threshold of 100\n"
        "Error: GPU 1 is running at PCI link width 8X, which is below the minimum allowed link generation of 16 "
        "(parameter 'min_pci_width')\n"
        "Warning: Detected XID 79 for GPU 3").facts_by_subject()
    assert by["gpu:6"]["gpu.nvlink_replay_recovery"] == 3
    assert by["gpu:2"]["gpu.nvlink_errors"] == 1542 and "gpu.nvlink_replay_recovery" not in by["gpu:2"]
    assert by["gpu:1"]["gpu.pcie_width_cur"] == 8 and by["gpu:1"]["gpu.pcie_degraded_under_load"] is True
    assert by["gpu:3"]["gpu.lost"] is True and by["host"]["host.xid_codes"] == "79"


def test_dcgm_diag_that_passed_offers_nothing():
    text = ("| Diagnostic                | Result                                         |\n"
            "| PCIe                      | Pass - All                                     |\n"
            "| GPU Memory                | Pass - All                                     |")
    assert not [c for c, conf in explained(text) if conf in ("likely", "possible")]


@pytest.mark.parametrize("text", [
    "Training on 4 GPUs gives only 1.3x speedup compared with 1 GPU.",
    "We get a 2.5x speedup with 8 GPUs instead of the expected 8x.",
    "With two RTX 3090s the speedup is 1.2x rather than 2x.",
    "Tensor parallel on 2 L40S gives just a 1.1x speedup.",
    "The scaling is sub-linear: 4 GPUs are 2.1x faster than one.",
    "双卡训练加速比只有1.2，远达不到预期。",
])
def test_speedup_below_the_count_is_slow(text):
    assert host_facts(text).get("symptom.slow") is True


@pytest.mark.parametrize("text", [
    "We see a 2x speedup with tensor parallel on 2 GPUs, as expected.",
    "The A100 is 3x faster than the V100 for this model.",
    "FlashAttention gives a 1.5x speedup over the baseline on one GPU.",
    "Speedup of 3.9x on 4 GPUs, near linear.",
])
def test_a_plain_speedup_is_not_slow(text):
    assert "symptom.slow" not in host_facts(text)


@pytest.mark.parametrize("text", [
    "$ CUDA_VISIBLE_DEVICES=0,1 ./simpleIPC\nIPC failure: Receiving data over socket failed: Connection refused",
    "IPC failure: Sending data over socket failed: Connection refused\n"
    "/opt/nvshmem/src/host/mem/mem_heap.cpp:nvshmemi_mem_heap_import:512: Fatal IPC Failure",
])
def test_ipc_socket_helpers_are_cuda_ipc(text):
    assert classes(text)[0] == "cuda_ipc_cross_boundary"


def test_match_keeps_the_lines_its_own_text_hit():
    from p2ptop.knowledge.matcher import Log, prepare, score_entry, Facts

    text = "hello\nRuntimeError: CUDA error: peer access is not supported between these two devices"
    kb = bundled_kb()
    log = prepare(text)
    facts = Facts([], log, "paste")
    hit = [m for m in (score_entry(e, log, log.codes, facts) for e in kb.entries) if m and m.hits]
    assert hit and all(h.line == 2 for m in hit for h in m.hits if h.line is not None)
    assert any(h.kind == "regex" for m in hit for h in m.hits)
    assert isinstance(log, Log)


BENIGN = ("host:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>\n"
          "host:1:1 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
          "host:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.2<0>")


def test_an_error_that_is_nccls_benign_warning_is_no_symptom():
    text = "I run all_reduce_perf on two RTX 3090s and get an error:\n" + BENIGN
    ev = read_text(text)
    assert "symptom.fails" not in ev.facts_by_subject()["host"]
    assert any("libibverbs" in n for n in ev.notes)
    assert not [c for c, conf in explained(text) if conf in ("likely", "possible")]


@pytest.mark.parametrize("text", [
    "I get an error:\n" + BENIGN + "\nhost:1:1 [0] transport/p2p.cc:221 NCCL WARN Cuda failure 'peer access is not "
    "supported between these two devices'",
    "Two RTX 3090s: P2P does not work.\n" + BENIGN,
])
def test_a_real_failure_beside_the_benign_warning_stays(text):
    assert read_text(text).facts_by_subject()["host"].get("symptom.fails") is True


def test_the_mig_entry_is_unsure_on_an_invalid_ordinal_that_names_no_mig():
    text = 'i got the error:\n"THCudaCheck FAIL file=torch/csrc/cuda/Module.cpp line=59 error=101 : invalid device ordinal"'
    got = dict((c, conf) for c, conf in reversed(explained(text)))
    assert got["device_not_visible"] in ("likely", "possible")
    assert got.get("mig_p2p_unsupported", "unsure") == "unsure"
    mig = "MIG instances on an A100: " + text
    assert "mig_p2p_unsupported" in [c for c, conf in explained(mig) if conf in ("likely", "possible")]
