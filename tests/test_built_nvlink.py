"""A result table of GPUs that NVIDIA builds only into boards joining every pair by NVLink (SXM parts) is judged against
that NVLink where the paste does not say the link: real nccl-tests tables of two H200s (NV18) with NCCL's P2P transport
off read as slow, the healthy one does not (tests/fixtures/device/h200x2-nccl-tests, a device run)."""

import os

import pytest

from p2ptop.evidence import read_text
from p2ptop.evidence.gpus import built_nvlink
from p2ptop.knowledge import load_kb
from p2ptop.commands.explain import explain

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "device", "h200x2-nccl-tests")
CAPTURES = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "captures", "h200x2-nvswitch-vm")


def _facts(text):
    ev = read_text(text)
    return {(f.subject, k): v for f in ev.findings for k, v in f.facts.items()}, ev


def _read(name):
    with open(os.path.join(HERE, name), encoding="utf-8") as fh:
        return fh.read()


@pytest.mark.parametrize("name,gbps", [
    ("NVIDIA A100-SXM4-80GB", 100.0), ("A100-SXM4-40GB", 100.0), ("NVIDIA A800-SXM4-80GB", 100.0),
    ("NVIDIA H100 80GB HBM3", 150.0), ("NVIDIA H200", 150.0), ("NVIDIA H20", 150.0), ("NVIDIA H800", 100.0),
    ("NVIDIA B200", 150.0),
    # PCIe forms, parts whose pairs a board may leave unlinked, and names that do not say the form
    ("NVIDIA H100 PCIe", None), ("NVIDIA H100 NVL", None), ("NVIDIA H200 NVL", None), ("NVIDIA A100 80GB PCIe", None),
    ("NVIDIA A100-PCIE-40GB", None), ("NVIDIA H800 PCIe", None), ("Tesla V100-SXM2-32GB", None),
    ("Tesla P100-SXM2-16GB", None), ("NVIDIA GH200 480GB", None), ("NVIDIA GB200", None), ("H200", None), ("H100", None),
    ("NVIDIA GeForce RTX 4090", None), ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", None), (None, None),
])
def test_built_nvlink_by_name(name, gbps):
    assert built_nvlink(name) == gbps


@pytest.mark.parametrize("name,peak", [("all_reduce_perf-p2p-disable.txt", "27.32"), ("all_reduce_perf-p2p-level-loc.txt", "27.35"),
                                       ("all_reduce_perf-p2p-shm-disable.txt", "4.07"),
                                       ("all_reduce_perf-p2p-disable-info.txt", "27.34")])
def test_sxm_table_without_p2p_reads_slow(name, peak):
    facts, ev = _facts(_read(name))
    assert facts.get(("host", "symptom.slow")) is True
    slow = [f for f in ev.findings if "symptom.slow" in f.facts and "busbw" in f.summary]
    assert slow and peak in slow[0].summary and "NVLink" in slow[0].summary


def test_healthy_sxm_table_is_not_slow():
    facts, _ = _facts(_read("all_reduce_perf-healthy.txt"))
    assert ("host", "symptom.slow") not in facts
    assert facts.get(("host", "nccl.status")) == "ok"


@pytest.mark.skipif(not os.path.isdir(CAPTURES), reason="shared captures not beside the project")
@pytest.mark.parametrize("name", ["nccl-tests-all_reduce_perf.txt", "nccl-tests-sendrecv_perf.txt",
                                  "p2pBandwidthLatencyTest.txt", "nvbandwidth.txt"])
def test_healthy_captures_of_the_same_host_stay_healthy(name):
    with open(os.path.join(CAPTURES, name), encoding="utf-8") as fh:
        facts, _ = _facts(fh.read())
    assert ("host", "symptom.slow") not in facts


def test_a_host_link_is_pcie_not_nvlink():
    """bandwidthTest's host-to-device figure of an H200 (30 GB/s: under a quarter of its NVLink, not of its PCIe) is judged against PCIe."""
    text = ("[CUDA Bandwidth Test] - Starting...\nRunning on...\n\n Device 0: NVIDIA H200\n Quick Mode\n\n"
            " Host to Device Bandwidth, 1 Device(s)\n PINNED Memory Transfers\n   Transfer Size (Bytes)\tBandwidth(GB/s)\n"
            "   32000000\t\t\t30.2\n\n Device to Host Bandwidth, 1 Device(s)\n PINNED Memory Transfers\n"
            "   Transfer Size (Bytes)\tBandwidth(GB/s)\n   32000000\t\t\t30.6\n\nResult = PASS\n")
    facts, _ = _facts(text)
    assert ("host", "symptom.slow") not in facts


def test_the_answer_to_a_slow_table_with_nccl_info():
    """With NCCL's INFO lines the table's answer is the variable (via SHM), not the entry for P2P and SHM both off."""
    kb = load_kb()
    ids = [m.entry.id for m, _ in explain(kb, _read("all_reduce_perf-p2p-disable-info.txt"), [], 3)]
    assert ids[0] == "nccl/p2p-disabled-by-env"
    assert "nccl/p2p-and-shm-disabled-uses-network" not in ids
