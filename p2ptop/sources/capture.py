"""A stand-in for the pynvml module that answers from a capture of a real host.

A capture is what a real host printed: ``nvml_probe.json`` (NVML read with nvidia-ml-py) and,
where present, ``nvidia-smi-q.xml`` and ``nvidia-smi-topo-m.txt`` from the same host. The live
reader (:mod:`p2ptop.sources.nvml`) runs unchanged against it, so the tests exercise the real NVML
code without a GPU, and the ``h200x2-vm`` demo is built from it.

Values the capture did not record raise an NVML error whose text says so, never a guess.
Fault injection: ``FakeNvml(capture, faults={"nvmlDeviceGetName": "GPU_IS_LOST"})`` makes a call
raise the given NVML error (or ``"MISSING"``: the function is absent from the bindings); ``lost_gpus``
makes every call on those GPUs answer "GPU is lost".

Counting and timing: ``calls`` lists every call made (the benchmarks count calls per refresh from it);
``latency`` (a :class:`CallLatency`) makes each call cost as much as that function took on a real host,
spent as CPU time of the calling thread (a kernel ioctl is CPU time of the calling process), so CPU figures
measured against the fake include NVML's own cost, even on a busy machine. ``Capture.from_snapshot`` turns any snapshot (the 8- and 72-GPU demos) into a
capture the fake answers from.

NVML events: ``event_types`` (the supported mask; the capture does not record it) enables
nvmlEventSetCreate / nvmlDeviceRegisterEvents / nvmlEventSetWait_v2; ``inject_event`` delivers one.

Activity (what else uses the GPUs; the copy tests' contention check): by default the capture's own
answers (``nvidia-smi -q``'s process list, utilisation and PCIe TX/RX; NVLink throughput was not
captured). ``FakeNvml(capture, activity=Activity(...))`` or ``activity=scenario("busy_process", ...)``
replaces them with a SIMULATED scenario: busy processes, utilisation, rising NVLink/PCIe counters,
a PCIe link that trains low. Scenario figures are test inputs, not measurements.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import threading
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Callable, Optional, Union

ERRORS = {
    "UNINITIALIZED": (1, "Uninitialized"),
    "INVALID_ARGUMENT": (2, "Invalid Argument"),
    "NOT_SUPPORTED": (3, "Not Supported"),
    "NO_PERMISSION": (4, "Insufficient Permissions"),
    "DRIVER_NOT_LOADED": (9, "Driver Not Loaded"),
    "LIBRARY_NOT_FOUND": (12, "NVML Shared Library Not Found"),
    "TIMEOUT": (10, "Timeout"),
    "FUNCTION_NOT_FOUND": (13, "Function Not Found"),
    "TIMEOUT": (10, "Timeout"),
    "GPU_IS_LOST": (15, "GPU is lost"),
    "UNKNOWN": (999, "Unknown Error"),
    "NOT_CAPTURED": (1000, "not recorded in the capture"),
}


#: Field-value groups a host may or may not answer (FakeNvml ``fields``): "state" 165 and "pcie_replay" 94;
#: "totals" 38/45/52/59 (each counter summed over the GPU's links); "scoped" 161/162/163 and 166 with
#: scope = link; "link_ids" the per-link ids of links 0..11 (32..59, 96..119); "link_count" 91.
FIELD_GROUPS = ("state", "pcie_replay", "totals", "scoped", "link_ids", "link_count")
#: What the fake answers when a capture says nothing: the fields p2ptop used before this was known
FIELD_DEFAULTS: dict[str, Any] = {"state": True, "pcie_replay": True, "totals": True, "scoped": False,
                                  "link_ids": False, "link_count": False, "dl_crc": "sum"}
#: per-link field ids (nvml.h NVML_FI_DEV_NVLINK_{CRC_FLIT,CRC_DATA,REPLAY,RECOVERY}_ERROR_COUNT_L0..L11) -> (probe key, link)
LINK_ID_FIELDS: dict[int, tuple[str, int]] = {}
for _key, _low, _high in (("crc_err", 32, 96), ("crc_data_err", 39, 102), ("replay_err", 46, 108), ("recovery_err", 53, 114)):
    for _l in range(6):
        LINK_ID_FIELDS[_low + _l] = (_key, _l)
        LINK_ID_FIELDS[_high + _l] = (_key, 6 + _l)


class NVMLError(Exception):
    """Mirrors pynvml.NVMLError: ``value`` is the NVML return code, str() its text."""

    def __init__(self, value: int, text: Optional[str] = None):
        super().__init__(value)
        self.value = value
        self._text = text or next((t for c, t in ERRORS.values() if c == value), f"NVML error {value}")

    def __str__(self) -> str:
        return self._text


def _err(name: str) -> NVMLError:
    code, text = ERRORS[name]
    return NVMLError(code, text)


class BindingTrap(RuntimeError):
    """Raised where real bindings would crash the process (a struct passed without byref)."""


class _FabricInfo(ctypes.Structure):
    _fields_ = [
        ("version", ctypes.c_uint),
        ("clusterUuid", ctypes.c_uint8 * 16),
        ("status", ctypes.c_uint),
        ("cliqueId", ctypes.c_uint32),
        ("state", ctypes.c_uint),
        ("healthMask", ctypes.c_uint32),
    ]


class Capture:
    """The data of one capture folder, parsed."""

    def __init__(self, probe: dict[str, Any], smi: Optional[dict[int, dict[str, Any]]] = None,
                 topo_numa: Optional[dict[int, Optional[int]]] = None, hostname: Optional[str] = None,
                 fields: Optional[dict[str, Any]] = None):
        self.probe = probe
        self.smi = smi or {}
        self.topo_numa = topo_numa or {}
        self.hostname = hostname
        #: which nvmlDeviceGetFieldValues groups the host answers (FIELD_GROUPS; None: not known), and where
        #: that comes from; a capture folder's field_values.json, else the fake's defaults
        self.fields: dict[str, Any] = dict(fields or {})

    @classmethod
    def load(cls, folder: str) -> "Capture":
        with open(os.path.join(folder, "nvml_probe.json"), encoding="utf-8") as f:
            probe = json.load(f)
        smi: dict[int, dict[str, Any]] = {}
        xml_path = os.path.join(folder, "nvidia-smi-q.xml")
        if os.path.exists(xml_path):
            smi = parse_smi_xml(xml_path)
        numa: dict[int, Optional[int]] = {}
        topo_path = os.path.join(folder, "nvidia-smi-topo-m.txt")
        if os.path.exists(topo_path):
            numa = parse_topo_numa(topo_path)
        fields: dict[str, Any] = {}
        model_path = os.path.join(folder, "field_values.json")
        if os.path.exists(model_path):  # what the host answered through field values (modelled; see its origin)
            with open(model_path, encoding="utf-8") as f:
                model = json.load(f)
            fields = dict(model.get("answers", {}), origin=model.get("origin", model_path))
            for key, per_gpu in model.get("link_counters", {}).items():
                for gpu, values in zip(probe.get("gpus", []), per_gpu):
                    for entry, value in zip(gpu.get("links", []), values):
                        entry.setdefault(key, value)
            for gpu in probe.get("gpus", []):  # past the last link: Invalid Argument, as the other counters there
                for entry in gpu.get("links", []):
                    if isinstance(entry.get("state"), str):
                        for key in model.get("link_counters", {}):
                            entry.setdefault(key, entry["state"])
        return cls(probe, smi, numa, hostname=os.path.basename(os.path.normpath(folder)), fields=fields)

    @classmethod
    def from_snapshot(cls, snap: Any) -> "Capture":
        """A capture that answers what ``snap`` holds (a demo's GPUs, links and pairs), so that the fake
        can stand in for NVML at any size. Values the snapshot lacks answer "not recorded", as in a capture."""
        from ..model import ANCESTOR_NAMES, FABRIC_STATE_NAMES, NVLINK_REMOTE_TYPES, P2P_STATUS_NAMES

        rev = lambda table, v: next((k for k, n in table.items() if n == v), None)  # noqa: E731
        gpus, smi, numa = [], {}, {}
        for g in snap.gpus:
            links = []
            for nl in g.nvlinks:
                entry: dict[str, Any] = {"link": nl.link}
                entry["state"] = 1 if nl.state == "active" else 0 if nl.state == "inactive" else "ERR Unknown Error"
                for key, v in (("version", nl.version), ("remote_bus", nl.remote_pci_bus_id),
                               ("remote_type", rev(NVLINK_REMOTE_TYPES, nl.remote_type)),
                               ("p2p_cap", None if nl.p2p_supported is None else int(nl.p2p_supported))):
                    entry[key] = v if v is not None else "ERR Not Supported"
                for ours, theirs in (("replay", "replay_err"), ("recovery", "recovery_err"),
                                     ("crc_flit", "crc_err"), ("crc_data", "crc_data_err")):
                    if nl.counters.get(ours) is not None:
                        entry[theirs] = nl.counters[ours]
                links.append(entry)
            fab = None
            if g.fabric.state is not None:
                fab = {"state": rev(FABRIC_STATE_NAMES, g.fabric.state) or 0, "status": 0, "clique": g.fabric.clique_id or 0}
            cc = g.compute_capability
            gpus.append({"index": g.index, "name": g.name, "bus": g.pci_bus_id or f"00000000:{g.index:02X}:00.0",
                         "links": links, "fabric": fab, "compute_capability": cc,
                         "pcie_replay": g.pcie_replay_counter if g.pcie_replay_counter is not None else "ERR Not Supported",
                         "cpu_affinity": [0xFFFF]})
            smi[g.index] = {"uuid": g.uuid or f"GPU-{g.index:08d}", "serial": g.serial, "brand": g.brand or "NVIDIA",
                            "architecture": g.architecture, "memory_total_mib": g.memory_total_mib,
                            "pcie_gen_cur": g.pcie_gen_cur, "pcie_gen_max": g.pcie_gen_max,
                            "pcie_width_cur": g.pcie_width_cur, "pcie_width_max": g.pcie_width_max,
                            "utilization_gpu": g.utilization_gpu if g.utilization_gpu is not None else 0,
                            "virtualization_mode": "None", "mig_mode": g.mig_mode or "Disabled"}
            numa[g.index] = g.numa_node
        pairs = []
        for p in snap.pairs:
            entry = {"a": p.a, "b": p.b, "ancestor": rev(ANCESTOR_NAMES, p.ancestor) if p.ancestor else "ERR Not Supported"}
            for cap in ("read", "write", "nvlink", "atomics", "pci"):
                code = rev(P2P_STATUS_NAMES, p.p2p.get(cap))
                entry[cap] = code if code is not None else "ERR Not Supported"
            pairs.append(entry)
        cuda = snap.cuda_driver_version or "12.0"
        major, _, minor = cuda.partition(".")
        probe = {"driver": snap.driver_version or "N/A", "cuda": int(major) * 1000 + int(minor or 0) * 10,
                 "gpus": gpus, "pairs": pairs}
        if snap.cc_mode in ("on", "devtools", "off"):
            probe["cc_state"] = {"ccFeature": 0 if snap.cc_mode == "off" else 1, "devToolsMode": int(snap.cc_mode == "devtools")}
        return cls(probe, smi, numa, hostname=snap.source.hostname)


class CallLatency:
    """How long each NVML function took on a real host (seconds per call), with where the figures came from.

    ``per_call`` maps function names to seconds; others take ``default``. The file format
    (benchmarks/data/nvml-latency-*.json) is ``{"origin": ..., "default_s": x, "per_call_s": {...}}``, and
    optionally ``"field_values": {...}``: what a nvmlDeviceGetFieldValues call costs by the fields it asks,
    where a host was measured so (:meth:`field_values_cost`); without it the call costs its per-call figure."""

    def __init__(self, default_s: float, per_call_s: Optional[dict[str, float]] = None, origin: str = "",
                 field_values: Optional[dict[str, Any]] = None):
        self.default_s = float(default_s)
        self.per_call_s = dict(per_call_s or {})
        self.origin = origin
        self.field_values = dict(field_values or {})

    @classmethod
    def load(cls, path: str) -> "CallLatency":
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        try:
            return cls(data["default_s"], data.get("per_call_s"), data.get("origin", path), data.get("field_values"))
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"{path}: not an NVML latency table ({e})") from None

    def of(self, name: str) -> float:
        return self.per_call_s.get(name, self.default_s)

    def field_values_cost(self, values: list) -> float:
        """Seconds a nvmlDeviceGetFieldValues call that returned ``values`` costs, by the table's
        ``field_values`` model: a field that did not answer costs ``unanswered_s``; ``group_s`` fields (e.g. the
        link states, 165) cost their figure once a call however many links they ask; ``each_s`` fields (e.g. the
        PCIe replays, 94) their figure each time asked; ``per_link_s`` fields (the scoped NVLink counters 161-163)
        one query a link, whichever of them it asks; any other answered field ``default_field_s``."""
        fv = self.field_values
        groups, each, per_link = fv.get("group_s", {}), fv.get("each_s", {}), fv.get("per_link_s", {})
        cost, seen_groups, seen_links = 0.0, set(), set()
        for v in values:
            fid = str(v.fieldId)
            if v.nvmlReturn != 0:
                cost += fv.get("unanswered_s", 0.0)
            elif fid in groups:
                if fid not in seen_groups:
                    seen_groups.add(fid)
                    cost += groups[fid]
            elif fid in per_link:
                if v.scopeId not in seen_links:
                    seen_links.add(v.scopeId)
                    cost += per_link[fid]
            else:
                cost += each.get(fid, fv.get("default_field_s", 0.0))
        return cost


class _EventSet:
    """An NVML event set of the fake: registrations and pending events, waited on with a condition."""

    def __init__(self) -> None:
        self.registered: dict[int, int] = {}
        self.pending: list[SimpleNamespace] = []
        self.cond = threading.Condition()
        self.freed = False


def parse_smi_xml(path: str) -> dict[int, dict[str, Any]]:
    """The per-GPU values of ``nvidia-smi -q -x`` that NVML calls would give, keyed by GPU order."""
    root = ET.parse(path).getroot()
    out: dict[int, dict[str, Any]] = {}
    for i, g in enumerate(root.findall("gpu")):
        def t(p: str) -> Optional[str]:
            el = g.find(p)
            return el.text.strip() if el is not None and el.text and el.text.strip() not in ("N/A", "") else None

        def num(p: str) -> Optional[int]:
            v = t(p)
            m = re.match(r"(\d+)", v or "")
            return int(m.group(1)) if m else None

        out[i] = {
            "name": t("product_name"),
            "uuid": t("uuid"),
            "serial": t("serial"),
            "brand": t("product_brand"),
            "architecture": t("product_architecture"),
            "memory_total_mib": num("fb_memory_usage/total"),
            "pcie_gen_cur": num("pci/pci_gpu_link_info/pcie_gen/current_link_gen"),
            "pcie_gen_max": num("pci/pci_gpu_link_info/pcie_gen/max_link_gen"),
            "pcie_width_cur": num("pci/pci_gpu_link_info/link_widths/current_link_width"),
            "pcie_width_max": num("pci/pci_gpu_link_info/link_widths/max_link_width"),
            "utilization_gpu": num("utilization/gpu_util"),
            "virtualization_mode": t("gpu_virtualization_mode/virtualization_mode"),
            "mig_mode": t("mig_mode/current_mig"),
            "driver_version": (root.findtext("driver_version") or "").strip() or None,
            "pcie_tx_kbps": num("pci/tx_util"),
            "pcie_rx_kbps": num("pci/rx_util"),
            "processes": [
                (int(p.findtext("pid") or 0), (int(re.match(r"(\d+)", p.findtext("used_memory") or "").group(1)) << 20)
                 if re.match(r"(\d+)", p.findtext("used_memory") or "") else None)
                for p in g.findall("processes/process_info")
            ] if g.find("processes") is not None else None,
        }
    return out


def parse_topo_numa(path: str) -> dict[int, Optional[int]]:
    """The 'NUMA Affinity' column of ``nvidia-smi topo -m``."""
    out: dict[int, Optional[int]] = {}
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    if not lines:
        return out
    header = [c.strip() for c in lines[0].split("\t")]
    if "NUMA Affinity" not in header:
        return out
    col = header.index("NUMA Affinity")
    for line in lines[1:]:
        cells = line.split("\t")
        m = re.match(r"GPU(\d+)$", cells[0].strip())
        if not m or len(cells) <= col:
            continue
        v = cells[col].strip()
        out[int(m.group(1))] = int(v) if v.isdigit() else None
    return out


_BRAND_CODES = {"NVIDIA": 14, "TESLA": 2, "GEFORCE": 5, "QUADRO": 1, "TITAN": 6, "NVIDIA RTX": 13}
_ARCH_CODES = {"Kepler": 2, "Maxwell": 3, "Pascal": 4, "Volta": 5, "Turing": 6, "Ampere": 7, "Ada Lovelace": 8, "Ada": 8, "Hopper": 9, "Blackwell": 10}
_VIRT_CODES = {"None": 0, "Pass-Through": 1, "VGPU": 2, "Host VGPU": 3, "Host VSGA": 4}


Reading = Union[int, tuple, Callable[[], Any]]  # a fixed answer, or a function asked at each call


@dataclass
class Activity:
    """A SIMULATED picture of what uses the GPUs, for tests (per GPU index).

    ``nvlink_gbps``/``pcie_count_gbps`` make counters rise at that rate from the first read;
    ``pcie_link``: (gen, width) or a function giving it at each read (a link that trains up under load);
    ``replay``: the PCIe replay counter, or a function.
    """

    processes: dict[int, list[tuple[int, Optional[int]]]] = field(default_factory=dict)  # gpu -> [(pid, bytes)]
    utilization: dict[int, Reading] = field(default_factory=dict)
    pcie_kbps: dict[int, tuple[int, int]] = field(default_factory=dict)  # (tx, rx) KB/s
    nvlink_gbps: dict[int, tuple[float, float]] = field(default_factory=dict)  # (tx, rx) GB/s, counters rising
    pcie_link: dict[int, Reading] = field(default_factory=dict)
    replay: dict[int, Reading] = field(default_factory=dict)
    xids: list[tuple[int, int]] = field(default_factory=list)  # (gpu, Xid code) delivered to event sets, in order


def scenario(name: str, gpus: tuple[int, ...] = (0,), pid: Optional[int] = None) -> Activity:
    """Named SIMULATED scenarios. ``pid``: the busy process (default: this process, so /proc names it)."""
    pid = os.getpid() if pid is None else pid
    if name == "idle":
        return Activity(processes={g: [] for g in gpus}, utilization={g: 0 for g in gpus},
                        pcie_kbps={g: (1027, 548) for g in gpus}, nvlink_gbps={g: (0.0, 0.0) for g in gpus})
    if name == "busy_process":  # a process holding memory on the GPU, utilisation low (between steps)
        a = scenario("idle", gpus, pid)
        a.processes = {g: ([(pid, 874 << 20)] if g == gpus[0] else []) for g in gpus}
        return a
    if name == "matmul":  # as seen on the H100 with a bf16 matmul loop: the process, 100 %, PCIe ~8 MB/s
        a = scenario("busy_process", gpus, pid)
        a.utilization = {g: (100 if g == gpus[0] else 0) for g in gpus}
        a.pcie_kbps = {g: ((8800, 7400) if g == gpus[0] else (1027, 548)) for g in gpus}
        return a
    if name == "nvlink_traffic":  # an all-reduce elsewhere: no process of ours, NVLink counters rising fast
        a = scenario("idle", gpus, pid)
        a.nvlink_gbps = {g: (150.0, 150.0) for g in gpus}
        return a
    if name == "pcie_traffic":  # data loading: PCIe busy, NVML's PCIe throughput high
        a = scenario("idle", gpus, pid)
        a.pcie_kbps = {g: (20_000_000, 3_000_000) for g in gpus}
        return a
    raise ValueError(f"unknown scenario {name!r}; known: idle, busy_process, matmul, nvlink_traffic, pcie_traffic")


def _ask(reading: Reading) -> Any:
    return reading() if callable(reading) else reading


class FakeNvml:
    """A module-like object with pynvml's function names, answering from a :class:`Capture`."""

    NVMLError = NVMLError
    c_nvmlGpuFabricInfoV_t = _FabricInfo

    def __init__(self, capture: Capture, faults: Optional[dict[str, str]] = None, init_error: Optional[str] = None,
                 activity: Optional[Activity] = None,
                 latency: Optional[CallLatency] = None, event_types: Optional[int] = None,
                 fields: Optional[dict[str, Any]] = None):
        self.capture = capture
        #: field-value groups answered (FIELD_GROUPS): the fake's defaults, then the capture's model, then ``fields``;
        #: a group the capture marks None (not known on that host) does not answer unless switched on here
        merged = dict(FIELD_DEFAULTS)
        merged.update({k: v for k, v in capture.fields.items() if k in FIELD_GROUPS or k == "dl_crc"})
        merged.update(fields or {})
        self.fields = {k: (bool(v) if k in FIELD_GROUPS else v) for k, v in merged.items()}
        self.activity = activity
        self._t0: Optional[float] = None
        self.faults = dict(faults or {})
        self.init_error = init_error
        self.calls: list[str] = []
        self.field_counts: list[int] = []  # fields asked by each nvmlDeviceGetFieldValues call, in order
        self.latency = latency
        self.event_types = event_types
        self.lost_gpus: set[int] = set()
        self._event_sets: list[_EventSet] = []
        self._open = False
        for name, (code, _text) in ERRORS.items():
            cls_name = "NVMLError_" + "".join(w.capitalize() for w in name.split("_"))
            setattr(self, cls_name, type(cls_name, (NVMLError,), {}))

    # Faults and missing functions are resolved at attribute lookup, like the real module.
    def __getattribute__(self, name: str) -> Any:
        if name.startswith("nvml"):
            faults = object.__getattribute__(self, "faults")
            fault = faults.get(name)
            if fault == "MISSING":
                raise AttributeError(name)
            fn = object.__getattribute__(self, "_" + name)
            calls = object.__getattribute__(self, "calls")
            latency = object.__getattribute__(self, "latency")
            lost = object.__getattribute__(self, "lost_gpus")

            def wrapped(*args: Any) -> Any:
                calls.append(name)
                # the call's recorded time, spent as CPU of this thread (a shared machine's other work does not shorten it)
                start = time.thread_time()
                end = start + latency.of(name) if latency is not None and name != "nvmlEventSetWait_v2" else 0.0
                try:
                    if name not in ("nvmlInit", "nvmlShutdown") and not object.__getattribute__(self, "_open"):
                        raise _err("UNINITIALIZED")
                    if fault is not None:
                        raise _err(fault)
                    if lost and name.startswith("nvmlDevice") and args and args[0] in lost:
                        raise _err("GPU_IS_LOST")
                    out = fn(*args)
                    if latency is not None and latency.field_values and name == "nvmlDeviceGetFieldValues":
                        end = start + latency.field_values_cost(out)  # what these fields cost on that host
                    return out
                finally:
                    while time.thread_time() < end:  # spent as CPU, as the driver's ioctl is
                        pass

            return wrapped
        return object.__getattribute__(self, name)

    # -- helpers --
    @property
    def _gpus(self) -> list[dict[str, Any]]:
        return self.capture.probe.get("gpus", [])

    def _gpu(self, h: Any) -> dict[str, Any]:
        return self._gpus[h]

    def _smi(self, h: Any, key: str) -> Any:
        v = self.capture.smi.get(h, {}).get(key)
        if v is None:
            raise _err("NOT_CAPTURED")
        return v

    @staticmethod
    def _probe_value(v: Any) -> Any:
        if isinstance(v, str) and v.startswith("ERR "):
            text = v[4:]
            code = next((c for c, t in ERRORS.values() if t == text), 999)
            raise NVMLError(code, text)
        return v

    def _link(self, h: Any, link: int) -> dict[str, Any]:
        links = self._gpu(h).get("links", [])
        for entry in links:
            if entry.get("link") == link:
                return entry
        raise _err("INVALID_ARGUMENT")

    # -- the NVML surface p2ptop uses --
    def _nvmlInit(self) -> None:
        if self.init_error:
            raise _err(self.init_error)
        self._inits = getattr(self, "_inits", 0) + 1  # reference-counted, as NVML's own
        self._open = True

    def _nvmlShutdown(self) -> None:
        self._inits = max(0, getattr(self, "_inits", 0) - 1)
        self._open = self._inits > 0

    def _nvmlSystemGetDriverVersion(self) -> str:
        return self.capture.probe["driver"]

    def _nvmlSystemGetCudaDriverVersion(self) -> int:
        return int(self.capture.probe["cuda"])

    def _nvmlSystemGetNVMLVersion(self) -> str:
        v = self.capture.probe.get("nvml_version")
        if v is None:
            raise _err("NOT_CAPTURED")
        return v

    def _nvmlSystemGetConfComputeState(self) -> Any:
        v = self.capture.probe.get("cc_state")  # {"ccFeature": 0|1, "devToolsMode": 0|1, "environment": N}
        if not isinstance(v, dict):
            raise _err("NOT_CAPTURED")
        return SimpleNamespace(ccFeature=v.get("ccFeature"), devToolsMode=v.get("devToolsMode", 0), environment=v.get("environment", 0))

    def _nvmlDeviceGetCount(self) -> int:
        return len(self._gpus)

    def _nvmlDeviceGetHandleByIndex(self, i: int) -> int:
        if not 0 <= i < len(self._gpus):
            raise _err("INVALID_ARGUMENT")
        return i

    def _nvmlDeviceGetName(self, h: int) -> str:
        return self._gpu(h)["name"]

    def _nvmlDeviceGetUUID(self, h: int) -> str:
        return self._smi(h, "uuid")

    def _nvmlDeviceGetSerial(self, h: int) -> str:
        return self._smi(h, "serial")

    def _nvmlDeviceGetPciInfo(self, h: int) -> Any:
        return SimpleNamespace(busId=self._gpu(h)["bus"].encode())

    def _nvmlDeviceGetBrand(self, h: int) -> int:
        return _BRAND_CODES.get(self._smi(h, "brand").upper(), 0)

    def _nvmlDeviceGetArchitecture(self, h: int) -> int:
        arch = self._smi(h, "architecture")
        if arch not in _ARCH_CODES:
            raise _err("NOT_CAPTURED")
        return _ARCH_CODES[arch]

    def _nvmlDeviceGetMemoryInfo(self, h: int) -> Any:
        return SimpleNamespace(total=self._smi(h, "memory_total_mib") * 1024 * 1024)

    def _nvmlDeviceGetCudaComputeCapability(self, h: int) -> tuple[int, int]:
        cc = self._gpu(h).get("compute_capability")
        if cc is None:
            raise _err("NOT_CAPTURED")
        major, minor = str(cc).split(".")
        return int(major), int(minor)

    def _link_now(self, h: int) -> Optional[tuple[int, int]]:
        act = self.activity
        return tuple(_ask(act.pcie_link[h])) if act is not None and h in act.pcie_link else None

    def _nvmlDeviceGetCurrPcieLinkGeneration(self, h: int) -> int:
        now = self._link_now(h)
        if now is not None:
            return now[0]
        return self._smi(h, "pcie_gen_cur")

    def _nvmlDeviceGetMaxPcieLinkGeneration(self, h: int) -> int:
        return self._smi(h, "pcie_gen_max")

    def _nvmlDeviceGetCurrPcieLinkWidth(self, h: int) -> int:
        now = self._link_now(h)
        if now is not None:
            return now[1]
        return self._smi(h, "pcie_width_cur")

    def _nvmlDeviceGetMaxPcieLinkWidth(self, h: int) -> int:
        return self._smi(h, "pcie_width_max")

    def _nvmlDeviceGetPcieReplayCounter(self, h: int) -> int:
        if self.activity is not None and h in self.activity.replay:
            return int(_ask(self.activity.replay[h]))
        return self._probe_value(self._gpu(h)["pcie_replay"])

    def _nvmlDeviceGetUtilizationRates(self, h: int) -> Any:
        if self.activity is not None and h in self.activity.utilization:
            return SimpleNamespace(gpu=int(_ask(self.activity.utilization[h])), memory=0)
        return SimpleNamespace(gpu=self._smi(h, "utilization_gpu"), memory=0)

    # -- activity (contention check) --
    def _nvmlDeviceGetComputeRunningProcesses(self, h: int) -> list[Any]:
        if self.activity is not None and h in self.activity.processes:
            procs = self.activity.processes[h]
        else:
            procs = self.capture.smi.get(h, {}).get("processes")
            if procs is None:
                raise _err("NOT_CAPTURED")
        return [SimpleNamespace(pid=pid, usedGpuMemory=used) for pid, used in procs]

    def _nvmlDeviceGetPcieThroughput(self, h: int, counter: int) -> int:
        if counter not in (0, 1):
            raise _err("INVALID_ARGUMENT")
        if self.activity is not None and h in self.activity.pcie_kbps:
            return int(self.activity.pcie_kbps[h][counter])
        return self._smi(h, "pcie_tx_kbps" if counter == 0 else "pcie_rx_kbps")

    def _nvmlDeviceGetCpuAffinity(self, h: int, size: int) -> list[int]:
        masks = list(self._gpu(h)["cpu_affinity"])
        return (masks + [0] * size)[:size]

    def _nvmlDeviceGetNumaNodeId(self, h: int) -> int:
        v = self._gpu(h).get("numa_node", "ERR Not Supported")  # the capture's README: Not Supported
        return self._probe_value(v)

    def _nvmlDeviceGetMemoryAffinity(self, h: int, size: int, scope: int) -> list[int]:
        node = self.capture.topo_numa.get(h)
        if node is None:
            raise _err("NOT_CAPTURED")
        masks = [0] * max(size, node // 64 + 1)
        masks[node // 64] |= 1 << (node % 64)
        return masks[:size]

    def _nvmlDeviceGetVirtualizationMode(self, h: int) -> int:
        return _VIRT_CODES.get(self._smi(h, "virtualization_mode"), 0)

    def _nvmlDeviceGetMigMode(self, h: int) -> list[int]:
        mode = self._smi(h, "mig_mode")
        v = 1 if mode == "Enabled" else 0
        return [v, v]

    def _nvmlDeviceGetGpuFabricInfoV(self, h: int, ref: Any) -> int:
        info = getattr(ref, "_obj", None)
        if not isinstance(info, _FabricInfo):
            raise BindingTrap("a struct was passed without byref(): the real bindings would segfault")
        fab = self._gpu(h).get("fabric")
        if not fab:
            raise _err("NOT_CAPTURED")
        info.state = self._probe_value(fab["state"])
        info.status = self._probe_value(fab["status"])
        info.cliqueId = self._probe_value(fab.get("clique", 0))
        return 0

    def _nvmlDeviceGetNvLinkState(self, h: int, link: int) -> int:
        return self._probe_value(self._link(h, link)["state"])

    def _nvmlDeviceGetNvLinkVersion(self, h: int, link: int) -> int:
        return self._probe_value(self._link(h, link)["version"])

    def _nvmlDeviceGetNvLinkRemotePciInfo(self, h: int, link: int) -> Any:
        return SimpleNamespace(busId=self._probe_value(self._link(h, link)["remote_bus"]).encode())

    def _nvmlDeviceGetNvLinkRemoteDeviceType(self, h: int, link: int) -> int:
        return self._probe_value(self._link(h, link)["remote_type"])

    def _nvmlDeviceGetNvLinkCapability(self, h: int, link: int, cap: int) -> int:
        return self._probe_value(self._link(h, link)["p2p_cap"])

    def _nvmlDeviceGetNvLinkErrorCounter(self, h: int, link: int, counter: int) -> int:
        key = {0: "replay_err", 1: "recovery_err", 2: "crc_err", 3: "crc_data_err"}.get(counter)
        entry = self._link(h, link)
        if key not in entry:
            raise _err("NOT_CAPTURED")
        return self._probe_value(entry[key])

    #: field ids of nvmlDeviceGetFieldValues the fake answers (values from nvml.h / nvidia-ml-py 13.x)
    _TOTAL_FIELDS = {38: "crc_err", 45: "crc_data_err", 52: "replay_err", 59: "recovery_err"}
    _SCOPED_FIELDS = {161: "replay_err", 162: "recovery_err"}  # NVML_FI_DEV_NVLINK_ERROR_DL_*, scope = link
    _LINK_SCOPED = (161, 162, 163, 165, 166)

    def _links_valid(self, h: int) -> list[dict[str, Any]]:
        return [e for e in self._gpu(h).get("links", []) if not isinstance(e.get("state"), str)]

    def _link_counter(self, h: int, link: int, key: str) -> int:
        entry = self._link(h, link)
        if key not in entry:
            raise _err("NOT_CAPTURED")
        return int(self._probe_value(entry[key]))

    def _field(self, h: int, field_id: int, scope: int) -> tuple[int, Any]:
        """(nvmlReturn, value) of one field."""
        on = self.fields
        if field_id in (138, 139):  # NVLink data throughput TX/RX (KiB, cumulative): a SIMULATED scenario's rates
            rates = self.activity.nvlink_gbps.get(h) if self.activity is not None else None
            if rates is None:
                return ERRORS["NOT_CAPTURED"][0], 0
            now = time.monotonic()
            if self._t0 is None:
                self._t0 = now
            return 0, int(1_000_000 + rates[0 if field_id == 138 else 1] * 1e9 / 1024 * (now - self._t0))
        not_supported = ERRORS["NOT_SUPPORTED"][0]
        try:
            if field_id == 165:  # NVML_FI_DEV_NVLINK_GET_STATE, scope = link
                return (0, int(self._probe_value(self._link(h, scope)["state"]))) if on["state"] else (not_supported, 0)
            if field_id == 94:  # NVML_FI_DEV_PCIE_REPLAY_COUNTER
                return (0, int(self._probe_value(self._gpu(h)["pcie_replay"]))) if on["pcie_replay"] else (not_supported, 0)
            if field_id == 91:  # NVML_FI_DEV_NVLINK_LINK_COUNT
                if not on["link_count"]:
                    return not_supported, 0
                return 0, len(self._links_valid(h))
            if field_id == 166:  # NVML_FI_DEV_NVLINK_GET_VERSION, scope = link
                return (0, int(self._probe_value(self._link(h, scope)["version"]))) if on["scoped"] else (not_supported, 0)
            if field_id in self._SCOPED_FIELDS or field_id == 163:
                if not on["scoped"]:
                    return not_supported, 0
                if field_id in self._SCOPED_FIELDS:
                    return 0, self._link_counter(h, scope, self._SCOPED_FIELDS[field_id])
                # NVML_FI_DEV_NVLINK_ERROR_DL_CRC: nvml.h says "NVLink CRC Error Counter", not which CRC;
                # the fake counts what ``fields["dl_crc"]`` says (flit, data or their sum)
                kind = on.get("dl_crc", "sum")
                flit = self._link_counter(h, scope, "crc_err") if kind in ("flit", "sum") else 0
                data = self._link_counter(h, scope, "crc_data_err") if kind in ("data", "sum") else 0
                return 0, flit + data
            link_id = LINK_ID_FIELDS.get(field_id)
            if link_id is not None:  # NVML_FI_DEV_NVLINK_*_ERROR_COUNT_L0..L11
                if not on["link_ids"]:
                    return not_supported, 0
                key, link = link_id
                return 0, self._link_counter(h, link, key)
            key = self._TOTAL_FIELDS.get(field_id)
            if key is None:
                return not_supported, 0
            if not on["totals"]:
                return not_supported, 0  # as the 2 x H200 host answered (field_values.json)
            # the driver's total over the GPU's links; links whose counter is Not Supported add nothing
            values = [e[key] for e in self._gpu(h).get("links", []) if key in e]
            values = [int(v) for v in values if not (isinstance(v, str) and v.startswith("ERR "))]
            if not values:
                return ERRORS["NOT_CAPTURED"][0], 0
            return 0, sum(values)
        except NVMLError as e:
            return e.value, 0

    def _nvmlDeviceGetFieldValues(self, h: int, field_ids: list) -> list:
        self.field_counts.append(len(field_ids))
        ids = {f[0] if isinstance(f, tuple) else f for f in field_ids}
        if ids and ids <= {138, 139} and (self.activity is None or h not in self.activity.nvlink_gbps):
            raise _err("NOT_CAPTURED")  # NVLink throughput was not captured; only a scenario answers it
        nlinks = len(self._links_valid(h))
        for f in field_ids:  # a link scope past the GPU's links fails the whole call, as seen on one H200
            if isinstance(f, tuple) and f[0] in self._LINK_SCOPED and f[1] != 0xFFFFFFFF and not 0 <= f[1] < nlinks:
                raise _err("INVALID_ARGUMENT")  # (no NVLink: probe2-h200x1.log, "FV state 165 per link: Invalid Argument")
        out = []
        for f in field_ids:
            fid, scope = f if isinstance(f, tuple) else (f, 0)
            ret, value = self._field(h, fid, scope)
            out.append(SimpleNamespace(fieldId=fid, scopeId=scope, nvmlReturn=ret, valueType=3,
                                       value=SimpleNamespace(ullVal=value, uiVal=value)))
        return out

    # -- NVML events --
    def _nvmlDeviceGetSupportedEventTypes(self, h: int) -> int:
        if self.event_types is None:
            raise _err("NOT_CAPTURED")
        return self.event_types

    def _nvmlEventSetCreate(self) -> _EventSet:
        es = _EventSet()
        self._event_sets.append(es)
        return es

    def _nvmlDeviceRegisterEvents(self, h: int, types: int, es: _EventSet) -> None:
        supported = self.event_types
        if supported is None and self.activity is not None:
            supported = 0x8  # a scenario delivers Xid critical errors
        if supported is None or types & ~supported:
            raise _err("NOT_SUPPORTED")
        with es.cond:
            es.registered[h] = es.registered.get(h, 0) | types
            for gpu, code in (self.activity.xids if self.activity is not None else []):
                if gpu == h and types & 0x8:  # a scenario's Xids reach every set registered on that GPU, in order
                    es.pending.append(SimpleNamespace(device=gpu, eventType=0x8, eventData=code,
                                                      gpuInstanceId=0xFFFFFFFF, computeInstanceId=0xFFFFFFFF))
            es.cond.notify_all()

    def _nvmlEventSetWait_v2(self, es: _EventSet, timeout_ms: int) -> Any:
        with es.cond:
            if not es.pending:
                es.cond.wait(timeout_ms / 1000.0)
            if not es.pending or es.freed:
                raise _err("TIMEOUT")
            return es.pending.pop(0)

    def _nvmlEventSetFree(self, es: _EventSet) -> None:
        with es.cond:
            es.freed = True
            es.cond.notify_all()
        if es in self._event_sets:
            self._event_sets.remove(es)

    def inject_event(self, gpu: int, event_type: int, data: int = 0) -> int:
        """Deliver an event to every set registered for it on ``gpu``; returns how many sets got it."""
        n = 0
        for es in list(self._event_sets):
            with es.cond:
                if es.registered.get(gpu, 0) & event_type:
                    es.pending.append(SimpleNamespace(device=gpu, eventType=event_type, eventData=data,
                                                      gpuInstanceId=0xFFFFFFFF, computeInstanceId=0xFFFFFFFF))
                    es.cond.notify_all()
                    n += 1
        return n

    def _pair(self, a: int, b: int) -> dict[str, Any]:
        for p in self.capture.probe.get("pairs", []):
            if p["a"] == a and p["b"] == b:
                return p
        raise _err("NOT_CAPTURED")

    def _nvmlDeviceGetTopologyCommonAncestor(self, ha: int, hb: int) -> int:
        return self._probe_value(self._pair(ha, hb)["ancestor"])

    def _nvmlDeviceGetP2PStatus(self, ha: int, hb: int, index: Any) -> int:
        if not isinstance(index, int):  # the nvidia-ml-py 13.x tuple trap
            raise ctypes.ArgumentError("argument 3: TypeError: wrong type")
        key = {0: "read", 1: "write", 2: "nvlink", 3: "atomics", 4: "pci"}[index]
        return self._probe_value(self._pair(ha, hb)[key])


#: The NVML functions the activity reader (copy tests' contention check) uses beyond the snapshot's.
ACTIVITY_FUNCTIONS = ["nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetFieldValues", "nvmlDeviceGetPcieThroughput",
                      "nvmlEventSetCreate", "nvmlDeviceRegisterEvents", "nvmlEventSetWait_v2", "nvmlEventSetFree"]
#: Every NVML function the fake answers for a snapshot (and so every call the live reader can make).
NVML_FUNCTIONS = sorted(n[1:] for n in vars(FakeNvml) if n.startswith("_nvml") and n[1:] not in ACTIVITY_FUNCTIONS)
