"""One knowledge-base entry, and the problems found while loading entries."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional

#: The failure classes an entry may name (issue 5), with what each means.
FAILURE_CLASSES: dict[str, str] = {
    "iommu_acs_p2p_broken": "IOMMU translation or PCIe ACS redirect breaks peer traffic though the driver says P2P is possible",
    "p2p_unsupported_consumer_gpu": "GeForce-class cards without P2P in the stock driver",
    "p2p_unsupported_topology": "the platform cannot do peer access for the pair (sockets, root complexes)",
    "vm_p2p_unavailable": "a VM or pass-through setup refuses P2P or hides NVLink/NVSwitch",
    "peer_access_already_enabled": "cudaErrorPeerAccessAlreadyEnabled (704)",
    "peer_access_not_enabled": "cudaErrorPeerAccessNotEnabled (705)",
    "too_many_peers": "more than 8 peers: cudaErrorTooManyPeers / peer mapping resources exhausted",
    "fabric_manager_not_running": "NVSwitch system whose Fabric Manager is absent or failed (error 802)",
    "fabric_manager_version_mismatch": "Fabric Manager and driver versions differ",
    "fabric_manager_nothing_to_do": "Fabric Manager started where there are no NVSwitches",
    "nvls_multicast_failure": "NCCL NVLink SHARP / multicast setup failing on NVSwitch systems",
    "nvlink_link_failure": "NVLinks inactive, partly trained or failing (Xid 74 and kin)",
    "shm_exhausted": "NCCL's shared-memory fallback cannot allocate in /dev/shm",
    "cuda_ipc_cross_boundary": "CUDA IPC across containers, namespaces or hosts that cannot share it",
    "nccl_env_misconfig": "NCCL_P2P_* and kin forcing a transport the hardware does not need",
    "nccl_version_bug": "a given NCCL release broken on given hardware",
    "p2p_driver_regression": "a given driver version breaking P2P",
    "p2p_through_cpu_slow": "P2P works but crosses the CPU or socket link (PHB/NODE/SYS) and is slow",
    "driver_too_old_for_cuda": "cudaErrorInsufficientDriver (35)",
    "pcie_link_degraded": "a GPU trained below its PCIe width or generation under load",
    "pcie_link_idle_downclock_benign": "a low PCIe generation reported only because the GPU is idle (not a fault)",
    "device_not_visible": "a peer or GPU hidden by CUDA_VISIBLE_DEVICES, a container's device list or a scheduler (invalid device ordinal, cudaErrorInvalidDevice 101)",
    "mig_p2p_unsupported": "P2P, NCCL or CUDA IPC between MIG instances or on a MIG-enabled GPU",
    "bar1_too_small": "BAR1 aperture too small or unassigned for PCIe P2P / GPUDirect (Above 4G decoding, Resizable BAR)",
    "gpu_fallen_off_bus": "Xid 79, GPU has fallen off the bus, GPU lost during (P2P) traffic",
    "nvlink_peer_memory_error": "invalid access of peer GPU memory over NVLink or a hardware error (cudaErrorContained 226), faults seen only over NVLink",
    "nccl_unavailable_platform": "the framework's build for this platform has no NCCL for GPU collectives (Windows builds of PyTorch, TensorFlow, Paddle; CPU-only builds; builds without USE_NCCL), NCCL's library not installed where the loader finds it, or no libuv for PyTorch's rendezvous store (Windows wheels since PyTorch 2.4)",
}

#: Classes that describe no fault; they may match, but are shown as information.
BENIGN_CLASSES = frozenset({"pcie_link_idle_downclock_benign"})

#: How an entry was checked, strongest first.
VERIFICATION_TIERS: dict[str, str] = {
    "hardware_verified": "reproduced on hardware by this project",
    "source_checked": "error strings and behaviour checked against the framework/driver source or official docs",
    "issue_reported": "taken from public issue threads and forum reports, not reproduced",
    "ai_generated": "machine-written, not checked",
}

LANGS = ("en", "zh")


@dataclass(frozen=True)
class Problem:
    """Something wrong with a KB file: which file, which field (JSON path, '' for the whole file), what."""

    file: str
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}: {self.field}" if self.field else self.file
        return f"{where}: {self.message}"


@dataclass
class Entry:
    """A validated entry. ``data`` is the raw dict as loaded; the attributes are views of it."""

    data: dict[str, Any] = field(repr=False)
    file: str = ""
    patterns: list[re.Pattern] = field(default_factory=list, repr=False)  # regex, then regexes[], compiled once

    def __repr__(self) -> str:
        return f"Entry({self.id!r}, {self.failure_class!r})"

    @property
    def error_codes(self) -> list:
        """error_codes, and the seed format's single error_code."""
        codes = list(self.data.get("error_codes") or [])
        code = self.data.get("error_code")
        if isinstance(code, str) and code.lower().startswith(("cuda", "nccl")) and code not in codes:
            codes.append(code)
        return codes

    @property
    def id(self) -> str:
        return self.data["id"]

    @property
    def failure_class(self) -> Optional[str]:
        return self.data.get("failure_class")

    @property
    def signature(self) -> str:
        return self.data.get("signature", "")

    @property
    def root_cause(self) -> str:
        return self.data.get("root_cause", "")

    @property
    def dead_ends(self) -> list[dict[str, Any]]:
        return list(self.data.get("dead_ends") or [])

    @property
    def workarounds(self) -> list[dict[str, Any]]:
        return list(self.data.get("workarounds") or [])

    @property
    def sources(self) -> list[str]:
        out = list(self.data.get("sources") or [])
        doc = self.data.get("official_doc_url")
        if doc and doc not in out:
            out.append(doc)
        return out

    @property
    def verification_tier(self) -> str:
        return self.data.get("verification_tier", "ai_generated")

    @property
    def transition_graph(self) -> dict[str, list[str]]:
        g = self.data.get("transition_graph") or {}
        return {k: list(g.get(k) or []) for k in ("leads_to", "preceded_by", "frequently_confused_with")}

    @property
    def related_ids(self) -> list[str]:
        seen: list[str] = []
        for ids in self.transition_graph.values():
            for i in ids:
                if i not in seen and i != self.id:
                    seen.append(i)
        return seen

    @property
    def examples(self) -> list[dict[str, Any]]:
        return list(self.data.get("examples") or [])

    @property
    def benign(self) -> bool:
        """No fault: a benign class, or an entry for a message its maintainers call harmless ("benign": true)."""
        return self.failure_class in BENIGN_CLASSES or self.data.get("benign") is True

    @property
    def multicast_absent(self) -> bool:
        """An NVLS-class message printed because the GPUs have no CUDA multicast ("multicast_absent": true): the facts
        that say multicast cannot exist confirm it (fact_roles.ruled_out)."""
        return self.data.get("multicast_absent") is True

    @property
    def nic_peer(self) -> bool:
        """A message about GPU memory a NIC (or another PCIe device) reaches, GPUDirect RDMA ("nic_peer": true): one GPU
        is enough for it, so the one-GPU host's "no pair to talk between" rule does not rule it out (fact_roles.ruled_out)."""
        return self.data.get("nic_peer") is True

    def text(self, name: str, lang: str = "en") -> str:
        """A text field in the language asked for, falling back to English: signature, root_cause."""
        if lang == "zh":
            zh = self.data.get(f"{name}_zh")
            if isinstance(zh, str) and zh.strip():
                return zh
        value = self.data.get(name)
        return value if isinstance(value, str) else ""

    def workaround_text(self, index: int, lang: str = "en") -> str:
        """The i-th workaround's description; the seed format keeps the Chinese ones in workarounds_zh."""
        w = self.workarounds[index]
        if lang == "zh":
            zh = self.data.get("workarounds_zh") or []
            if index < len(zh) and isinstance(zh[index], str) and zh[index].strip():
                return zh[index]
        return w.get("action") or w.get("how") or ""

    def dead_end_text(self, index: int, lang: str = "en") -> str:
        d = self.dead_ends[index]
        if lang == "zh":
            zh = self.data.get("dead_ends_zh") or []
            if index < len(zh) and isinstance(zh[index], str) and zh[index].strip():
                return zh[index]
        return d.get("action") or ""
