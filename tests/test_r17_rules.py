"""Rules of 2026-11-28 (fifth session), each from its own source, none for one paste; written from sentences and
pastes of my own (vocabulary probes), before the fresh19 part was judged.

1. A measured bandwidth set against what it was or should be, in one sentence ("0.5 GB/s ... with 545 it was 25 GB/s",
   "expected 25 GB/s but only get 3 GB/s", "0.8 GB/s instead of 12 GB/s") is slow where the figure is at most half:
   how p2pBandwidthLatencyTest, nvbandwidth and nccl-tests reports compare figures. A plain comparison of two links
   ("24 GB/s vs 48 GB/s bidirectional", "90 GB/s compared to 20 GB/s over PCIe") is not.
2. A GPU's link said to run one or two lanes wide ("running at PCIe x1", "an x1 link") is below every NVIDIA GPU's
   LnkCap (x16, x8 for small cards, x4 for mining boards); a NIC's or an SSD's is not, nor a count ("H100 x1").
3. A copy tool's P2P figure (p2pBandwidthLatencyTest, nvbandwidth) with no link in the paste is judged against the
   narrowest link a GPU is built with (PCIe Gen3 x4): under a quarter of it is slow (the answer is no longer empty).
4. A release named as having the bug ("a bug in NCCL 2.20.3", "the NCCL 2.19 bug"; release notes' "Fix bug in ...",
   "Known issues") starts the trouble (text.broken_by); a driver branch as the end of a change ("after upgrading from
   535") names the driver.
5. An NCCL variable named as the reason ("crashed because NCCL_BUFFSIZE was set") or set and then removed to fix it
   ("... was set in the launcher; unsetting it fixed it") brings the trouble; "it works because X is set" does not.
6. NCCL's bootstrap finding no interface (src/bootstrap.cc "Bootstrap : no socket interface found", net_socket.cc
   "NET/Socket : no interface found", socket.cc's empty-address ncclSocketInit error of NVIDIA/nccl#1837) is its own
   entry (nccl_env_misconfig), and a WARN saying "no ... found" is a failure.
7. A trouble the text ties to a change (text.broken_by / text.fixed_by / symptom.caused_by_env) is no context: the entry
   of that cause may be offered beside an error code it does not list ("peer access is not supported ... this started
   after upgrading from 535" is a driver regression as well as the 217 entries)."""

from __future__ import annotations

import json
import os

import pytest

from p2ptop import cli
from p2ptop.evidence import read_text

from .conftest import FIXTURES
from .kbtools import classes, explained, host_facts


@pytest.mark.parametrize("text", [
    "Since driver 550.54.14, p2pBandwidthLatencyTest shows P2P=Enabled bandwidth of 0.5 GB/s between GPU0 and GPU1; "
    "with 545 it was 25 GB/s.",
    "We expected about 25 GB/s but only get 3 GB/s between the two cards.",
    "bandwidthTest gives 0.8 GB/s instead of 12 GB/s on GPU 3",
    "the copy reaches 900 MB/s, it used to be 11 GB/s",
])
def test_a_figure_against_what_it_was_or_should_be_is_slow(text):
    assert host_facts(text).get("symptom.slow") is True


@pytest.mark.parametrize("text", [
    "Unidirectional is 24 GB/s vs 48 GB/s bidirectional",
    "NVLink gives 90 GB/s compared to 20 GB/s over PCIe.",
    "The theoretical 64 GB/s of PCIe 5 and we see 52 GB/s",
    "Bandwidth was 10 GB/s between the cards, latency 2 us, and 24 GB/s on the other pair",
])
def test_figures_merely_compared_are_not_slow(text):
    assert host_facts(text).get("symptom.slow") is not True


@pytest.mark.parametrize("text", [
    "GPU 3 is running at PCIe x1 because the riser cable is bad",
    "The card sits in a mining riser and runs at PCIe x1",
    "the second card trained to an x2 link after the reboot",
])
def test_a_gpu_at_one_or_two_lanes_is_degraded(text):
    assert host_facts(text).get("gpu.pcie_degraded_under_load") is True


@pytest.mark.parametrize("text", [
    "the NIC is on a PCIe x1 link",
    "We rented an H100 x1 instance and NCCL fails",
    "8x A100 with NVLink",
    "the NVMe SSD runs at PCIe x2 speed",
])
def test_not_a_gpu_at_one_lane(text):
    assert host_facts(text).get("gpu.pcie_degraded_under_load") is not True


P2P_ENABLED_ONLY = """Device=0 CAN Access Peer Device=1
Device=1 CAN Access Peer Device=0
P2P Connectivity Matrix
     D\\D     0     1
     0	     1     1
     1	     1     1
Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)
   D\\D     0      1
     0 770.81   0.36
     1   0.38 772.19
"""


def test_a_p2p_figure_far_under_any_gpu_link_is_slow_without_the_link_said():
    ev = read_text(P2P_ENABLED_ONLY)
    assert ev.facts_by_subject()["pair:0-1"].get("bench.verdict") == "slow"
    assert classes(P2P_ENABLED_ONLY)  # never silent: candidates on the measured slowness


def test_a_healthy_p2p_figure_without_the_link_said_gets_no_verdict():
    healthy = P2P_ENABLED_ONLY.replace("0.36", "24.10").replace("0.38", "24.30")
    facts = read_text(healthy).facts_by_subject()
    assert "bench.verdict" not in facts.get("pair:0-1", {})
    assert facts["host"].get("symptom.slow") is not True


@pytest.mark.parametrize("text", [
    "This looks like a bug in NCCL 2.20.3: ncclCommInitRank segfaults in ncclTopoCompute on our machine.",
    "We hit the NCCL 2.19 bug where allreduce hangs.",
])
def test_a_release_said_to_have_the_bug(text):
    assert host_facts(text).get("text.broken_by") == "nccl"


@pytest.mark.parametrize("text", [
    "NCCL fails with peer access is not supported, this started after upgrading from 535",
    "Training hangs since moving to 550.54.14",
])
def test_a_driver_branch_as_the_change(text):
    assert host_facts(text).get("text.broken_by") == "driver"


def test_a_size_is_no_driver_branch():
    assert host_facts("It hangs after upgrading from 535 MB to 600 MB").get("text.broken_by") is None


@pytest.mark.parametrize("text, var", [
    ("The job crashed because NCCL_BUFFSIZE was set to 1G in our launcher script; unsetting it fixed it.", "NCCL_BUFFSIZE"),
    ("NCCL_ALGO=Ring was set in the launcher and training hung; removing it fixed it.", "NCCL_ALGO"),
])
def test_a_variable_named_as_the_reason(text, var):
    assert host_facts(text).get("symptom.caused_by_env") == var


def test_a_variable_said_to_make_it_work_is_no_reason():
    assert host_facts("It works because NCCL_P2P_DISABLE=1 is set in our env.").get("symptom.caused_by_env") is None


@pytest.mark.parametrize("text", [
    "gpu0:11:11 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0\n"
    "gpu0:11:11 [0] bootstrap.cc:45 NCCL WARN Bootstrap : no socket interface found",
    "[rank0]: ncclInternalError: Internal check failed.\n[rank0]: Last error:\n[rank0]: Bootstrap : no socket interface found",
    "NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth2\nncclInternalError: Internal check failed.\nLast error:\n"
    "ncclSocketInit: connecting to address  with family 59936 is neither AF_INET(2) nor AF_INET6(10)",
])
def test_bootstrap_without_an_interface(text):
    answer = explained(text)
    assert answer and answer[0][0] == "nccl_env_misconfig" and answer[0][1] in ("likely", "possible")


def test_a_warn_that_finds_nothing_is_a_failure():
    facts = host_facts("host:1:1 [0] transport/net_socket.cc:474 NCCL WARN NET/Socket : no interface found")
    assert facts.get("error.text")


def test_an_error_after_a_driver_change_offers_the_regression_too():
    text = ("NCCL version 2.18.1+cuda12.1\nNCCL WARN Cuda failure 'peer access is not supported between these two devices'\n"
            "this started after upgrading the driver from 535 to 545")
    answer = explained(text)
    assert ("p2p_driver_regression", "possible") in answer
    assert "p2p_unsupported_topology" in [c for c, _ in answer[:4]]  # the 217 entries stay candidates


def test_an_error_beside_a_version_merely_named_is_no_regression():
    text = ("NCCL version 2.18.1+cuda12.1\nNCCL WARN Cuda failure 'peer access is not supported between these two devices'\n"
            "Driver Version: 545.23.06")
    assert ("p2p_driver_regression", "possible") not in explained(text)


# 8. "gives correct results" is a version said to work (the contrast of two NCCL releases), and NCCL or CUDA said to
#    "never use P2P" is a failure in words (what the reporter sees: NCCL's log naming SHM or NET for every pair).

def test_correct_results_with_the_older_release_is_a_contrast():
    text = "The allgather results are wrong only with NCCL 2.19.3; downgrading to 2.18.6 gives correct results."
    assert host_facts(text).get("text.broken_by") == "nccl"


@pytest.mark.parametrize("text, fails", [
    ("On an AWS g5.12xlarge instance NCCL never uses P2P, it always says via SHM between the four A10G.", True),
    ("NCCL never enabled NVLink on this box", True),
    ("NCCL uses P2P between all pairs", None),
])
def test_never_uses_p2p_is_a_failure(text, fails):
    assert host_facts(text).get("symptom.fails") is fails


# 9. Where the paste does not say the link, a copy tool's or a one-node nccl-tests run's figure is judged against the
#    link its GPUs are built with: the architecture's PCIe generation (NVIDIA's data sheets) at x8, the narrowest
#    desktop or data-centre card; only "slow", under a quarter of it (the link may be wider); laptop parts left out.

NCCL_TESTS_ONE_NODE = """# Using devices
#  Rank  0 Group  0 Pid  12 on node1 device  0 [0x1b] NVIDIA RTX A5000
#  Rank  1 Group  0 Pid  12 on node1 device  1 [0xb1] NVIDIA RTX A5000
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
   134217728      33554432     float     sum      -1   110456    {bw}    {bw}      0   110123    {bw}    {bw}      0
"""


def test_one_node_nccl_tests_far_under_the_built_link_is_slow():
    assert host_facts(NCCL_TESTS_ONE_NODE.format(bw="1.22")).get("symptom.slow") is True


def test_one_node_nccl_tests_at_a_fair_figure_is_not_slow():
    assert host_facts(NCCL_TESTS_ONE_NODE.format(bw="11.50")).get("symptom.slow") is not True


def test_two_node_nccl_tests_is_not_judged_on_the_gpu_link():
    two_nodes = NCCL_TESTS_ONE_NODE.format(bw="1.22").replace("12 on node1 device  1", "12 on node2 device  1")
    assert host_facts(two_nodes).get("symptom.slow") is not True


def test_built_pcie_generation():
    from p2ptop.evidence.gpus import built_pcie

    assert built_pcie("NVIDIA RTX A5000") == 4 and built_pcie("NVIDIA H100 80GB HBM3") == 5 and built_pcie("Tesla V100") == 3
    assert built_pcie("NVIDIA GeForce RTX 3080 Laptop GPU") is None and built_pcie("Some GPU") is None


# 10. On a host whose facts rule out what the text's own lines give as unsure candidates (a pasted P2P matrix of a pair
#     on a one-GPU host), the answer names them too, marked unsure; leads on context alone are never named.

H100 = os.path.join(FIXTURES, "captures", "h100x1-vm", "p2ptop-snapshot.json")


def test_unsure_pair_candidates_the_one_gpu_host_rules_out_are_named(tmp_path, capsys):
    f = tmp_path / "paste.txt"
    f.write_text(P2P_ENABLED_ONLY)
    assert cli.main(["explain", "--replay", H100, str(f), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    lost = doc["ruled_out_by_host"]
    assert lost and all(x["confidence_on_text"] == "unsure" for x in lost)
    assert "pcie/p2p-through-cpu-slow" in [x["entry"] for x in lost]
    assert all("one GPU on the host" in x["why"] for x in lost)
    assert cli.main(["explain", "--replay", H100, str(f)]) == 0
    assert "suggests (unsure) pcie/p2p-through-cpu-slow" in capsys.readouterr().out


# 11. A larger /dev/shm said in Chinese word order ("把 --shm-size 调到 16g 以后正常") or with docker's flag as written
#     ("raising --shm-size to 16g fixed it") fixed the trouble; "Bus error" (SIGBUS, what touching a /dev/shm file past
#     tmpfs's size gives; NCCL troubleshooting) is a crash; a count of cards in Chinese ("4 卡", "8 张 4090") is a GPU trace
#     and names the model counted.

@pytest.mark.parametrize("text", [
    "在 docker 里用 4 卡训练，报 Bus error，把 --shm-size 调到 16g 以后正常。",
    "Training with 4 GPUs in docker dies with Bus error; raising --shm-size to 16g fixed it.",
])
def test_shm_enlarged_and_bus_error(text):
    facts = host_facts(text)
    assert facts.get("symptom.fixed_by_shm_increase") is True and facts.get("symptom.crash") is True
    assert classes(text)[0] == "shm_exhausted"


@pytest.mark.parametrize("text, related", [
    ("在 docker 里用 4 卡训练，报错了", True),
    ("两张卡一起跑就报错", True),
    ("程序卡住了", False),
])
def test_a_count_of_cards_in_chinese_is_a_gpu_trace(text, related):
    assert read_text(text).gpu_related is related


def test_a_counted_model_in_chinese():
    facts = host_facts("8 张 4090 跑 vLLM 张量并行报错 peer access is not supported，换成 A100 没问题。")
    assert facts.get("gpu.name") == "4090" and facts.get("gpu.consumer") is True


def test_a_mining_board_is_not_judged_on_a_compute_gpu_link():
    mining = P2P_ENABLED_ONLY.replace("Device=0 CAN", "Device: 0, NVIDIA CMP 30HX, pciBusID: 3, pciDeviceID: 0, pciDomainID:0\n"
                                      "Device: 1, NVIDIA CMP 30HX, pciBusID: 4, pciDeviceID: 0, pciDomainID:0\nDevice=0 CAN", 1)
    facts = read_text(mining).facts_by_subject()
    assert "bench.verdict" not in facts.get("pair:0-1", {})
