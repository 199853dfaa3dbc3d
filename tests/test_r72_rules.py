"""Rules of the thirty-third session, each written from what the words mean and checked with near misses:

- A host named by its CPU's maker alone ("A100 ... error (AMD server)", "Intel-based host", "AMD平台"): the issue's prose
  list asks for the CPU vendor, and before only a model (EPYC, Threadripper, Ryzen, Xeon) was read. The maker counts
  only when the word after it names the machine or its processor, so an AMD or Intel GPU is not read as the host's CPU.
  The vendor is a fact of context: it raises an entry the symptom points at (the IOMMU entries: AMD CPUs turn the IOMMU
  on by default); by itself it offers none as likely or possible (a setup without a symptom gets unsure leads, as a
  named model did before)."""

import pytest

from .kbtools import alarms, classes, flat_facts


@pytest.mark.parametrize("text, vendor", [
    ("A100 tensorflow, dcgmi error(AMD server)", "AMD"),
    ("two AMD servers with 8 A100 each, NCCL hang", "AMD"),
    ("on an AMD-based host the copies between the GPUs are slow", "AMD"),
    ("Our AMD CPU box with four RTX A6000 hangs in all_reduce", "AMD"),
    ("在AMD服务器上多卡训练卡住", "AMD"),
    ("Intel-based host, 4x A100, NCCL hang", "Intel"),
    ("the same cards in an Intel server work", "Intel"),
    # a model wins over the maker alone: what _CPU reads first
    ("AMD server with an EPYC 7742, 8x A100", "AMD"),
])
def test_cpu_vendor_named_alone(text, vendor):
    assert flat_facts(text).get("host.cpu_vendor") == vendor


@pytest.mark.parametrize("text", [
    "NCCL hangs on our AMD GPU server",          # the GPU's maker, not the CPU's
    "AMD Instinct MI250 nodes, RCCL all_reduce",  # an AMD GPU
    "amd systemd service for the GPUs",           # no machine word right after the maker
    "Intel Arc A770 and an RTX 3090 in one box",  # an Intel GPU
    "the amdgpu driver is loaded",
])
def test_cpu_vendor_near_misses(text):
    assert "host.cpu_vendor" not in flat_facts(text)


def test_amd_host_raises_iommu_among_unsure_leads():
    # the shape of a report titled by its hardware alone (fresh86's Korean blog post): a crash of eight A100s on an AMD
    # host; the IOMMU entry, which names AMD CPUs as context, is among the leads, and nothing is offered as likely
    text = "Nvidia Tesla A100 - 8GPU error Xid 61\n\nA100 tensorflow, dcgmi error(AMD server)\n\nA100 error"
    assert "iommu_acs_p2p_broken" in classes(text)
    assert alarms(text) == []


def test_vendor_alone_offers_nothing_confidently():
    # context never offers an entry as likely or possible by itself: a sentence with the vendor and no trouble gets at
    # most an unsure lead, as it did when the CPU's model was named (EPYC), and the maker alone adds no more than that
    for text in ("We run our training on an AMD server with eight A100 GPUs.",
                 "We run our training on an AMD EPYC 7742 server with eight A100 GPUs."):
        assert alarms(text) == []
