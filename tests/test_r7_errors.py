"""Round 7 (errors, logs, tool outputs): rules written from the tools' own output formats, each on real lines with
the thread they come from, and negatives that must not fire."""

from __future__ import annotations

from p2ptop.evidence import read_text
from p2ptop.nccl.log import read_nccl_log
from tests.kbtools import alarms

# --- nvidia-smi topo -m's legend names PCIe bridges, not an NVLink bridge --------------------------------------------

#: nvidia-smi topo -m's legend as NVIDIA/nccl#1617 shows it (https://github.com/NVIDIA/nccl/issues/1617)
TOPO_LEGEND = """\
Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks
"""
#: an A100 PCIe without an NVLink bridge (NVIDIA/NVSentinel#1481: "NVIDIA A100 80GB PCIe (single GPU, no NVLink bridge
#: installed)"); nvidia-smi nvlink -s prints NVML's line for such a GPU (NVIDIA/open-gpu-kernel-modules#1150's title)
NVLINK_S_NO_BRIDGE = """\
GPU 0: NVIDIA A100 80GB PCIe (UUID: GPU-e7b3bccd-51ac-85a4-b4cd-54a40b14ddb1)
NVML: Unable to retrieve NVLink information as all links are inActive
"""


def test_topo_legend_bridges_are_no_nvlink_bridge():
    facts = read_text(NVLINK_S_NO_BRIDGE + "\n" + TOPO_LEGEND).facts_by_subject()["host"]
    assert facts.get("host.nvlink_inactive_maybe_by_design") is True
    assert not [a for a in alarms(NVLINK_S_NO_BRIDGE + "\n" + TOPO_LEGEND) if a[0] == "nvlink_link_failure"]


def test_a_named_nvlink_bridge_still_counts():
    text = NVLINK_S_NO_BRIDGE + "\nThe NVLink bridge is fitted between the two cards.\n" + TOPO_LEGEND
    assert "host.nvlink_inactive_maybe_by_design" not in read_text(text).facts_by_subject()["host"]


# --- NCCL 2.1/2.2: the prefix without the word "NCCL" ----------------------------------------------------------------

#: horovod/horovod#98 (https://github.com/horovod/horovod/issues/98), NCCL 2.1 with Horovod
OLD_98 = """\
admin-pc:14733:14828 [1] misc/ibvwrap.cu:60 WARN Failed to open libibverbs.so[.1]
admin-pc:14733:14828 [1] INFO Using internal Network Socket
admin-pc:14733:14828 [1] INFO NET : Using interface enp30s0:192.168.178.46<0>
admin-pc:14733:14828 [1] INFO NET/Socket : 5 interfaces found
"""
#: horovod/horovod#489 (https://github.com/horovod/horovod/issues/489)
OLD_489 = """\
nmyjs-202-75:24499:24701 [0] INFO NET : Using interface eth0:10.141.202.75<0>
nmyjs-202-75:24499:24701 [0] INFO NET/IB : Using interface eth0 for sideband communication
nmyjs-202-75:24499:24701 [0] INFO Using NCCL Low-latency algorithm for sizes below 16384
nmyjs-202-75:24499:24701 [0] INFO comm 0x55d07fb87c10 rank 0 nranks 16
"""
#: NCCL 2.1's ring connections carry no "Ring NN :" (horovod/horovod#148, https://github.com/horovod/horovod/issues/148)
OLD_RING = """\
node1:22671:22795 [1] INFO 1 -> 0 via P2P/IPC
node1:18225:18239 [0] INFO 2 -> 1 via P2P/IPC
"""


def test_old_prefix_is_read_as_nccl():
    log = read_nccl_log(OLD_98)
    assert log.nccl_lines == 4 and log.hosts == ["admin-pc"]
    assert [(m.level, m.location) for m in log.warnings] == [("WARN", "misc/ibvwrap.cu:60")]
    log = read_nccl_log(OLD_489)
    assert log.nccl_lines == 4 and log.hosts == ["nmyjs-202-75"]
    assert "nccl-log" in read_text(OLD_489).kinds


def test_old_ring_connections_are_channels():
    log = read_nccl_log(OLD_RING)
    assert [(c.src, c.dst, c.transport) for c in log.channels] == [(1, 0, "P2P/IPC"), (2, 1, "P2P/IPC")]


def test_other_loggers_info_lines_are_not_nccl():
    text = ("2024-01-01 12:00:00 [1] INFO starting server\n"
            "2024-01-01T12:00:00 [1] INFO starting server\n"
            "[2024-01-01 12:00:00] WARN disk low\n"
            "worker [0] INFO 1 -> 0 via P2P/IPC\n")
    log = read_nccl_log(text)
    assert log.nccl_lines == 0 and log.hosts == [] and log.channels == [] and log.messages == []


# --- CUDA's error names as bindings shorten them ----------------------------------------------------------------------

def _cuda(text):
    facts = read_text(text).facts_by_subject().get("host", {})
    return facts.get("error.cuda"), facts.get("error.cuda_code")


def test_cuda_jl_driver_name_without_cuda_prefix():
    # CUDA.jl's CuError: print(io, "CUDA error: $(description(err)) (code $(...)), $(name(err)))") with name =
    # cuGetErrorName(...)[6:end] (https://github.com/JuliaGPU/CUDA.jl lib/cudadrv/error.jl); the message cut off
    assert _cuda("ERROR: CUDA error: peer acc (code 704, ERROR_PEER_ACCESS_ALREADY_ENABLED)") == \
        ("cudaErrorPeerAccessAlreadyEnabled", 704)
    assert _cuda("CUDA error (code 217, ERROR_PEER_ACCESS_UNSUPPORTED)") == ("cudaErrorPeerAccessUnsupported", 217)


def test_enum_variant_names():
    # a Rust binding's CudaError: write!(f, "CUDA error: {:?} ({})", self, *self as i32) -> the variant's name
    assert _cuda("thread 'main' panicked: CUDA error: TooManyPeers (711)") == ("cudaErrorTooManyPeers", 711)
    assert _cuda("Error: CUDA error: PeerAccessNotEnabled (705)") == ("cudaErrorPeerAccessNotEnabled", 705)
    # ManagedCuda's CUResult enum ("ErrorPeerAccessUnsupported")
    assert _cuda("ManagedCuda.CudaException: ErrorPeerAccessUnsupported: peer access") == \
        ("cudaErrorPeerAccessUnsupported", 217)
    # a driver name less ERROR_, a runtime name less Error
    assert _cuda("cuCtxEnablePeerAccess returned CUDA_PEER_ACCESS_UNSUPPORTED") == ("cudaErrorPeerAccessUnsupported", 217)
    assert _cuda("cuda call failed: cudaSystemNotReady") == ("cudaErrorSystemNotReady", 802)


def test_short_names_need_a_line_that_says_cuda_and_a_name_of_cudas_own():
    assert _cuda("ERROR_PEER_ACCESS_UNSUPPORTED in the log") == (None, None)  # no word of CUDA on the line
    assert _cuda("TooManyPeers (711)") == (None, None)
    assert _cuda("cuda: java.lang.OutOfMemoryError") == (None, None)  # a generic word is no CUDA name
    assert _cuda("CUDA_VISIBLE_DEVICES=0,1 NotSupported Unknown Timeout") == (None, None)
    assert _cuda("CUDA driver: OperatingSystem: Linux") == (None, None)
    assert _cuda("cuda: torch.cuda.OutOfMemoryError: CUDA out of memory.")[0] != "cudaErrorPeerAccessUnsupported"


# --- a VM by its GPUs' bus ids ----------------------------------------------------------------------------------------

def _virtualized(text):
    return read_text(text).facts_by_subject().get("host", {}).get("host.virtualized")


def test_gpus_on_a_root_bus_are_a_vm():
    # NVIDIA/nvidia-docker#1285 (https://github.com/NVIDIA/nvidia-docker/issues/1285): a V100 passed through, slot 07 of
    # the VM's root bus
    assert _virtualized("Attached GPUs                       : 1\nGPU 00000000:00:07.0\n"
                        "    Product Name                    : Tesla V100-PCIE-16GB\n") is True
    # NVIDIA/nvidia-docker#1316 (https://github.com/NVIDIA/nvidia-docker/issues/1316): Azure's Hyper-V virtual PCI, a
    # domain of its own per GPU, bus 00
    assert _virtualized("GPU 03F8F31A:00:00.0\n    Product Name                    : Tesla P100-PCIE-16GB\n") is True
    # horovod/horovod#3658 (https://github.com/horovod/horovod/issues/3658): NCCL's pre-2.19 channel brackets on AWS
    assert _virtualized(
        "[1,1]<stdout>:ip-172-31-0-63:2121:2136 [1] NCCL INFO Channel 01 : 1[1c0] -> 2[1d0] [send] via NET/Socket/0\n"
        "[1,6]<stdout>:ip-172-31-12-129:1761:1772 [2] NCCL INFO Channel 01 : 6[1d0] -> 7[1e0] [send] via NET/Socket/0\n") is True


def test_gpus_behind_root_ports_are_no_vm():
    # bare-metal bus ids (NVIDIA/nccl#1189's nccl-tests: [0000:18:00], NCCL busId 18000)
    assert _virtualized("GPU 00000000:18:00.0\n    Product Name                    : NVIDIA H20\n") is None
    assert _virtualized("h:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 18000 commId 0x5 - Init START\n"
                        "h:1:3 [1] NCCL INFO comm 0x2 rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId 38000 commId 0x5 - Init START\n") is None
    # one GPU on bus 00 and one behind a port: not all on a root bus; 0000:00:00.0 says nothing
    assert _virtualized("GPU 00000000:00:07.0\n    Product Name : Tesla V100-PCIE-16GB\n"
                        "GPU 00000000:3B:00.0\n    Product Name : Tesla V100-PCIE-16GB\n") is None
    assert _virtualized("GPU 00000000:00:00.0\n    Product Name                    : Orin (nvgpu)\n") is None


def test_a_vm_read_from_bus_ids_is_inferred_and_offers_no_candidate_on_a_healthy_output():
    """A healthy nvbandwidth run of the 2 x H200 VM (its GPUs on the root bus, 00:06.0 and 00:07.0) names no
    symptom: the VM, inferred from the bus ids and not said, is no setup the text describes, so no entry is
    offered on it alone (issue 22 point 3); beside an error it explains, the same inference still counts."""
    import os

    from tests.kbtools import answer

    path = os.path.join(os.path.dirname(__file__), "fixtures", "captures", "h200x2-nvswitch-vm", "nvbandwidth.txt")
    healthy = open(path, encoding="utf-8").read()
    ev = read_text(healthy)
    assert ev.facts_by_subject()["host"].get("host.virtualized") is True
    assert next(f for f in ev.findings if f.id == "text.host.virtualized").evidence[0].startswith("inferred from line")
    assert answer(healthy) == []
    failing = healthy + "\ncudaErrorPeerAccessUnsupported: peer access is not supported between these two devices\n"
    assert answer(failing)[0][3] == "vm/peer-access-unsupported-in-vm"
