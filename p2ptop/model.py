"""The snapshot: plain dataclasses for one picture of a GPU host, and their versioned JSON.

Everything in p2ptop flows through a :class:`Snapshot`. Live NVML, the bundled demos and replayed
files all produce one; the fabric graph, the findings, the dashboard and the exports all read one.

Values that could not be read are ``None`` and the reason is kept in the owning object's ``na``
mapping (field name -> reason, e.g. ``{"numa_node": "Not Supported"}``), never a guess.

This module imports nothing of ours.
"""

from __future__ import annotations

import dataclasses
import functools
import types
from dataclasses import dataclass, field
TYPE_CHECKING = False  # typing is not imported at run time (start-up); the annotations are strings
if TYPE_CHECKING:
    from typing import Any, Callable, Optional

SCHEMA_VERSION = 1
SNAPSHOT_KIND = "p2ptop-snapshot"

# --- vocabularies -------------------------------------------------------------------------

#: P2P capabilities NVML reports per ordered pair, in nvidia-smi's ``topo -p2p`` letter order.
P2P_CAPS = ("read", "write", "nvlink", "atomics", "pci")
P2P_CAP_LETTER = {"read": "r", "write": "w", "nvlink": "n", "atomics": "a", "pci": "p"}

#: NVML's P2P status values (nvmlGpuP2PStatus_t) by our names, with nvidia-smi's short codes.
P2P_STATUS_NAMES = {
    0: "OK",
    1: "CHIPSET_NOT_SUPPORTED",
    2: "GPU_NOT_SUPPORTED",
    3: "TOPOLOGY_NOT_SUPPORTED",
    4: "DISABLED_BY_REGKEY",
    5: "NOT_SUPPORTED",
    6: "UNKNOWN",
}
P2P_STATUS_SHORT = {
    "OK": "OK",
    "CHIPSET_NOT_SUPPORTED": "CNS",
    "GPU_NOT_SUPPORTED": "GNS",
    "TOPOLOGY_NOT_SUPPORTED": "TNS",
    "DISABLED_BY_REGKEY": "DR",
    "NOT_SUPPORTED": "NS",
    "UNKNOWN": "U",
}
P2P_STATUS_TEXT = {
    "OK": "OK",
    "CHIPSET_NOT_SUPPORTED": "chipset not supported",
    "GPU_NOT_SUPPORTED": "GPU not supported",
    "TOPOLOGY_NOT_SUPPORTED": "topology not supported",
    "DISABLED_BY_REGKEY": "disabled by regkey",
    "NOT_SUPPORTED": "not supported",
    "UNKNOWN": "unknown",
}

#: NVML's common-ancestor levels (nvmlGpuTopologyLevel_t) by our names.
ANCESTOR_NAMES = {0: "INTERNAL", 10: "SINGLE", 20: "MULTIPLE", 30: "HOSTBRIDGE", 40: "NODE", 50: "SYSTEM"}
#: The path class nvidia-smi prints for each ancestor when no NVLink joins the pair.
ANCESTOR_PATH_CLASS = {
    "INTERNAL": "X",
    "SINGLE": "PIX",
    "MULTIPLE": "PXB",
    "HOSTBRIDGE": "PHB",
    "NODE": "NODE",
    "SYSTEM": "SYS",
}
#: PCIe path classes from nearest to farthest.
PCIE_PATH_CLASSES = ("PIX", "PXB", "PHB", "NODE", "SYS")

#: NVML's NVLink version enum (nvmlNvlinkVersion_t) -> marketing version.
NVLINK_VERSION_NAMES = {1: "1.0", 2: "2.0", 3: "2.2", 4: "3.0", 5: "3.1", 6: "4.0", 7: "5.0", 8: "6.0"}
#: NVML's remote device types (nvmlIntNvLinkDeviceType_t).
NVLINK_REMOTE_TYPES = {0: "GPU", 1: "IBMNPU", 2: "NVSWITCH", 255: "UNKNOWN"}
#: The bus id NVML reports for an NVLink peer it cannot see (an NVSwitch hidden from a VM).
HIDDEN_REMOTE_BUS = "FFFFFFFF:FF:FF.0"


def paste_peer(index: int) -> str:
    """The remote end of an NVLink that an imported ``topo -m`` shows (NV#) between GPUs whose bus ids the paste does not
    give: the peer by the matrix's GPU number ("GPU2"), which no PCI bus id can be."""
    return f"GPU{index}"

VIRTUALIZATION_NAMES = {0: "NONE", 1: "PASSTHROUGH", 2: "VGPU", 3: "HOST_VGPU", 4: "HOST_VSGA"}
FABRIC_STATE_NAMES = {0: "NOT_SUPPORTED", 1: "NOT_STARTED", 2: "IN_PROGRESS", 3: "COMPLETED"}

SOURCE_KINDS = ("nvml", "demo", "replay", "import")  # import: built from a paste (p2ptop import)


class SnapshotError(ValueError):
    """A snapshot file or document that cannot be used; the message says what is wrong."""


# --- the dataclasses ----------------------------------------------------------------------


class _Record:
    """``==`` and ``repr`` for the snapshot's dataclasses, written once here: ``dataclass`` would generate
    (compile) both for each class when this module is imported, which was most of its import time
    (every command imports it). Same meaning as the generated ones: equal when of the same class with
    equal fields in order; unhashable, as a mutable dataclass with ``eq`` is."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]

    def _values(self) -> tuple:
        return tuple(getattr(self, n) for n in _field_names(self.__class__))

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        names = _field_names(self.__class__)
        return f"{self.__class__.__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in names)})"


@functools.lru_cache(maxsize=None)
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


#: the snapshot's dataclasses: only __init__ generated (``_Record`` gives == and repr)
_record = functools.partial(dataclass, eq=False, repr=False)


@_record
class Source(_Record):
    """Where a snapshot came from."""

    kind: str = "nvml"  # nvml | demo | replay | import
    hostname: Optional[str] = None
    taken_at: Optional[str] = None  # ISO 8601, UTC
    detail: Optional[str] = None  # demo name, or the file a replay came from
    simulated: bool = False  # True for demos and anything derived from them
    origin_kind: Optional[str] = None  # for a replay: the kind of the source it was saved from

    @property
    def label(self) -> str:
        if self.kind == "demo":
            return f"DEMO {self.detail or ''} (simulated)".replace("  ", " ")
        if self.kind == "import" or (self.kind == "replay" and self.origin_kind == "import"):
            return f"IMPORTED {self.detail or ''} (from a paste: only what it says, the rest N/A)"
        if self.kind == "replay":
            sim = " simulated" if self.simulated else ""
            return f"REPLAY{sim} {self.detail or ''} (taken {self.taken_at or 'N/A'})"
        return "LIVE"


@_record
class PcieDevice(_Record):
    """One PCI function above a GPU: a bridge, a switch port, a root port (read from sysfs)."""

    bdf: str  # 0000:3a:00.0
    role: str = "bridge"  # switch_downstream | switch_upstream | root_port | bridge | endpoint
    vendor_id: Optional[str] = None
    device_id: Optional[str] = None
    name: Optional[str] = None
    link_gen_cur: Optional[int] = None
    link_gen_max: Optional[int] = None
    link_width_cur: Optional[int] = None
    link_width_max: Optional[int] = None
    acs_ctrl: Optional[int] = None  # ACS control register, when readable
    na: dict[str, str] = field(default_factory=dict)


@_record
class CpuSocket(_Record):
    """A CPU socket (package) with the NUMA nodes it holds."""

    id: int
    numa_nodes: list[int] = field(default_factory=list)
    cpus: Optional[str] = None  # "0-31,64-95"


@_record
class NvLink(_Record):
    link: int
    state: Optional[str] = None  # "active" | "inactive"
    version: Optional[int] = None  # NVML enum (6 = NVLink 4.0)
    remote_pci_bus_id: Optional[str] = None
    remote_type: Optional[str] = None  # GPU | NVSWITCH | IBMNPU | UNKNOWN
    p2p_supported: Optional[bool] = None
    counters: dict[str, Optional[int]] = field(default_factory=dict)  # replay, recovery, crc_flit, crc_data
    na: dict[str, str] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        return self.state == "active"

    @property
    def version_name(self) -> Optional[str]:
        return NVLINK_VERSION_NAMES.get(self.version) if self.version is not None else None

    @property
    def remote_hidden(self) -> bool:
        return (self.remote_pci_bus_id or "").upper() == HIDDEN_REMOTE_BUS


@_record
class Fabric(_Record):
    """GPU fabric registration (NVSwitch systems): nvmlDeviceGetGpuFabricInfoV."""

    state: Optional[str] = None  # NOT_SUPPORTED | NOT_STARTED | IN_PROGRESS | COMPLETED
    status: Optional[str] = None  # NVML return of the registration, "Success" when fine
    clique_id: Optional[int] = None
    cluster_uuid: Optional[str] = None
    na: dict[str, str] = field(default_factory=dict)


@_record
class GPU(_Record):
    index: int
    name: Optional[str] = None
    uuid: Optional[str] = None
    serial: Optional[str] = None
    pci_bus_id: Optional[str] = None  # NVML form: 00000000:3A:00.0
    brand: Optional[str] = None  # NVML brand name: TESLA, GEFORCE, NVIDIA, ...
    architecture: Optional[str] = None
    memory_total_mib: Optional[int] = None
    compute_capability: Optional[str] = None  # "9.0"
    pcie_gen_cur: Optional[int] = None
    pcie_gen_max: Optional[int] = None  # what the GPU and slot can reach
    pcie_width_cur: Optional[int] = None
    pcie_width_max: Optional[int] = None
    pcie_replay_counter: Optional[int] = None
    utilization_gpu: Optional[int] = None  # percent; tells a link trained low under load from an idle one
    numa_node: Optional[int] = None  # the NUMA node the GPU hangs off ("NUMA Affinity" in topo -m)
    gpu_numa_id: Optional[int] = None  # the GPU memory's own NUMA id (coherent systems; "GPU NUMA ID")
    cpu_affinity: Optional[str] = None  # "0-31,64-95"
    virtualization_mode: Optional[str] = None  # NONE | PASSTHROUGH | VGPU | ...
    mig_mode: Optional[str] = None  # "Enabled" | "Disabled"
    fabric: Fabric = field(default_factory=Fabric)
    nvlinks: list[NvLink] = field(default_factory=list)
    pcie_path: list[PcieDevice] = field(default_factory=list)  # from the GPU's parent up to its root port
    root_complex: Optional[str] = None  # "pci0000:00": the host bridge above the GPU
    na: dict[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"GPU{self.index}"

    @property
    def active_links(self) -> list[NvLink]:
        return [link for link in self.nvlinks if link.active]

    @property
    def pcie_degraded(self) -> bool:
        """True when the link trained below what the GPU and slot can reach."""
        return (
            self.pcie_width_cur is not None
            and self.pcie_width_max is not None
            and self.pcie_width_cur < self.pcie_width_max
        ) or (
            self.pcie_gen_cur is not None
            and self.pcie_gen_max is not None
            and self.pcie_gen_cur < self.pcie_gen_max
        )


@_record
class Pair(_Record):
    """One ordered GPU pair as NVML sees it."""

    a: int
    b: int
    ancestor: Optional[str] = None  # SINGLE | MULTIPLE | HOSTBRIDGE | NODE | SYSTEM
    p2p: dict[str, Optional[str]] = field(default_factory=dict)  # cap -> status name (P2P_STATUS_NAMES)
    na: dict[str, str] = field(default_factory=dict)  # "ancestor" or "p2p.read" -> reason

    def status(self, cap: str) -> Optional[str]:
        return self.p2p.get(cap)


@_record
class Measurement(_Record):
    """One figure of a copy test."""

    name: str  # ce_one_way | ce_bidirectional | sm_read | sm_write | latency_copy | ...
    value: Optional[float] = None
    unit: str = "GB/s"
    min: Optional[float] = None
    max: Optional[float] = None
    expected: Optional[float] = None
    verdict: Optional[str] = None  # healthy | slow | failing | info
    error: Optional[str] = None


@_record
class BusyProcess(_Record):
    """A compute process on a GPU, seen by NVML around a copy test (not the test's own worker)."""

    gpu: int
    pid: int
    name: Optional[str] = None  # from /proc/PID/comm (None when the pid is not visible here, e.g. another container)
    used_mib: Optional[int] = None  # GPU memory it holds, when NVML says
    seen: str = "before"  # before | during | after


@_record
class Contention(_Record):
    """What else used the GPUs and their links around a copy test, and whether that makes it contended.

    ``traffic`` is per GPU index (as a string) the link traffic measured over a short window before
    the test: ``{"pcie_tx_gbps", "pcie_rx_gbps", "nvlink_tx_gbps", "nvlink_rx_gbps"}``; ``utilization``
    the GPU utilisation (percent) before the test, when no test of ours was running.
    """

    checked: bool = False  # False: NVML could not be asked (``na`` says why); nothing is claimed
    busy: bool = False
    reasons: list[str] = field(default_factory=list)  # one sentence each: "GPU0: python3 (pid 4242, 1024 MiB)"
    processes: list[BusyProcess] = field(default_factory=list)
    utilization: dict[str, Optional[int]] = field(default_factory=dict)
    traffic: dict[str, dict[str, Optional[float]]] = field(default_factory=dict)
    window_s: Optional[float] = None  # length of the traffic window
    check_s: Optional[float] = None  # time the check's reads before the test took (window included)
    added_s: Optional[float] = None  # of that, what the test waited for (the rest overlapped the worker's start)
    na: dict[str, str] = field(default_factory=dict)


#: Verdicts of a copy test. ``contended``: measured (or refused) while something else used the GPUs or the
#: path, so the figures say nothing about the link; ``interrupted``: ended from outside (a signal, a cancel).
BENCH_VERDICTS = ("healthy", "slow", "failing", "contended", "interrupted")


@_record
class BenchResult(_Record):
    """The result of a copy test of one ordered pair, or of one GPU's host link when ``a == b``."""

    a: int
    b: int
    status: str = "ok"  # ok | failed | timeout | crashed | cancelled | unavailable | interrupted | busy | locked
    verdict: Optional[str] = None  # healthy | slow | failing | contended | interrupted (BENCH_VERDICTS)
    simulated: bool = False
    started_at: Optional[str] = None
    duration_s: Optional[float] = None
    measurements: list[Measurement] = field(default_factory=list)
    integrity: Optional[str] = None  # ok | corrupt | not run
    first_bad_offset: Optional[int] = None
    errors: list[str] = field(default_factory=list)  # exact CUDA error texts, kept as evidence
    params: dict[str, Any] = field(default_factory=dict)
    contention: Optional[Contention] = None  # None: not checked (older snapshots, simulated results)

    @property
    def host_link(self) -> bool:
        """True for a test of GPU a's own link to the host (pinned host memory <-> GPU)."""
        return self.a == self.b

    def measurement(self, name: str) -> Optional[Measurement]:
        for m in self.measurements:
            if m.name == name:
                return m
        return None


@_record
class Snapshot(_Record):
    source: Source = field(default_factory=Source)
    driver_version: Optional[str] = None
    cuda_driver_version: Optional[str] = None  # "13.0"
    nvml_version: Optional[str] = None
    cc_mode: Optional[str] = None  # NVML's confidential-computing state: "on", "devtools" or "off" (multi-GPU modes read off)
    gpus: list[GPU] = field(default_factory=list)
    pairs: list[Pair] = field(default_factory=list)
    sockets: list[CpuSocket] = field(default_factory=list)  # empty when the host did not say
    host: dict[str, Any] = field(default_factory=dict)  # host facts (doctor); free-form, JSON-safe
    bench: list[BenchResult] = field(default_factory=list)
    nccl: dict[str, Any] = field(default_factory=dict)  # NCCL runs and logs read (p2ptop nccl); free-form, JSON-safe
    notes: list[str] = field(default_factory=list)  # what the reader wants a person to know
    na: dict[str, str] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    # -- lookups --
    def gpu(self, index: int) -> Optional[GPU]:
        for g in self.gpus:
            if g.index == index:
                return g
        return None

    def pair(self, a: int, b: int) -> Optional[Pair]:
        index = self.__dict__.get("_pair_index")
        if index is None or index[0] is not self.pairs or index[1] != len(self.pairs):
            index = (self.pairs, len(self.pairs), {(p.a, p.b): p for p in self.pairs})
            self.__dict__["_pair_index"] = index
        return index[2].get((a, b))

    def bench_result(self, a: int, b: int) -> Optional[BenchResult]:
        found = None
        for r in self.bench:
            if r.a == a and r.b == b:
                found = r  # the latest wins
        return found

    @property
    def gpu_indices(self) -> list[int]:
        return [g.index for g in self.gpus]

    def bus_to_gpu(self) -> dict[str, int]:
        """Upper-case PCI bus id -> GPU index, the key an NVLink's remote end names its peer GPU by. A GPU whose bus id
        the snapshot does not hold (an imported paste without nvidia-smi -q) answers to ``paste_peer(index)``, the name
        the import gives the peer of an NV# link it reads from the matrix."""
        return {g.pci_bus_id.upper() if g.pci_bus_id else paste_peer(g.index): g.index for g in self.gpus}

    # -- JSON --
    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        out = {"kind": SNAPSHOT_KIND, "schema_version": self.schema_version}
        out.update({k: v for k, v in data.items() if k != "schema_version"})
        return out

    def to_json(self, indent: Optional[int] = 1) -> str:
        import json  # here: `p2ptop topo` reads live and never writes JSON (~2 ms of its start)

        return json.dumps(self.to_dict(), indent=indent, sort_keys=False)

    @classmethod
    def from_dict(cls, data: Any, *, where: str = "snapshot") -> "Snapshot":
        if not isinstance(data, dict):
            raise SnapshotError(f"{where}: expected a JSON object, got {type(data).__name__}")
        kind = data.get("kind")
        if kind != SNAPSHOT_KIND:
            raise SnapshotError(
                f"{where}: not a p2ptop snapshot (field 'kind' is {kind!r}, expected {SNAPSHOT_KIND!r})"
            )
        version = data.get("schema_version")
        if not isinstance(version, int) or isinstance(version, bool):
            raise SnapshotError(f"{where}: field 'schema_version' is missing or not an integer")
        if version > SCHEMA_VERSION:
            raise SnapshotError(
                f"{where}: schema_version {version} is newer than this p2ptop understands "
                f"({SCHEMA_VERSION}); upgrade p2ptop to open it"
            )
        if version < 1:
            raise SnapshotError(f"{where}: schema_version {version} is not valid")
        body = {k: v for k, v in data.items() if k != "kind"}
        try:
            snap = _build(cls, body, where)
        except RecursionError:
            raise SnapshotError(f"{where}: nested too deeply to be a snapshot") from None
        check_snapshot(snap, where)
        return snap

    @classmethod
    def from_json(cls, text: str, *, where: str = "snapshot") -> "Snapshot":
        import json

        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            if not text.strip():
                raise SnapshotError(f"{where}: empty file, not a snapshot") from None
            raise SnapshotError(f"{where}: not valid JSON ({e.msg} at line {e.lineno}, column {e.colno}; truncated?)") from None
        except RecursionError:
            raise SnapshotError(f"{where}: JSON nested too deeply to be a snapshot") from None
        return cls.from_dict(data, where=where)


def load_snapshot(path: str) -> Snapshot:
    """Read a snapshot file; every failure is a :class:`SnapshotError` naming the file."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise SnapshotError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise SnapshotError(f"{path}: is a directory, not a snapshot file") from None
    except PermissionError:
        raise SnapshotError(f"{path}: permission denied") from None
    except UnicodeDecodeError:
        raise SnapshotError(f"{path}: not a text file (is it a snapshot.json?)") from None
    except OSError as e:
        raise SnapshotError(f"{path}: cannot be read ({e.strerror or e})") from None
    return Snapshot.from_json(text, where=path)


def save_snapshot(snapshot: Snapshot, path: str) -> None:
    """Write a snapshot atomically: a file is either complete or not there."""
    import os
    import tempfile

    directory = os.path.dirname(os.path.abspath(path)) or "."
    fd, tmp = tempfile.mkstemp(prefix=".p2ptop-", suffix=".json", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(snapshot.to_json())
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# --- what the types alone cannot say: references and host facts ------------------------------

#: Host facts whose value readers use as a given type (p2ptop/host writes them; diagnose and doctor read them).
HOST_FACT_TYPES: dict[str, Any] = {
    **{name: str for name in (
        "host.driver_version", "host.cuda_driver_version", "host.nvml_version", "host.os", "host.kernel",
        "host.kernel_cmdline", "host.kernel_iommu_args", "host.acs_redirect_bridges", "host.registry_dwords",
        "host.hypervisor", "host.container", "host.fabric_manager", "host.fabric_manager_version", "host.xid_codes",
        "host.cupy", "host.cupy_cuda_runtime")},
    **{name: int for name in ("host.driver_major", "host.shm_mb", "host.nvswitch_pci_count", "host.xid_latest", "host.dma_remap_peer_mmio")},
    **{name: bool for name in ("host.acs_redirect", "host.acs_enabled", "host.hypervisor_flag", "host.iommu_active", "host.iommu_passthrough",
                               "host.nvidia_peermem", "host.virtualized")},
    "host.gpu_bdfs": [str], "host.iommu_units": [str],
    "host.nvidia_params": {str: object}, "host.iommu_gpu_domains": {str: object},
    # records: key -> type (None allowed for every key but those in RECORD_REQUIRED)
    "host.acs": [{"gpu": str, "bridge": str, "role": str, "acs_ctrl": int, "acs": str, "redirect": bool, "how": str, "na": str}],
    "host.xid": [{"pci": str, "xid": int, "text": str}],
}
RECORD_REQUIRED = {"host.acs": ("gpu", "bridge", "role"), "host.xid": ("pci", "xid", "text")}


def _type_ok(value: Any, tp: Any) -> bool:
    if tp is object:
        return True
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, tp)


def _check_fact(name: str, fact: Any, where: str) -> None:
    if not isinstance(fact, dict):
        raise SnapshotError(f"{where}: expected an object with value, how and na, got {_short(fact)}")
    for key in ("how", "na"):
        if fact.get(key) is not None and not isinstance(fact[key], str):
            raise SnapshotError(f"{where}.{key}: expected a string, got {_short(fact[key])}")
    value = fact.get("value")
    tp = HOST_FACT_TYPES.get(name, str if name.startswith("env.") else None)
    if value is None or tp is None:
        return
    if isinstance(tp, list):
        if not isinstance(value, list):
            raise SnapshotError(f"{where}.value: expected a list, got {_short(value)}")
        item = tp[0]
        for i, v in enumerate(value):
            if isinstance(item, dict):
                if not isinstance(v, dict):
                    raise SnapshotError(f"{where}.value[{i}]: expected an object, got {_short(v)}")
                for key, ktp in item.items():
                    if v.get(key) is None:
                        if key in RECORD_REQUIRED.get(name, ()):
                            raise SnapshotError(f"{where}.value[{i}]: field {key!r} is missing")
                    elif not _type_ok(v[key], ktp):
                        raise SnapshotError(f"{where}.value[{i}].{key}: expected {_SCALAR_WORDS.get(ktp, ktp)}, got {_short(v[key])}")
            elif not _type_ok(v, item):
                raise SnapshotError(f"{where}.value[{i}]: expected {_SCALAR_WORDS.get(item, item)}, got {_short(v)}")
    elif isinstance(tp, dict):
        if not isinstance(value, dict):
            raise SnapshotError(f"{where}.value: expected an object, got {_short(value)}")
    elif not _type_ok(value, tp):
        raise SnapshotError(f"{where}.value: expected {_SCALAR_WORDS.get(tp, tp)}, got {_short(value)}")


def check_snapshot(snap: "Snapshot", where: str = "snapshot") -> None:
    """Cross-references (pairs, links, copy tests -> GPUs) and host facts; SnapshotError naming the field."""
    indices: set[int] = set()
    for i, g in enumerate(snap.gpus):
        if g.index < 0 or g.index in indices:
            raise SnapshotError(f"{where}.gpus[{i}].index: GPU index {g.index} is " + ("negative" if g.index < 0 else "used twice"))
        indices.add(g.index)
        links = set()
        for j, link in enumerate(g.nvlinks):
            if link.link in links:
                raise SnapshotError(f"{where}.gpus[{i}].nvlinks[{j}].link: link {link.link} of GPU{g.index} listed twice")
            links.add(link.link)
    known = ", ".join(map(str, sorted(indices))) or "none"
    for name, items in (("pairs", snap.pairs), ("bench", snap.bench)):
        for i, p in enumerate(items):
            for end in ("a", "b"):
                if getattr(p, end) not in indices:
                    raise SnapshotError(f"{where}.{name}[{i}].{end}: GPU{getattr(p, end)} does not exist in this snapshot (GPUs: {known})")
            if p.a == p.b:
                raise SnapshotError(f"{where}.{name}[{i}]: a pair of GPU{p.a} with itself")
    for i, p in enumerate(snap.pairs):
        for cap, status in p.p2p.items():
            if status is not None and status not in P2P_STATUS_SHORT:
                raise SnapshotError(f"{where}.pairs[{i}].p2p.{cap}: unknown P2P status {_short(status)}")
        if p.ancestor is not None and p.ancestor not in ANCESTOR_PATH_CLASS:
            raise SnapshotError(f"{where}.pairs[{i}].ancestor: unknown common ancestor {_short(p.ancestor)}")
    host = snap.host
    if "as_root" in host and not isinstance(host["as_root"], bool):
        raise SnapshotError(f"{where}.host.as_root: expected true or false, got {_short(host['as_root'])}")
    if "facts" in host:
        facts = host["facts"]
        if not isinstance(facts, dict):
            raise SnapshotError(f"{where}.host.facts: expected an object, got {type(facts).__name__}")
        for name, fact in facts.items():
            _check_fact(name, fact, f"{where}.host.facts.{name}")


# --- strict, typed construction from JSON -------------------------------------------------


@functools.lru_cache(maxsize=None)
def _fields_of(cls: type) -> tuple[dict[str, Any], frozenset[str]]:
    import typing  # here: only loading a snapshot needs it (every command's start would pay for it)

    names = {"Any": typing.Any, "Callable": typing.Callable, "Optional": typing.Optional}  # not in our globals
    return typing.get_type_hints(cls, localns=names), frozenset(f.name for f in dataclasses.fields(cls))


#: How deep free-form JSON (host facts, params) may nest; deeper documents are refused on load, so no
#: reader of a snapshot ends in a RecursionError.
MAX_DEPTH = 32


def _where(where: Any) -> str:
    """Paths are built only when an error names them: ``(parent, key)`` chains -> 'a.b[3].c'."""
    parts = []
    while isinstance(where, tuple):
        where, key = where
        parts.append(f"[{key}]" if isinstance(key, int) else f".{key}")
    return str(where) + "".join(reversed(parts))


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _build(cls: type, data: Any, where: Any) -> Any:
    return _converter(cls)(data, where)


@functools.lru_cache(maxsize=None)
def _fields_converters(cls: type) -> dict[str, Callable[[Any, Any], Any]]:
    hints, names = _fields_of(cls)
    return {name: _converter(hints[name]) for name in names}


def _depth_ok(value: Any, limit: int) -> bool:
    """True when ``value`` nests no deeper than ``limit`` lists/objects (iterative: no recursion)."""
    stack = [(value, 0)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            if d >= limit:
                return False
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            if d >= limit:
                return False
            stack.extend((x, d + 1) for x in v)
    return True


_SCALAR_WORDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}


@functools.lru_cache(maxsize=None)
def _converter(tp: Any) -> Callable[[Any, Any], Any]:
    """A function (value, where) -> checked value for the type, compiled once per type (loading 1,000s of
    snapshots spends its time here)."""
    import typing

    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        nullable = type(None) in args
        inner = [_converter(a) for a in args if a is not type(None)]

        def union(value: Any, where: Any) -> Any:
            if value is None and nullable:
                return None
            last: Optional[SnapshotError] = None
            for conv in inner:
                try:
                    return conv(value, where)
                except SnapshotError as e:
                    last = e
            raise last or SnapshotError(f"{_where(where)}: unexpected value {_short(value)}")
        return union
    if dataclasses.is_dataclass(tp):
        cls = tp

        def build(value: Any, where: Any) -> Any:
            if not isinstance(value, dict):
                raise SnapshotError(f"{_where(where)}: expected an object for {cls.__name__}, got {type(value).__name__}")
            fields = _fields_converters(cls)
            kwargs = {}
            for key, v in value.items():
                conv = fields.get(key)
                if conv is not None:  # unknown fields from a newer minor writer are ignored
                    kwargs[key] = conv(v, (where, key))
            try:
                return cls(**kwargs)
            except TypeError as e:
                raise SnapshotError(f"{_where(where)}: {e}") from None
        return build
    if origin is list:
        item = _converter(args[0])

        def as_list(value: Any, where: Any) -> Any:
            if not isinstance(value, list):
                raise SnapshotError(f"{_where(where)}: expected a list, got {type(value).__name__}")
            return [item(v, (where, i)) for i, v in enumerate(value)]
        return as_list
    if origin is dict:
        item = _converter(args[1])

        def as_dict(value: Any, where: Any) -> Any:
            if not isinstance(value, dict):
                raise SnapshotError(f"{_where(where)}: expected an object, got {type(value).__name__}")
            return {str(k): item(v, (where, k)) for k, v in value.items()}
        return as_dict
    if tp in _SCALAR_WORDS:
        want = _SCALAR_WORDS[tp]
        if tp is float:
            def number(value: Any, where: Any) -> Any:
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    return float(value)
                raise SnapshotError(f"{_where(where)}: expected {want}, got {_short(value)}")
            return number
        if tp is int:
            def integer(value: Any, where: Any) -> Any:
                if isinstance(value, int) and not isinstance(value, bool):
                    return value
                raise SnapshotError(f"{_where(where)}: expected {want}, got {_short(value)}")
            return integer

        def scalar(value: Any, where: Any) -> Any:
            if isinstance(value, tp):
                return value
            raise SnapshotError(f"{_where(where)}: expected {want}, got {_short(value)}")
        return scalar

    def anything(value: Any, where: Any) -> Any:
        if isinstance(value, (dict, list)) and not _depth_ok(value, MAX_DEPTH):
            raise SnapshotError(f"{_where(where)}: nested more than {MAX_DEPTH} levels deep")
        return value
    return anything


def _convert(tp: Any, value: Any, where: Any) -> Any:
    return _converter(tp)(value, where)
