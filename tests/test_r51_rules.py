"""Rules of the twenty-first session: GeForce cards before Turing have PCIe peer access in the stock driver; an NVSwitch
host named by its switches; Fabric Manager said to run; a bandwidth ceiling said in words."""

import pytest

from p2ptop.commands.explain import explain
from p2ptop.evidence.gpus import geforce_with_pcie_p2p
from p2ptop.evidence.read import read_text
from p2ptop.knowledge import load_kb


@pytest.fixture(scope="module")
def kb():
    return load_kb()


def facts(text):
    out = {}
    for f in read_text(text).findings:
        for k, v in f.facts.items():
            out.setdefault(k, v)
    return out


def classes(kb, text):
    return [m.entry.failure_class for m, _ in explain(kb, text, [], None)]


@pytest.mark.parametrize("name,expected", [
    ("GeForce GTX 1080 Ti", True), ("NVIDIA TITAN Xp", True), ("GeForce GTX 980", True), ("GeForce GTX TITAN X", True),
    ("GeForce RTX 2080 Ti", False), ("NVIDIA GeForce RTX 3090", False), ("NVIDIA GeForce RTX 4090", False),
    ("Tesla P100-PCIE-16GB", False), ("NVIDIA A100-SXM4-80GB", False), (None, False),
])
def test_geforce_generations_with_pcie_p2p(name, expected):
    assert geforce_with_pcie_p2p(name) is expected


SIMPLE_P2P = "> Peer access from {a} (GPU0) -> {a} (GPU4) : No\n"


def test_pascal_geforce_no_peer_is_not_the_geforce_policy(kb):
    text = SIMPLE_P2P.format(a="GeForce GTX 1080 Ti")
    assert facts(text).get("host.geforce_pcie_p2p") is True
    got = classes(kb, text)
    assert "p2p_unsupported_consumer_gpu" not in got and got[0] == "p2p_unsupported_topology"


def test_newer_geforce_no_peer_is_the_geforce_policy(kb):
    text = SIMPLE_P2P.format(a="NVIDIA GeForce RTX 4090")
    assert "host.geforce_pcie_p2p" not in facts(text)
    assert classes(kb, text)[0] == "p2p_unsupported_consumer_gpu"


def test_every_model_named_must_be_before_turing():
    text = SIMPLE_P2P.format(a="GeForce GTX 1080 Ti") + "The same job fails on our RTX 3090 box too.\n"
    assert "host.geforce_pcie_p2p" not in facts(text)


@pytest.mark.parametrize("text,present", [
    ("On NVSwitch H100 based systems nvidia-smi topo -p2p rw shows NS between GPU7 and the others.", True),
    ("fabric manager is a must-have for GPUs to be usable in NVSwitch-based nodes", True),
    ("run on a machine with NVSwitch but no RDMA HCAs", True),
    ("we see this on our NVSwitch servers only", True),
    ("Fabric Manager is not needed on non-NVSwitch based systems", None),
    ("request to query NVSwitch device information from NVSwitch driver failed", None),
])
def test_nvswitch_host_in_words(text, present):
    assert facts(text).get("host.nvswitch_present") is present


@pytest.mark.parametrize("text,state", [
    ("P2P shows NS even when the nvidia-fabricmanager daemon/service is up and running.", "running"),
    ("nvidia-smi topo shows NS. Fabric manager is active (running) on the node.", "running"),
    ("Fabric Manager is not running on the node.", "not running"),
    ("Today the fabric manager service is started on all NVIDIA instances.", None),
])
def test_fabric_manager_said_to_run(text, state):
    assert facts(text).get("host.fabric_manager") == state


def test_fabric_manager_running_doubts_the_not_running_entry(kb):
    text = ("RuntimeError: CUDA error: system not yet initialized (802) on our HGX H100 node.\n"
            "The nvidia-fabricmanager service is up and running.\n")
    got = {m.entry.id: m for m, _ in explain(kb, text, [], None)}
    m = got["fabric-manager/not-running-system-not-initialized"]
    assert m.confidence == "unsure" and any("in doubt" in r and "running" in r for r in m.reasons)
    without = {m.entry.id: m for m, _ in explain(kb, text.splitlines()[0], [], None)}
    assert without["fabric-manager/not-running-system-not-initialized"].confidence == "likely"


@pytest.mark.parametrize("text,slow", [
    ("NCCL all-reduce busbw was capped at ~98-101 GB/s on large messages on our H200 nodes", True),
    ("P2P bandwidth between the two GPUs tops out at 12 GB/s", True),
    ("all_reduce_perf plateaus at 40 GB/s across the 8 GPUs", True),
    ("the request rate is capped at 100 requests per second", None),
])
def test_bandwidth_ceiling_in_words(text, slow):
    assert facts(text).get("symptom.slow") is slow


@pytest.mark.parametrize("text,version", [
    ("It seems related to the NCCL library, the current version of nvidia-nccl-cu12 is 2.21.5.", "2.21.5"),
    ("3. NCCL version is 2.26.2 and PyTorch version is 2.7", "2.26.2"),
    ("[pip3] nvidia-nccl-cu12==2.20.5", "2.20.5"),
    ("NCCL 2.18.3 hangs", "2.18.3"),
])
def test_nccl_version_in_words(text, version):
    assert facts(text).get("nccl.version") == version


Q_BAR1 = ("lazychaser@lazychaser:~$ nvidia-smi -q | grep -i bar -A 3\n    BAR1 Memory Usage\n"
          "        Total                                          : 256 MiB\n"
          "        Used                                           : 1 MiB\n"
          "        Free                                           : 255 MiB\n")
DCGM_LINKS = ("dcgmi nvlink --link-status\n+----------------------+\n|  NvLink Link Status  |\n+----------------------+\nGPUs:\n"
              "    gpuId 0:\n        D D D D D D D D D D D D D D D D D D\n    gpuId 1:\n        U U U U U U U U U U U U U U U U U U\n"
              "NvSwitches:\n    No NvSwitches found.\n\nKey: Up=U, Down=D, Disabled=X, Not Supported=_\n")


def _subject_facts(text):
    return {(f.subject, k): v for f in read_text(text).findings for k, v in f.facts.items()}


@pytest.mark.parametrize("text,key,subject", [(Q_BAR1, "gpu.bar1_mb", None), (DCGM_LINKS, "gpu.nvlink_down", "gpu:0")])
def test_tool_output_that_lost_its_line_breaks_reads_as_written(text, key, subject):
    # nvidia-smi -q's fields and section titles start lines again, with their indent (by which -q nests its sections);
    # dcgmi's link letters are read on their "gpuId N:" line too
    written, folded = _subject_facts(text), _subject_facts(text.replace("\n", " "))
    got_w = {k: v for k, v in written.items() if k[1] == key and (subject is None or k[0] == subject)}
    got_f = {k: v for k, v in folded.items() if k[1] == key and (subject is None or k[0] == subject)}
    assert got_w and got_w == got_f
