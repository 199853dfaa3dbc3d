"""NCCL_* and CUDA_* variables that change whether and how GPUs talk peer to peer."""

from __future__ import annotations

from .facts import Host

#: name -> what it does to P2P (shown by doctor).
P2P_VARIABLES = {
    "NCCL_P2P_DISABLE": "1 turns NCCL's P2P transport off",
    "NCCL_P2P_LEVEL": "the farthest path class NCCL still uses P2P over (LOC, NVL, PIX, PXB, PHB, SYS)",
    "NCCL_P2P_DIRECT_DISABLE": "1 stops direct pointer access between GPUs of one process",
    "NCCL_P2P_READ_ENABLE": "forces P2P read (1) or write (0)",
    "NCCL_P2P_USE_CUDA_MEMCPY": "1 makes P2P copies use the copy engines",
    "NCCL_SHM_DISABLE": "1 turns the shared-memory transport (the fallback without P2P) off",
    "NCCL_CUMEM_ENABLE": "cuMem allocations for P2P buffers",
    "NCCL_NVLS_ENABLE": "NVLink SHARP on NVSwitch systems",
    "NCCL_IGNORE_DISABLED_P2P": "1 silences NCCL's warning that P2P is disabled",
    "NCCL_TOPO_FILE": "a topology file that replaces what NCCL detects",
    "CUDA_VISIBLE_DEVICES": "which GPUs CUDA programs see, and their order",
    "CUDA_DEVICE_ORDER": "FASTEST_FIRST (default) or PCI_BUS_ID: how CUDA numbers GPUs",
    "NVIDIA_VISIBLE_DEVICES": "which GPUs a container runtime exposes",
}


#: families of NCCL variables that choose or shape the transport between GPUs (NCCL's environment variable
#: documentation, https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html: P2P, SHM, NET/IB, cuMem,
#: NVLS/MNNVL, CollNet, algorithms and protocols, the topology). NCCL_DEBUG, NCCL_VERSION, CUDA_HOME,
#: NCCL_SOCKET_IFNAME and the like do not change which transport a pair gets.
TRANSPORT_PREFIXES = ("NCCL_P2P_", "NCCL_SHM_", "NCCL_NET", "NCCL_IB_", "NCCL_CUMEM_", "NCCL_NVLS_", "NCCL_MNNVL_",
                      "NCCL_COLLNET_")
TRANSPORT_NAMES = frozenset({"NCCL_ALGO", "NCCL_PROTO", "NCCL_TOPO_FILE", "NCCL_NVB_DISABLE", "NCCL_PXN_DISABLE",
                             "NCCL_IGNORE_DISABLED_P2P"})


def changes_transport(name: str) -> bool:
    """True for a variable that changes whether or how GPUs talk peer to peer (NCCL's transport choice, which
    GPUs a process sees); False for the rest (debug output, versions, paths)."""
    return name in P2P_VARIABLES or name in TRANSPORT_NAMES or name.startswith(TRANSPORT_PREFIXES)


TITLE = "NCCL and CUDA variables"
FACTS = tuple(f"env.{name}" for name in P2P_VARIABLES)


def collect(h: Host) -> None:
    for name in P2P_VARIABLES:
        value = h.env.get(name)
        h.add(f"env.{name}", value, "environment of this process" + ("" if value is not None else " (not set)"))
