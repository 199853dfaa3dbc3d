"""NCCL INFO/WARN logs, through the one reader p2ptop.nccl.log.

Facts: nccl.version, host.cc_mode ("enabled": NCCL's "CC On"), host.container (a Docker or Kubernetes default host name), host.virtualized (WSL2: Windows' default host name), host.cuda_runtime_version (NCCL's "+cudaX.Y"), host.cuda_driver_version
(cudaDriverVersion), env.<VARIABLE> for every "set by environment" (and for NCCL_*/CUDA_VISIBLE_DEVICES
set on a shell line of the paste), per pair pair.path from NCCL's own topology print (NCCL_DEBUG_SUBSYS=GRAPH: NVL as
"NV", NCCL's PIX, PXB, PHB, SYS as nvidia-smi's; host.nvswitch_present where an NVSwitch is among its nodes), per pair
nccl.transport (the worst over the pair's channels) and
nccl.p2p_fallback (SHM/NET on a pair that the paste says can do P2P: its topo path is NV#/PIX/PXB,
its topo -p2p read is OK, or NCCL itself said "Could not enable P2P" / "P2P is disabled between
connected GPUs" for it), nccl.p2p_off_by_path (SHM/NET on a pair whose path crosses the CPU, PHB/NODE/SYS, with no NCCL_P2P_*
setting in the text: NCCL's default P2P level left P2P off there), nccl.p2p_off_by_level (SHM/NET on a pair whose path is above
the NCCL_P2P_LEVEL the text sets: the setting left P2P off there; ``off_by_level``, after every parser), error.nccl (result names, torch's "unhandled system error" ...),
error.text (the first WARN that says something failed, where NCCL names no result), text.tool "nccl-log".

Ranks map to GPUs by bus id where the paste says which bus id is which GPU, else by the device
index NCCL prints (the rank's nvmlDev, which is nvidia-smi's index, else its cudaDev, else the index in
the channel's brackets; with no bracket and no rank line, on one host with ranks under 8, the rank
number). Pairs of ranks on
different hosts are not GPU pairs and give no pair facts.
"""

from __future__ import annotations

import re
from typing import Collection, Optional

from ..nccl import levels
from ..nccl.log import BARE_MESSAGE, SMI_PATH_OF_NCCL, NcclLog, NcclRank, bus_id_from_nccl, read_nccl_log, transport_rank
from .paste import Collector, pair_subject

_SHELL_ENV = re.compile(r"(?:^|[\s;'\"])(?:export\s+)?((?:NCCL|CUDA_VISIBLE|TORCH_NCCL|NVIDIA_VISIBLE)[A-Z0-9_]*)=[\"']?([A-Za-z0-9_.,:/+-]+)")
_DEV_BUS = re.compile(r"dev (\d+)\(=([0-9a-fA-F]+)\)")
P2P_CAPABLE_PATHS = ("NV", "PIX", "PXB")


FAILED_WORDS = re.compile(r"\b(?:fail\w*|error\w*|cannot|can't|unable|no space|timeout|timed out|abort\w*|"
                          r"invalid|mismatch\w*|denied|not permitted|unhandled|no transport found|not (?:supported|compatible)|"
                          r"not found|no (?:\w+ ){0,3}found|duplicate|multiple ranks|missing|exceeds|"
                          # proxy.cc "Rank %d has no transport for send peer %d", search.cc "No path computed to go from",
                          # "Could not find a path for pattern", register.cc "does not satisfy symmetric registration
                          # requirements", dev_runtime.cc "system does not support multimem"
                          r"no (?:transport|path)|could not find|does not (?:satisfy|support)|not compiled with|"
                          # (also what UCX's WARN lines and gdrcopy's kernel lines say when something failed: errors.py)
                          r"could not|incompatible|did not have|no address space|"
                          # dev_runtime_segments.cc (2.30) "Segment %d has unsupported location type %d": a WARN that refuses
                          r"unsupported)\b", re.I)
#: NCCL's own lines as prose reads them (lower case): its INFO and WARN lines (read by this module, not as sentences of a
#: report) and its version line (init.cc: "NCCL version %s+cuda%d.%d", as nccl-tests and PyTorch show it)
PLAIN_LINES = r"nccl (?:info|warn)|^\s*nccl version [\d.]+(?:-\d+)?\+cuda[\d.]+\s*$"
#: WARNs that report no failure of the job: NCCL looks for libibverbs on every host and, without it, goes on over
#: sockets ("Failed to open libibverbs.so[.1]" was a WARN in misc/ibvwrap.cc up to 2.10 and an INFO from 2.11 on,
#: followed by "NCCL INFO Using network Socket" / "NET/Socket"): a host without InfiniBand, not a fault
#: Likewise graph/search.cc's "Could not find a path for pattern %d, falling back to simple order": the search goes on with
#: a plain order of the GPUs (a WARN NCCL prints and continues past)
BENIGN_WARN = re.compile(r"Failed to open libibverbs\.so|falling back to simple order", re.I)
# (WARN texts that refuse a setup without a failure word: init.cc's "Duplicate GPU detected" and "Multiple Ranks are
#  using the same GPU/Partition", nvls.cc's "... not compatible with NCCL_NVLS_ENABLE=1", cudawrap.cc's "CUDA some PFN
#  functions not found in the library" / "missing symbol")
# ("No transport found for rank %d[%lx] -> rank %d[%lx]": transport.cc's WARN when no transport the settings allow
#  (P2P, SHM, NET) can join two ranks; NCCL then returns an error)

def is_p2p_fallback(transport: Optional[str], path: Optional[str] = None, p2p_read: Optional[str] = None) -> bool:
    """NCCL went via SHM or NET on a pair that can do P2P (its path NV#/PIX/PXB, or NVML P2P read OK).
    The rule behind ``nccl.p2p_fallback``; the matcher may apply it with the live host's pair facts."""
    if not transport or transport.startswith("P2P"):
        return False
    return (path is not None and str(path).startswith(P2P_CAPABLE_PATHS)) or p2p_read == "OK"


#: NCCL's default P2P level on Intel x86 (graph/paths.cc ncclTopoCheckP2p: p2pLevel PATH_PXB there, PATH_SYS elsewhere, unless
#: NCCL_P2P_LEVEL says): the paths above it cross the CPU (nvidia-smi's PHB, NODE, SYS)
DEFAULT_P2P_LEVEL = "PXB"
#: the variables that decide P2P themselves: with one of them set, NCCL's choice is the setting's, not the path's
P2P_SETTINGS = ("NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL", "NCCL_P2P_READ_ENABLE", "NCCL_IGNORE_DISABLED_P2P")


def is_p2p_off_by_path(transport: Optional[str], path: Optional[str], settings: Collection[str] = ()) -> bool:
    """NCCL went via SHM or NET on a pair whose path crosses the CPU, with no P2P setting of its own: NCCL's default left
    P2P off there (the pair's traffic goes through host memory). The rule behind ``nccl.p2p_off_by_path``."""
    if not transport or transport.startswith("P2P") or not levels.below_path(DEFAULT_P2P_LEVEL, path):
        return False
    return not any(k in settings for k in P2P_SETTINGS)


def is_p2p_off_by_level(transport: Optional[str], path: Optional[str], level: Optional[str], disable: Optional[str] = None) -> bool:
    """NCCL went via SHM or NET on a pair whose path is above the NCCL_P2P_LEVEL set (graph/paths.cc: P2P only where
    ``path->type <= p2pLevel``), NCCL_P2P_DISABLE not 1: the setting, not the hardware, left P2P off there. The rule behind
    ``nccl.p2p_off_by_level``."""
    if not transport or transport.startswith("P2P") or str(disable or "").strip() == "1":
        return False
    return levels.below_path(level, path)


def off_by_level(c: Collector) -> None:
    """nccl.p2p_off_by_level on every pair of the paste NCCL took off P2P by the NCCL_P2P_LEVEL the text sets (after every
    parser: the variable may come from NCCL's "set by environment" line or a shell line, the path from topo or NCCL)."""
    level = c.get("host", "env.NCCL_P2P_LEVEL")
    if level is None:
        return
    disable = c.get("host", "env.NCCL_P2P_DISABLE")
    for (subj, key), fact in list(c.facts.items()):
        if key != "nccl.transport" or not subj.startswith("pair:"):
            continue
        path = c.get(subj, "pair.path")
        if is_p2p_off_by_level(str(fact.value), path, level, disable):
            a, _, b = subj[5:].partition("-")
            c.add(subj, "nccl.p2p_off_by_level", True, fact.line, severity="problem",
                  summary=f"NCCL went via {fact.value} between GPU{a} and GPU{b}, whose path ({path}, "
                          f"NCCL's {levels.path_type(path)}) is above NCCL_P2P_LEVEL={level} "
                          f"({levels.level_name(level)}): the setting left P2P off there")


def _rank_gpus(c: Collector, log: NcclLog) -> dict[tuple[Optional[str], int], int]:
    """(host, rank) -> GPU index."""
    out: dict[tuple[Optional[str], int], int] = {}
    # "Could not enable P2P between dev 1(=81000) and dev 0(=41000)" says which device has which bus id
    dev_of_bus: dict[str, int] = {}
    for d in log.decisions:
        if d.kind == "p2p_not_enabled":
            for dev, bus in _DEV_BUS.findall(d.detail):
                dev_of_bus.setdefault(bus_id_from_nccl(bus), int(dev))
    for r in log.ranks:
        gpu = c.gpu_of_bus(r.bus_id)
        # nvmlDev is the index nvidia-smi shows (cudaDev counts CUDA_VISIBLE_DEVICES' list)
        out.setdefault((r.host, r.rank), gpu if gpu is not None else r.nvml_dev if r.nvml_dev is not None else r.cuda_dev)
    for ch in log.channels:
        for rank, dev, bus in ((ch.src, ch.src_dev, ch.src_bus), (ch.dst, ch.dst_dev, ch.dst_bus)):
            if (ch.host, rank) in out:
                continue
            gpu = c.gpu_of_bus(bus) if bus else None
            if gpu is None and bus:
                gpu = dev_of_bus.get(bus)
            if gpu is None:
                gpu = dev
            if gpu is not None:
                out[(ch.host, rank)] = gpu
    # channels without brackets (NCCL 2.4: "Ring 00 : 1 -> 0 [receive] via NET/IB/0") and no rank lines:
    # on a log of one host and ranks within one node, rank N is taken as GPU N (torchrun's LOCAL_RANK default)
    if not log.ranks and len(set(ch.host for ch in log.channels)) <= 1 and log.channels \
            and all(ch.src_dev is None and ch.src_bus is None for ch in log.channels) \
            and max(max(ch.src, ch.dst) for ch in log.channels) < 8:
        for ch in log.channels:
            out.setdefault((ch.host, ch.src), ch.src)
            out.setdefault((ch.host, ch.dst), ch.dst)
    # a rank whose GPU nothing names (its rank line not in the paste, a bus id in its brackets that nothing else gives), on a
    # log of one host where every rank known is on the GPU of its own number: rank N on GPU N, the same default
    hosts = {ch.host for ch in log.channels}
    if len(hosts) == 1 and out and all(g == r for (_h, r), g in out.items()) \
            and max(max(ch.src, ch.dst) for ch in log.channels) < 8:
        for ch in log.channels:
            for r in (ch.src, ch.dst):
                if (ch.host, r) not in out and r not in out.values():
                    out[(ch.host, r)] = r
    return out


def _topology(c: Collector, log: NcclLog, gpus: dict[tuple[Optional[str], int], int]) -> None:
    """NCCL's topology print (NCCL_DEBUG_SUBSYS=GRAPH): each pair's path class, and an NVSwitch among the nodes. A GPU
    of the print is known by its bus id: the paste's own (nvidia-smi), a rank line's device, or the tree's rank."""
    nvs = next((d.line for d in log.decisions if d.kind == "nvswitch"), None)
    if nvs is not None:
        c.add("host", "host.nvswitch_present", True, nvs, severity="info",
              summary="NCCL's topology holds an NVSwitch (NVS) joined to the GPUs by NVLink")
    if not log.paths:
        return
    # (host, bus id) -> GPU: the ranks' GPUs as _rank_gpus placed them, by the rank lines' and the tree's bus ids
    gpu_of: dict[tuple[Optional[str], str], int] = {}
    for host, rank, bus in [(r.host, r.rank, r.bus_id) for r in log.ranks] + [(t.host, t.rank, t.bus) for t in log.topo_gpus]:
        g = gpus.get((host, rank))
        if g is not None:
            gpu_of.setdefault((host, bus), g)
    for p in log.paths:
        cls = SMI_PATH_OF_NCCL.get(p.type)
        ga = c.gpu_of_bus(p.src_bus)
        ga = ga if ga is not None else gpu_of.get((p.host, p.src_bus))
        gb = c.gpu_of_bus(p.dst_bus)
        gb = gb if gb is not None else gpu_of.get((p.host, p.dst_bus))
        if cls is None or ga is None or gb is None or ga == gb:
            continue
        a, b = min(ga, gb), max(ga, gb)
        subj = pair_subject(a, b)
        if not c.has(subj, "pair.path"):
            c.add(subj, "pair.path", cls, p.line, severity="info",
                  summary=f"NCCL's topology: GPU{a} <-> GPU{b} {p.type} ({p.bw:g} GB/s, {p.hops} hops)")
            if cls == "SYS":
                c.add(subj, "pair.cross_socket", True, p.line, severity="info")


_DOCKER_HOST = re.compile(r"[0-9a-f]{12}")
_WINDOWS_HOST = re.compile(r"(?:DESKTOP-[A-Z0-9]{7}|LAPTOP-[A-Z0-9]{8})")
_K8S_ALNUM = "[bcdfghjklmnpqrstvwxz2456789]"
_K8S_POD = re.compile(rf"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?-{_K8S_ALNUM}{{6,10}}-{_K8S_ALNUM}{{5}}")


#: NCCL's P2P diagnostic counting the peer accesses that passed ("only 52/56 GPU-to-GPU peer accesses passed verification")
_DIAG_PASSED = re.compile(r"\bonly (\d+)\s*/\s*(\d+)\b.*\bpassed verification\b")


def _diagnostics(c: Collector, log: NcclLog) -> None:
    """NCCL 2.31's active diagnostics (NCCL_RUN_DIAGNOSTICS=1: at communicator init every pair NCCL expects to reach
    directly reads from and writes to its peer and the data is validated; user guide, Troubleshooting > Diagnostics).
    "[OK] p2p: verified P2P access in both directions between every GPU pair" is P2P reads and writes working on every
    pair of the communicator; "[INFO] p2p: only 52/56 GPU-to-GPU peer accesses passed verification" is peer accesses
    whose data or access failed: tool.verification_error, as a copy tool finding wrong data."""
    for d in log.decisions:
        check, _, what = d.detail.partition(": ")
        if check != "p2p":
            continue
        if d.kind == "diag_ok" and what.startswith("verified P2P access"):
            for cap in ("p2p.read", "p2p.write"):
                c.add("host", cap, "OK", d.line, severity="ok",
                      summary="NCCL's diagnostics verified P2P reads and writes between every GPU pair of the communicator")
        elif d.kind == "diag_issue":
            m = _DIAG_PASSED.search(what)
            if m and int(m.group(1)) < int(m.group(2)):
                c.add("host", "tool.verification_error", True, d.line, severity="problem",
                      summary=f"NCCL's diagnostics: only {m.group(1)} of {m.group(2)} peer accesses passed verification")
            elif FAILED_WORDS.search(what):
                c.add("host", "symptom.fails", True, d.line, summary=f"NCCL's diagnostics: p2p: {what[:80]}")


def _ranks_share_a_gpu(c: Collector, log: NcclLog) -> None:
    """``nccl.ranks_share_gpu``: two ranks of one communicator (one commId) on one host print the same bus id. NCCL's init
    refuses that after its first all-gather (src/init.cc: up to 2.28 "Duplicate GPU detected : rank %d and rank %d both on
    CUDA device %lx" for one hostHash and busId, from 2.30 "Multiple Ranks are using the same GPU/Partition" for one GPU
    UUID unless NCCL_MULTI_RANK_GPU_ENABLE=1; both ncclInvalidUsage): the job has fewer GPUs than ranks where it runs.
    Read from the rank lines, which NCCL prints before the WARN (a log cut short, or only INFO lines pasted, still says it)."""
    if any(e.name == "NCCL_MULTI_RANK_GPU_ENABLE" and e.value.strip() == "1" for e in log.env):
        return
    seen: dict[tuple[str, Optional[str], str], NcclRank] = {}
    for r in log.ranks:
        if not r.comm_id:
            continue  # without the communicator's id, ranks of two communicators may share a GPU by design
        other = seen.setdefault((r.comm_id, r.host, r.bus_id), r)
        if other.rank != r.rank:
            c.add("host", "nccl.ranks_share_gpu", True, r.line, severity="problem",
                  summary=f"NCCL: rank {other.rank} and rank {r.rank} of one communicator are on the same GPU "
                          f"(bus id {r.bus_id_raw}{' on ' + r.host if r.host else ''}): NCCL refuses it (Duplicate GPU detected)")
            return


def _ranks_each_see_one_gpu(c: Collector, log: NcclLog) -> None:
    """``host.one_gpu_per_process`` (inferred): ranks of one host in different processes print the same cudaDev and
    different bus ids. NCCL's init line gives each rank's device as its own process numbers it (cudaGetDevice; src/init.cc
    "rank %d nranks %d cudaDev %d [nvmlDev %d] busId %lx"): the same CUDA device on different GPUs means each process's
    CUDA_VISIBLE_DEVICES starts with its own GPU, as Ray's workers and Slurm's --gpus-per-task give it. A setup, no fault:
    NCCL 2.28 on two H200s went via P2P/CUMEM (and P2P/IPC with NCCL_CUMEM_ENABLE=0) with each process seeing one GPU
    (benchmarks/results/h200x2-2026-11-30i), while older releases failed to open the peer's IPC handle (NCCL 2.7's
    "failed to open CUDA IPC handle : 217"); it weighs for the entries whose symptom the text shows."""
    by_host: dict[str, dict[str, NcclRank]] = {}
    for r in log.ranks:
        if r.host and r.pid:
            by_host.setdefault(r.host, {}).setdefault(r.pid, r)
    for host, procs in by_host.items():
        ranks = list(procs.values())
        if len(ranks) < 2 or len({r.cuda_dev for r in ranks}) != 1 or len({r.bus_id for r in ranks}) != len(ranks):
            continue
        a, b = ranks[0], ranks[1]
        c.add("host", "host.one_gpu_per_process", True, b.line, severity="info", inferred=True,
              summary=f"NCCL: ranks {a.rank} and {b.rank} on {host} each run on CUDA device {a.cuda_dev} of their own process, "
                      f"on different GPUs (bus ids {a.bus_id_raw}, {b.bus_id_raw}): each process sees its own GPU only")
        return


#: NCCL 2.5.6 (src/misc/utils.cc getHostHash) made a host's identity its name and /proc/sys/kernel/random/boot_id (or
#: NCCL_HOSTID); before, it was the name alone (with the uts and mnt namespace links from 2.4, the same on every host's
#: root namespaces; NCCL 2.3 and older cut the name at its first dot, NVIDIA/nccl#187)
HOST_HASH_WITH_BOOT_ID = (2, 5, 6)


def _one_name_two_machines(c: Collector, log: NcclLog) -> None:
    """``nccl.hosts_merged``: processes under one host name print different addresses for the same interface (each
    prints the one it uses: bootstrap.cc, misc/socket.cc, the NET transports), so two machines (or two containers)
    carry that name, and NCCL connects ranks under it by P2P or SHM. An NCCL before 2.5.6 takes such ranks for one host
    (its host hash is the name alone) and tries CUDA IPC and shared memory between machines, which cannot work. From
    2.5.6 the hash adds the boot id, so two machines are told apart: there the fact is not drawn (where the log names
    no version it is, inferred)."""
    # log.version is the reader's "\d+.\d+.\d+" (nccl/log.py _VERSION)
    if log.version is not None and tuple(map(int, log.version.split("."))) >= HOST_HASH_WITH_BOOT_ID:
        return
    seen: dict[tuple[Optional[str], str], list[tuple[str, int]]] = {}
    for d in log.decisions:
        if d.kind == "interface" and d.host:
            iface, ip = d.detail.split(" ", 1)
            seen.setdefault((d.host, iface), []).append((ip, d.line))
    for (host, iface), addrs in seen.items():
        if len(addrs) < 2:
            continue
        ch = next((ch for ch in log.channels if ch.host == host and ch.transport.startswith(("P2P", "SHM"))), None)
        if ch is None:
            continue
        (a, _), (b, line) = addrs[0], addrs[1]
        c.add("host", "nccl.hosts_merged", True, line, severity="problem", inferred=log.version is None,
              summary=f"NCCL: processes named {host} use {iface} at {a} and at {b}: two machines (or containers) under "
                      f"one host name, and NCCL connects its ranks there by {ch.transport} (line {ch.line}), as on one host")
        return


def _container_of_hosts(hosts: list[str]) -> Optional[str]:
    """'docker' when every host name is a container id's 12 hex digits (with a letter among them: not a number),
    'kubernetes' when every one is a Deployment pod's name; else None."""
    names = [h for h in hosts if h]
    if not names:
        return None
    if all(_DOCKER_HOST.fullmatch(h) and re.search(r"[a-f]", h) and re.search(r"\d", h) for h in names):
        return "docker"
    if all(_K8S_POD.fullmatch(h) for h in names):
        return "kubernetes"
    return None


def parse(c: Collector) -> bool:
    text = c.paste.text
    if "NCCL" not in text and not BARE_MESSAGE.search(text):
        return False
    log = read_nccl_log(text)
    if not log.is_nccl and not log.messages and log.version is None:
        return False
    c.structured["nccl"] = log
    if log.is_nccl:
        c.kind("nccl-log")
        c.tool("nccl-log", c.paste.first_line(" NCCL INFO ", " NCCL WARN ", "NCCL INFO", "NCCL WARN"))
    if log.version:
        c.add("host", "nccl.version", log.version, log.version_line or 1)
    if log.cuda:
        c.add("host", "host.cuda_runtime_version", log.cuda, log.version_line or 1)
    if log.cuda_driver:
        c.add("host", "host.cuda_driver_version", log.cuda_driver, log.driver_line or 1)
    cc_on = next((d.line for d in log.decisions if d.kind == "cc_on"), None)
    if cc_on is not None:
        # src/init.cc: NVML reports a confidential-computing mode (CC, protected PCIe or NVLink encryption: not which one)
        c.add("host", "host.cc_mode", "enabled", cc_on, severity="info",
              summary="NCCL: a confidential-computing mode is on (CC, or a multi-GPU mode: NCCL does not say which)")
    for d in log.decisions:
        if d.kind != "setting_refused":
            continue
        var = d.detail
        if var == "xml":  # the XML reader's refusal is the file's only where the log shows the file set
            var = next((e.name for e in log.env if e.name in ("NCCL_GRAPH_FILE", "NCCL_TOPO_FILE")), None)
        if var:
            c.add("host", "nccl.setting_refused", var, d.line, severity="problem",
                  summary=f"NCCL refused what {var} gave it (its own WARN)")
            break
    _diagnostics(c, log)
    for e in log.env:
        c.add("host", f"env.{e.name}", e.value, e.line)
    _ranks_share_a_gpu(c, log)
    _ranks_each_see_one_gpu(c, log)
    _one_name_two_machines(c, log)
    for m in log.messages:
        if m.result and m.result != "ncclInProgress":
            c.add("host", "error.nccl", m.result, m.line, again=True)
            c.add("host", "error.text", m.message[:200], m.line)
    # a WARN that says something failed is the symptom even where NCCL names no result (NCCL's WARN() is its
    # error level, src/include/debug.h; "Call to posix_fallocate failed", "Error while creating shared memory")
    if not c.has("host", "error.text"):
        failed = next((m for m in log.warnings if FAILED_WORDS.search(m.message) and not BENIGN_WARN.search(m.message)), None)
        if failed is not None:
            c.add("host", "error.text", failed.message[:200], failed.line)
    # NCCL sets up NVLS (transport/nvls.cc) only where the GPUs report multicast, i.e. on an NVSwitch
    # fabric (NCCL's src/transport/nvls.cc: nvlsSupport from CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED)
    nvls_line = next((m.line for m in log.messages if "nvls.cc" in (m.location or "") or "nvls.cc" in m.message), None)
    if nvls_line is not None:
        c.add("host", "host.nvswitch_present", True, nvls_line, severity="info",
              summary="NCCL set up NVLS (NVLink SHARP), which exists only on NVSwitch fabrics")
    # the host names NCCL prints before every line ("host:pid:tid") say a container where they are a container's own
    # default: Docker names a container's host after the first 12 hex digits of its id (docker run reference:
    # --hostname, default the container id), Kubernetes a pod's after the pod, and a Deployment's pods are
    # "<name>-<pod-template-hash>-<5 characters>" drawn from apimachinery's rand alphabet (no vowels, no 0/1/3)
    kind = _container_of_hosts(log.hosts)
    if kind:
        line = c.paste.first_line(log.hosts[0] + ":")
        c.add("host", "host.container", kind, line, severity="info",
              summary=f"NCCL's host names are {kind}'s own names for a container ({', '.join(log.hosts[:2])})")
        if kind == "kubernetes":
            c.add("host", "host.kubernetes", True, line, severity="info")
    # Windows names a machine "DESKTOP-XXXXXXX" (or "LAPTOP-XXXXXXXX") unless told otherwise, and a WSL distribution takes
    # the Windows host's name (WSL's wsl.conf: [network] hostname defaults to it): NCCL on Linux under such a name runs
    # in WSL2, a Hyper-V VM whose GPUs are paravirtualised
    if log.hosts and all(_WINDOWS_HOST.fullmatch(h or "") for h in log.hosts):
        line = c.paste.first_line(log.hosts[0] + ":")
        c.add("host", "host.virtualized", True, line, severity="info",
              summary=f"NCCL's host name {log.hosts[0]} is Windows' default name: WSL2, a Hyper-V VM")
        c.add("host", "host.hypervisor", "Hyper-V (WSL2)", line, severity="info")
    # pair facts, for ranks on one host
    gpus = _rank_gpus(c, log)
    _topology(c, log, gpus)
    rank_host: dict[int, Optional[str]] = {}
    for r in log.ranks:
        rank_host.setdefault(r.rank, r.host)
    worst: dict[tuple[int, int], tuple[str, int]] = {}
    first: dict[tuple, int] = {}  # each (host, src, dst, transport) once, at its first line: a long log repeats them
    for ch in log.channels:
        k = (ch.host, ch.src, ch.dst, ch.transport)
        if k not in first:
            first[k] = ch.line
    for (host, src, dst, transport), line in first.items():
        if transport.startswith(("NET", "COLLNET")):
            # the network joins nodes: a GPU pair of one host only when both ranks are known to be on it
            hs, hd = rank_host.get(src), rank_host.get(dst)
            if hs is None or hd is None or hs != hd:
                continue
        ga, gb = gpus.get((host, src)), gpus.get((host, dst))
        if ga is None or gb is None or ga == gb:
            continue
        key = (min(ga, gb), max(ga, gb))
        if key not in worst or transport_rank(transport) > transport_rank(worst[key][0]):
            worst[key] = (transport, line)
    refused: dict[tuple[int, int], int] = {}
    for d in log.decisions:
        if d.devs and d.kind in ("p2p_not_enabled", "p2p_disabled"):
            a, b = d.devs
            refused.setdefault((min(a, b), max(a, b)), d.line)
    settings = {k for k in P2P_SETTINGS if k in c.paste.text}  # once: the pair loop below may run 2,556 times (72 GPUs)
    # "Check P2P Type isAllDirectP2p 0 ... isAllCudaP2p 1" (NCCL >= 2.28.9, transport.cc): every pair of local ranks can
    # do CUDA P2P, and some pair is beyond NCCL's P2P level (graph/paths.cc ncclTopoCheckP2p: PATH_PXB by default, PATH_SYS
    # for two GPUs of an AMD host) or needs an intermediate GPU; with no NCCL_P2P_* setting of the text, a pair NCCL then
    # joins via SHM or NET is one whose path crosses the CPU
    beyond = next((d.line for d in log.decisions if d.kind == "p2p_beyond_level"), None)
    for (a, b), (tr, line) in sorted(worst.items()):
        subj = pair_subject(a, b)
        p2p = tr.startswith("P2P")
        c.add(subj, "nccl.transport", tr, line, severity="ok" if p2p else "warning",
              summary=f"NCCL between GPU{a} and GPU{b}: via {tr}")
        if p2p:
            continue
        why_line = refused.get((a, b))
        path = c.get(subj, "pair.path")
        read = c.get(subj, "p2p.read")
        if is_p2p_fallback(tr, path, read) or why_line is not None:
            c.add(subj, "nccl.p2p_fallback", True, why_line or line,
                  summary=f"NCCL went via {tr} between GPU{a} and GPU{b} although P2P is possible there "
                          f"({'path ' + str(path) if path else 'topo -p2p read OK' if read == 'OK' else 'NCCL tried P2P'})")
        elif is_p2p_off_by_path(tr, path, settings):
            c.add(subj, "nccl.p2p_off_by_path", True, line,
                  summary=f"NCCL went via {tr} between GPU{a} and GPU{b}, whose path ({path}) crosses the CPU: NCCL's default "
                          f"leaves P2P off there (no NCCL_P2P_* setting in the text)")
        elif beyond is not None and path is None and not settings:
            c.add(subj, "nccl.p2p_off_by_path", True, beyond, inferred=True,
                  summary=f"NCCL went via {tr} between GPU{a} and GPU{b} (line {line}) although its check found CUDA P2P "
                          f"possible between all local GPUs (isAllCudaP2p 1, isAllDirectP2p 0), with no NCCL_P2P_* setting in "
                          f"the text: the pair's path crosses the CPU, beyond NCCL's default P2P level")
    for (a, b), line in refused.items():
        if (a, b) not in worst and a != b:
            c.add(pair_subject(a, b), "nccl.p2p_fallback", True, line,
                  summary=f"NCCL could not use P2P between GPU{a} and GPU{b}")
    for d in log.decisions:
        # ncclMemAlloc (allocator.cc): CUDA's peer-access query answered 0 for the pair, what topo -p2p r shows as not OK
        if d.kind == "p2p_unsupported" and d.devs and d.devs[0] != d.devs[1]:
            a, b = sorted(d.devs)
            c.add(pair_subject(a, b), "p2p.read", "NOT_SUPPORTED", d.line, severity="problem",
                  summary=f"NCCL: CUDA's peer-access query says no between GPU{a} and GPU{b}")
        # "Check P2P Type ... isAllCudaP2p 0" (NCCL >= 2.28.9): NVML's P2P status is not OK for some pair of the
        # node's GPUs; the pair is not named, so the fact is the host's
        elif d.kind == "ras_peer_dead" and not c.has("host", "symptom.crash"):
            # NCCL's RAS (src/ras/rasnet.cc): a process of the job stopped answering its keep-alives and was declared dead
            c.add("host", "symptom.crash", True, d.line, severity="problem",
                  summary="NCCL RAS: a process of the job stopped answering and was declared dead")
        elif d.kind == "cuda_p2p_not_all" and not c.has("host", "p2p.read"):
            c.add("host", "p2p.read", "NOT_SUPPORTED", d.line, severity="problem",
                  summary="NCCL: NVML reports P2P not supported between some pair of this node's GPUs (isAllCudaP2p 0; "
                          "or the ranks are in containers with separate /dev/shm)")
    _ends_in_setup(c, log)
    return True


def _ends_in_setup(c: Collector, log) -> None:
    """A note, no fact: the paste ends on an NCCL INFO line of the setup, before any channel is connected ("Channel ...
    via ...") or the communicator is complete ("Init COMPLETE", "Connected all rings"), with no warning or error: a job
    that stopped there hung in its setup, or the paste was cut there; the text alone cannot tell which."""
    if not log.is_nccl or log.nccl_lines < 3 or log.channels or log.warnings or c.has("host", "error.text"):
        return
    text = c.paste.text
    if "Init COMPLETE" in text or "Connected all" in text or "busbw" in text:
        return
    last = next((no for no in range(len(c.paste.lines), 0, -1) if c.paste.lines[no - 1].strip()), 0)
    if last and "NCCL INFO" in c.paste.lines[last - 1]:
        c.notes.append(f"the NCCL log ends in NCCL's setup (line {last}), before any channel is connected or 'Init COMPLETE': "
                       "if the job stopped there, it hung in its setup (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,P2P shows "
                       "where); if the paste was cut there, the rest of the log says more")


# NCCL's own advice inside a WARN names a variable it does not see set ("Set NCCL_MULTI_RANK_GPU_ENABLE=1 to enable
# this", "Set NCCL_IGNORE_NET_MISMATCH=1 to continue.", "Disable NVLS (NCCL_NVLS_ENABLE=0) if you wish to avoid this
# error"), and so do its error strings, which frameworks print in their exceptions (init.cc ncclGetErrorString: "unhandled
# cuda error (run with NCCL_DEBUG=INFO for details)", "invalid usage (run with NCCL_DEBUG=WARN for details)")
_ADVICE_BEFORE = re.compile(r"(?:\bSet|\(|\bset it to|\(run with)\s*$")  # ("you can set" is advice whatever follows: _ADVICE_ALONE)
_ADVICE_AFTER = re.compile(r"^\)?\s*(?:to (?:enable|disable|avoid|ignore|proceed|continue|confirm)\b|if you (?:wish|want|still want)\b|"
                           r"for details\b)", re.I)
#: ... and where the words before the variable are advice whatever follows (NCCL's sources: graph/paths.cc "P2P is disabled
#: between connected GPUs 0 and 1. You can repress this message with NCCL_IGNORE_DISABLED_P2P=1.", misc/cudawrap.cc
#: "cuMem host allocations do not appear to be working; falling back to a /dev/shm/ based implementation. ... To disable
#: this warning, set NCCL_CUMEM_HOST_ENABLE=0", net_ib's "To disable this warning, set NCCL_IB_WARN_RAIL_LOCAL=0",
#: "Please set NCCL_ELASTIC_BUFFER_REGISTER=1 and retry", "Please retry by setting NCCL_MNNVL_ENABLE=0"; a reply's
#: "you can set ..."); and an example a message gives (MindSpore's invalid-device-ordinal hint: "For example, if export
#: CUDA_VISIBLE_DEVICES=4,5,6, the 'device_id' can be 0,1,2")
_ADVICE_ALONE = re.compile(r"(?:\byou can set|\brepress this message with|\bthis warning,? set|\bplease set|\bretry by setting|"
                           r"(?:\bfor example|\bfor instance|\be\.g\.)[,:]?\s+(?:if\s+|with\s+|set\s+|setting\s+)?)\s*$", re.I)
_WORKAROUND = re.compile(r"\b(works?|worked|working|fix(?:es|ed)?|solv\w*|resolv\w*|restor\w*|helps?|helped|avoid\w*|workaround)\b|解决|正常|就好", re.I)


_SENTENCE_END = re.compile(r"[.!?;](?=\s|$)|。|；")


def _around(line: str, start: int, end: int) -> str:
    """What of ``line`` speaks of the setting at [start, end): 60 characters each side, and its whole sentence (a setting in
    a sentence that says it restores, fixes or works around the trouble is advice: "Set NCCL_X=0 in the base image to
    force the legacy path, restoring multi-GPU collectives")."""
    a = max((m.end() for m in _SENTENCE_END.finditer(line, 0, start)), default=0)
    b = _SENTENCE_END.search(line, end)
    return line[min(a, max(0, start - 60)):max(b.start() if b else len(line), end + 60)]


def parse_env_lines(c: Collector) -> bool:
    """Variables set on a shell line of the paste ("NCCL_P2P_DISABLE=1 python ...", "export
    CUDA_VISIBLE_DEVICES=0"); a sentence saying that a setting *fixes* the problem is left to the
    prose parser (symptom.fixed_by_p2p_disable), it is no setting of the failing run."""
    text = c.paste.text
    if "NCCL_" not in text and "VISIBLE_DEVICES" not in text:
        return False
    found = False
    for no, line in enumerate(c.paste.lines, 1):
        if "NCCL_" not in line and "VISIBLE_DEVICES" not in line:
            continue
        if " set by environment" in line:
            continue
        for m in _SHELL_ENV.finditer(line):
            if _WORKAROUND.search(_around(line, m.start(), m.end())):
                continue
            before = line[max(0, m.start() - 30):m.start() + 1]
            if _ADVICE_ALONE.search(before) or \
                    (_ADVICE_BEFORE.search(before) and _ADVICE_AFTER.search(line[m.end():m.end() + 40])):
                continue
            value = m.group(2).rstrip(".,)")
            seen = c.structured.setdefault("env_values", {}).setdefault(m.group(1), [])
            if value not in seen:
                seen.append(value)  # every value the paste sets (the fact keeps the first): launch asks for one throughout
            found = c.add("host", f"env.{m.group(1)}", value, no) or found
    return found
