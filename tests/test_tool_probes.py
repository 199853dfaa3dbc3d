"""Tool-output probes: pastes built from each tool's own output format (printf strings and table layouts of
cuda-samples' simpleP2P / p2pBandwidthLatencyTest / bandwidthTest, nvbandwidth, nccl-tests' every table layout since
2017, nvidia-smi's table, -q, topo -m / -p2p and nvlink -s / -e, lspci -vvv, dcgmi diag), with plausible values, prompts
and the ways pastes are cut (grep'd -q sections, a table without its summary). tests/fixtures/tool_probes/index.json
names each file's tool, the source of its format (repository/file:line or the tool's documentation) and the class
it points at (``none`` for healthy output). None is taken from benchmarks/corpus.

Every probe: its class in the answer's top 3, and no other class marked likely first (``also_acceptable`` names a
class the knowledge base gives the same picture); a healthy one gets no failure entry likely or possible."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from p2ptop.commands.explain import answer
from p2ptop.evidence import read_text
from p2ptop.knowledge import load_kb
from p2ptop.knowledge.entry import BENIGN_CLASSES

KB = load_kb()
PROBES = Path(__file__).parent / "fixtures" / "tool_probes"
INDEX = json.loads((PROBES / "index.json").read_text())


def ranked(text: str) -> list[tuple[str, str]]:
    """(failure class, confidence) of explain's answer, best first."""
    return [(m.entry.failure_class, m.confidence) for m, _ in answer(KB, text, [], None)["results"]]


def facts(text: str) -> dict:
    return read_text(text).facts_by_subject()


def probe(name: str) -> str:
    return (PROBES / name).read_text()


def test_index_names_every_probe_with_its_source():
    files = {p.name for p in PROBES.iterdir() if p.suffix == ".txt"}
    assert files == {p["file"] for p in INDEX}
    for p in INDEX:
        assert p["tool"] and p["source"] and p["expected"], p


@pytest.mark.parametrize("p", INDEX, ids=[p["file"] for p in INDEX])
def test_probe(p):
    got = ranked(probe(p["file"]))
    if p["expected"] == "none":
        alarms = [(c, conf) for c, conf in got if conf in ("likely", "possible") and c not in BENIGN_CLASSES]
        assert not alarms, (p["file"], got)
        return
    assert p["expected"] in [c for c, _ in got[:3]], (p["file"], got[:4])
    ok_first = {p["expected"], *p.get("also_acceptable", [])}
    assert not (got[0][1] == "likely" and got[0][0] not in ok_first), (p["file"], got[:3])


# ---- the readers' rules these probes hold -----------------------------------------------------------------------

def test_nccl_tests_layouts_are_read_by_their_header():
    # 2017 (res) and 2019-2022 (error) layouts: the largest difference from the expected value, beyond nccl-tests'
    # own limit, is wrong data; the 2025 copybw column is no count of wrong elements
    assert facts(probe("nccltests_2017_res.txt"))["host"].get("symptom.wrong_results") is True
    assert facts(probe("nccltests_2020_error_col.txt"))["host"].get("symptom.wrong_results") is True
    healthy = facts(probe("nccltests_copybw_healthy.txt"))["host"]
    assert "symptom.wrong_results" not in healthy and healthy.get("nccl.status") == "ok"
    row = "    33554432       8388608     float     sum    1234.5   27.18   27.18  1e-06    1230.1   27.28   27.28  1e-06"
    head = "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error"
    assert "symptom.wrong_results" not in facts(head + "\n" + row)["host"]  # float rounding under 1e-5 is no error


def test_nccl_tests_timeout_is_a_hang_and_slow_busbw_is_judged_against_the_pasted_link():
    assert facts(probe("nccltests_timeout.txt"))["host"].get("symptom.hang") is True
    assert facts(probe("nccltests_2020_slow_sys.txt"))["host"].get("symptom.slow") is True  # PCIe Gen4 x16 in the paste
    assert "symptom.slow" not in facts(probe("nccltests_healthy.txt"))["host"]


def test_nvbandwidth_pattern_check_failures_are_wrong_data():
    for name in ("nvbandwidth_verify_assert.txt", "nvbandwidth_invalid_value_v04.txt"):
        host = facts(probe(name))["host"]
        assert host.get("tool.verification_error") is True and host.get("symptom.wrong_results") is True, name
    # on a host-to-device test it is the GPU's host link that corrupts
    text = probe("nvbandwidth_verify_assert.txt").replace("device_to_device_memcpy_read_ce", "host_to_device_memcpy_ce")
    host = facts(text)["host"]
    assert host.get("tool.host_copy_corrupt") is True and "symptom.wrong_results" not in host


def test_grepped_q_sections_are_one_gpu_each():
    f = facts(probe("nvbandwidth_d2d_slow_pcie.txt"))
    assert f["gpu:1"]["gpu.pcie_width_max"] == 16 and f["gpu:1"]["gpu.pcie_gen_max"] == 4
    assert f["pair:0-1"].get("bench.verdict") == "slow"
    # without grep's separator, the same field met again is the next GPU
    f = facts(probe("smiq_fabric_not_started.txt").replace("--\n", ""))
    assert f["gpu:1"]["gpu.fabric_state"] == "NOT_STARTED"


def test_a_generation_below_max_on_a_busy_gpu_is_degraded_not_idle():
    f = facts(probe("lspci_lnksta_speed_downgraded.txt"))
    assert f["gpu:0"].get("gpu.pcie_degraded_under_load") is True and "gpu.pcie_idle_downclock" not in f["gpu:0"]
    idle = probe("lspci_lnksta_speed_downgraded.txt").replace("0, P0, 100 %", "0, P8, 0 %")
    assert facts(idle)["gpu:0"].get("gpu.pcie_idle_downclock") is True


def test_simplep2p_with_one_device_is_no_peer_refusal():
    host = facts(probe("simplep2p_one_gpu_visible.txt"))["host"]
    assert host.get("tool.fewer_than_two_gpus") == 1 and "bench.peer_access" not in host
    # MIG on and a sample seeing one device: the MIG entry first, unsure (the one-device fact supports it, it
    # does not trigger it: as a trigger it pushed the right class of a real report out of the top 3 on fresh5)
    assert ranked(probe("smiq_mig_simplep2p.txt"))[0][0] == "mig_p2p_unsupported"


def test_smi_q_fields_saying_absent_are_no_setup():
    # "Host VGPU Mode : N/A" is nvidia-smi's label, not a vGPU guest
    host = facts(probe("smiq_mig_simplep2p.txt"))["host"]
    assert "gpu.virtualization" not in host and "host.virtualized" not in host


def test_dcgmi_p2p_message_wrapped_over_table_rows_is_read():
    # dcgmi cuts DCGM_FR_BROKEN_P2P_* at its cell's width, mid-word ("in a pee" / "r-to-peer test")
    for name in ("dcgmi_diag_p2p_fail.txt", "dcgmi_diag_pcie_fail_gpus.txt"):
        host = facts(probe(name))["host"]
        assert host.get("tool.verification_error") is True and host.get("symptom.wrong_results") is True, name
