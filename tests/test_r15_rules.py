"""Rules of 2026-11-28 (third session), each from its own source, none for one paste.

1. A PCIe width said in nvidia-smi -q's own words ("Link Width ... Current 8x, Max 16x", either order, x8 or 8x):
   a width is never lowered for power saving (nvidia-smi -q documents Current and Max; ASPM lowers the speed, not
   the lanes), so a current width under the maximum is a degraded link.
2. A pair measured against its neighbours ("the bandwidth to GPU 2 is half of the others") is slow.
3. Fabric Manager's version and the driver's, both given and different, are a mismatch (Fabric Manager user guide:
   the service starts only with the driver's exact version); "the versions differ" said of Fabric Manager too."""

from __future__ import annotations

import pytest

from p2ptop.commands.explain import explain

from .kbtools import bundled_kb, classes, host_facts

KB = bundled_kb()



@pytest.mark.parametrize("text", [
    "nvidia-smi -q shows Link Width Current 8x, Max 16x for GPU 2.",
    "max link width x16, current link width x4 on GPU 3",
    "Link width: current x8, maximum x16",
    "GPU1 current width is 4x while max is 16x",
])
def test_width_in_smi_words_is_degraded(text):
    assert host_facts(text).get("gpu.pcie_degraded_under_load") is True


@pytest.mark.parametrize("text", [
    "Link Width Current 16x, Max 16x",            # at full width
    "current width x16, max x16 and Gen1 at idle",
    "We use 2x 3090 instead of 4x 3090 now.",     # counts of cards, not lanes
    "max width x8, current width x8 (a card with eight lanes)",
])
def test_width_not_degraded(text):
    assert host_facts(text).get("gpu.pcie_degraded_under_load") is not True


@pytest.mark.parametrize("text", [
    "the bandwidth to GPU 2 is half of the others",
    "copies between GPU0 and GPU3 reach only a third of the other pairs",
    "P2P throughput on this slot is a quarter of the other slots",
])
def test_a_pair_against_its_neighbours_is_slow(text):
    assert host_facts(text).get("symptom.slow") is True


@pytest.mark.parametrize("text", [
    "half of the other GPUs were idle",            # no measure of speed
    "the bandwidth test passes on half of the nodes",
])
def test_half_without_a_comparison_of_speed_is_not_slow(text):
    assert host_facts(text).get("symptom.slow") is not True


@pytest.mark.parametrize("text", [
    "nvidia-fabricmanager fails to start after a driver update, the versions differ",
    "driver 535.129 and fabric manager 535.104, the service fails",
    "Installed nvidia-fabricmanager-535_535.104.05-1 with driver version 535.129.03 and the service fails.",
    "fabricmanager version: 550.54.14 / driver version: 550.90.07",
])
def test_fabric_manager_version_differs_from_driver(text):
    assert host_facts(text).get("host.fabric_manager") == "version mismatch"
    assert "fabric_manager_version_mismatch" in classes(text)


@pytest.mark.parametrize("text", [
    "fabric manager 535.104.05 with driver 535.104.05 and the service fails to start.",
    "fabric manager 535.104 and driver 535.104.05 on the HGX",        # agree as far as both are written
    "driver upgraded from 535.104 to 535.129, fabric manager 535.104",  # one of the driver's versions: not told apart
])
def test_fabric_manager_version_same_as_a_driver_version(text):
    assert host_facts(text).get("host.fabric_manager") != "version mismatch"


@pytest.mark.parametrize("text", [
    "One GPU negotiates only x4 because the riser is bad; the slot is wired x16.",
    "The card runs at x8 although the card supports x16.",
])
def test_trained_width_against_the_slot_is_degraded(text):
    assert host_facts(text).get("gpu.pcie_degraded_under_load") is True


def test_full_width_against_the_slot_is_not_degraded():
    assert host_facts("all GPUs run at x16, the slot supports x16").get("gpu.pcie_degraded_under_load") is not True


@pytest.mark.parametrize("text", [
    "P2P works with driver 525 but hangs with 530 on the same RTX A6000 box.",
    "驱动 535 正常，550 报错 P2P 失败",
    # the second version written without the word "driver" (tests/test_errlog_families.py kept one version only)
    "The model runs normally on one card but not on 4 gpus.\nThe error above occurs with driver 550.90.07; with 545.23.08 everything works.",
])
def test_bare_driver_branches_contrasted(text):
    assert host_facts(text).get("text.broken_by") == "driver"
    assert "p2p_driver_regression" in classes(text)


@pytest.mark.parametrize("text", [
    "batch size 500 works but 550 fails with out of memory",       # no driver in the sentence
    "the 512 run works but 600 W cards fail with the driver",       # not branch numbers
])
def test_numbers_that_are_not_driver_branches(text):
    assert host_facts(text).get("text.broken_by") is None


def test_running_at_a_speed_is_not_working():
    """'runs at 10 GB/s' says how fast, not that P2P off made it work."""
    text = "NCCL_P2P_DISABLE=1 was left in our .bashrc and all-reduce runs at 10 GB/s on the NVLink machine."
    assert host_facts(text).get("symptom.fixed_by_p2p_disable") is not True
    assert "nccl_env_misconfig" in classes(text)[:1]


@pytest.mark.parametrize("text", [
    'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].',
    'Error response from daemon: could not select device driver "nvidia" with capabilities: [[gpu]]',
    "docker: Error response from daemon: unknown or invalid runtime name: nvidia.",
])
def test_docker_without_the_nvidia_runtime(text):
    top = explain(KB, text, [], 1)
    assert top and top[0][0].entry.id == "container/docker-no-nvidia-runtime"


def test_docker_other_device_driver_is_not_the_nvidia_runtime():
    """Another capability than gpu ('[[rdma]]') or another runtime name ('runsc') is not this entry."""
    for text in ('could not select device driver "" with capabilities: [[rdma]]', "unknown or invalid runtime name: runsc"):
        assert all(m.entry.id != "container/docker-no-nvidia-runtime" for m, _ in explain(KB, text, [], 3))


# --- written after fresh17 was judged blind and opened (each from its own source, tested on texts of our own) ---

PYTORCH_218 = """torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1331, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version {v}
ncclUnhandledCudaError: Call to CUDA function failed.
Last error:
Cuda failure 'invalid argument'"""


@pytest.mark.parametrize("text", [
    PYTORCH_218.format(v="2.18.1"),
    PYTORCH_218.format(v="2.18.5"),
    "node3:811:902 [0] NCCL INFO NCCL version 2.18.3+cuda12.2\nnode3:811:902 [0] transport.cc:154 NCCL WARN Cuda failure 'invalid argument'",
])
def test_nccl_218_transport_setup_invalid_argument(text):
    """NVIDIA/nccl#957: 2.18's ncclTransportP2pSetup used an async copy's result too early; fixed in 2.18.6."""
    assert explain(KB, text, [], 1)[0][0].entry.id == "nccl/2-18-setup-memcpy-invalid-argument"


@pytest.mark.parametrize("version", ["2.18.6", "2.19.3"])
def test_invalid_argument_on_a_fixed_release_is_only_a_lead(version):
    """Another release named: the regex still points at the entry, but only as an unsure lead with the version
    against it."""
    for m, _ in explain(KB, PYTORCH_218.format(v=version), [], 3):
        if m.entry.id == "nccl/2-18-setup-memcpy-invalid-argument":
            assert m.confidence == "unsure"


@pytest.mark.parametrize("text", [
    "h100-07:3312:3390 [0] NCCL INFO NCCL version 2.18.3+cuda12.2\n"
    "h100-07:3312:3390 [0] transport/nvls.cc:120 NCCL WARN Cuda failure 'invalid argument'",  # NVLS set-up, not this bug
    "transport/p2p.cc:257 NCCL WARN failed to open CUDA IPC handle : 1 invalid argument\nNCCL version 2.18.5",
])
def test_other_invalid_arguments_are_not_the_218_bug(text):
    assert all(m.entry.id != "nccl/2-18-setup-memcpy-invalid-argument" for m, _ in explain(KB, text, [], 3))


@pytest.mark.parametrize("gpus", ["4x GTX 1080 Ti", "8 TITAN X (Pascal)", "two Titan Xp", "GTX 980 Ti pair"])
def test_pre_turing_geforce_hang_is_not_the_geforce_p2p_policy(gpus):
    """GeForce/TITAN before Turing had PCIe P2P in the stock driver: a hang there is not the RTX 40 policy's."""
    text = f"NCCL all_reduce hangs forever on {gpus}."
    assert all(m.entry.id != "consumer/geforce-nccl-p2p-hang" for m, _ in explain(KB, text, [], 3))


@pytest.mark.parametrize("gpus", ["4x RTX 4090", "two RTX 3090", "RTX 2080 Ti x4"])
def test_turing_and_later_geforce_hang_keeps_the_entry(gpus):
    text = f"NCCL all_reduce hangs forever on {gpus}."
    assert any(m.entry.id == "consumer/geforce-nccl-p2p-hang" for m, _ in explain(KB, text, [], 3))
