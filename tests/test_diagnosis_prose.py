"""Prose and log rules added for issue 22's targets, each on real text from a public thread (quoted
short, source URL beside it; none of these threads is in benchmarks/corpus), and the matcher's
leads (unsure candidates where no entry claims the text's symptom)."""

from __future__ import annotations


from p2ptop.evidence import read_text
from p2ptop.knowledge.matcher import match
from p2ptop.commands.explain import answer
from .kbtools import bundled_kb, host_facts, kb_from

KB = bundled_kb()


def test_a_consumer_card_counted_without_its_brand_is_read():
    # https://github.com/sgl-project/sglang/issues/4723 (title)
    f = host_facts("[Bug] After adding --enable-p2p-check, why is the speed of running on two 4090s slower than on a single one")
    assert f["gpu.consumer"] is True and f["gpu.architecture"] == "Ada" and f["symptom.slow"] is True
    # https://github.com/NVIDIA/nccl-tests/issues/117 (a KB example's thread)
    assert host_facts("This is an AMD system as well, 7402P and Asrock ROMED8-2T, 4xRTX 4090, NPS=4")["gpu.consumer"] is True
    assert host_facts("we tested 2x4090 on the board")["gpu.name"] == "4090"
    # a bare number with no count before it is a year or a port, not a GPU
    assert "gpu.name" not in host_facts("released in 4090 BC, served on port 4090 today")


def test_a_failure_in_words_is_a_symptom_but_a_tool_legend_or_ls_is_not():
    # https://github.com/NVIDIA/nccl-tests/issues/260
    f = host_facts("So, I tried to set NCCL_P2P_DISABLE=1, but still not working.")
    assert f["symptom.fails"] is True
    # nvidia-smi topo's legend and an ls error (the single-GPU H100 capture) say nothing of a report
    assert "symptom.fails" not in host_facts("  CNS  = Chipset not supported\n  GNS  = GPU not supported\n  NS   = Not supported\n")
    assert "symptom.fails" not in host_facts("ls: cannot access '/run/.containerenv': No such file or directory")


def test_zeroed_tensors_are_wrong_results_and_proxmox_passthrough_a_vm():
    # https://github.com/tinygrad/open-gpu-kernel-modules/issues/18
    f = host_facts("I'm using my GPU Cluster inside a proxmox VM and i'm passing through my devices, so IOMMU off is kinda "
                   "not possible\nWhen moving data between GPUs via P2P, I was getting IO_PAGE_FAULT and the copied tensor "
                   "would be allocated but zeroed out.")
    assert f["symptom.wrong_results"] is True and f["host.hypervisor"] == "Proxmox" and f["gpu.virtualization"] == "PASSTHROUGH"


def test_shm_size_in_words():
    # https://github.com/NVIDIA/nccl/issues/342
    assert host_facts("It is the /dev/shm size problem under the docker. By default, the shm size is limited to 64MB under docker.")["host.shm_mb"] == 64
    # https://github.com/NVIDIA/nccl/issues/1518
    assert host_facts("My /dev/shm is 64MB and there's plenty of space")["host.shm_mb"] == 64


def test_fabric_manager_absent_and_a_cuda_number_in_a_sentence():
    # https://github.com/gpustack/gpustack/issues/4154
    f = host_facts("For `Error 802: system not yet initialized`, install `nvidia-fabricmanager`.")
    assert f["error.cuda"] == "cudaErrorSystemNotReady"
    # https://github.com/NVIDIA/nccl/issues/1562 (a KB example's thread): the title
    assert host_facts("[Hopper/NVLINK4] Origin of failure of fabric manager manifested through NCCL-based codes")["host.fabric_manager"] == "failed"
    assert host_facts("nvidia-fabricmanager is not installed on the image")["host.fabric_manager"] == "not running"


def test_resizable_bar_and_bar_size_in_words():
    # https://github.com/aikitoria/open-gpu-kernel-modules/issues/6
    f = host_facts("in bios\n1.  IOMMU must be disabled\n2. ACS must be disabled\n3. resizing BAR must be enabled.")
    assert "ACS" in f["host.bios_mentions"] and "IOMMU" in f["host.bios_mentions"]
    assert host_facts("nvidia-smi shows BAR1: 256MB on the server")["gpu.bar1_mb"] == 256
    assert host_facts("the 4090 reports 32GB bar size")["gpu.bar1_mb"] == 32768


def test_p2p_said_available_and_a_bare_metal_contrast():
    # https://github.com/NVIDIA/nccl/issues/2335
    f = host_facts("- `cudaDeviceCanAccessPeer=1` and `nvidia-smi topo -p2p {r,w}=OK` both ways\n"
                   "On a 2-GPU VFIO passthrough VM, QEMU's `x-nv-gpudirect-clique` makes the NVIDIA driver grant bidirectional peer access")
    assert f["gpu.virtualization"] == "PASSTHROUGH"
    assert host_facts("cudaDeviceCanAccessPeer returns 1 for both GPUs")["p2p.read"] == "OK"
    assert host_facts("In the guest P2P is missing. On bare metal, this works.")["host.virtualized"] is True


def test_a_bandwidth_that_fell_in_figures_and_a_driver_branch_without_minor():
    assert host_facts("compared to SHM, alltoall got 18 -> 2 BUSBW on the 4 GPUs")["symptom.slow"] is True
    assert "symptom.slow" not in host_facts("allreduce went 18 -> 22 BUSBW")
    assert host_facts("The hang is gone after updating the driver; I have run tests with 570")["host.driver_major"] == 570
    assert "host.driver_major" not in host_facts("the driver maps 512 MB of BAR")
    assert host_facts("Our box hangs. Driver 550.")["host.driver_major"] == 550


def test_idle_pcie_link_and_p2p_and_shm_disabled_in_words():
    f = host_facts("The card shows 2.5 GT/s, with 16 GT/s in LnkCap, while it is idle")
    assert f["gpu.pcie_idle_downclock"] is True
    f = host_facts("the launcher disables P2P and SHM for every run")
    assert f["env.NCCL_P2P_DISABLE"] == "1" and f["env.NCCL_SHM_DISABLE"] == "1"


def test_nccl_channels_without_brackets_give_pair_transports():
    # NCCL 2.4 printed ranks without brackets: https://github.com/NVIDIA/nccl/issues/290 shows
    # "Ring 00 : 2[3d000] -> 3[3e000] via direct shared memory"; older logs drop the bracket
    text = ("node1:123:456 [0] NCCL INFO Channel 00 : 0 -> 1 via SHM/direct/direct\n"
            "node1:123:457 [1] NCCL INFO Ring 00 : 1 -> 0 via P2P/IPC\n")
    ev = read_text(text)
    assert ev.facts_by_subject()["pair:0-1"]["nccl.transport"] == "SHM"
    assert len(ev.nccl_log.channels) == 2
    # NET between ranks not known to share a host is no GPU pair
    net = read_text("node1:1:2 [0] NCCL INFO Channel 00 : 0 -> 1 via NET/Socket/0\n")
    assert "pair:0-1" not in net.facts_by_subject()


def _kb(tmp_path, **entries):
    return kb_from(KB.get("nccl/shm-dev-shm-full"), tmp_path, **entries)


def test_leads_fill_a_silent_answer_only_beside_a_symptom(tmp_path):
    kb = _kb(tmp_path, vm={"match": {"require": [{"fact": "host.virtualized", "equals": True}]}},
             other={"match": {"require": [{"fact": "gpu.consumer", "equals": True}]}})
    # context alone: nothing
    assert match(kb, "Our two A100 cards run in a KVM guest.") == []
    # a symptom no entry claims, with context that fits one entry: that entry, as an unsure lead
    ranked = match(kb, "Our two A100 cards run in a KVM guest and P2P does not work.")
    assert [m.entry.id for m in ranked] == ["test/vm"] and ranked[0].confidence == "unsure"
    assert any(r.startswith("lead:") for r in ranked[0].reasons)


def test_a_failure_in_words_alone_makes_no_candidate_of_an_entry_missing_its_context(tmp_path):
    kb = _kb(tmp_path, cons={"match": {"require": [{"fact": "gpu.consumer", "equals": True}],
                                       "trigger": [{"fact": "symptom.fails", "equals": True, "weight": 0.15}]}})
    # on its signs, nothing; the retrieval fallback (issue 22 point 4) may name it, unsure, on its words only
    assert all(m.basis == "retrieval" and m.confidence == "unsure"
               for m in match(kb, "P2P copy does not work between the two GPUs."))
    ranked = match(kb, "P2P copy does not work between the two RTX 4090 GPUs.")
    assert [m.entry.id for m in ranked] == ["test/cons"] and ranked[0].confidence != "unsure"


def test_real_reports_get_candidates_with_a_next_command():
    # https://github.com/tinygrad/open-gpu-kernel-modules/issues/18: Proxmox passthrough, zeroed copies
    a = answer(KB, "I'm using my GPU Cluster inside a proxmox VM and i'm passing through my devices.\nWhen moving data "
                   "between GPUs via P2P, I was getting IO_PAGE_FAULT and the copied tensor would be allocated but zeroed out.", [], 3)
    assert a["results"] and a["next_command"]
    classes = [m.entry.failure_class for m, _ in a["results"]]
    assert "iommu_acs_p2p_broken" in classes


def test_an_nvls_setup_says_nvswitch_and_without_nvswitch_says_none():
    # https://github.com/NVIDIA/nccl/issues/1788 (a KB example's thread): NCCL only sets up NVLS on an NVSwitch fabric
    ev = read_text("node004:27907:27907 [1] transport/nvls.cc:154 NCCL WARN Cuda failure 1 'invalid argument'\n"
                   "node004:27907:27907 [1] NCCL INFO transport/nvls.cc:409 -> 1\n")
    assert ev.facts_by_subject()["host"]["host.nvswitch_present"] is True
    # wording as in the Fabric Manager user guide's note on systems without NVSwitch (paraphrased):
    # https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html
    assert host_facts("On a system without NVSwitch, Fabric Manager exits with NV_WARN_NOTHING_TO_DO")["host.nvswitch_present"] is False
    # Fabric Manager's own message on a host without NVSwitch names NVSwitch: no sign of one
    # https://github.com/NVIDIA/gpu-operator/issues/610 (a KB example's thread)
    assert "host.nvswitch_present" not in host_facts(
        "nv-fabricmanager[4177]: request to query NVSwitch device information from NVSwitch driver failed with error:WARNING Nothing to do")


def test_p2p_and_shm_disabled_in_a_title_and_the_network_entry_on_slowness():
    # https://github.com/NVIDIA/nccl/issues/2057 (title)
    f = host_facts("[Issue]: Single-node 2-GPU ncclSend/ncclRecv fails with internal error when P2P and SHM are disabled: "
                   "NET/Socket receives AF_UNIX address")
    assert f["env.NCCL_P2P_DISABLE"] == "1" and f["env.NCCL_SHM_DISABLE"] == "1"
    # constructed sentence (the entry's trigger): both transports off and the job slow
    ranked = match(KB, "We run with P2P and SHM disabled on our 8-GPU NVLink host and all-reduce is slow.")
    assert ranked and ranked[0].entry.id == "nccl/p2p-and-shm-disabled-uses-network" and ranked[0].confidence != "unsure"


def test_a_hang_fixed_in_a_later_nccl_release():
    # https://github.com/NVIDIA-NeMo/RL/pull/3351
    ranked = match(KB, "Updates NCCL to 2.30.4. NCCL 2.30.4 fixes a CP hang on GB200 when GPUs are non-continguous.")
    assert ranked[0].entry.id == "nccl/hang-fixed-in-later-release" and ranked[0].confidence != "unsure"
    # another library's 2.x.y beside a hang is not an NCCL release (constructed sentence)
    ranked = match(KB, "Training hangs with torch 2.1.0; upgrading to torch 2.1.2 fixes it.")
    # (the retrieval fallback may name it on its words, unsure; its version rule must not fire)
    assert "nccl/hang-fixed-in-later-release" not in [m.entry.id for m in ranked if m.basis != "retrieval"]
