"""The one reader of NCCL's ``NCCL_DEBUG=INFO`` / ``WARN`` output (NCCL 2.1 .. 2.28).

``read_nccl_log(text) -> NcclLog`` makes one pass over the text. A line is looked at only if it holds
"NCCL" (a cheap prefilter), then only the patterns whose keyword the line holds are tried
(``_examine``, a function of the line's text alone). A log repeats its lines, so what each distinct
text gives is kept and replayed for every repeat (one dict lookup for a whole line seen before), and
the cyclic garbage collector is paused while the records are built: a 100 MB log reads in about a
second of CPU (benchmarks/bench_nccl_log.py prints the figure; tests/test_nccl_log_same.py proves the
results equal those of the plain reader it replaced).

What NCCL prints, and what is kept (the format strings are NCCL's own, ``src/transport/*.cc``,
``src/init.cc``, ``src/misc/param.cc``, ``src/debug.cc``):

* the prefix ``host:pid:tid [cudaDev] NCCL INFO|WARN``, with ``file.cc:line`` before ``NCCL WARN`` (NCCL 2.30 adds the
  function: ``file.cc:line (func) NCCL WARN``, and ``file.cc:line (func) -> N`` in its traces) (NCCL 2.1/2.2:
  the same without "NCCL", ``host:pid:tid [0] INFO ...``, and ring connections ``1 -> 0 via P2P/IPC``);
  anything before the host (a timestamp, Ray's ``(Worker pid=..)``, torchrun's ``[rank0]:``) is
  skipped. Several nodes in one log are kept apart by that host name.
* ``NCCL version 2.28.9+cuda13.0`` and ``cudaDriverVersion 13000`` (older: ``CUDA Driver version``);
* ranks: ``[ncclCommInitRank[Config]] comm 0x.. rank R nranks N cudaDev D [nvmlDev X] busId B
  [commId 0x..] - Init START|COMPLETE`` (busId printed as NCCL's int64 in hex: ``1a000`` is
  ``0000:1a:00.0``);
* channels: ``Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read`` and older ``Channel 00 : 0[3000] ->
  1[4000] via P2P/IPC`` (the bracket holds the bus id before NCCL 2.19, the device index after),
  ``[send]``/``[receive]`` for network channels, ``via SHM/direct/direct``, ``via NET/IB/0/GDRDMA``,
  ``via NET/Socket/0``, ``via P2P/direct pointer/read``, ``via NET/<plugin>/..``; ranks without a
  bracket (NCCL 2.4's ``Ring 00 : 3 -> 0 [receive] via NET/IB/0``, ``Channel 00 : 0 -> 1 via NET/Socket/0``);
* ``NCCL_X set by environment to Y`` (every variable, with its line);
* WARN lines (with the ``transport/p2p.cc:275`` location) and error traces ``file.cc:N -> R``
  (R is an ncclResult_t number), with the NCCL result name where one is given or can be told;
* the topology NCCL detected, where ``NCCL_DEBUG_SUBSYS`` holds GRAPH (``src/graph/paths.cc`` printNodePaths,
  ``src/graph/topo.cc`` ncclTopoPrintRec): each GPU's paths, ``GPU/0-1b000 :GPU/0-1b000 (0/5000.0/LOC) GPU/0-1c000
  (1/240.0/NVL) NVS/0-0 (1/240.0/NVL) CPU/0-0 (2/24.0/PHB)`` (NCCL 2.7-2.18: ``GPU/1B000 :GPU/1B000 (0/5000.000000/LOC)
  ...``; the id of a GPU is its bus id, with the rank's index on the device above bit 40 from 2.27 on), and the tree
  ``+ PCI[24.0] - GPU/0-1b000 (3)`` that gives each GPU's rank; an NVSwitch (``NVS/``) among them is kept as a decision;
* P2P/SHM/NET decisions: ``Could not enable P2P between dev A(=bus) and dev B(=bus)``, ``P2P is
  disabled between [NVLINK] connected GPUs A and B``, ``NVLS multicast support is not available``,
  ``NET/IB : No device found``, ``Using network Socket``, ``CC On, workFifoBytes 0`` (a confidential-computing mode) ...
* the interface and IPv4 address each process says it uses (``Bootstrap : Using eth0:10.0.0.1<0>``, ``NET/Socket : Using
  [0]eth0:...``, ``OOB eth0:...``, NCCL 2.1's ``NET : Using interface eth1:...``), kept once per host and address as an
  ``interface`` decision;

Nothing here imports the rest of p2ptop: the text evidence reader (p2ptop.evidence), ``p2ptop nccl
--log`` and the dashboard's NCCL view all use this module.
"""

from __future__ import annotations

import gc
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

__all__ = [
    "NcclChannel", "NcclDecision", "NcclEnv", "NcclLog", "NcclMessage", "NcclPath", "NcclRank", "NcclTopoGpu",
    "NCCL_RESULTS", "SMI_PATH_OF_NCCL", "TRANSPORT_ORDER", "bus_id_from_nccl", "bus_id_from_topo", "normalise_transport", "read_nccl_log",
    "transport_rank",
]

#: ncclResult_t numbers -> names (nccl.h), as error traces "file.cc:N -> R" print them.
NCCL_RESULTS: dict[int, str] = {
    1: "ncclUnhandledCudaError", 2: "ncclSystemError", 3: "ncclInternalError",
    4: "ncclInvalidArgument", 5: "ncclInvalidUsage", 6: "ncclRemoteError", 7: "ncclInProgress",
}
#: ncclGetErrorString's texts (src/misc/utils.cc / init.cc), as frameworks print them -> result name.
NCCL_RESULT_TEXTS: tuple[tuple[str, str], ...] = (
    ("unhandled cuda error", "ncclUnhandledCudaError"),
    ("unhandled system error", "ncclSystemError"),
    ("internal error", "ncclInternalError"),
    ("invalid argument", "ncclInvalidArgument"),
    ("invalid usage", "ncclInvalidUsage"),
    ("remote process exited or there was a network error", "ncclRemoteError"),
)
_RESULT_NAME = re.compile(r"\bnccl(UnhandledCudaError|SystemError|InternalError|InvalidArgument|InvalidUsage|RemoteError|InProgress)\b")

#: NCCL's path classes (graph/topo.h PATH_*) -> nvidia-smi's: NVL is an NVLink (direct, or through NVSwitches; NCCL names no
#: link count, so "NV"), PIX/PXB/PHB/SYS mean what nvidia-smi's do (NCCL's PHB also covers nvidia-smi's NODE: both cross a
#: host bridge). NVB (NVLink through another GPU), C2C, P2C, PXN, NET and DIS say nothing of the PCIe path nvidia-smi prints.
SMI_PATH_OF_NCCL = {"NVL": "NV", "PIX": "PIX", "PXB": "PXB", "PHB": "PHB", "SYS": "SYS"}

#: Worse transports rank higher: a pair's worst transport is the max over its channels.
TRANSPORT_ORDER = ("P2P", "SHM", "NET", "COLLNET")

_CHANNEL = re.compile(
    r"(?:Channel|Ring) (?P<ch>\d+)(?:/(?P<conn>\d+))? : (?P<src>\d+)(?:\[(?P<sdev>[0-9a-fA-Fx]+)\])? -> "
    r"(?P<dst>\d+)(?:\[(?P<ddev>[0-9a-fA-Fx]+)\])?(?: \[(?P<dir>send|receive)\])? via (?P<via>.+?)\s*$"
)
_VERSION = re.compile(r"NCCL version:? ?(?P<v>\d+\.\d+\.\d+)(?:[+.-]cuda(?P<cuda>\d+\.\d+))?")
_DRIVER = re.compile(r"(?:cudaDriverVersion|CUDA Driver version|cuda driver version)[ :=]+(?P<v>\d{4,6})\b", re.I)
_RANK = re.compile(
    r"\brank (?P<rank>\d+) nranks (?P<nranks>\d+) cudaDev (?P<cudaDev>\d+)(?: nvmlDev (?P<nvmlDev>\d+))?"
    r" busId (?P<busId>[0-9a-fA-F]+)(?: commId (?P<commId>0x[0-9a-fA-F]+))?"
)
_ENV = re.compile(r"\b(?P<name>[A-Z][A-Z0-9_]+) set by environment to (?P<value>.*?)\.?\s*$")
#: NCCL 2.30 puts the function after the location (src/debug.cc: "%s:%d (%s) NCCL WARN", INFO_LOC "%s:%d (%s) "):
#: "transport/p2p.cc:309 (p2pSendConnect) NCCL WARN ...", "init.cc:1400 (ncclCommInitRank) -> 1"
_TRACE = re.compile(r"^(?P<loc>[\w./+-]+\.(?:cc|cu|cpp|c|h):\d+)(?: \([\w:~<>]+\))? -> (?P<code>\d+)")
_COULD_NOT = re.compile(r"Could not enable P2P between dev (?P<a>\d+)\(=(?P<abus>[0-9a-fA-F]+)\) and dev (?P<b>\d+)\(=(?P<bbus>[0-9a-fA-F]+)\)")
_P2P_DISABLED = re.compile(r"P2P is disabled between (?:(?P<link>\w+) )?connected GPUs (?P<a>\d+) and (?P<b>\d+)")
#: ncclMemAlloc (src/allocator.cc): cudaDeviceCanAccessPeer answered 0 for the pair, so the buffer is not mapped for it
_P2P_UNSUPPORTED = re.compile(r"^P2P not supported between GPU(?P<a>\d+) and GPU(?P<b>\d+)")
_USING_NET = re.compile(r"Using network (?P<net>\S+)")
#: the address each process says it uses (misc/socket.cc, bootstrap.cc, net_socket.cc, net_ib.cc): "Bootstrap : Using
#: eth0:10.0.0.1<0>", "NET/Socket : Using [0]eth0:10.0.0.1<0> [1]ib0:...", "NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.1<0>",
#: NCCL 2.1/2.2's "NET : Using interface eth1:100.102.32.176<0>": an interface's name and its IPv4 address
_IFACE_ADDR = re.compile(r"(?:Using (?:interface )?|\]|OOB )(?P<iface>[A-Za-z][\w.@-]{0,30}):(?P<ip>\d{1,3}(?:\.\d{1,3}){3})<\d+>")
#: NCCL refusing what a setting gave it, at WARN level: its XML reader on the file NCCL_TOPO_FILE / NCCL_GRAPH_FILE names
#: (src/graph/xml.cc, xml.h: "XML Parse ...", "XML Mismatch", "XML Topology/Graph has wrong version", "Attribute %s of node
#: %s not found", "Error : XML parser is limited to %d nodes", "Error : value %s too long (max %d)"; "xml" below, a file
#: only where the log shows the variable set), a value it does not know ("NCCL_NET_MERGE_POLICY: unknown value '%s'",
#: graph/topo.cc), NCCL_ALGO / NCCL_PROTO lists (graph/tuning.cc "Unrecognized element token \"%s\" when parsing \"%s\"")
#: and NCCL_NET_FORCE_MERGE naming devices that are not there or that cannot be fused (graph/topo.cc "TOPO/NET : Only
#: matched %d devices, %d requested", "TOPO/NET : Could not force merge NICs %s. Please specify a valid NCCL_NET_FORCE_MERGE
#: string.")
_SETTING_REFUSED = re.compile(
    r"^(?P<xml>XML (?:Parse|Mismatch|Topology has wrong version|Graph has wrong version)\b|Error : XML parser is limited to \d+ nodes|"
    r"Error : value .{0,300} too long \(max \d+\)|Attribute \w+ of node \w+ not found)|"
    r"^(?P<var>NCCL_[A-Z0-9_]+): unknown value\b|^(?P<algo>Unrecognized element token \"[^\"]*\" when parsing)|"
    r"^(?P<merge>TOPO/NET : (?:Only matched \d+ devices, \d+ requested|Could not force merge NICs\b))")
# NCCL >= 2.28.9 (src/transport.cc, ncclTransportCheckP2pType): isAllCudaP2p is 0 where NVML's P2P read or write
# status is not OK for some pair of the node's local ranks (graph/paths.cc ncclTopoCheckP2p), or the two ranks see
# different /dev/shm (isolated containers); isAllDirectP2p also follows NCCL_P2P_LEVEL, so it alone says nothing
_CHECK_P2P_TYPE = re.compile(r"Check P2P Type isAllDirectP2p (?P<direct>\d) directMode (?P<mode>\d) isAllCudaP2p (?P<cuda>\d)")
#: NCCL's path print (graph/paths.cc printNodePaths): "GPU/<id> :" then "<TYPE>/<id> (hops/bw/PATH) " for every node. The id
#: is "<system id>-<local id>" from NCCL 2.19 on ("%lx-%lx"), the bare local id in capitals before ("%lX"); NCCL 2.5 printed
#: the path type as a number (not read: its numbers were link types, not path classes).
_TOPO_ID = r"[0-9a-fA-F]+(?:-[0-9a-fA-F]+)?"
_PATH_HEAD = re.compile(rf"^GPU/(?P<id>{_TOPO_ID}) :")
_PATH_CELL = re.compile(rf"\b(?P<node>GPU|NVS|CPU|NIC|NET|PCI|GIN|RMA)/(?P<id>{_TOPO_ID}) \((?P<hops>\d+)/(?P<bw>[\d.]+)/(?P<type>[A-Z]{{3}})\)")
#: ... and its tree (graph/topo.cc ncclTopoPrintRec): a GPU with its rank, "+ PCI[24.0] - GPU/0-1b000 (3)", "GPU/1B000 (0)"
_TREE_GPU = re.compile(rf"(?:^|\] - )GPU/(?P<id>{_TOPO_ID}) \((?P<rank>-?\d+)\)")
_DIAG = re.compile(r"\[(?P<tag>OK|INFO|WARN|FAIL|ERROR)\]\s+(?P<check>[\w-]+):\s*(?P<what>.*)")
_CUDA_FAILURE = re.compile(r"(?:Cuda failure(?: (?P<num>\d+))? '(?P<msg>[^']*)'|CUDA IPC handle : (?P<num2>\d+) (?P<msg2>.+))")


#: the largest log whose lines the knowledge base reads besides its table (the size explain is timed on, 20 MB)
DIGEST_LIMIT = 24 << 20


@dataclass(slots=True)
class NcclRank:
    host: Optional[str]
    pid: Optional[str]
    rank: int
    nranks: int
    cuda_dev: int
    nvml_dev: Optional[int]
    bus_id: str  # normalised "0000:1a:00.0"
    bus_id_raw: str  # as NCCL printed it, e.g. "1a000"
    comm_id: Optional[str]
    line: int


@dataclass(slots=True)
class NcclChannel:
    host: Optional[str]
    channel: int
    conn: Optional[int]  # the "/0" after the channel number (NCCL >= 2.12), None before
    src: int  # rank
    dst: int
    src_dev: Optional[int]  # device index in the brackets (NCCL >= 2.19), else None
    dst_dev: Optional[int]
    src_bus: Optional[str]  # bus id in the brackets (before 2.19), normalised, else None
    dst_bus: Optional[str]
    transport: str  # normalised: "P2P/CUMEM", "P2P/IPC", "P2P/direct pointer", "SHM", "NET/IB", ...
    via: str  # as printed after "via ", e.g. "NET/IB/0/GDRDMA"
    read: bool  # "/read" in the transport
    direction: Optional[str]  # "send" | "receive" | None
    line: int


@dataclass(slots=True)
class NcclEnv:
    host: Optional[str]
    name: str
    value: str
    line: int


@dataclass(slots=True)
class NcclMessage:
    """A WARN line, an error trace (``file.cc:N -> R``) or an error NCCL's result names."""
    host: Optional[str]
    level: str  # WARN | INFO | ABORT | TEXT (a line outside NCCL's prefix, e.g. a framework's)
    location: Optional[str]  # "transport/p2p.cc:275"
    message: str
    result: Optional[str]  # "ncclSystemError", ... where told
    cuda_message: Optional[str]  # the text of "Cuda failure 'x'"
    cuda_number: Optional[int]
    line: int


@dataclass(slots=True)
class NcclPath:
    """The path NCCL found from one GPU to another (NCCL_DEBUG_SUBSYS=GRAPH, graph/paths.cc printNodePaths)."""
    host: Optional[str]
    src_bus: str  # normalised "0000:1b:00.0"
    dst_bus: str
    hops: int
    bw: float  # GB/s, NCCL's figure for the path
    type: str  # NCCL's path class: NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB, SYS, NET, DIS
    line: int


@dataclass(slots=True)
class NcclTopoGpu:
    """A GPU of NCCL's topology tree with its rank (graph/topo.cc ncclTopoPrintRec: "+ PCI[24.0] - GPU/0-1b000 (3)")."""
    host: Optional[str]
    bus: str
    rank: int
    line: int


@dataclass(slots=True)
class NcclDecision:
    """A choice NCCL made about a transport, e.g. P2P off between two devices."""
    host: Optional[str]
    kind: str  # diag_ok | diag_issue (detail: "p2p: verified ...") | p2p_not_enabled | p2p_disabled | p2p_unsupported | cuda_p2p_not_all | p2p_beyond_level | nvls_unavailable | net_ib_missing | net_plugin_failed | network | ras_peer_dead | nvswitch | cc_on | setting_refused | interface (detail: "eth0 10.0.0.1")
    detail: str
    devs: Optional[tuple[int, int]]
    line: int


def bus_id_from_nccl(raw: str) -> str:
    """NCCL's int64 bus id in hex ("1a000", "70") -> "0000:1a:00.0"."""
    h = raw.lower().removeprefix("0x").rjust(9, "0")
    dom, bus, dev, fn = h[:-5], h[-5:-3], h[-3:-1], h[-1]
    return f"{dom[-4:].rjust(4, '0')}:{bus}:{dev}.{fn}"


def bus_id_from_topo(raw: str) -> str:
    """The bus id of a GPU's id in NCCL's topology print: "0-1b000" (system id - local id, NCCL >= 2.19), "1B000"
    (before); from NCCL 2.27 the local id holds the rank's index on the device above bit 40."""
    local = raw.rsplit("-", 1)[-1]
    return bus_id_from_nccl(format(int(local, 16) & ((1 << 40) - 1), "x"))


def normalise_transport(via: str) -> str:
    """"P2P/CUMEM/read" -> "P2P/CUMEM"; "SHM/direct/direct" -> "SHM"; "NET/IB/0/GDRDMA" -> "NET/IB"."""
    parts = via.strip().split("/")
    head = parts[0].upper()
    if head == "SHM" or via.startswith("direct shared memory"):  # NCCL < 2.5: "via direct shared memory"
        return "SHM"
    if head == "P2P" and len(parts) > 1:
        sub = parts[1]
        return "P2P/" + ("CUMEM" if sub.upper() == "CUMEM" else "IPC" if sub.upper() == "IPC" else sub)
    if head in ("NET", "COLLNET") and len(parts) > 1:
        return f"{parts[0]}/{parts[1]}"
    return parts[0]


_TRANSPORT_RANKS: dict[str, int] = {}


def transport_rank(transport: str) -> int:
    r = _TRANSPORT_RANKS.get(transport)  # called per channel by the table and the evidence reader
    if r is None:
        head = transport.split("/")[0].upper()
        r = TRANSPORT_ORDER.index(head) if head in TRANSPORT_ORDER else len(TRANSPORT_ORDER)
        if len(_TRANSPORT_RANKS) < 10000:
            _TRANSPORT_RANKS[transport] = r
    return r


def _bracket(v: Optional[str]) -> tuple[Optional[int], Optional[str]]:
    """(device index, bus id) of a channel's bracket value: a bus id is >= 4 hex digits or has a-f.
    No bracket (NCCL 2.4's "Ring 00 : 3 -> 0 [receive] via NET/IB/0") says neither."""
    if v is None:
        return None, None
    if len(v) >= 4 or any(c in "abcdefABCDEFx" for c in v):
        return None, bus_id_from_nccl(v)
    return int(v), None


@dataclass(slots=True)
class NcclLog:
    version: Optional[str] = None  # "2.28.9"
    cuda: Optional[str] = None  # CUDA runtime NCCL was built with, from "+cuda13.0"
    cuda_driver: Optional[str] = None  # "13.0" from cudaDriverVersion 13000
    versions: list[str] = field(default_factory=list)  # every distinct version seen
    hosts: list[str] = field(default_factory=list)
    ranks: list[NcclRank] = field(default_factory=list)
    channels: list[NcclChannel] = field(default_factory=list)
    env: list[NcclEnv] = field(default_factory=list)
    messages: list[NcclMessage] = field(default_factory=list)
    decisions: list[NcclDecision] = field(default_factory=list)
    paths: list[NcclPath] = field(default_factory=list)  # GPU -> GPU, from NCCL's path print (GRAPH)
    topo_gpus: list[NcclTopoGpu] = field(default_factory=list)  # GPU -> rank, from NCCL's topology tree (GRAPH)
    version_line: Optional[int] = None
    driver_line: Optional[int] = None
    lines_total: int = 0
    nccl_lines: int = 0

    # -- questions --------------------------------------------------------------------------
    @property
    def is_nccl(self) -> bool:
        return self.nccl_lines > 0

    @property
    def warnings(self) -> list[NcclMessage]:
        return [m for m in self.messages if m.level == "WARN"]

    def digest(self, text: str) -> Optional[str]:
        """``text`` (the one this log was read from) with the NCCL INFO lines that only repeat what this log
        already holds left blank, line numbers kept: every line outside NCCL's INFO (WARNs, errors, a
        framework's output), and of the INFO lines each variable set by environment, rank, decision, the
        version and driver lines and the first line of each distinct channel route. What the knowledge base
        reads of a log (``nccl --log``, the dashboard's pair panel) is then the size of its meaning, not of
        its repeats: a 100 MB log is 1.3 million lines, most of them the same channel lines. None for a text over
        DIGEST_LIMIT: the blank lines keep the line numbers but still cost every reader a pass (a 100 MB log took
        5.8 s instead of 1.1 s in `nccl --log`), so there only the table's findings are matched."""
        if len(text) > DIGEST_LIMIT:
            return None
        keep = {m.line for m in self.messages} | {d.line for d in self.decisions} | {e.line for e in self.env}
        keep |= {r.line for r in self.ranks} | {n for n in (self.version_line, self.driver_line) if n}
        keep |= {p.line for p in self.paths} | {g.line for g in self.topo_gpus}
        routes: set = set()
        for c in self.channels:
            route = (c.host, c.src, c.dst, c.via, c.direction)
            if route not in routes:
                routes.add(route)
                keep.add(c.line)
        return "\n".join(line if no in keep or " NCCL INFO " not in line else ""
                         for no, line in enumerate(text.split("\n"), 1))

    def env_values(self) -> dict[str, str]:
        """Each variable's last value set by environment."""
        return {e.name: e.value for e in self.env}

    def rank_info(self, rank: int, host: Optional[str] = None) -> Optional[NcclRank]:
        for r in self.ranks:
            if r.rank == rank and (host is None or r.host == host):
                return r
        return None

    def pair_transports(self, host: Optional[str] = ...) -> dict[tuple[int, int], set[str]]:  # type: ignore[assignment]
        """(low rank, high rank) -> the transports seen on the pair's channels; with ``host`` only
        the channels that host printed (``None``: lines without a host prefix)."""
        out: dict[tuple[int, int], set[str]] = {}
        for c in self.channels:
            if host is not ... and c.host != host:
                continue
            key = (min(c.src, c.dst), max(c.src, c.dst))
            out.setdefault(key, set()).add(c.transport)
        return out

    def transports_by_host(self) -> dict[Optional[str], dict[tuple[int, int], set[str]]]:
        out: dict[Optional[str], dict[tuple[int, int], set[str]]] = {}
        for c in self.channels:
            key = (min(c.src, c.dst), max(c.src, c.dst))
            out.setdefault(c.host, {}).setdefault(key, set()).add(c.transport)
        return out

    def worst_transports(self, host: Optional[str] = ...) -> dict[tuple[int, int], str]:  # type: ignore[assignment]
        """(low rank, high rank) -> the worst transport seen on the pair (P2P < SHM < NET); with
        ``host`` only the channels that host printed."""
        return {k: max(sorted(v), key=transport_rank) for k, v in self.pair_transports(host).items()}

    def paths_by_pair(self) -> dict[tuple[Optional[str], frozenset], NcclPath]:
        """(host, {bus id, bus id}) -> NCCL's path between the two GPUs (its topology print; the first printed)."""
        out: dict[tuple[Optional[str], frozenset], NcclPath] = {}
        for p in self.paths:
            out.setdefault((p.host, frozenset((p.src_bus, p.dst_bus))), p)
        return out

    def first_channel(self, a: int, b: int, transport: Optional[str] = None) -> Optional[NcclChannel]:
        for c in self.channels:
            if {c.src, c.dst} == {a, b} and (transport is None or c.transport == transport):
                return c
        return None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["worst_transports"] = {f"{a}-{b}": t for (a, b), t in sorted(self.worst_transports().items())}
        return d


def _cuda_driver(v: str) -> str:
    n = int(v)
    return f"{n // 1000}.{(n % 1000) // 10}"

_LEVELS = ("INFO", "WARN", "TRACE", "ABORT", "DIAG")  # DIAG: NCCL 2.31's active diagnostics (NCCL_RUN_DIAGNOSTICS=1)
#: NCCL 2.1/2.2 (binary releases before the source of 2.3 was published) printed the same prefix without the word
#: "NCCL": ``host:pid:tid [cudaDev] INFO msg`` and ``host:pid:tid [cudaDev] misc/ibvwrap.cu:60 WARN msg`` (horovod/horovod#98,
#: horovod/horovod#489). Only a whole host:pid:tid [dev] prefix before the level counts (other loggers print "[1] INFO").
_OLD_PREFIX = re.compile(r"(?:^|[\s:>)\]])(?P<host>[^\s:\[\]()<>]+):(?P<pid>\d+):\d+ \[\d+\] "
                         r"(?:(?P<loc>[\w./+-]+\.(?:cc|cu|cpp|c|h):\d+) )?(?P<level>INFO|WARN|ABORT) ")
#: ... and its ring connections without "Ring NN :", ``1 -> 0 via P2P/IPC`` (NCCL 2.1)
_BARE_CHANNEL = re.compile(r"(?P<src>\d+)(?:\[(?P<sdev>[0-9a-fA-Fx]+)\])? -> (?P<dst>\d+)(?:\[(?P<ddev>[0-9a-fA-Fx]+)\])?"
                           r"(?: \[(?P<dir>send|receive)\])? via (?P<via>.+?)\s*$")


def _split_old(line: str) -> Optional[tuple[Optional[str], Optional[str], str, Optional[str], str, int]]:
    """The same as _split_prefix for NCCL 2.1/2.2's prefix without "NCCL" (None for other lines)."""
    m = _OLD_PREFIX.search(line)
    if m is None:
        return None
    host, pid = m.group("host"), m.group("pid")
    tid = line[m.end("pid") + 1:line.index(" [", m.end("pid"))]
    if len(pid) == 2 and len(tid) == 2 and host[-2:].isdigit() and pid < "60" and tid < "61":
        return None  # a clock time ("2024-01-01 12:00:00 [1] INFO"), not host:pid:tid
    start = m.end()
    return host, pid, m.group("level"), m.group("loc"), line[start:].strip("\r "), start
_LOC = re.compile(r"[\w./+-]+\.(?:cc|cu|cpp|c|h):\d+$")


def _split_prefix(line: str, cache: dict) -> Optional[tuple[Optional[str], Optional[str], str, Optional[str], str, int]]:
    """(host, pid, level, location, message, where the text after the level starts) of a line in
    NCCL's format, None for other lines.
    String operations and a cache of the heads seen (a log repeats a few prefixes), not a regex
    search: this runs on every line of the log."""
    i = line.find("NCCL ")
    while i >= 0:
        level = line[i + 5:i + 10].rstrip(" ")
        if level in _LEVELS and (i == 0 or line[i - 1] == " "):
            break
        i = line.find("NCCL ", i + 5)
    else:
        return _split_old(line) if ("] INFO " in line or " WARN " in line) else None
    start = i + 5 + len(level)
    msg = line[start:].strip("\r ")
    raw_head = line[:i]
    hit = cache.get(raw_head)
    if hit is not None:
        return hit[0], hit[1], level, hit[2], msg, start
    head = raw_head.rstrip(" ")
    loc = None
    if head and not head.endswith("]"):
        if head.endswith(")") and " (" in head:  # NCCL 2.30: "file.cc:309 (function)" before the level
            fn = head.rfind(" (")
            if _LOC.match(head[head.rfind(" ", 0, fn) + 1:fn]):
                head = head[:fn]
        sp = head.rfind(" ")
        cand = head[sp + 1:]
        if _LOC.match(cand):
            loc, head = cand, head[:sp].rstrip(" ")
    host = pid = None
    if head.endswith("]"):
        lb = head.rfind(" [")
        if lb >= 0 and head[lb + 2:-1].isdigit():
            who = head[:lb]
            # cut what stands before the host: a timestamp, Ray's "(pid=1)", mpirun's "[1,0]<stdout>:"
            who = who[max(who.rfind(" "), who.rfind(")"), who.rfind("]"), who.rfind(">")) + 1:].lstrip(":")
            parts = who.rsplit(":", 2)
            if len(parts) == 3 and parts[0]:
                host, pid = parts[0], parts[1]
    if len(cache) < 100000:
        cache[raw_head] = (host, pid, loc)
    return host, pid, level, loc, msg, start


# What a line gives, by kind: 0-5 index the lists of NcclLog (and the class built); 6-8 change the
# log's state (first version and driver, the ranks seen), applied by _apply_state.
#: the topology file NCCL reads where NCCL_TOPO_FILE is not set (graph/topo.cc ncclTopoGetSystem)
DEFAULT_TOPO_FILE = "/var/run/nvidia-topologyd/virtualTopology.xml"
_CHANNELS, _ENVS, _DECISIONS, _MESSAGES, _PATHS, _TOPO_GPUS, _VERSION_SEEN, _DRIVER_SEEN, _RANK_SEEN = range(9)
_LISTS = 6
#: A cache of what each distinct line gives holds at most this many entries (a log repeats its lines:
#: every rank, every communicator and every run prints the same "Channel .. via .." lines).
_PLAN_LIMIT = 200000


def _examine(caches: tuple, level: str, loc: Optional[str], msg: str, line: str) -> tuple:
    """What one line in NCCL's format (or a TEXT line) gives: a tuple of ``(kind, fields)``, the fields
    of a record without its host (first) and line number (last), or of a change of state. It depends on
    the text only (and the location in the prefix), so the same text on another line or host gives the
    same, and ``_read`` keeps it to replay."""
    brackets, vias = caches
    # channels: by far the most frequent line
    if " via " in msg and msg.startswith(("Channel", "Ring")):
        c = _CHANNEL.match(msg)
        if c is not None:
            ch, conn, src, sraw, dst, draw, direction, via = c.groups()
            sb = brackets.get(sraw)
            if sb is None:
                sb = brackets[sraw] = _bracket(sraw)
            db = brackets.get(draw)
            if db is None:
                db = brackets[draw] = _bracket(draw)
            hit_via = vias.get(via)
            if hit_via is None:
                hit_via = vias[via] = (normalise_transport(via), via, "/read" in via)
            tr, via, is_read = hit_via
            return ((_CHANNELS, (int(ch), int(conn) if conn is not None else None, int(src), int(dst),
                                 sb[0], db[0], sb[1], db[1], tr, via, is_read, direction)),)
    if " via " in msg and msg[:1].isdigit():  # NCCL 2.1: "1 -> 0 via P2P/IPC", no ring number
        c = _BARE_CHANNEL.match(msg)
        if c is not None:
            src, sraw, dst, draw, direction, via = c.groups()
            sb, db = _bracket(sraw), _bracket(draw)
            return ((_CHANNELS, (0, None, int(src), int(dst), sb[0], db[0], sb[1], db[1],
                                 normalise_transport(via), via, "/read" in via, direction)),)
    if level == "DIAG":
        # NCCL 2.31's active diagnostics (NCCL_RUN_DIAGNOSTICS=1; user guide, Troubleshooting > Diagnostics): rank 0 prints
        # "NCCL DIAG [OK]   p2p: verified P2P access in both directions between every GPU pair (56 peer accesses)" or
        # "NCCL DIAG [INFO] p2p: only 52/56 GPU-to-GPU peer accesses passed verification" ([INFO]: a failed verification or
        # a check that could not be completed)
        d = _DIAG.match(msg)
        if d is not None:
            kind = "diag_ok" if d.group("tag") == "OK" else "diag_issue"
            return ((_DECISIONS, (kind, f"{d.group('check')}: {d.group('what').strip()}", None)),)
        return ()
    if "set by environment" in msg:
        e = _ENV.search(msg)
        if e is not None:
            return ((_ENVS, (e.group("name"), e.group("value").strip())),)
    if msg.startswith("Loading topology file "):
        # graph/xml.cc ncclTopoGetXmlFromFile opened the file: graph/topo.cc loads the one NCCL_TOPO_FILE names (from
        # the environment or nccl.conf), else only its default /var/run/nvidia-topologyd/virtualTopology.xml; a log
        # with NCCL_DEBUG_SUBSYS=GRAPH shows this line and not the ENV one
        path = msg[len("Loading topology file "):].strip()
        if path and path != DEFAULT_TOPO_FILE:
            return ((_ENVS, ("NCCL_TOPO_FILE", path)),)
    emits: list = []
    if "GPU/" in msg or "NVS/" in msg:
        _topology(msg, emits)
        if emits:
            return tuple(emits)
    if "version" in msg or "Version" in msg:
        v = _VERSION.search(msg)
        if v is not None:
            emits.append((_VERSION_SEEN, (v.group("v"), v.group("cuda"))))
        d = _DRIVER.search(msg)
        if d is not None:
            emits.append((_DRIVER_SEEN, (d.group("v"),)))
    if "busId" in msg:
        r = _RANK.search(msg)
        if r is not None:
            emits.append((_RANK_SEEN, r.group("rank", "nranks", "cudaDev", "nvmlDev", "busId", "commId")))
            return tuple(emits)
    if "P2P" in msg:
        p = _COULD_NOT.search(msg)
        if p is not None:
            emits.append((_DECISIONS, ("p2p_not_enabled", msg.strip(), (int(p.group("a")), int(p.group("b"))))))
            return tuple(emits)
        p = _P2P_DISABLED.search(msg)
        if p is not None:
            emits.append((_DECISIONS, ("p2p_disabled", msg.strip(), (int(p.group("a")), int(p.group("b"))))))
        p = _P2P_UNSUPPORTED.match(msg)
        if p is not None:
            emits.append((_DECISIONS, ("p2p_unsupported", msg.strip(), (int(p.group("a")), int(p.group("b"))))))
        p = _CHECK_P2P_TYPE.search(msg) if msg.startswith("Check P2P Type") else None
        if p is not None and p.group("cuda") == "0":
            emits.append((_DECISIONS, ("cuda_p2p_not_all", msg.strip(), None)))
        elif p is not None and p.group("direct") == "0":  # CUDA P2P everywhere, but some pair beyond NCCL's P2P level
            emits.append((_DECISIONS, ("p2p_beyond_level", msg.strip(), None)))
    if "NVLS multicast support is not available" in msg:
        emits.append((_DECISIONS, ("nvls_unavailable", msg.strip(), None)))
    elif "NET/IB : No device found" in msg:
        emits.append((_DECISIONS, ("net_ib_missing", msg.strip(), None)))
    elif "Failed to initialize NET plugin" in msg:
        emits.append((_DECISIONS, ("net_plugin_failed", msg.strip(), None)))
    elif msg.startswith("RAS declaring peer ") and " as DEAD" in msg:
        # NCCL's RAS thread (src/ras/rasnet.cc, 2.24+): a peer process stopped answering its keep-alives
        emits.append((_DECISIONS, ("ras_peer_dead", msg.strip(), None)))
    elif msg.startswith("Using network "):
        u = _USING_NET.match(msg)
        if u is not None:
            emits.append((_DECISIONS, ("network", u.group("net"), None)))
    elif msg.startswith("CC On,"):
        # src/init.cc (rank 0): "CC %s, workFifoBytes %d", On where NVML reports a confidential-computing mode (CC,
        # multi-GPU protected PCIe or NVLink encryption)
        emits.append((_DECISIONS, ("cc_on", msg.strip(), None)))
    if "<" in msg and ("Using" in msg or "OOB" in msg):
        for a in _IFACE_ADDR.finditer(msg):
            if not a.group("ip").startswith("127."):
                emits.append((_DECISIONS, ("interface", f"{a.group('iface')} {a.group('ip')}", None)))
    if level == "WARN":
        r = _SETTING_REFUSED.search(msg)
        if r is not None:
            what = ("xml" if r.group("xml") else r.group("var") if r.group("var") else
                    "NCCL_ALGO/NCCL_PROTO" if r.group("algo") else "NCCL_NET_FORCE_MERGE")
            emits.append((_DECISIONS, ("setting_refused", what, None)))
    # errors
    result: Optional[str] = None
    t = _TRACE.match(msg) if level == "INFO" and " -> " in msg else None
    if t is not None:
        result = NCCL_RESULTS.get(int(t.group("code")))
        loc = t.group("loc")
    rn = _RESULT_NAME.search(line) if "nccl" in line else None
    if rn is not None:
        result = "nccl" + rn.group(1)
    if result is None and level in ("WARN", "TEXT", "ABORT"):
        low = msg.lower()
        if level != "TEXT" and ("cuda failure" in low or "cuda ipc handle" in low):
            # CUDACHECK's WARN (src/include/checks.h) and p2p.cc's IPC open return ncclUnhandledCudaError; the quoted
            # words are CUDA's message ('invalid argument' is cudaErrorInvalidValue, not ncclInvalidArgument)
            result = "ncclUnhandledCudaError"
        else:
            if "cuda failure" in low:
                low = _CUDA_FAILURE.sub(" ", msg).lower()
            for words, name in NCCL_RESULT_TEXTS:
                if words in low and ("nccl" in low or level != "TEXT"):
                    result = name
                    break
    if level in ("WARN", "ABORT") or t is not None or result is not None:
        cf = _CUDA_FAILURE.search(msg) if ("Cuda failure" in msg or "IPC handle" in msg) else None
        cmsg = cnum = None
        if cf is not None:
            cmsg = (cf.group("msg") if cf.group("msg") is not None else cf.group("msg2")).strip()
            num = cf.group("num") or cf.group("num2")
            cnum = int(num) if num else None
        emits.append((_MESSAGES, (level, loc, msg.strip(), result, cmsg, cnum)))
    return tuple(emits)


def _topology(msg: str, emits: list) -> None:
    """NCCL's topology print (NCCL_DEBUG_SUBSYS=GRAPH): a GPU's paths to the other GPUs, a GPU of the tree with its rank,
    an NVSwitch among the nodes."""
    head = _PATH_HEAD.match(msg)
    if head is not None:
        src = bus_id_from_topo(head.group("id"))
        for cell in _PATH_CELL.finditer(msg, head.end()):
            if cell.group("node") == "GPU":
                dst = bus_id_from_topo(cell.group("id"))
                if dst != src:
                    emits.append((_PATHS, (src, dst, int(cell.group("hops")), float(cell.group("bw")), cell.group("type"))))
            elif cell.group("node") == "NVS" and cell.group("type") == "NVL":
                emits.append((_DECISIONS, ("nvswitch", msg.strip()[:200], None)))
        return
    g = _TREE_GPU.search(msg)
    if g is not None and msg.lstrip().startswith(("+ ", "GPU/")):
        emits.append((_TOPO_GPUS, (bus_id_from_topo(g.group("id")), int(g.group("rank")))))
    elif msg.lstrip().startswith("+ NVL[") and "- NVS/" in msg:
        emits.append((_DECISIONS, ("nvswitch", msg.strip(), None)))


def _apply_state(log: NcclLog, versions: dict, seen_ranks: dict, kind: int, f: tuple,
                 host: Optional[str], pid: Optional[str], no: int) -> None:
    """A version, driver or rank line: the first version and driver are the log's; a rank is kept once
    per (host, pid, rank, busId) and communicator."""
    if kind == _VERSION_SEEN:
        if f[0] not in versions:
            versions[f[0]] = None
        if log.version is None:
            log.version, log.cuda, log.version_line = f[0], f[1], no
    elif kind == _DRIVER_SEEN:
        if log.cuda_driver is None:
            log.cuda_driver, log.driver_line = _cuda_driver(f[0]), no
    else:
        rank, nranks, cuda_dev, nv, bus, comm = f
        comms = seen_ranks.setdefault((host, pid, rank, bus), set())
        # "Init START", "Init COMPLETE" and "Destroy COMPLETE" (no commId) name the same rank
        if not comms or (comm is not None and comm not in comms):
            comms.add(comm)
            log.ranks.append(NcclRank(host, pid, int(rank), int(nranks), int(cuda_dev),
                                      int(nv) if nv is not None else None, bus_id_from_nccl(bus), bus, comm, no))


#: NCCL INFO messages that name NCCL's own words without its "host:pid:tid [dev] NCCL INFO" prefix, as a trimmed paste
#: holds them: a channel's transport (transport.cc "Channel %02d%s : %d[%d] -> %d[%d]%s via %s%s%s") and the P2P type
#: check (transport.cc ncclTransportCheckP2pType)
BARE_MESSAGE = re.compile(rf"^\s*(?:{_CHANNEL.pattern}|Check P2P Type isAllDirectP2p \d directMode \d isAllCudaP2p \d)", re.M)


def bare_message(line: str) -> bool:
    """Is ``line`` one of NCCL's INFO messages without its prefix (``BARE_MESSAGE``)?"""
    if " via " not in line and "Check P2P Type" not in line:
        return False
    return BARE_MESSAGE.match(line) is not None


def read_nccl_log(text: str) -> NcclLog:
    """Read NCCL's debug output out of ``text`` (any paste: other lines are skipped)."""
    # The records built here hold no cycles: the cyclic collector, which would walk the growing
    # lists again and again on a large log (a fifth of the time), is paused while they are built.
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        return _read(text)
    finally:
        if gc_was_on:
            gc.enable()


def _read(text: str) -> NcclLog:
    """One pass over the lines. What a line gives depends only on its text after NCCL's prefix (and
    the location in that prefix), so it is worked out once per distinct text (``_examine``) and
    replayed from a cache for every repeat, with the host, pid and line number of the repeat. A prefix
    holding "nccl" (which the error search reads) is never cached."""
    log = NcclLog()
    hosts: dict[str, None] = {}
    versions: dict[str, None] = {}
    seen_ranks: dict[tuple, set] = {}
    caches = ({}, {})  # channel brackets, "via" texts
    heads: dict = {}  # raw prefix -> (host, pid, loc), shared with _split_prefix
    info_plans: dict = {}  # raw prefix without "nccl" -> (host, pid, texts after " NCCL INFO " -> emits)
    loc_plans: dict = {}  # location in a prefix -> texts after " NCCL INFO " -> emits
    plans: dict = {}  # (level, loc, raw text after the level) -> emits, for prefixes without "nccl"
    text_plans: dict = {}  # a line outside NCCL's format -> emits
    whole: dict = {}  # a whole line seen before, its host known -> (host, pid, emits)
    addresses: set = set()  # (host, "iface ip") already kept
    appends = tuple(x.append for x in (log.channels, log.env, log.decisions, log.messages, log.paths, log.topo_gpus))
    classes = (NcclChannel, NcclEnv, NcclDecision, NcclMessage, NcclPath, NcclTopoGpu)
    lines = text.split("\n")
    log.lines_total = len(lines)
    nccl_lines = 0
    no = 0
    for line in lines:
        no += 1
        if "NCCL" not in line and not ("] INFO " in line or " WARN " in line or bare_message(line)):  # (NCCL 2.1/2.2: no "NCCL")
            continue
        # fastest path: a line seen before, character for character (a log repeats whole lines)
        seen = whole.get(line)
        if seen is None:
            # fast path: "host:pid:tid [d] NCCL INFO msg" with a prefix and text seen before
            i = line.find(" NCCL INFO ")
            if i > 0:
                raw_head = line[:i + 1]
                fast = info_plans.get(raw_head)
                if fast is not None:
                    emits = fast[2].get(line[i + 11:])
                    if emits is None:
                        emits = _examine(caches, "INFO", heads[raw_head][2], line[i + 11:].strip("\r "), line)
                        if len(fast[2]) < _PLAN_LIMIT:
                            fast[2][line[i + 11:]] = emits
                    seen = (fast[0], fast[1], emits)
                    if len(whole) < _PLAN_LIMIT:
                        whole[line] = seen
                else:
                    hit = heads.get(raw_head)
                    if hit is not None:
                        host, pid, loc = hit
                        emits = _examine(caches, "INFO", loc, line[i + 11:].strip("\r "), line)
                        if "nccl" not in raw_head:
                            by_text = loc_plans.get(loc)
                            if by_text is None:
                                by_text = loc_plans[loc] = {}
                            info_plans[raw_head] = (host, pid, by_text)
                            by_text[line[i + 11:]] = emits
                        seen = (host, pid, emits)
        if seen is not None:
            nccl_lines += 1
            host, pid, emits = seen
        else:
            parsed = _split_prefix(line, heads)
            if parsed is not None:
                host, pid, level, loc, msg, start = parsed
                if host is not None and host not in hosts:
                    hosts[host] = None
                nccl_lines += 1
                if "nccl" in line[:start]:
                    emits = _examine(caches, level, loc, msg, line)
                else:
                    key = (level, loc, line[start:])
                    emits = plans.get(key)
                    if emits is None:
                        emits = plans[key] = _examine(caches, level, loc, msg, line)
                        if len(plans) >= _PLAN_LIMIT:
                            del plans[key]
                    elif len(whole) < _PLAN_LIMIT:  # the host was added above: replay this line whole
                        whole[line] = (host, pid, emits)
            elif bare_message(line):  # NCCL's message with its prefix cut off (a trimmed paste)
                host = pid = None
                nccl_lines += 1
                emits = text_plans.get(line)
                if emits is None:
                    emits = _examine(caches, "INFO", None, line.strip("\r "), line)
                    if len(text_plans) < _PLAN_LIMIT:
                        text_plans[line] = emits
            elif "NCCL" not in line:  # "] INFO " / " WARN " of another logger: not NCCL's
                continue
            else:  # a framework's line naming NCCL (torch's "NCCL error in: ..."), or plain text
                host = pid = None
                emits = text_plans.get(line)
                if emits is None:
                    emits = _examine(caches, "TEXT", None, line.rstrip("\r "), line)
                    if len(text_plans) < _PLAN_LIMIT:
                        text_plans[line] = emits
        for kind, fields in emits:
            if kind == _DECISIONS and fields[0] == "interface":  # every process prints its address: one record a host each
                if (host, fields[1]) in addresses:
                    continue
                addresses.add((host, fields[1]))
            if kind < _LISTS:
                appends[kind](classes[kind](host, *fields, no))
            else:
                _apply_state(log, versions, seen_ranks, kind, fields, host, pid, no)
    log.nccl_lines = nccl_lines
    log.hosts = list(hosts)
    log.versions = list(versions)
    return log
