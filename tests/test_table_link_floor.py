"""What a pasted tool's figures are judged against where the paste does not say the link: the host's own link between the
GPUs of the paste's bus ids where the text is read beside a host (explain on a live host, --replay), else, for GPUs that
NVIDIA builds only into boards joining every pair by NVLink (SXM parts), that NVLink. Real nccl-tests tables of two H200s
(NV18) with NCCL's P2P transport off read as slow, the healthy one does not (tests/fixtures/device/h200x2-nccl-tests, a
device run)."""

import os

import pytest

from p2ptop.evidence import read_text
from p2ptop.evidence.gpus import built_nvlink
from p2ptop.knowledge import load_kb
from p2ptop.commands.explain import answer, explain, host_links
from p2ptop.diagnose import findings_for, pair_fact_findings
from p2ptop.model import load_snapshot

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "device", "h200x2-nccl-tests")
CAPTURES = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "captures", "h200x2-nvswitch-vm")
LIVE = os.path.join(os.path.dirname(__file__), "fixtures", "captures", "h200x2-live", "p2ptop-snapshot.json")
NV18 = (450.0, "18 x NVLink 4.0 at 25 GB/s between GPU0 and GPU1 of this host")


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


def _as_nvl(text):
    """The same table as if its GPUs were the PCIe form (H200 NVL): the model no longer says the link."""
    return text.replace("NVIDIA H200\n", "NVIDIA H200 NVL\n")


def test_pcie_form_alone_says_nothing_of_the_link():
    facts, _ = _facts(_as_nvl(_read("all_reduce_perf-p2p-disable.txt")))
    assert ("host", "symptom.slow") not in facts


def test_the_host_link_of_the_pasted_bus_ids_judges_the_table():
    asked = []

    def links(a, b):
        asked.append((a, b))
        return NV18 if {a, b} == {"0000:00:06.0", "0000:00:07.0"} else None

    ev = read_text(_as_nvl(_read("all_reduce_perf-p2p-disable.txt")), host_links=links)
    slow = [f for f in ev.findings if "symptom.slow" in f.facts]
    assert slow and "of this host" in slow[0].summary and "27.32" in slow[0].summary
    assert asked == [("0000:00:06.0", "0000:00:07.0")]
    # the healthy table beside the same host stays healthy
    ev = read_text(_as_nvl(_read("all_reduce_perf-healthy.txt")), host_links=links)
    assert not any("symptom.slow" in f.facts for f in ev.findings)


def test_a_host_whose_gpus_have_other_bus_ids_says_nothing():
    ev = read_text(_as_nvl(_read("all_reduce_perf-p2p-disable.txt")), host_links=lambda a, b: None)
    assert not any("symptom.slow" in f.facts for f in ev.findings)


def test_a_run_over_two_nodes_is_not_judged_by_this_host_links():
    """Ranks on two nodes talk over the network: the host's NVLink between its device 0 and 1 is not their link."""
    text = _as_nvl(_read("all_reduce_perf-p2p-disable.txt")).replace(
        "#  Rank  1 Group  0 Pid   1615 on         vm device  1 [0000:00:07] NVIDIA H200 NVL",
        "#  Rank  1 Group  0 Pid   1615 on         vm device  1 [0000:00:07] NVIDIA H200 NVL\n"
        "#  Rank  2 Group  0 Pid   2222 on        vm2 device  0 [0000:00:06] NVIDIA H200 NVL\n"
        "#  Rank  3 Group  0 Pid   2222 on        vm2 device  1 [0000:00:07] NVIDIA H200 NVL")
    ev = read_text(text, host_links=lambda a, b: NV18)
    assert not any("symptom.slow" in f.facts for f in ev.findings)


def test_explain_beside_a_replayed_host_reads_the_table_as_slow():
    """explain's answer beside the real two-H200 snapshot (its GPUs at 00:06.0 and 00:07.0, NV18): slow, and the
    link named is the host's."""
    snap = load_snapshot(LIVE)
    links = host_links(snap)
    assert links("0000:00:06.0", "0000:00:07.0")[0] >= 400
    assert links("0000:00:06.0", "0000:00:06.0") is None and links("0000:3b:00.0", "0000:00:07.0") is None
    got = answer(load_kb(), _as_nvl(_read("all_reduce_perf-p2p-disable.txt")), [], 3, "replay", links=links)
    assert "symptom.slow = True (line 25 of the paste)" in got["symptoms"]
    assert got["kind"] in ("matches", "unsure")
    assert answer(load_kb(), _as_nvl(_read("all_reduce_perf-healthy.txt")), [], 3, "replay", links=links)["kind"] == "healthy"


def test_a_host_whose_fabric_fails_costs_the_text_nothing(monkeypatch):
    """A fabric that cannot be built leaves the link unsaid: the table is still read (its rows, its GPUs), judged as
    built, and no parser of the text is lost."""
    import p2ptop.fabric as fabric_mod

    def broken(*_a, **_k):
        raise RuntimeError("no fabric")

    monkeypatch.setattr(fabric_mod, "Fabric", broken)
    links = host_links(load_snapshot(LIVE))
    assert links("0000:00:06.0", "0000:00:07.0") is None
    ev = read_text(_read("all_reduce_perf-p2p-disable.txt"), host_links=links)
    assert ev.failed_parsers == [] and "nccl-tests" in ev.kinds
    assert any("symptom.slow" in f.facts for f in ev.findings)  # the SXM NVLink as built still judges it



def test_beside_the_replayed_host_the_nccl_setting_leads_over_the_vm_in_doubt():
    """On the real two-H200 VM, where NVML calls the NV18 pair P2P-capable, a slow table is not 'no P2P in the VM': that
    entry is in doubt (p2p.read = OK) and ranks as a lead does, under the NCCL setting that turns P2P off (which is what
    slowed the table: NCCL_P2P_DISABLE=1 on the device). Before the doubt ranked its entry so, the VM came first."""
    snap = load_snapshot(LIVE)
    findings = findings_for(snap) + pair_fact_findings(snap)
    got = answer(load_kb(), _as_nvl(_read("all_reduce_perf-p2p-disable.txt")), findings, 5, "replay", links=host_links(snap))
    ids = [m.entry.id for m, _ in got["results"]]
    assert ids[0] == "nccl/p2p-disabled-by-env", ids
    vm = [m for m, _ in got["results"] if m.entry.id == "vm/peer-access-unsupported-in-vm"]
    assert all(m.unsure and any(r.startswith("in doubt") for r in m.reasons) for m in vm)
