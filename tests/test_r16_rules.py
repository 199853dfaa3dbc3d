"""Rules of 2026-11-28 (fourth session), each from its own source, none for one paste; written before the fresh18
part was judged, from sentences of my own.

1. A PCIe generation below the link's best in nvidia-smi -q's own words ("Link Gen Current 1, Max 4", "current gen 3,
   max gen 5", either order), or one GPU set against its neighbours ("Gen1 while the others run Gen4"), is a degraded
   link when the GPUs are busy or the link is said to have trained there, and not when the sentence says idle
   (nvidia-smi's manual: the generation "may be reduced when the GPU is not in use").
2. "shows/reports Gen1" under load is the Gen1/Gen2-under-load rule's too; "a quarter of the rest" is a pair measured
   against its neighbours.
3. "the nvidia-fabricmanager package is still 535.129.03" is Fabric Manager's version, "the driver is 535.161.08" the
   driver's, so the two differing is a mismatch (Fabric Manager user guide: the exact driver version).
4. The kernel module's "NVRM: BAR%d is %lluM @ 0x%llx" (open-gpu-kernel-modules kernel-open/nvidia/nv-pci.c, after
   "This PCI I/O region assigned to your NVIDIA device is invalid:") is read with or without its "NVRM: " prefix, as a
   paste that joins the two lines has it.
5. lspci's own "Width x8 (downgraded)" (pciutils ls-caps.c, link_compare: LnkSta's width below LnkCap's) is a
   degraded link wherever it is quoted, its speed's "(downgraded)" alone is not (an idle link shows it)."""

from __future__ import annotations

import json
import os

import pytest

from p2ptop import cli
from p2ptop.commands.explain import explain

from .conftest import FIXTURES
from .kbtools import alarms, bundled_kb, classes, host_facts

KB = bundled_kb()



@pytest.mark.parametrize("text", [
    "nvidia-smi -q on gpu 3 says Link Gen Current 1, Max 4 while training is running",
    "under load the PCIe generation max 4, current 2 on GPU 5",
    "current link gen 3, max gen 5 during training on the fourth card",
    "One GPU shows PCIe Gen1 x16 under load while the others run Gen4 x16.",
    "GPU 6 is at gen2 but the other seven cards are at gen4 during the run",
])
def test_generation_below_best_under_load_is_degraded(text):
    assert host_facts(text).get("gpu.pcie_degraded_under_load") is True


@pytest.mark.parametrize("text", [
    "nvidia-smi -q shows Link Gen Current 1, Max 4 when the GPU is idle; under load it goes back to 4.",
    "Link Gen Current 4, Max 4 during training",                   # at its best
    "Our GPUs run PCIe gen4 while the others in the cluster run gen5.",  # nothing busy, nothing trained
    "current gen 1, max gen 4 (the card is idle, in power saving) while training runs on the other node",
])
def test_generation_not_degraded(text):
    assert host_facts(text).get("gpu.pcie_degraded_under_load") is not True


def test_shows_gen1_under_load():
    assert host_facts("lspci shows Gen1 on the busy card under load").get("gpu.pcie_degraded_under_load") is True


def test_a_quarter_of_the_rest_is_slow():
    assert host_facts("the copy bandwidth of this pair is a quarter of the rest").get("symptom.slow") is True


def test_fabric_manager_package_version_against_driver_is():
    text = ("fabricmanager fails to start after the upgrade; the nvidia-fabricmanager package is still 535.129.03 "
            "while the driver is 535.161.08.")
    assert host_facts(text).get("host.fabric_manager") == "version mismatch"
    assert classes(text)[0] == "fabric_manager_version_mismatch"


def test_fabric_manager_package_same_as_driver_is_no_mismatch():
    text = "The fabric manager package is 535.161.08 and the driver is 535.161.08, but CUDA init fails."
    assert host_facts(text).get("host.fabric_manager") != "version mismatch"


@pytest.mark.parametrize("text", [
    "NVRM: This PCI I/O region assigned to your NVIDIA device is invalid: BAR1 is 0M @ 0x0 (PCI:0000:81:00.0)",
    "[ 37.01] NVRM: This PCI I/O region assigned to your NVIDIA device is invalid:\n"
    "               NVRM: BAR1 is 0M @ 0x0 (PCI:0000:56:00.0)",
])
def test_bar1_unassigned_by_firmware(text):
    assert classes(text)[0] == "bar1_too_small"


def test_bar0_invalid_is_not_bar1():
    assert "bar1_too_small" not in classes("NVRM: BAR0 is 0M @ 0x0 (PCI:0000:81:00.0)")


@pytest.mark.parametrize("text", [
    "有一张卡 lspci 显示 LnkSta 是 x8 (downgraded)，其他卡都是 x16",
    "LnkSta:\tSpeed 16GT/s (ok), Width x4 (downgraded)",
])
def test_lspci_marks_the_width_downgraded(text):
    # pciutils ls-caps.c (link_compare): "(downgraded)" after the width is LnkSta's width below LnkCap's
    assert host_facts(text).get("gpu.pcie_degraded_under_load") is True


def test_lspci_speed_downgraded_alone_is_no_degraded_width():
    assert host_facts("LnkSta:\tSpeed 2.5GT/s (downgraded), Width x16 (ok)").get("gpu.pcie_degraded_under_load") is not True


# 6. A run that works on one or two GPUs and hangs or fails on more is NCCL's NVLink SHARP threshold
#    (src/transport/nvls.cc: ncclNvlsInit returns before any multicast set-up when gpuCount <= 2); the entry
#    nccl/nvls-hang-beyond-two-gpus is raised by an NVSwitch named, and ruled out by an older
#    architecture, a GeForce or workstation card, or "no NVSwitch".

@pytest.mark.parametrize("text", [
    "./build/all_reduce_perf -b 8 -e 128M -f 2 -g 4 stuck, but it's normal when g=2",
    "NCCL initialization hangs with 4 GPUs, but works with 2 GPUs",
    "it always hangs when running on more than 2 GPUs. 2 GPUs work fine.",
    "2 卡正常，8 卡训练卡住",
    "with 8 H100 GPUs the job hangs; with two GPUs it works",
])
def test_fails_beyond_two_gpus(text):
    assert host_facts(text).get("symptom.fails_beyond_two_gpus") is True


@pytest.mark.parametrize("text", [
    # the other way round, or a threshold of one
    "when I run NCCL test with all 4 GPUs (-g 4), it works fine. However when I set -g2 or -g3 it fails with an error",
    "Inference on a single GPU works fine, but I'm having trouble with two GPUs.",
    "We have 8 GPUs. The job fails.",                                   # no run that works
    "8 GPUs work fine and 2 GPUs work fine too",
])
def test_not_fails_beyond_two_gpus(text):
    assert host_facts(text).get("symptom.fails_beyond_two_gpus") is not True


def test_nvls_threshold_is_unsure_without_nvswitch_and_possible_with_it():
    top = explain(KB, "NCCL initialization hangs with 4 GPUs, but works with 2 GPUs on our 8x H100 node.", [], 3)
    assert top[0][0].entry.id == "nccl/nvls-hang-beyond-two-gpus" and top[0][0].confidence == "unsure"
    top = explain(KB, "NCCL initialization hangs with 4 GPUs, but works with 2 GPUs on our HGX H100 (NVSwitch).", [], 3)
    assert top[0][0].entry.id == "nccl/nvls-hang-beyond-two-gpus" and top[0][0].confidence == "possible"


@pytest.mark.parametrize("text", [
    "Training on 2 GPUs works fine - on 3 GPUs training stops randomly. The GPUs are RTX 3090 on risers.",  # no NVLS on GeForce
    "NCCL hangs with 4 A100 GPUs but works with 2 GPUs",                # Ampere: no NVLS
    "NCCL hangs with 4 H100 PCIe GPUs but works with 2; there is no NVSwitch in this server",
])
def test_nvls_threshold_not_offered_without_nvls_hardware(text):
    assert "nccl/nvls-hang-beyond-two-gpus" not in [m.entry.id for m, _ in explain(KB, text, [], 5) if m.confidence != "unsure"]


# 7. A setting said in its own sentence to make the trouble go away ("Setting NCCL_SHM_DISABLE=1 seems to circumvent
#    the issue") is no sign that the setting is wrong: an entry that blames a setting (nccl_env_misconfig) does not
#    take that line as its text; the trouble was seen without the setting.

def _ids(text):
    return [a[3] for a in alarms(text)]  # the entries offered likely or possible


@pytest.mark.parametrize("text", [
    "Our alltoall hangs in the first steps on four GPUs. Setting `NCCL_SHM_DISABLE=1` seems to circumvent the issue.",
    "The job hangs; with NCCL_SHM_DISABLE=1 it works (slower).",
])
def test_a_setting_said_to_fix_it_is_not_blamed(text):
    assert "nccl/shm-disable-forces-network" not in _ids(text)


@pytest.mark.parametrize("text", [
    "Setting NCCL_SHM_DISABLE=1 makes the all-reduce slow",
    "export NCCL_SHM_DISABLE=1 and the job runs at 2 GB/s",
    "NCCL_SHM_DISABLE=1 did not help, it still hangs and is slow",
])
def test_a_setting_not_said_to_fix_it_is_still_read(text):
    assert "nccl/shm-disable-forces-network" in _ids(text)


# 8. Where the host's facts rule out what the text's own lines point at (issue 22 point 2: the host's facts win), the
#    answer names that text line, the entry and the reason, and says how to explain the text on its own; a healthy
#    answer then no longer reads "no error ... in the text".

H100 = os.path.join(FIXTURES, "captures", "h100x1-vm", "p2ptop-snapshot.json")


def _explain_on_one_gpu(text, tmp_path, capsys, *extra):
    f = tmp_path / "paste.txt"
    f.write_text(text)
    assert cli.main(["explain", "--replay", H100, str(f), *extra]) == 0
    return capsys.readouterr().out


def test_a_text_line_the_one_gpu_host_rules_out_is_named(tmp_path, capsys):
    # (until the eighth session this used NVRM's "BAR1 is 0M" line; the BAR1 entry's peer may be a NIC since ("nic_peer"),
    #  which one GPU does not rule out: tests/test_one_gpu_answers.py)
    text = "simpleP2P output:\nVerification error @ element 0: val = nan, ref = 0.000000"
    out = _explain_on_one_gpu(text, tmp_path, capsys)
    assert "line 2 of the text" in out and "driver/p2p-verification-error" in out
    assert "one GPU on the host" in out and "--text-only" in out
    assert "No sign of P2P trouble" not in out
    doc = json.loads(_explain_on_one_gpu(text, tmp_path, capsys, "--json"))
    assert doc["ruled_out_by_host"][0]["entry"] == "driver/p2p-verification-error"
    assert doc["ruled_out_by_host"][0]["line"] == 2


def test_a_fact_the_host_rules_out_is_named(tmp_path, capsys):
    out = _explain_on_one_gpu("Installed nvidia-fabricmanager-535_535.104.05-1 with driver version 535.129.03 and the "
                              "service fails.", tmp_path, capsys)
    assert "points at fabric-manager/version-mismatch" in out and "no NVSwitch and no NVLink on the host" in out


def test_nothing_named_where_the_host_rules_nothing_out(tmp_path, capsys):
    out = _explain_on_one_gpu("GPU 0: NVIDIA H100 80GB HBM3", tmp_path, capsys)
    assert "points at" not in out


def test_text_only_answers_the_text_itself(tmp_path, capsys):
    f = tmp_path / "paste.txt"
    f.write_text("NVRM: BAR1 is 0M @ 0x0 (PCI:0000:81:00.0)")
    assert cli.main(["explain", "--text-only", str(f), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["matches"][0]["failure_class"] == "bar1_too_small" and doc["ruled_out_by_host"] == []
