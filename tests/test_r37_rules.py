"""Rules of the fourteenth session (2026-11-29), each written from a program's own source or documentation, never from one
case.

1. After opening fresh37 (labelled so): a version contrast told across a comma ("my code runs normally with NCCL 2.9.8, but
   with NCCL 2.10.3, get an error") is read on its side of the "but", not on the whole sentence (which holds both
   verdicts); the driver the paste names against the CUDA release a library it names was built with (CUDA's release
   notes, "CUDA Toolkit and Corresponding Driver Versions": every release to 11.0 its own floor, then 11.x, 12.x and 13.x
   by minor version compatibility), read from NCCL's "+cudaX.Y" and a NCCL package's version as apt, dpkg and rpm list it.
2. After opening fresh38 (labelled so): two ranks of one NCCL communicator (one commId) on one host printing the same bus id
   are refused by NCCL's init (src/init.cc: "Duplicate GPU detected" up to 2.28, "Multiple Ranks are using the same
   GPU/Partition" from 2.30 unless NCCL_MULTI_RANK_GPU_ENABLE=1): nccl.ranks_share_gpu, the duplicate-GPU entry's trigger.
3. Seen live (the one-GPU H200, a provoked TCPStore timeout answered with unsure leads on the host's context): PyTorch's
   rendezvous store timing out on ranks that never connected (TCPStore.cpp waitForWorkers, "Timed out after {} seconds
   waiting for clients. {}/{} clients joined.") is trouble before any GPU communication: its hang and error are taken
   back, the answer says so (kind "before_gpu") and names what to read instead; a GPU error elsewhere in the paste is
   still answered. Then the other launches and rendezvous of source-probe round 92 (evidence/launch.py NEVER_MET: the
   store's client and key timeouts, the store-based barrier, env:// without MASTER_ADDR, torchelastic, Open MPI's and
   PRRTE's daemons and slots, Horovod's and DeepSpeed's launchers).
4. NCCL's troubleshooting guide ("PCI Access Control Services (ACS)"): ACS redirects PCIe peer requests and the IOMMU
   translates PCIe DMA; a GPU pair joined by NVLink sends its peer traffic over NVLink. Where every pair the text gives a
   path for is NV#, the IOMMU/ACS hang-or-corruption and ACS-redirect entries are ruled out (host.all_pairs_nvlink); a live
   or replayed host whose every pair is NVLink gives the same fact (diagnose.host_findings).
5. Seen on two real H200s (nvidia-h200-x2, x2_diagnosis.sh): the symmetric-memory multicast entry took NCCL's own INFO lines
   "MNNVL busId ... state 3" and "... MNNVL 0" (src/mnnvl.cc, init.cc, on every NVSwitch host) for symmetric memory and was
   offered possible on any NCCL error there; its words no longer take NCCL's MNNVL lines. Healthy runs with NCCL settings
   and with NCCL_DEBUG_SUBSYS=ALL, a skipped collective and a rank that exits (x2_app_faults.sh): the all-subsystem log's
   downgraded WARN ("NCCL INFO Could not find real path of ...", NCCL's NOWARN) and socket NIC ("NET/Socket : GPU Direct
   RDMA Disabled") are no longer WSL's or GDR's entry (negative lookbehinds, whose words retrieval leaves out); the VM
   peer-access entry is in doubt where NCCL's log joined the pair via P2P (it had been possible on the skipped collective).
"""

from __future__ import annotations

import pytest

from p2ptop.evidence.builds import driver_below_cuda, min_driver

from .kbtools import alarms, answer
from .kbtools import host_facts as _host


def _classes(text, n=3):
    return [a[0] for a in answer(text)[:n]]


# ---- 1. versions --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "The job runs fine with NCCL 2.18.1, but with NCCL 2.19.3, all_reduce fails with an illegal memory access.",
    "with nccl 2.20.5 it works; but with nccl 2.21.5, every rank hangs in the first broadcast",
])
def test_a_version_contrast_across_a_comma_is_a_regression(text):
    assert _host(text).get("text.broken_by") == "nccl"


def test_an_older_release_failing_is_a_fix_not_a_regression():
    text = "With NCCL 2.14.3, the all-gather hangs on two GPUs, but with NCCL 2.18.1, it works."
    assert _host(text).get("text.fixed_by") == "nccl" and "text.broken_by" not in _host(text)


@pytest.mark.parametrize("driver, cuda, below", [
    ((384, 111, 0), (9, 1), True), ((390, 46, 0), (9, 1), False), ((410, 79, 0), (10, 1), True),
    ((418, 39, 0), (10, 1), False), ((440, 33, 0), (11, 0), True), ((450, 36, 6), (11, 0), False),
    ((450, 51, 6), (11, 8), True), ((470, 82, 1), (11, 8), False), ((520, 61, 5), (12, 1), True),
    ((535, 104, 5), (12, 2), False), ((575, 57, 8), (13, 0), True),
])
def test_the_driver_floor_of_each_cuda_release(driver, cuda, below):
    assert driver_below_cuda(driver, cuda) is below


def test_a_release_the_table_does_not_know_says_nothing():
    assert min_driver((6, 5)) is None and driver_below_cuda((300, 1, 0), (6, 5)) is None


_SMI = "| NVIDIA-SMI 410.79       Driver Version: 410.79       CUDA Version: 10.0     |\n"


def test_a_nccl_package_built_for_a_newer_cuda_than_the_driver_runs():
    text = (_SMI + "ii  libnccl2  2.4.8-1+cuda10.1  amd64  NVIDIA Collective Communication Library (NCCL) Runtime\n"
            "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:514, unhandled cuda error, NCCL version 2.4.8\n")
    assert _host(text).get("host.driver_below_cuda_build") is True
    assert _classes(text, 1) == ["driver_too_old_for_cuda"]


def test_a_nccl_package_the_driver_runs_is_no_mismatch():
    text = _SMI.replace("410.79", "418.87.01") + "libnccl-2.4.8-1+cuda10.1.x86_64\nunhandled cuda error\n"
    assert "host.driver_below_cuda_build" not in _host(text)


def test_a_nccl_log_past_its_transports_started_its_runtime():
    text = ("Driver Version: 440.33.01\n"
            "host:11:11 [0] NCCL INFO NCCL version 2.7.8+cuda11.0\n"
            "host:11:20 [0] NCCL INFO Channel 00 : 0[1000] -> 1[2000] via P2P/IPC\n")
    assert "host.driver_below_cuda_build" not in _host(text)
    assert not alarms(text)


def test_a_nccl_build_the_driver_cannot_run():
    text = ("Driver Version: 440.33.01\n"
            "host:11:11 [0] NCCL INFO NCCL version 2.7.8+cuda11.0\n"
            "host:11:11 [0] NCCL INFO init.cc:1160 -> 1\n"
            "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:784, unhandled cuda error, NCCL version 2.7.8\n")
    assert _host(text).get("host.driver_below_cuda_build") is True


# ---- 2. ranks on one GPU --------------------------------------------------------------------------------------------------

def _init(host, pid, rank, bus, comm="0x5b1c0e2a9f3d4e11", nranks=2):
    return (f"{host}:{pid}:{pid + 7} [0] NCCL INFO ncclCommInitRank comm 0x55d0c{rank}a0 rank {rank} nranks {nranks} "
            f"cudaDev 0 nvmlDev 0 busId {bus} commId {comm} - Init START\n")


def test_two_ranks_of_one_communicator_on_one_gpu():
    text = _init("node-a", 311, 0, "1b000") + _init("node-a", 312, 1, "1b000")
    assert _host(text).get("nccl.ranks_share_gpu") is True
    assert answer(text)[0][3] == "nccl/duplicate-gpu-detected"


@pytest.mark.parametrize("text", [
    _init("node-a", 311, 0, "1b000") + _init("node-a", 312, 1, "1c000"),  # two GPUs
    _init("node-a", 311, 0, "1b000") + _init("node-b", 312, 1, "1b000"),  # two hosts, each its own GPU at one bus id
    _init("node-a", 311, 0, "1b000", comm="0x11") + _init("node-a", 312, 1, "1b000", comm="0x22"),  # two communicators
    "node-a:311:311 [0] NCCL INFO NCCL_MULTI_RANK_GPU_ENABLE set by environment to 1.\n"
    + _init("node-a", 311, 0, "1b000") + _init("node-a", 312, 1, "1b000"),  # allowed from 2.30
])
def test_ranks_on_their_own_gpus_or_allowed_to_share_are_no_duplicate(text):
    assert "nccl.ranks_share_gpu" not in _host(text)


# ---- 3. ranks that never met -----------------------------------------------------------------------------------------------

_STORE = ("Traceback (most recent call last):\n"
          "  File \"/srv/train.py\", line 9, in <module>\n"
          "    dist.init_process_group(\"nccl\", rank=rank, world_size=world)\n"
          "  File \"/usr/lib/python3/dist-packages/torch/distributed/rendezvous.py\", line 189, in _create_c10d_store\n"
          "    return TCPStore(\n"
          "torch.distributed.DistStoreError: Timed out after 300 seconds waiting for clients. 3/4 clients joined.\n")


def test_a_rendezvous_that_never_met_is_no_gpu_fault():
    from p2ptop.commands.explain import _as_text
    from p2ptop.commands.explain import answer as explain_answer

    from .kbtools import bundled_kb

    a = explain_answer(bundled_kb(), _STORE, [], 3)
    assert a["kind"] == "before_gpu" and a["results"] == [] and a["symptoms"] == []
    out = _as_text(a, "x", None, None, bundled_kb(), "en")
    assert "3/4 clients joined" in out and "never met" in out and "Not a GPU-to-GPU fault" in out


def test_a_gpu_error_beside_the_rendezvous_timeout_is_still_answered():
    text = "[rank3]: RuntimeError: CUDA error: invalid device ordinal\n" + _STORE
    assert _classes(text, 1) == ["device_not_visible"]


def _probe(pid):
    import json
    from pathlib import Path

    probes = json.loads((Path(__file__).parent / "data" / "source_probes.json").read_text())["probes"]
    return next(p["text"] for p in probes if p["id"] == pid)


@pytest.mark.parametrize("pid", [
    "rendezvous-torch-client-connect-timeout", "rendezvous-torch-store-wait-timeout", "rendezvous-torch-env-master-addr-unset",
    "rendezvous-torch-store-based-barrier-timeout", "rendezvous-torch-elastic-rdzv-timeout",
    "rendezvous-mpi-orte-failed-daemon-launch", "rendezvous-mpi-prrte-not-enough-slots", "rendezvous-other-horovod-ssh-check",
    "rendezvous-other-deepspeed-master-addr-detect",
])
def test_launches_and_rendezvous_that_never_met_are_before_gpu(pid):
    from p2ptop.commands.explain import answer as explain_answer

    from .kbtools import bundled_kb

    a = explain_answer(bundled_kb(), _probe(pid), [], 3)
    # (a launcher's message that names no GPU at all is "no_gpu_trace": nothing offered either way)
    assert a["kind"] in ("before_gpu", "no_gpu_trace") and a["results"] == [], (a["kind"], [m.entry.id for m, _ in a["results"]])


# ---- 4. NVLink pairs and PCIe's ACS/IOMMU -----------------------------------------------------------------------------------

_WRONG = "all_reduce_perf -b 8 -e 2G -g 4\n # Out of bounds values : 16 FAILED\n"


def _topo(cell):
    return ("        GPU0    GPU1    GPU2    GPU3    CPU Affinity    NUMA Affinity\n"
            f"GPU0     X      NV4     {cell}     NV4     0-15    0\n"
            f"GPU1    NV4      X      NV4     NV4     0-15    0\n"
            f"GPU2    {cell}     NV4      X      NV4     16-31   1\n"
            f"GPU3    NV4     NV4     NV4      X      16-31   1\n")


def test_wrong_data_between_nvlink_pairs_is_no_acs_or_iommu_fault():
    text = _WRONG + _topo("NV4")
    assert _host(text).get("host.all_pairs_nvlink") is True
    ids = [a[3] for a in answer(text)]
    assert "iommu/p2p-hang-or-corruption" not in ids and "pcie/acs-redirect-blocks-p2p" not in ids


def test_one_pcie_pair_keeps_the_iommu_entry_a_candidate():
    text = _WRONG + _topo("SYS")
    assert "host.all_pairs_nvlink" not in _host(text)
    assert "iommu/p2p-hang-or-corruption" in [a[3] for a in answer(text)]


# ---- 5. real two-H200 logs (benchmarks/device/x2_diagnosis.sh, 2026-11-29) --------------------------------------------------

_X2 = __import__("pathlib").Path(__file__).parent / "fixtures" / "captures" / "h200x2-nccl-2026-11-29"


def test_real_two_ranks_on_one_gpu_cut_before_the_refusal():
    text = (_X2 / "same-gpu-cut.log").read_text()
    assert _host(text).get("nccl.ranks_share_gpu") is True
    assert answer(text)[0][3] == "nccl/duplicate-gpu-detected"


@pytest.mark.parametrize("name", ["same-gpu.log", "same-gpu-cut.log", "shm-64k.log", "p2p-disable.log"])
def test_nccls_own_mnnvl_lines_are_no_symmetric_memory(name):
    # NCCL 2.2x prints "MNNVL busId ... state 3" and "... localRank 0 MNNVL 0" on every NVSwitch host: no symmetric memory
    assert "torch/symmetric-memory-needs-multicast" not in [a[3] for a in answer((_X2 / name).read_text())]


def test_the_real_healthy_log_offers_nothing():
    assert not alarms((_X2 / "healthy.log").read_text())


def test_the_live_hosts_nvlink_pairs_rule_out_the_iommu_entry_for_a_pasted_corruption():
    from p2ptop.commands.explain import answer as explain_answer
    from p2ptop.diagnose import findings_for, pair_fact_findings
    from p2ptop.sources import open_snapshot

    from .kbtools import bundled_kb

    snap = open_snapshot(replay=str(_X2.parent / "h200x2-live" / "p2ptop-snapshot.json"))
    findings = findings_for(snap) + pair_fact_findings(snap)
    assert any((f.facts or {}).get("host.all_pairs_nvlink") for f in findings)
    a = explain_answer(bundled_kb(), _WRONG, findings, 3)
    assert "iommu/p2p-hang-or-corruption" not in [m.entry.id for m, _ in a["results"]]
    assert any(x["entry"] == "iommu/p2p-hang-or-corruption" for x in a["ruled_out_by_host"])


@pytest.mark.parametrize("name", ["ok-ring-simple.log", "ok-debug-all.log"])
def test_real_healthy_logs_with_settings_or_every_subsystem_are_healthy(name):
    # NCCL_DEBUG_SUBSYS=ALL shows a WARN NCCL downgraded to INFO (NOWARN: "Could not find real path of ...fffffff") and the
    # socket NIC's "NET/Socket : GPU Direct RDMA Disabled": neither is a failure, and neither is WSL's or GDR's entry
    assert answer((_X2 / name).read_text()) == []


@pytest.mark.parametrize("name", ["skip-collective.log", "rank-dies.log"])
def test_real_application_faults_on_healthy_hardware_offer_no_p2p_entry_as_likely(name):
    assert not alarms((_X2 / name).read_text())


def test_negative_lookarounds_feed_no_words_to_retrieval():
    from p2ptop.knowledge.retrieval import entry_text

    from .kbtools import bundled_kb

    wsl = next(e for e in bundled_kb().entries if e.id == "wsl/nccl-wsl2-no-p2p")
    assert "(?<!NCCL INFO )" in wsl.data["regex"] and "INFO" not in entry_text(wsl).split("Could not find")[0][-40:]
