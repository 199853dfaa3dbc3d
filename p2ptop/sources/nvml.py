"""Live NVML: the only module that imports pynvml.

Every NVML call goes through :meth:`NvmlReader.call`, which turns any failure (Not Supported,
Invalid Argument, GPU is lost, a function missing from the driver or from the bindings, a ctypes
argument error) into ``(None, reason)``. One failing call marks one value N/A; the snapshot is
still produced. Only a failing ``nvmlInit`` stops a read, as :class:`NvmlUnavailable`.

Known traps of nvidia-ml-py 13.x, handled here (see shared/captures/*/README.md):
- ``NVML_P2P_CAPS_INDEX_READ`` is the tuple ``(0,)``: we pass plain integers 0..4.
- ``nvmlDeviceGetGpuFabricInfoV`` wants ``byref(struct)``; passing the struct segfaults.
- ``..._v2`` names differ across versions: we call the unversioned wrappers.
- link indexes past the GPU's last link answer Invalid Argument: we stop there.
"""

from __future__ import annotations

import copy
import ctypes
import datetime as _dt
import os
import threading
import time
TYPE_CHECKING = False  # typing is not imported at run time (start-up); the annotations are strings
if TYPE_CHECKING:
    from typing import Any, Callable, Optional

from ..model import (
    ANCESTOR_NAMES,
    FABRIC_STATE_NAMES,
    GPU,
    NVLINK_REMOTE_TYPES,
    P2P_CAPS,
    P2P_STATUS_NAMES,
    VIRTUALIZATION_NAMES,
    Fabric,
    NvLink,
    Pair,
    Snapshot,
    Source,
)
from . import nvlink_fields, sysfs
from .nvlink_fields import (  # the tunables (ROUND_REFRESHES, ..._S) are read through the module, at the call
    FI_COUNTER_TOTALS,
    FI_DL_CRC,
    FI_LINK_COUNT,
    FI_NVLINK_GET_STATE,
    FI_PCIE_REPLAY_COUNTER,
    NVLINK_COUNTERS,
    CounterPlan,
    counter_fields,
    dl_crc_follows,
)

#: P2P capability index per our name (nvmlGpuP2PCapsIndex_t), as plain ints.
P2P_CAP_INDEX = {"read": 0, "write": 1, "nvlink": 2, "atomics": 3, "pci": 4}
BRANDS = {
    0: "UNKNOWN", 1: "QUADRO", 2: "TESLA", 3: "NVS", 4: "GRID", 5: "GEFORCE", 6: "TITAN",
    7: "NVIDIA_VAPPS", 8: "NVIDIA_VPC", 9: "NVIDIA_VCS", 10: "NVIDIA_VWS", 11: "NVIDIA_CLOUD_GAMING",
    12: "QUADRO_RTX", 13: "NVIDIA_RTX", 14: "NVIDIA", 15: "GEFORCE_RTX", 16: "TITAN_RTX",
}
ARCHITECTURES = {
    2: "Kepler", 3: "Maxwell", 4: "Pascal", 5: "Volta", 6: "Turing", 7: "Ampere", 8: "Ada",
    9: "Hopper", 10: "Blackwell",
}
MAX_LINKS = 36  # NVML_NVLINK_MAX_LINKS in nvidia-ml-py 13.x; we stop at the first Invalid Argument
#: set by cli.entry for a command after which the process ends at once (``os._exit``): closing a reader then
#: skips nvmlShutdown (~3 ms of `p2ptop topo` on an H100 host, 2026-11-27), as the exit releases it anyway
LEAVE_OPEN_FOR_EXIT = False
_NVML_LOCK = threading.Lock()  # NVML is thread-safe, but init/shutdown pairs must not interleave


class NvmlUnavailable(RuntimeError):
    """NVML could not be initialised: no driver, no library, or no permission."""


def _text(value: Any) -> Optional[str]:
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.split(b"\0", 1)[0].decode("utf-8", "replace")
    return str(value)


def _cpulist(masks: Any, bits: int = 64) -> Optional[str]:
    """An NVML affinity bitmask array -> '0-31,64-95'."""
    cpus = []
    for word_index, word in enumerate(list(masks)):
        word = int(word)
        for bit in range(bits):
            if word >> bit & 1:
                cpus.append(word_index * bits + bit)
    if not cpus:
        return None
    ranges, start, prev = [], cpus[0], cpus[0]
    for c in cpus[1:] + [None]:
        if c is not None and c == prev + 1:
            prev = c
            continue
        ranges.append(f"{start}-{prev}" if prev != start else f"{start}")
        if c is not None:
            start = prev = c
    return ",".join(ranges)


def _cuda_version(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}"


class NvmlReader:
    """Reads snapshots from NVML. ``nvml`` is the pynvml module, or a stand-in with its names."""

    def __init__(self, nvml: Any = None, sysfs_root: str = "/", hostname: Optional[str] = None):
        if nvml is None:
            try:
                import pynvml as nvml  # noqa: PLC0415 - the one place pynvml is imported
            except ImportError as e:  # pragma: no cover - nvidia-ml-py is a dependency
                raise NvmlUnavailable(f"the nvidia-ml-py package is not installed ({e})") from None
        self.nvml = nvml
        self.sysfs_root = sysfs_root
        self.hostname = hostname
        self._error_class = getattr(nvml, "NVMLError", None)
        self.ncalls = 0  # NVML calls made through this reader (the benchmarks count calls per refresh)
        self.handles: dict[int, Any] = {}  # GPU index -> NVML handle, from the last full read
        self._totals: dict[int, dict[str, Optional[int]]] = {}  # GPU index -> NVLink counter totals (field values)
        self.plans: dict[int, CounterPlan] = {}  # GPU index -> how its NVLink counters are read (learned at full reads)
        self._dl_crc: dict[tuple[int, int], Optional[int]] = {}  # (GPU, link) -> field 163 at the last read
        self._read_at: dict[tuple[int, int], float] = {}  # (GPU, link) -> monotonic time its counters were last read
        #: (GPU, link) -> seconds its counters' rise this refresh covers, where longer than one refresh (the round)
        self.counter_seconds: dict[tuple[int, int], float] = {}
        self._refreshes = 0  # dynamic refreshes since the reader opened: whose turn it is in the round of totals
        self._totals_at: dict[int, float] = {}  # GPU index -> monotonic time its counter totals were last read

    # -- one wrapped call ----------------------------------------------------------------
    def call(self, name: str, *args: Any, count: bool = True) -> tuple[Any, Optional[str]]:
        """Call ``nvml.<name>(*args)``; return (value, None) or (None, reason). ``count=False`` leaves the
        call out of :attr:`ncalls` (the event thread's waits are not part of a refresh)."""
        if count:
            self.ncalls += 1
        fn: Optional[Callable[..., Any]] = getattr(self.nvml, name, None)
        if fn is None:
            return None, f"{name} is not in these NVML bindings"
        try:
            return fn(*args), None
        except Exception as e:  # noqa: BLE001 - every failure becomes an N/A value
            return None, self.reason(e)

    def reason(self, e: BaseException) -> str:
        if self._error_class is not None and isinstance(e, self._error_class):
            text = str(e) or type(e).__name__
            return text
        if isinstance(e, ctypes.ArgumentError):
            return f"NVML binding argument error: {e}"
        return f"{type(e).__name__}: {e}"

    # -- the whole read ------------------------------------------------------------------
    def open(self) -> None:
        with _NVML_LOCK:
            _, why = self.call("nvmlInit")
        if why is not None:
            raise NvmlUnavailable(f"NVML could not be initialised: {why}")

    def close(self) -> None:
        if LEAVE_OPEN_FOR_EXIT:
            return  # the process ends next (cli.QUICK_EXIT): its exit releases the driver's handles
        with _NVML_LOCK:
            self.call("nvmlShutdown")

    def read(self) -> Snapshot:
        """One snapshot. Opens and closes NVML around the read."""
        self.open()
        try:
            return self.read_open()
        finally:
            self.close()

    def read_open(self, what: str = "all", carry: Optional[Snapshot] = None) -> Snapshot:
        """A full read with NVML open. ``what="topo"``: only what ``p2ptop topo`` prints (driver, GPUs' bus ids,
        CPU/NUMA affinity, active links' remote ends, NVML's common ancestor and P2P status per pair), the
        rest N/A "not read for topo". ``carry``: a snapshot this reader read before; its NVLink counters are
        carried over (they are dynamic: the refreshes read them) instead of read link by link again."""
        self._what = what
        self._carry = {g.index: g for g in carry.gpus} if carry is not None else {}
        snap = Snapshot(
            source=Source(
                kind="nvml",
                hostname=self.hostname or os.uname().nodename,  # socket.gethostname() without importing socket
                taken_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            )
        )
        na = snap.na
        v, why = self.call("nvmlSystemGetDriverVersion")
        snap.driver_version = _text(v)
        if why:
            na["driver_version"] = why
        v, why = self.call("nvmlSystemGetCudaDriverVersion")
        if why is None and isinstance(v, int):
            snap.cuda_driver_version = _cuda_version(v)
        else:
            na["cuda_driver_version"] = why or f"unexpected value {v!r}"
        if what == "topo":
            na["nvml_version"] = na["cc_mode"] = NOT_FOR_TOPO
        else:
            v, why = self.call("nvmlSystemGetNVMLVersion")
            snap.nvml_version = _text(v)
            if why:
                na["nvml_version"] = why
            # nvmlSystemGetConfComputeState (R535+): ccFeature 1 is a GPU in confidential-computing mode (single GPU
            # passthrough), devToolsMode 1 its devtools variant; the multi-GPU modes (protected PCIe, NVLink encryption)
            # leave ccFeature 0 and are read as off
            v, why = self.call("nvmlSystemGetConfComputeState")
            feature = getattr(v, "ccFeature", None) if why is None else None
            if feature in (0, 1):
                snap.cc_mode = "off" if feature == 0 else "devtools" if getattr(v, "devToolsMode", 0) == 1 else "on"
            else:
                na["cc_mode"] = why or f"unexpected value {v!r}"

        count, why = self.call("nvmlDeviceGetCount")
        if why is not None or not isinstance(count, int):
            na["gpus"] = why or f"unexpected GPU count {count!r}"
            count = 0
        handles: dict[int, Any] = {}
        for i in range(count):
            gpu = GPU(index=i)
            h, why = self.call("nvmlDeviceGetHandleByIndex", i)
            if why is not None:
                gpu.na["handle"] = why
            else:
                handles[i] = h
                self._read_gpu(h, gpu)
            snap.gpus.append(gpu)
        self.handles = handles
        if what == "topo":
            self._remote_types(snap)
        else:
            self._budget_counters()

        ancestors: dict[tuple[int, int], tuple[Any, Optional[str]]] = {}
        for a in range(count):
            for b in range(count):
                if a == b:
                    continue
                pair = Pair(a=a, b=b)
                if a not in handles or b not in handles:
                    pair.na["pair"] = "GPU handle not available"
                    for cap in P2P_CAPS:
                        pair.p2p[cap] = None
                    snap.pairs.append(pair)
                    continue
                ha, hb = handles[a], handles[b]
                # the common ancestor of a and b is that of b and a: asked once per unordered pair
                v, why = ancestors[(b, a)] if (b, a) in ancestors else self.call("nvmlDeviceGetTopologyCommonAncestor", ha, hb)
                ancestors[(a, b)] = (v, why)
                if why is None:
                    pair.ancestor = ANCESTOR_NAMES.get(int(v), f"UNKNOWN({v})")
                else:
                    pair.na["ancestor"] = why
                for cap in P2P_CAPS:
                    v, why = self.call("nvmlDeviceGetP2PStatus", ha, hb, P2P_CAP_INDEX[cap])
                    if why is None:
                        pair.p2p[cap] = P2P_STATUS_NAMES.get(int(v), "UNKNOWN")
                    else:
                        pair.p2p[cap] = None
                        pair.na[f"p2p.{cap}"] = why
                snap.pairs.append(pair)

        sockets, why = sysfs.read_sockets(self.sysfs_root)
        snap.sockets = sockets
        if why:
            na["sockets"] = why
        return snap

    def _remote_types(self, snap: Snapshot) -> None:
        """topo: an active link whose remote end is one of this host's GPUs (by bus id) or hidden needs no
        call for its remote type; the others are asked."""
        ours = {(g.pci_bus_id or "").upper() for g in snap.gpus if g.pci_bus_id}
        for gpu in snap.gpus:
            h = self.handles.get(gpu.index)
            for nl in gpu.nvlinks:
                if not nl.active or nl.remote_pci_bus_id is None:
                    continue
                if nl.remote_hidden:
                    nl.na["remote_type"] = "not read for topo (the remote end is hidden from this host)"
                elif nl.remote_pci_bus_id.upper() in ours:
                    nl.remote_type = "GPU"  # the bus id is one of this host's GPUs
                elif h is not None:
                    self._set(nl, "remote_type", "nvmlDeviceGetNvLinkRemoteDeviceType", h, nl.link,
                              conv=lambda t: NVLINK_REMOTE_TYPES.get(int(t), f"UNKNOWN({t})"))

    # -- per GPU -------------------------------------------------------------------------
    def _set(self, gpu: Any, attr: str, name: str, *args: Any, conv: Callable[[Any], Any] = lambda v: v) -> Any:
        v, why = self.call(name, *args)
        if why is None:
            try:
                value = conv(v)
            except Exception as e:  # noqa: BLE001
                value, why = None, f"unexpected value from {name}: {e}"
        else:
            value = None
        setattr(gpu, attr, value)
        if why is not None:
            gpu.na[attr] = why
        return value

    def _read_gpu(self, h: Any, gpu: GPU) -> None:
        s = self._set
        topo = getattr(self, "_what", "all") == "topo"
        s(gpu, "pci_bus_id", "nvmlDeviceGetPciInfo", h, conv=lambda p: _text(p.busId))
        if not topo:
            s(gpu, "name", "nvmlDeviceGetName", h, conv=_text)
            s(gpu, "uuid", "nvmlDeviceGetUUID", h, conv=_text)
            s(gpu, "serial", "nvmlDeviceGetSerial", h, conv=_text)
            s(gpu, "brand", "nvmlDeviceGetBrand", h, conv=lambda v: BRANDS.get(int(v), f"UNKNOWN({v})"))
            s(gpu, "architecture", "nvmlDeviceGetArchitecture", h, conv=lambda v: ARCHITECTURES.get(int(v), f"arch {v}"))
            s(gpu, "memory_total_mib", "nvmlDeviceGetMemoryInfo", h, conv=lambda m: int(m.total) // (1024 * 1024))
            s(gpu, "compute_capability", "nvmlDeviceGetCudaComputeCapability", h, conv=lambda t: f"{t[0]}.{t[1]}")
            s(gpu, "pcie_gen_cur", "nvmlDeviceGetCurrPcieLinkGeneration", h, conv=int)
            s(gpu, "pcie_gen_max", "nvmlDeviceGetMaxPcieLinkGeneration", h, conv=int)
            s(gpu, "pcie_width_cur", "nvmlDeviceGetCurrPcieLinkWidth", h, conv=int)
            s(gpu, "pcie_width_max", "nvmlDeviceGetMaxPcieLinkWidth", h, conv=int)
            s(gpu, "utilization_gpu", "nvmlDeviceGetUtilizationRates", h, conv=lambda u: int(u.gpu))
        s(gpu, "cpu_affinity", "nvmlDeviceGetCpuAffinity", h, 4, conv=_cpulist)
        s(gpu, "gpu_numa_id", "nvmlDeviceGetNumaNodeId", h, conv=int)
        # NUMA affinity: NVML's memory affinity at node scope (what nvidia-smi prints), else sysfs.
        s(gpu, "numa_node", "nvmlDeviceGetMemoryAffinity", h, 1, 0, conv=lambda m: _first_bit(m))
        if topo:
            for attr in TOPO_SKIPS:
                gpu.na[attr] = NOT_FOR_TOPO
        else:
            s(gpu, "virtualization_mode", "nvmlDeviceGetVirtualizationMode", h,
              conv=lambda v: VIRTUALIZATION_NAMES.get(int(v), f"UNKNOWN({v})"))
            s(gpu, "mig_mode", "nvmlDeviceGetMigMode", h, conv=lambda m: "Enabled" if int(m[0]) == 1 else "Disabled")
            gpu.fabric = self._read_fabric(h)
        self._read_links(h, gpu, topo)
        if gpu.pci_bus_id:
            rc, path, numa, why = sysfs.read_pcie_path(gpu.pci_bus_id, self.sysfs_root)
            gpu.root_complex, gpu.pcie_path = rc, path
            if gpu.numa_node is None and numa is not None:
                gpu.numa_node = numa
                gpu.na.pop("numa_node", None)
            for k, v in why.items():
                if k == "numa_node" and gpu.numa_node is not None:
                    continue
                gpu.na.setdefault(k, v)

    def _read_fabric(self, h: Any) -> Fabric:
        fab = Fabric()
        nv = self.nvml
        struct_cls = getattr(nv, "c_nvmlGpuFabricInfoV_t", None)
        fn = "nvmlDeviceGetGpuFabricInfoV"
        if struct_cls is None or not hasattr(nv, fn):
            struct_cls, fn = getattr(nv, "c_nvmlGpuFabricInfo_t", None), "nvmlDeviceGetGpuFabricInfo"
        if struct_cls is None:
            fab.na["fabric"] = "GPU fabric info is not in these NVML bindings"
            return fab
        try:
            info = struct_cls()
        except Exception as e:  # noqa: BLE001
            fab.na["fabric"] = f"cannot build the fabric info structure: {e}"
            return fab
        # byref(), never the struct itself: the bindings pass it straight to C (a segfault).
        _, why = self.call(fn, h, ctypes.byref(info))
        if why is not None:
            fab.na["fabric"] = why
            return fab
        try:
            fab.state = FABRIC_STATE_NAMES.get(int(info.state), f"UNKNOWN({info.state})")
            status = int(info.status)
            fab.status = "Success" if status == 0 else f"NVML error {status}"
            fab.clique_id = int(info.cliqueId)
            raw = bytes(info.clusterUuid)
            hx = raw.hex()
            fab.cluster_uuid = f"{hx[0:8]}-{hx[8:12]}-{hx[12:16]}-{hx[16:20]}-{hx[20:32]}" if len(hx) >= 32 else hx
        except Exception as e:  # noqa: BLE001
            fab.na["fabric"] = f"unexpected fabric info: {e}"
        return fab

    def _fields(self, h: Any, fields: list[Any]) -> tuple[dict[Any, int], Optional[str]]:
        """One nvmlDeviceGetFieldValues call: {field: value} of the fields whose own nvmlReturn is Success."""
        if not fields:
            return {}, None
        values, why = self.call("nvmlDeviceGetFieldValues", h, fields)
        got: dict[Any, int] = {}
        if why is None:
            for f, v in zip(fields, values):
                value = _field_value(v)
                if value is not None:
                    got[f] = value
        return got, why

    def _link_indexes(self, h: Any, gpu: GPU, first: dict[Any, int]) -> tuple[list[int], dict[int, tuple[Any, Optional[str]]]]:
        """The GPU's link indexes: field 91 (NVLinks present) where it answered in ``first``, else each link's
        state asked until Invalid Argument (past the last link). Returns the links and the states so read."""
        n = first.get(FI_LINK_COUNT)
        if n:
            return list(range(min(int(n), MAX_LINKS))), {}
        invalid = f"{getattr(self.nvml, 'NVMLError_InvalidArgument', type(None)).__name__}"
        links: list[int] = []
        states: dict[int, tuple[Any, Optional[str]]] = {}
        for link in range(MAX_LINKS):
            v, why = self.call("nvmlDeviceGetNvLinkState", h, link)
            if why is not None and ("Invalid Argument" in why or invalid in why):
                break  # past the GPU's last link
            if why is not None and link == 0 and "Not Supported" in why:
                gpu.na["nvlinks"] = why  # no NVLink on this GPU
                break
            links.append(link)
            states[link] = (v, why)
            if why is not None and "lost" in why.lower():
                break
        return links, states

    def _read_links(self, h: Any, gpu: GPU, topo: bool = False) -> None:
        """Each NVLink: state, version, remote, capability and error counters. States come from one
        field-values call where the driver answers it (else a call a link), versions from a call a link, and the
        counters as CounterPlan finds (per link in the batch, a total that did not move, field 163, or one call
        per link and counter); the batch's time decides whether a refresh asks its per-link fields every time
        or in the round. ``topo``: states and the active links' remote bus ids only."""
        if topo:  # how many links (field 91), so that one field-values call gives their states
            first, _ = self._fields(h, [FI_LINK_COUNT])
        else:  # one call: how many links, and the PCIe replays (the full read needs them anyway)
            first, _ = self._fields(h, [FI_LINK_COUNT, FI_PCIE_REPLAY_COUNTER])
            v = first.get(FI_PCIE_REPLAY_COUNTER)
            if v is not None:
                gpu.pcie_replay_counter = int(v)
            else:
                self._set(gpu, "pcie_replay_counter", "nvmlDeviceGetPcieReplayCounter", h, conv=int)
        links, states = self._link_indexes(h, gpu, first)
        self.plans.pop(gpu.index, None)
        if not links:
            return
        lost = next((w for _, w in states.values() if w and "lost" in w.lower()), None)
        if lost:
            for link, (v, why) in states.items():
                nl = NvLink(link=link, state=None if why else ("active" if int(v) == 1 else "inactive"))
                if why:
                    nl.na["state"] = why
                gpu.nvlinks.append(nl)
            gpu.na.setdefault("nvlinks", lost)
            return
        fields: list[Any] = [] if states else [(FI_NVLINK_GET_STATE, l) for l in links]
        if not topo:  # (versions by nvmlDeviceGetNvLinkVersion: ~1 us a link on 2 H200s, field 166 0.17 ms a call)
            carried = self._carry.get(gpu.index)
            if carried is None or [nl.link for nl in carried.nvlinks] != links:
                carried = None
            fields += counter_fields(links)
        t0 = time.perf_counter()
        got, why = self._fields(h, fields)
        field_cost = time.perf_counter() - t0  # what asking the counter fields every refresh would cost
        if why is not None and "lost" not in why.lower() and not topo:
            # the whole call refused (a field or scope this driver does not take): the fields known to answer
            got, _ = self._fields(h, [f for f in fields if isinstance(f, tuple) and f[0] == FI_NVLINK_GET_STATE]
                                  + [(fid, 0) for fid in FI_COUNTER_TOTALS])
        if not topo:
            self._check_fields(h, links, got)
        totals = {kind: got.get((fid, 0)) for fid, kind in FI_COUNTER_TOTALS.items()}
        for link in links:
            nl = NvLink(link=link)
            if link in states:
                v, why = states[link]
            else:
                v, why = got.get((FI_NVLINK_GET_STATE, link)), None
                if v is None:
                    v, why = self.call("nvmlDeviceGetNvLinkState", h, link)
            if why is None:
                nl.state = "active" if int(v) == 1 else "inactive"
            else:
                nl.na["state"] = why
                if "lost" in why.lower():
                    gpu.nvlinks.append(nl)
                    gpu.na.setdefault("nvlinks", why)
                    break
            if topo:
                if nl.active:
                    self._set(nl, "remote_pci_bus_id", "nvmlDeviceGetNvLinkRemotePciInfo", h, link, conv=lambda p: _text(p.busId))
                for attr in ("version", "p2p_supported", "counters"):
                    nl.na[attr] = NOT_FOR_TOPO
                gpu.nvlinks.append(nl)
                continue
            self._set(nl, "version", "nvmlDeviceGetNvLinkVersion", h, link, conv=int)
            for attr, name, conv in (
                ("remote_pci_bus_id", "nvmlDeviceGetNvLinkRemotePciInfo", lambda p: _text(p.busId)),
                ("remote_type", "nvmlDeviceGetNvLinkRemoteDeviceType", lambda t: NVLINK_REMOTE_TYPES.get(int(t), f"UNKNOWN({t})")),
                ("p2p_supported", "nvmlDeviceGetNvLinkCapability", bool),
            ):
                args = (h, link, 0) if attr == "p2p_supported" else (h, link)
                self._set(nl, attr, name, *args, conv=conv)
            old = next((o for o in carried.nvlinks if o.link == link), None) if carried is not None else None
            for cname, cidx in NVLINK_COUNTERS.items():
                fid = _direct_field(cname, link, got)
                if fid is not None:
                    nl.counters[cname] = int(got[fid])
                elif old is not None and f"counters.{cname}" not in old.na:
                    nl.counters[cname] = old.counters.get(cname)  # dynamic: the refreshes read it
                elif totals.get(cname) == 0:
                    nl.counters[cname] = 0  # the GPU's total over its links is 0: so is every link's
                else:
                    v, why = self.call("nvmlDeviceGetNvLinkErrorCounter", h, link, cidx)
                    nl.counters[cname] = int(v) if why is None else None
                    if why is not None:
                        nl.na[f"counters.{cname}"] = why
            gpu.nvlinks.append(nl)
        if not topo and gpu.nvlinks:
            self._plan(gpu, got, totals, carried=carried is not None, field_cost=field_cost, h=h)

    def _check_fields(self, h: Any, links: list[int], got: dict[Any, int]) -> None:
        """A field-value source is used for a link's counter only where it says what the function call says:
        each source (scoped 161/162; per-link ids) is compared with the call on one link per counter, once per
        full read, and dropped from ``got`` where they differ. (A source whose call does not answer cannot be
        compared and is kept.)"""
        from .nvlink_fields import FI_DL, FI_LINK_IDS

        for kind, cidx in NVLINK_COUNTERS.items():
            # each source: [(field, link)] (the scoped field 161/162, and the per-link ids of links 0..11)
            sources = [[((fid, l), l) for l in links] for fid, k in FI_DL.items() if k == kind]
            sources.append([((FI_LINK_IDS[(kind, l)], 0), l) for l in links if (kind, l) in FI_LINK_IDS])
            chosen = None  # the first source (in the order _direct_field prefers) that agrees covers all it gives
            for pairs in sources:
                answered = [(f, l) for f, l in pairs if f in got]
                if not answered:
                    continue
                if chosen is not None and {l for _, l in answered} <= chosen:
                    for f, _ in pairs:
                        got.pop(f, None)  # nothing to add: not asked again, not checked
                    continue
                f, l = answered[0]
                v, why = self.call("nvmlDeviceGetNvLinkErrorCounter", h, l, cidx)
                if why is None and int(v) != got[f]:
                    for f, _ in pairs:
                        got.pop(f, None)
                elif chosen is None:
                    chosen = {l for _, l in answered}

    def _budget_counters(self) -> None:
        """Where all GPUs' counter fields asked every refresh would cost more than COUNTERS_EVERY_REFRESH_HOST_S
        together (as timed at this full read), every GPU's totals and per-link fields go into the round."""
        plans = list(self.plans.values())
        if sum(p.every_refresh_cost() for p in plans) <= nvlink_fields.COUNTERS_EVERY_REFRESH_HOST_S:
            return
        for p in plans:
            p.totals_in_round = bool(p.totals)
            p.fields_in_round = bool(p.per_link_fields())

    def _plan(self, gpu: GPU, got: dict[Any, int], totals: dict[str, Optional[int]], carried: bool = False,
              field_cost: float = 0.0, h: Any = None) -> None:
        """Learn how this GPU's counters are read until the next full read (CounterPlan): which batched fields
        answer, and whether asking them every refresh costs more than FIELDS_EVERY_REFRESH_S (the full read's
        call for them, ``field_cost``, timed): then they are read in the round, a slice of links a refresh."""
        links = [nl.link for nl in gpu.nvlinks if "state" not in nl.na or nl.state is not None]
        plan = CounterPlan(links=[nl.link for nl in gpu.nvlinks], field_cost_s=field_cost)
        plan.totals = {fid: kind for fid, kind in FI_COUNTER_TOTALS.items() if totals.get(kind) is not None}
        follows = dl_crc_follows({nl.link: (got.get((FI_DL_CRC, nl.link)), nl.counters.get("crc_flit"),
                                            nl.counters.get("crc_data")) for nl in gpu.nvlinks})
        for nl in gpu.nvlinks:
            if nl.link not in links:
                continue
            dl = [k for k in follows if _direct_field(k, nl.link, got) is None] if (FI_DL_CRC, nl.link) in got else []
            if dl:
                plan.dl_crc[nl.link] = tuple(dl)
                self._dl_crc[(gpu.index, nl.link)] = got[(FI_DL_CRC, nl.link)]
            for cname in NVLINK_COUNTERS:
                fid = _direct_field(cname, nl.link, got)
                if fid is not None:
                    plan.direct[fid] = (nl.link, cname)
                elif plan.covered_by_total(cname) or cname in dl:
                    continue
                elif nl.counters.get(cname) is not None:  # answers link by link: the round reads it
                    plan.by_call.setdefault(nl.link, []).append(cname)
        plan.fields_in_round = bool(plan.per_link_fields()) and field_cost > nvlink_fields.FIELDS_EVERY_REFRESH_S
        if plan.totals and h is not None:  # what asking the totals alone costs (the host's budget weighs it)
            t0 = time.perf_counter()
            again, _ = self._fields(h, [(fid, 0) for fid in plan.totals])
            plan.totals_cost_s = time.perf_counter() - t0
            totals = {**totals, **{kind: again[(fid, 0)] for fid, kind in plan.totals.items() if (fid, 0) in again}}
        self._totals[gpu.index] = totals
        self._totals_at[gpu.index] = time.monotonic()
        self.plans[gpu.index] = plan
        if not carried:  # counters carried over keep the time they were read at
            now = time.monotonic()
            for nl in gpu.nvlinks:
                self._read_at[(gpu.index, nl.link)] = now

    # -- the dynamic part of a refresh -----------------------------------------------------------
    def read_dynamic(self, prev: Snapshot) -> Optional[Snapshot]:
        """A new snapshot with what moves read again (PCIe link now, PCIe replays, utilisation, fabric
        state, NVLink states and counters) and the rest (identity, topology, P2P status, each link's
        version, remote and capability, the PCIe path from sysfs) carried over from ``prev``, a snapshot
        this reader read in full. Per GPU: one field-values call for the link states, the PCIe replays and
        the NVLink counter totals; a link's own counters are read only when a total moved, or where the
        driver gives no totals. A GPU lost shows as N/A with NVML's reason, as in a full read. None when
        the GPU count changed or cannot be read: then only a full read tells what is there."""
        count, why = self.call("nvmlDeviceGetCount")
        if why is not None or count != len(prev.gpus):
            return None  # GPUs came or went, or NVML stopped answering: the caller reads in full
        snap = copy.copy(prev)
        snap.source = copy.copy(prev.source)
        snap.source.taken_at = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        snap.bench, snap.gpus = [], []
        self._refreshes += 1
        for old in prev.gpus:
            gpu = copy.copy(old)
            gpu.na = {k: v for k, v in old.na.items() if k not in DYNAMIC_GPU_FIELDS}
            if not old.nvlinks and "nvlinks" in old.na and "lost" not in old.na["nvlinks"].lower():
                gpu.na["nvlinks"] = old.na["nvlinks"]  # no NVLink at all (Not Supported) is static, not a failing read
            gpu.nvlinks = [copy.copy(nl) for nl in old.nvlinks]
            for nl in gpu.nvlinks:
                nl.counters, nl.na = dict(nl.counters), {k: v for k, v in nl.na.items() if k != "state"}
            h = self.handles.get(old.index)
            if h is not None:
                self._read_gpu_dynamic(h, gpu)
            snap.gpus.append(gpu)
        return snap

    def _read_gpu_dynamic(self, h: Any, gpu: GPU) -> None:
        s = self._set
        s(gpu, "pcie_gen_cur", "nvmlDeviceGetCurrPcieLinkGeneration", h, conv=int)
        lost = next((w for w in gpu.na.values() if "lost" in w.lower()), None)
        if lost:  # nothing more to ask of this GPU; the next poll reads it in full
            for attr in DYNAMIC_GPU_FIELDS:
                if attr not in ("fabric", "nvlinks"):
                    setattr(gpu, attr, None)
                    gpu.na[attr] = lost
            return
        s(gpu, "pcie_width_cur", "nvmlDeviceGetCurrPcieLinkWidth", h, conv=int)
        s(gpu, "utilization_gpu", "nvmlDeviceGetUtilizationRates", h, conv=lambda u: int(u.gpu))
        if gpu.fabric.state is not None or "fabric" not in gpu.fabric.na:
            gpu.fabric = self._read_fabric(h)
        links = gpu.nvlinks
        plan = self.plans.get(gpu.index)
        rounded = plan.slice() if plan is not None else []  # the links whose round counters are read this time
        # the totals: every refresh, or this GPU's turn in the round where all GPUs' would cost too much
        totals_now = plan is not None and (not plan.totals_in_round
                                           or (self._refreshes - gpu.index) % nvlink_fields.ROUND_REFRESHES == 0)
        asked = plan.fields(rounded, totals=totals_now) if plan is not None else []  # the counter fields of this refresh
        fields: list[Any] = [(FI_NVLINK_GET_STATE, nl.link) for nl in links] + [FI_PCIE_REPLAY_COUNTER] + asked
        got, why = self._fields(h, fields)
        if why is not None and "lost" in why.lower():
            gpu.na["nvlinks"] = why
        v = got.get(FI_PCIE_REPLAY_COUNTER)
        if v is not None:
            gpu.pcie_replay_counter = int(v)
        else:
            s(gpu, "pcie_replay_counter", "nvmlDeviceGetPcieReplayCounter", h, conv=int)
        for nl in links:
            state = got.get((FI_NVLINK_GET_STATE, nl.link))
            if state is None:
                state, why = self.call("nvmlDeviceGetNvLinkState", h, nl.link)
                if why is not None:
                    nl.state = None
                    nl.na["state"] = why
                    continue
            # NVML_NVLINK_STATE_*: 1 active; 0 inactive, 2 sleep, 3 active with traffic disabled
            nl.state = "active" if int(state) == 1 else "inactive"
        if not links or plan is None:
            return
        self._read_counters(h, gpu, plan, got, rounded, set(asked))

    def _read_counters(self, h: Any, gpu: GPU, plan: CounterPlan, got: dict[Any, int], rounded: list[int],
                       asked: set) -> None:
        """The counters of a refresh, as the plan says: per-link fields straight from the batch (every link,
        or the ``rounded`` links where the fields are in the round); a total or a field 163 that moved (or
        stopped answering) makes its links' counters read one by one; the round's counters of the ``rounded``
        links; anything a batched field gave before and not now is read by a call. ``asked``: the counter
        fields this refresh's call asked (``plan.fields(rounded)``)."""
        by_link = {nl.link: nl for nl in gpu.nvlinks}
        wanted: set[tuple[int, str]] = set()
        for fid, (link, kind) in plan.direct.items():
            if fid not in asked:
                continue  # in the round, not this refresh's slice
            v = got.get(fid)
            if v is None:
                wanted.add((link, kind))  # stopped answering in the batch: asked by a call this time
            elif link in by_link:
                by_link[link].counters[kind] = int(v)
                by_link[link].na.pop(f"counters.{kind}", None)
        direct = plan.direct_pairs()
        totals = {kind: got.get((fid, 0)) for fid, kind in plan.totals.items() if (fid, 0) in asked}
        before = self._totals.get(gpu.index, {})
        now = time.monotonic()
        since = now - self._totals_at.get(gpu.index, now)  # a rise a total shows happened since it was last read
        by_total: set[int] = set()
        for kind, total in totals.items():
            if total is not None and before.get(kind) == total:
                continue  # no link's counter moved
            moved = [link for link in plan.links if (link, kind) not in direct]
            wanted.update((link, kind) for link in moved)
            by_total.update(moved)
        if totals:
            self._totals_at[gpu.index] = now
        for link, kinds in plan.dl_crc.items():
            if (FI_DL_CRC, link) not in asked:
                continue
            v = got.get((FI_DL_CRC, link))
            if v is None or self._dl_crc.get((gpu.index, link)) != v:
                wanted.update((link, kind) for kind in kinds)
            self._dl_crc[(gpu.index, link)] = v
        wanted.update((link, kind) for link in rounded for kind in plan.by_call.get(link, ()))
        self.counter_seconds = {k: v for k, v in self.counter_seconds.items() if k[0] != gpu.index}
        if plan.totals_in_round:  # a rise a total in the round shows covers the time since it was last read
            for link in by_total:
                self.counter_seconds[(gpu.index, link)] = since
        for link, kind in sorted(wanted):
            nl = by_link.get(link)
            if nl is None:
                continue
            v, why = self.call("nvmlDeviceGetNvLinkErrorCounter", h, link, NVLINK_COUNTERS[kind])
            nl.counters[kind] = int(v) if why is None else None
            if why is None:
                nl.na.pop(f"counters.{kind}", None)
            else:
                nl.na[f"counters.{kind}"] = why
        for link in rounded:
            last = self._read_at.get((gpu.index, link))
            if last is not None:  # a rise read by the round covers the time since the link's last read
                self.counter_seconds[(gpu.index, link)] = now - last
            self._read_at[(gpu.index, link)] = now
        self._totals[gpu.index] = {**before, **totals}


#: What a dynamic refresh reads again on a GPU (the rest is carried over until the next full read).
DYNAMIC_GPU_FIELDS = ("pcie_gen_cur", "pcie_width_cur", "pcie_replay_counter", "utilization_gpu", "fabric", "nvlinks")
#: nvmlDeviceGetFieldValues ids (nvml.h; the same numbers in nvidia-ml-py 13.x as NVML_FI_DEV_*)
#: what a topo read leaves out (p2ptop topo prints none of it)
NOT_FOR_TOPO = "not read for topo"
TOPO_SKIPS = ("name", "uuid", "serial", "brand", "architecture", "memory_total_mib", "compute_capability", "pcie_gen_cur",
              "pcie_gen_max", "pcie_width_cur", "pcie_width_max", "pcie_replay_counter", "utilization_gpu",
              "virtualization_mode", "mig_mode")
_VALUE_FIELDS = {0: "dVal", 1: "uiVal", 2: "ulVal", 3: "ullVal", 4: "sllVal", 5: "siVal", 6: "usVal"}


def _direct_field(kind: str, link: int, got: dict[Any, int]) -> Optional[tuple[int, int]]:
    """The batched field that gave this link's counter (scoped 161/162, or the per-link id), if one did."""
    from .nvlink_fields import FI_DL, FI_LINK_IDS

    for fid, k in FI_DL.items():
        if k == kind and (fid, link) in got:
            return (fid, link)
    fid = FI_LINK_IDS.get((kind, link))
    if fid is not None and (fid, 0) in got:
        return (fid, 0)
    return None


def _field_value(v: Any) -> Optional[int]:
    """The integer in one nvmlFieldValue_t, or None where that field's own return code is not Success."""
    try:
        if int(v.nvmlReturn) != 0:
            return None
        return int(getattr(v.value, _VALUE_FIELDS.get(int(v.valueType), "ullVal")))
    except (AttributeError, TypeError, ValueError):
        return None


def _first_bit(masks: Any) -> Optional[int]:
    for word_index, word in enumerate(list(masks)):
        word = int(word)
        if word:
            return word_index * 64 + (word & -word).bit_length() - 1
    raise ValueError("empty node mask")


def read_snapshot(nvml: Any = None, sysfs_root: str = "/", hostname: Optional[str] = None) -> Snapshot:
    """Read one live snapshot; raises :class:`NvmlUnavailable` when NVML cannot start."""
    return NvmlReader(nvml, sysfs_root=sysfs_root, hostname=hostname).read()


# --- activity: what else uses the GPUs (copy tests' contention check, host-link readings) -------------

#: nvmlFieldValue ids of the NVLink data throughput counters (KiB, cumulative), summed over every link
#: when the scope is UINT_MAX (nvml.h: NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX / _RX).
NVLINK_THROUGHPUT_FIELDS = (138, 139)
ALL_LINKS_SCOPE = 0xFFFFFFFF
PCIE_UTIL_COUNTERS = {"tx": 0, "rx": 1}  # nvmlPcieUtilCounter_t: KB/s over NVML's own ~20 ms window


class ActivityReader:
    """Reads, per GPU index, what is using it now: compute processes, utilisation, PCIe and NVLink
    throughput, and the PCIe link's state and replay counter. Every value is ``(value, None)`` or
    ``(None, reason)``; nothing raises but :meth:`open` (:class:`NvmlUnavailable`).

    Used around copy tests (``p2ptop.bench.contention``), so it keeps NVML open between calls.
    """

    def __init__(self, nvml: Any = None):
        self.reader = NvmlReader(nvml, hostname="-")
        self._handles: dict[int, tuple[Any, Optional[str]]] = {}

    def open(self) -> None:
        self.reader.open()

    def close(self) -> None:
        self.reader.close()
        self._handles.clear()

    def _handle(self, index: int) -> tuple[Any, Optional[str]]:
        if index not in self._handles:
            self._handles[index] = self.reader.call("nvmlDeviceGetHandleByIndex", index)
        return self._handles[index]

    def _on(self, index: int, name: str, *args: Any) -> tuple[Any, Optional[str]]:
        h, why = self._handle(index)
        if why is not None:
            return None, why
        return self.reader.call(name, h, *args)

    def processes(self, index: int) -> tuple[Optional[list[tuple[int, Optional[int]]]], Optional[str]]:
        """[(pid, used GPU memory in bytes or None)] of the compute processes on the GPU."""
        v, why = self._on(index, "nvmlDeviceGetComputeRunningProcesses")
        if why is not None:
            return None, why
        out = []
        try:
            for p in v or []:
                used = getattr(p, "usedGpuMemory", None)
                out.append((int(p.pid), int(used) if isinstance(used, int) and used >= 0 else None))
        except (AttributeError, TypeError, ValueError) as e:
            return None, f"unexpected process list from NVML: {e}"
        return out, None

    def utilization(self, index: int) -> tuple[Optional[int], Optional[str]]:
        v, why = self._on(index, "nvmlDeviceGetUtilizationRates")
        if why is not None:
            return None, why
        try:
            return int(v.gpu), None
        except (AttributeError, TypeError, ValueError) as e:
            return None, f"unexpected utilisation from NVML: {e}"

    def pcie_throughput(self, index: int) -> tuple[Optional[dict[str, int]], Optional[str]]:
        """{"tx": KB/s, "rx": KB/s} as NVML measured over its last ~20 ms."""
        out = {}
        for key, counter in PCIE_UTIL_COUNTERS.items():
            v, why = self._on(index, "nvmlDeviceGetPcieThroughput", counter)
            if why is not None:
                return None, why
            try:
                out[key] = int(v)
            except (TypeError, ValueError) as e:
                return None, f"unexpected PCIe throughput from NVML: {e}"
        return out, None

    def nvlink_kib(self, index: int) -> tuple[Optional[tuple[int, int]], Optional[str]]:
        """(TX, RX) NVLink data counters in KiB since the driver loaded, all links summed."""
        fields = [(f, ALL_LINKS_SCOPE) for f in NVLINK_THROUGHPUT_FIELDS]
        v, why = self._on(index, "nvmlDeviceGetFieldValues", fields)
        if why is not None:
            return None, why
        try:
            values = list(v)
            out = []
            for fv in values[: len(fields)]:
                ret = int(getattr(fv, "nvmlReturn", 0))
                if ret != 0:
                    return None, f"NVML field {int(fv.fieldId)} answered error {ret}"
                out.append(int(fv.value.ullVal))
            if len(out) != 2:
                return None, "NVML returned fewer field values than asked"
        except (AttributeError, TypeError, ValueError) as e:
            return None, f"unexpected field values from NVML: {e}"
        return (out[0], out[1]), None

    def pcie_link(self, index: int) -> dict[str, tuple[Optional[int], Optional[str]]]:
        """Current and max PCIe generation and width, and the replay counter: name -> (value, why)."""
        out = {}
        for key, name in (("gen_cur", "nvmlDeviceGetCurrPcieLinkGeneration"), ("width_cur", "nvmlDeviceGetCurrPcieLinkWidth"),
                          ("gen_max", "nvmlDeviceGetMaxPcieLinkGeneration"), ("width_max", "nvmlDeviceGetMaxPcieLinkWidth"),
                          ("replay", "nvmlDeviceGetPcieReplayCounter")):
            v, why = self._on(index, name)
            try:
                out[key] = (int(v), None) if why is None else (None, why)
            except (TypeError, ValueError) as e:
                out[key] = (None, f"unexpected value from {name}: {e}")
        return out

    # -- Xid events (a GPU fault during a copy test makes it failing) --
    XID_EVENT = 0x8  # nvmlEventTypeXidCriticalError

    def xid_watch(self, indices: list[int]) -> tuple[Any, Optional[str]]:
        """An NVML event set registered for Xid errors on these GPUs, or (None, why)."""
        eset, why = self.reader.call("nvmlEventSetCreate")
        if why is not None:
            return None, why
        problems = []
        for i in indices:
            h, why = self._handle(i)
            if why is None:
                _, why = self.reader.call("nvmlDeviceRegisterEvents", h, self.XID_EVENT, eset)
            if why is not None:
                problems.append(f"GPU{i}: {why}")
        if len(problems) == len(indices):
            self.reader.call("nvmlEventSetFree", eset)
            return None, "; ".join(problems)
        return eset, ("; ".join(problems) or None)

    def xid_events(self, eset: Any, limit: int = 64) -> tuple[list[tuple[Optional[int], int]], Optional[str]]:
        """The Xid events pending on the set, without waiting: [(GPU index or None, Xid code)]."""
        out: list[tuple[Optional[int], int]] = []
        by_addr = {_addr(h): i for i, (h, why) in self._handles.items() if why is None}
        for _ in range(limit):
            data, why = self.reader.call("nvmlEventSetWait_v2", eset, 0)
            if why is not None:
                return out, None if "timeout" in why.lower() else why
            try:
                if int(data.eventType) & self.XID_EVENT:
                    out.append((by_addr.get(_addr(data.device)), int(data.eventData)))
            except (AttributeError, TypeError, ValueError) as e:
                return out, f"unexpected event data from NVML: {e}"
        return out, None

    def xid_close(self, eset: Any) -> None:
        if eset is not None:
            self.reader.call("nvmlEventSetFree", eset)


def _addr(handle: Any) -> Any:
    """A device handle comparable across calls: its pointer value (real bindings), or itself (the fake)."""
    try:
        return ctypes.cast(handle, ctypes.c_void_p).value
    except (TypeError, ctypes.ArgumentError):
        return handle
