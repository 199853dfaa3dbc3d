"""The NCCL log reader as it was before the speed-up (p2ptop/nccl/log.py at main f1add01, with w/diag's
channel lines without brackets), kept only so that
tests/test_nccl_log_same.py can prove the fast reader gives the same results; p2ptop does not use it. If log.py is
changed on purpose to read more (a new kind of line), change this copy the same way."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

__all__ = [
    "NcclChannel", "NcclDecision", "NcclEnv", "NcclLog", "NcclMessage", "NcclRank",
    "NCCL_RESULTS", "TRANSPORT_ORDER", "bus_id_from_nccl", "normalise_transport", "read_nccl_log",
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
_ALL_CUDA_P2P_NO = re.compile(r"^Check P2P Type .*\bisAllCudaP2p 0\b")
_BEYOND_LEVEL = re.compile(r"^Check P2P Type isAllDirectP2p 0 directMode \d isAllCudaP2p 1\b")
#: NCCL's channel and P2P-type messages without NCCL's prefix (a trimmed paste), read as INFO
_BARE = re.compile(r"^\s*(?:(?:Channel|Ring) \d+(?:/\d+)? : \d+(?:\[[0-9a-fA-Fx]+\])? -> \d+(?:\[[0-9a-fA-Fx]+\])?"
                   r"(?: \[(?:send|receive)\])? via .+?\s*$|Check P2P Type isAllDirectP2p \d directMode \d isAllCudaP2p \d)")
_USING_NET = re.compile(r"Using network (?P<net>\S+)")
_CUDA_FAILURE = re.compile(r"(?:Cuda failure(?: (?P<num>\d+))? '(?P<msg>[^']*)'|CUDA IPC handle : (?P<num2>\d+) (?P<msg2>.+))")


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
    host: Optional[str]
    src_bus: str
    dst_bus: str
    hops: int
    bw: float
    type: str
    line: int


@dataclass(slots=True)
class NcclTopoGpu:
    host: Optional[str]
    bus: str
    rank: int
    line: int


@dataclass(slots=True)
class NcclDecision:
    """A choice NCCL made about a transport, e.g. P2P off between two devices."""
    host: Optional[str]
    kind: str  # p2p_not_enabled | p2p_disabled | p2p_unsupported | cuda_p2p_not_all | nvls_unavailable | net_ib_missing | net_plugin_failed | network | ras_peer_dead | cc_on | setting_refused | interface
    detail: str
    devs: Optional[tuple[int, int]]
    line: int


def bus_id_from_nccl(raw: str) -> str:
    """NCCL's int64 bus id in hex ("1a000", "70") -> "0000:1a:00.0"."""
    h = raw.lower().removeprefix("0x").rjust(9, "0")
    dom, bus, dev, fn = h[:-5], h[-5:-3], h[-3:-1], h[-1]
    return f"{dom[-4:].rjust(4, '0')}:{bus}:{dev}.{fn}"


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


def transport_rank(transport: str) -> int:
    head = transport.split("/")[0].upper()
    return TRANSPORT_ORDER.index(head) if head in TRANSPORT_ORDER else len(TRANSPORT_ORDER)


def _bracket(v: Optional[str]) -> tuple[Optional[int], Optional[str]]:
    """(device index, bus id) of a channel's bracket value: a bus id is >= 4 hex digits or has a-f."""
    if v is None:  # no bracket (NCCL 2.4), as w/diag reads it
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
    paths: list[NcclPath] = field(default_factory=list)
    topo_gpus: list[NcclTopoGpu] = field(default_factory=list)
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

_LEVELS = ("INFO", "WARN", "TRACE", "ABORT", "DIAG")  # (DIAG added with the reader, 2026-12-01: NCCL 2.31's diagnostics)
# NCCL 2.1/2.2's prefix without "NCCL" (round 7), plain: one regex on the line
_OLD_PREFIX = re.compile(r"(?:^|[\s:>)\]])(?P<host>[^\s:\[\]()<>]+):(?P<pid>\d+):(?P<tid>\d+) \[\d+\] "
                         r"(?:(?P<loc>[\w./+-]+\.(?:cc|cu|cpp|c|h):\d+) )?(?P<level>INFO|WARN|ABORT) ")
_BARE_CHANNEL = re.compile(r"(?P<src>\d+)(?:\[(?P<sdev>[0-9a-fA-Fx]+)\])? -> (?P<dst>\d+)(?:\[(?P<ddev>[0-9a-fA-Fx]+)\])?"
                           r"(?: \[(?P<dir>send|receive)\])? via (?P<via>.+?)\s*$")


def _split_old(line):
    m = _OLD_PREFIX.search(line)
    if m is None:
        return None
    host, pid, tid = m.group("host", "pid", "tid")
    if len(pid) == 2 and len(tid) == 2 and host[-2:].isdigit() and int(pid) < 60 and int(tid) < 61:
        return None
    return host, pid, m.group("level"), m.group("loc"), line[m.end():].strip("\r ")
_LOC = re.compile(r"[\w./+-]+\.(?:cc|cu|cpp|c|h):\d+$")


def _split_prefix(line: str, cache: dict) -> Optional[tuple[Optional[str], Optional[str], str, Optional[str], str]]:
    """(host, pid, level, location, message) of a line in NCCL's format, None for other lines.
    String operations and a cache of the heads seen (a log repeats a few prefixes), not a regex
    search: this runs on every line of the log."""
    i = line.find("NCCL ")
    while i >= 0:
        level = line[i + 5:i + 10].rstrip(" ")
        if level in _LEVELS and (i == 0 or line[i - 1] == " "):
            break
        i = line.find("NCCL ", i + 5)
    else:
        return _split_old(line)
    msg = line[i + 5 + len(level):].strip("\r ")
    raw_head = line[:i]
    hit = cache.get(raw_head)
    if hit is not None:
        return hit[0], hit[1], level, hit[2], msg
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
    return host, pid, level, loc, msg


def _topo_bus(raw: str) -> str:
    # "0-1b000" (NCCL >= 2.19) or "1B000"; the rank's index on the device above bit 40 (NCCL >= 2.27)
    return bus_id_from_nccl("%x" % (int(raw.split("-")[-1], 16) % (1 << 40)))


_TOPO_PATH = re.compile(r"^GPU/([0-9a-fA-F-]+) :(.*)$")
_TOPO_CELL = re.compile(r"(GPU|NVS|CPU|NIC|NET|PCI|GIN|RMA)/([0-9a-fA-F-]+) \((\d+)/([\d.]+)/([A-Z][A-Z][A-Z])\)")
_TOPO_TREE_GPU = re.compile(r"^(?:\+ .*\] - )?GPU/([0-9a-fA-F-]+) \((-?\d+)\)")


def read_nccl_log(text: str) -> NcclLog:
    """Read NCCL's debug output out of ``text`` (any paste: other lines are skipped)."""
    log = NcclLog()
    hosts: dict[str, None] = {}
    versions: dict[str, None] = {}
    seen_ranks: dict[tuple, set] = {}
    heads: dict = {}
    brackets: dict = {}
    vias: dict = {}
    addresses: set = set()
    lines = text.split("\n")
    log.lines_total = len(lines)
    for no, line in enumerate(lines, 1):
        if "NCCL" not in line and _split_old(line) is None and not _BARE.match(line):
            continue
        # fast path: "host:pid:tid [d] NCCL INFO msg" with a head seen before (most lines of a log)
        i = line.find(" NCCL INFO ")
        hit = heads.get(line[:i + 1]) if i > 0 else None
        if hit is not None:
            host, _pid, loc = hit
            level, msg = "INFO", line[i + 11:].strip("\r ")
            log.nccl_lines += 1
            parsed = True
        else:
            parsed = _split_prefix(line, heads)
            if parsed is not None:
                host, _pid, level, loc, msg = parsed
        if parsed is True:
            pass
        elif parsed is not None:
            if host is not None and host not in hosts:
                hosts[host] = None
            log.nccl_lines += 1
        elif "NCCL" not in line and _BARE.match(line):  # NCCL's message without its prefix
            host, _pid, level, loc, msg = None, None, "INFO", None, line.strip("\r ")
            log.nccl_lines += 1
        else:  # a framework's line naming NCCL (torch's "NCCL error in: ..."), or plain text
            host, _pid, level, loc, msg = None, None, "TEXT", None, line.rstrip("\r ")
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
                log.channels.append(NcclChannel(
                    host, int(ch), int(conn) if conn is not None else None,
                    int(src), int(dst), sb[0], db[0], sb[1], db[1],
                    tr, via, is_read, direction, no))
                continue
        if " via " in msg and msg[:1].isdigit():
            c = _BARE_CHANNEL.match(msg)
            if c is not None:
                src, sraw, dst, draw, direction, via = c.groups()
                sb, db = _bracket(sraw), _bracket(draw)
                log.channels.append(NcclChannel(host, 0, None, int(src), int(dst), sb[0], db[0], sb[1], db[1],
                                                normalise_transport(via), via, "/read" in via, direction, no))
                continue
        if msg.startswith("GPU/"):
            m = _TOPO_PATH.match(msg)
            if m is not None:
                src = _topo_bus(m.group(1))
                for node, nid, hops, bw, typ in _TOPO_CELL.findall(m.group(2)):
                    if node == "GPU" and _topo_bus(nid) != src:
                        log.paths.append(NcclPath(host, src, _topo_bus(nid), int(hops), float(bw), typ, no))
                    elif node == "NVS" and typ == "NVL":
                        log.decisions.append(NcclDecision(host, "nvswitch", msg.strip()[:200], None, no))
                continue
        tree = _TOPO_TREE_GPU.match(msg.lstrip())
        if tree is not None:
            log.topo_gpus.append(NcclTopoGpu(host, _topo_bus(tree.group(1)), int(tree.group(2)), no))
            continue
        if msg.lstrip().startswith("+ NVL[") and "- NVS/" in msg:
            log.decisions.append(NcclDecision(host, "nvswitch", msg.strip(), None, no))
            continue
        if level == "DIAG":  # (added with the reader, 2026-12-01: NCCL 2.31's active diagnostics, "[OK]   p2p: ...")
            d = re.match(r"\[(OK|INFO|WARN|FAIL|ERROR)\]\s+([\w-]+):\s*(.*)", msg)
            if d is not None:
                log.decisions.append(NcclDecision(host, "diag_ok" if d.group(1) == "OK" else "diag_issue",
                                                  f"{d.group(2)}: {d.group(3).strip()}", None, no))
            continue
        if "set by environment" in msg:
            e = _ENV.search(msg)
            if e is not None:
                log.env.append(NcclEnv(host, e.group("name"), e.group("value").strip(), no))
                continue
        if msg.startswith("Loading topology file "):  # (added with the reader, 2026-11-30: the file NCCL_TOPO_FILE names)
            path = msg[len("Loading topology file "):].strip()
            if path and path != "/var/run/nvidia-topologyd/virtualTopology.xml":
                log.env.append(NcclEnv(host, "NCCL_TOPO_FILE", path, no))
                continue
        if "version" in msg or "Version" in msg:
            v = _VERSION.search(msg)
            if v is not None:
                if v.group("v") not in versions:
                    versions[v.group("v")] = None
                if log.version is None:
                    log.version, log.cuda, log.version_line = v.group("v"), v.group("cuda"), no
            d = _DRIVER.search(msg)
            if d is not None and log.cuda_driver is None:
                log.cuda_driver, log.driver_line = _cuda_driver(d.group("v")), no
        if "busId" in msg:
            r = _RANK.search(msg)
            if r is not None:
                key = (host, _pid, r.group("rank"), r.group("busId"))
                comms = seen_ranks.setdefault(key, set())
                # "Init START", "Init COMPLETE" and "Destroy COMPLETE" (no commId) name the same rank
                if not comms or (r.group("commId") is not None and r.group("commId") not in comms):
                    comms.add(r.group("commId"))
                    nv = r.group("nvmlDev")
                    log.ranks.append(NcclRank(
                        host, _pid, int(r.group("rank")), int(r.group("nranks")),
                        int(r.group("cudaDev")), int(nv) if nv is not None else None,
                        bus_id_from_nccl(r.group("busId")), r.group("busId"), r.group("commId"), no))
                continue
        if "P2P" in msg:
            p = _COULD_NOT.search(msg)
            if p is not None:
                log.decisions.append(NcclDecision(host, "p2p_not_enabled", msg.strip(), (int(p.group("a")), int(p.group("b"))), no))
                continue
            p = _P2P_DISABLED.search(msg)
            if p is not None:
                log.decisions.append(NcclDecision(host, "p2p_disabled", msg.strip(), (int(p.group("a")), int(p.group("b"))), no))
            p = _P2P_UNSUPPORTED.match(msg)
            if p is not None:
                log.decisions.append(NcclDecision(host, "p2p_unsupported", msg.strip(), (int(p.group("a")), int(p.group("b"))), no))
            if _ALL_CUDA_P2P_NO.match(msg):
                log.decisions.append(NcclDecision(host, "cuda_p2p_not_all", msg.strip(), None, no))
            elif _BEYOND_LEVEL.match(msg):
                log.decisions.append(NcclDecision(host, "p2p_beyond_level", msg.strip(), None, no))
        if "NVLS multicast support is not available" in msg:
            log.decisions.append(NcclDecision(host, "nvls_unavailable", msg.strip(), None, no))
        elif "NET/IB : No device found" in msg:
            log.decisions.append(NcclDecision(host, "net_ib_missing", msg.strip(), None, no))
        elif "Failed to initialize NET plugin" in msg:
            log.decisions.append(NcclDecision(host, "net_plugin_failed", msg.strip(), None, no))
        elif msg.startswith("RAS declaring peer ") and " as DEAD" in msg:
            log.decisions.append(NcclDecision(host, "ras_peer_dead", msg.strip(), None, no))
        elif msg.startswith("Using network "):
            u = _USING_NET.match(msg)
            if u is not None:
                log.decisions.append(NcclDecision(host, "network", u.group("net"), None, no))
        elif msg.startswith("CC On,"):
            log.decisions.append(NcclDecision(host, "cc_on", msg.strip(), None, no))
        # the address each process uses: kept once per host and address (the interface's name, a space, the IPv4)
        for a in re.finditer(r"(?:Using (?:interface )?|\]|OOB )([A-Za-z][\w.@-]{0,30}):(\d{1,3}(?:\.\d{1,3}){3})<\d+>", msg):
            detail = f"{a.group(1)} {a.group(2)}"
            if not a.group(2).startswith("127.") and (host, detail) not in addresses:
                addresses.add((host, detail))
                log.decisions.append(NcclDecision(host, "interface", detail, None, no))
        if level == "WARN":
            # NCCL refusing a setting's value (its XML reader, an unknown value, an algorithm list, NICs to merge)
            what = None
            if msg.startswith(("XML Parse", "XML Mismatch", "XML Topology has wrong version", "XML Graph has wrong version",
                               "Error : XML parser is limited to ")) or \
                    (msg.startswith("Error : value ") and " too long (max " in msg) or \
                    (msg.startswith("Attribute ") and " of node " in msg and msg.rstrip().endswith(" not found")):
                what = "xml"
            elif re.match(r"NCCL_[A-Z0-9_]+: unknown value\b", msg):
                what = msg.split(":", 1)[0]
            elif msg.startswith("Unrecognized element token \"") and " when parsing" in msg:
                what = "NCCL_ALGO/NCCL_PROTO"
            elif (msg.startswith("TOPO/NET : Only matched ") and " requested" in msg) or \
                    msg.startswith("TOPO/NET : Could not force merge NICs"):
                what = "NCCL_NET_FORCE_MERGE"
            if what is not None:
                log.decisions.append(NcclDecision(host, "setting_refused", what, None, no))
        # errors
        result: Optional[str] = None
        t = _TRACE.match(msg) if level == "INFO" and " -> " in msg else None
        if t is not None:
            result = NCCL_RESULTS.get(int(t.group("code")))
            loc = t.group("loc")
        rn = _RESULT_NAME.search(line) if "nccl" in line else None
        if rn is not None:
            result = "nccl" + rn.group(1)
        low = None
        if result is None and level in ("WARN", "TEXT", "ABORT"):
            low = msg.lower()
            if level != "TEXT" and ("cuda failure" in low or "cuda ipc handle" in low):
                result = "ncclUnhandledCudaError"  # CUDACHECK's result; the quoted words are CUDA's (changed with log.py)
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
            log.messages.append(NcclMessage(host, level, loc, msg.strip(), result, cmsg, cnum, no))
    log.hosts = list(hosts)
    log.versions = list(versions)
    return log
