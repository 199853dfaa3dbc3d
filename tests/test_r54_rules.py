"""Rules of the twenty-second round (issue 22): each from a tool's or a document's own words, not from one case.

- lspci's ACSCtl with some control bit on and the redirect bits off ("SrcValid+" alone): NCCL's troubleshooting guide,
  "PCI Access Control Services (ACS)", has its readers run ``sudo lspci -vvv | grep ACSCtl`` and says: 'If lines show
  "SrcValid+", then ACS might be enabled'. The paste is read as host.acs_enabled (not as a redirect): the ACS entry is a
  candidate on it, unsure, with the redirect bits against it; ACSCtl with every bit off says ACS is off.
- a topo pair retold a line each ("GPU0 ↔ GPU1 : NS (Not Supported)", "GPU1 - GPU3 = PHB"): the code of nvidia-smi's
  legends read as the matrix cell would be.
"""

from __future__ import annotations

from p2ptop.commands.explain import explain
from p2ptop.evidence.read import read_text
from p2ptop.knowledge import load_kb

KB = load_kb()


def facts(text: str) -> dict:
    out = {}
    for f in read_text(text).findings:
        for k, v in f.facts.items():
            out.setdefault((f.subject, k), v)
    return out


ACS_SRCVALID = """$ sudo lspci -vvv | grep ACSCtl
                ACSCtl: SrcValid+ TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-
                ACSCtl: SrcValid+ TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-
                ACSCtl: SrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-
"""
ACS_OFF = ACS_SRCVALID.replace("SrcValid+", "SrcValid-")
ACS_REDIRECT = ACS_SRCVALID.replace("ReqRedir-", "ReqRedir+", 1)


def answer(text: str):
    return [m for m, _ in explain(KB, text, [], None)]


def test_srcvalid_alone_is_acs_on_not_redirect():
    f = facts(ACS_SRCVALID)
    assert f[("host", "host.acs_enabled")] is True
    assert f[("host", "host.acs_redirect")] is False


def test_acsctl_all_off_is_acs_off():
    f = facts(ACS_OFF)
    assert f[("host", "host.acs_enabled")] is False
    assert f[("host", "host.acs_redirect")] is False


def test_redirect_bit_is_both():
    f = facts(ACS_REDIRECT)
    assert f[("host", "host.acs_enabled")] is True
    assert f[("host", "host.acs_redirect")] is True


def test_setpci_source_validation_only():
    f = facts("$ sudo setpci -s 00:01.1 ECAP_ACS+0x6.w\n0001\n")
    assert f[("host", "host.acs_enabled")] is True
    assert f[("host", "host.acs_redirect")] is False
    f = facts("$ sudo setpci -s 00:01.1 ECAP_ACS+0x6.w\n0000\n")
    assert f[("host", "host.acs_enabled")] is False


def test_srcvalid_paste_gives_the_acs_entry_as_an_unsure_candidate():
    ms = answer(ACS_SRCVALID)
    assert ms, "a pasted ACSCtl with SrcValid+ is evidence: never an empty answer"
    assert ms[0].entry.failure_class == "iommu_acs_p2p_broken"
    assert all(m.confidence == "unsure" for m in ms)  # no symptom: a lead, never likely or possible
    assert any("against" in r and "host.acs_redirect = False" in r for r in ms[0].reasons)


def test_acs_off_paste_offers_no_acs_entry():
    assert not any(m.entry.failure_class == "iommu_acs_p2p_broken" for m in answer(ACS_OFF))


def test_pair_lines_read_as_cells():
    f = facts("nvidia-smi topo -p2p r\nGPU0 <-> GPU1: CNS\nGPU0 ↔ GPU2 : OK\nGPU1 - GPU2 = SOC\nGPU2 to GPU3: NV12\n")
    assert f[("pair:0-1", "p2p.read")] == "CHIPSET_NOT_SUPPORTED"
    assert f[("pair:0-2", "p2p.read")] == "OK"
    assert f[("pair:1-2", "pair.path")] == "SYS"
    assert f[("pair:2-3", "pair.path")] == "NV12" and f[("pair:2-3", "pair.nvlink_count")] == 12


def test_pair_line_capability_from_the_command_above():
    f = facts("nvidia-smi topo -p2p a\nresult:\nGPU0 ↔ GPU1 : NS (Not Supported)\n")
    assert f[("pair:0-1", "p2p.atomics")] == "NOT_SUPPORTED"
    assert ("pair:0-1", "p2p.read") not in f


def test_sentences_are_not_pair_lines():
    for text in ("GPU0 and GPU1 OK after the reboot\n", "GPU0 - GPU1 NS was what I expected\n",
                 "GPU0 and GPU1 are on PHB\n", "GPU0 GPU1 OK\n"):
        f = facts(text)
        assert not any(k[1].startswith(("p2p.", "pair.path")) for k in f), text


def test_a_matrix_wins_over_nothing():
    """A real matrix is read as before (the pair lines are read only where no matrix is)."""
    topo = "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tPHB\t0-15\nGPU1\tPHB\t X \t0-15\n"
    f = facts(topo)
    assert f[("pair:0-1", "pair.path")] == "PHB"


def test_volcano_vgpu_plugin_is_gpu_sharing_not_a_vm():
    """Volcano's vGPU device plugin (volcano-sh/devices, 'volcano-vgpu-device-plugin') shares a GPU between pods, as
    HAMi does: no hypervisor, no NVIDIA vGPU."""
    f = facts("vLLM TP=2 in a Kubernetes cluster with volcano-vgpu-device-plugin 1.11.0 fails at NCCL init\n")
    assert ("host", "gpu.virtualization") not in f
    f = facts("The GPUs are NVIDIA vGPU profiles in an ESXi guest; NCCL init fails\n")
    assert f.get(("host", "gpu.virtualization")) == "VGPU"


def test_egress_control_is_a_redirect_in_a_paste_as_on_the_host():
    """P2P Egress Control sends (or blocks) peer requests to the root complex like the two redirect bits: the text
    reader and the host reader (p2ptop.host.iommu) read ACS Control the same way (p2ptop.pcie.ACS_REDIRECT_MASK)."""
    f = facts("ACSCtl: SrcValid+ TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl+ DirectTrans-\n")
    assert f[("host", "host.acs_redirect")] is True


def test_host_reader_says_acs_enabled_where_every_bridge_was_read():
    from p2ptop.host.facts import Host
    from p2ptop.host.iommu import acs_record, add_acs_facts

    h = Host()
    add_acs_facts(h, [acs_record("0000:41:00.0", "0000:40:01.1", "root port", 0x1, "sysfs config space")], "sysfs")
    assert h.facts["host.acs_enabled"]["value"] is True and h.facts["host.acs_redirect"]["value"] is False
    h = Host()
    add_acs_facts(h, [acs_record("0000:41:00.0", "0000:40:01.1", "root port", 0, "sysfs config space")], "sysfs")
    assert h.facts["host.acs_enabled"]["value"] is False
    h = Host()  # the GPU straight on the root bus (the H200 VM of the device runs): no bridge, no ACS on its way
    add_acs_facts(h, [], "sysfs")
    assert h.facts["host.acs_enabled"]["value"] is False and h.facts["host.acs_redirect"]["value"] is False
    h = Host()  # a bridge unread (no root): whether ACS is on is not known, and doctor says why
    add_acs_facts(h, [acs_record("0000:41:00.0", "0000:40:01.1", "root port", None, "sysfs", "needs root")], "sysfs")
    assert h.facts["host.acs_enabled"]["value"] is None and "needs root" in h.facts["host.acs_enabled"]["na"]
    h = Host()  # one bridge unread, another with a bit on: ACS is on somewhere
    add_acs_facts(h, [acs_record("0000:41:00.0", "0000:40:01.1", "root port", None, "sysfs", "needs root"),
                      acs_record("0000:41:00.0", "0000:3f:00.0", "switch port", 0x1, "sysfs")], "sysfs")
    assert h.facts["host.acs_enabled"]["value"] is True
    h = Host()  # no GPU: N/A with the reason, as host.acs_redirect
    add_acs_facts(h, [], "sysfs", gpus_found=False)
    assert h.facts["host.acs_enabled"]["value"] is None and h.facts["host.acs_enabled"]["na"] == h.facts["host.acs_redirect"]["na"]


def test_launch_past_the_visible_gpus():
    """CUDA_VISIBLE_DEVICES lists the devices the workers see (CUDA C Programming Guide, "CUDA Environment Variables"):
    a launch asking for more workers per node than it lists has workers with no GPU of their ordinal."""
    f = facts("CUDA_VISIBLE_DEVICES=0 torchrun --nproc_per_node=2 train.py\nRuntimeError: CUDA error: invalid device ordinal\n")
    assert f[("host", "host.ranks_exceed_gpus")] is True
    f = facts('export CUDA_VISIBLE_DEVICES="0,1,2,3"\ntorchrun --nproc-per-node 8 train.py\n')
    assert f[("host", "host.ranks_exceed_gpus")] is True
    f = facts("CUDA_VISIBLE_DEVICES=1,3 accelerate launch --multi_gpu --num_processes=2 train.py\n")
    assert ("host", "host.ranks_exceed_gpus") not in f  # two workers, two GPUs listed
    # two different values in one text: which run is which is not said; the host's count is used (8: not exceeded)
    f = facts("on 8xA100: CUDA_VISIBLE_DEVICES=0 python a.py; CUDA_VISIBLE_DEVICES=1,2 torchrun --nproc_per_node=4 b.py\n")
    assert ("host", "host.ranks_exceed_gpus") not in f


def test_a_real_retold_pair_line():
    """The Korean blog post of fresh52 (https://9566.tistory.com/567, judged and opened): 'nvidia-smi topo -p2p a' and then
    'GPU0 ↔ GPU1 : NS (Not Supported)' on a line of its own."""
    import json
    from pathlib import Path

    case = json.loads((Path(__file__).parent.parent / "benchmarks" / "corpus" / "fresh52" / "tistory-9566-567.json").read_text())
    assert case["source_url"].startswith("https://9566.tistory.com/")
    f = facts(case["text"])
    assert f[("pair:0-1", "p2p.atomics")] == "NOT_SUPPORTED"


def test_nccl_topology_file_loaded_is_the_variable_in_effect():
    """NCCL's XML reader prints "Loading topology file %s" when it opens one (graph/xml.cc); graph/topo.cc opens the file
    NCCL_TOPO_FILE names, else only its default /var/run/nvidia-topologyd/virtualTopology.xml. A log filtered to the GRAPH
    subsystem shows the first and not the ENV line (NVIDIA/nccl#1008: an image's /etc/nccl.conf set it)."""
    log = ("a100:648288:648307 [1] NCCL INFO Loading topology file /opt/microsoft/ncv4/topo.xml\n"
           "a100:648288:648306 [0] NCCL INFO Loading topology file /opt/microsoft/ncv4/topo.xml\n")
    assert facts(log)[("host", "env.NCCL_TOPO_FILE")] == "/opt/microsoft/ncv4/topo.xml"
    default = "a100:1:2 [0] NCCL INFO Loading topology file /var/run/nvidia-topologyd/virtualTopology.xml\n"
    assert ("host", "env.NCCL_TOPO_FILE") not in facts(default)


def test_visible_devices_as_advice_is_no_setting():
    """The count comes from the values the env reader takes as set (nccl.parse_env_lines): a line that advises setting
    the variable is none."""
    f = facts("torchrun --nproc_per_node=2 train.py fails on my 2 GPUs\nyou can set CUDA_VISIBLE_DEVICES=0 to use one GPU\n")
    assert ("host", "host.ranks_exceed_gpus") not in f
