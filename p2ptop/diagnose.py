"""Findings from a snapshot: what is wrong, or worth knowing, per host, GPU and pair.

``findings_for(snapshot)`` is the one entry point the dashboard, ``explain``, ``doctor`` and the
report use. Host facts (``snapshot.host``) and copy-test results (``snapshot.bench``) add to it.
"""

from __future__ import annotations

from typing import Any, Optional

from .bench.judge import bench_findings
from .fabric import Fabric
from .findings import FACT_KEYS, Finding, gpu_subject, pair_subject
from .model import GPU, P2P_STATUS_TEXT, Pair, Snapshot

CONSUMER_BRANDS = {"GEFORCE", "TITAN", "GEFORCE_RTX", "TITAN_RTX"}
WORKSTATION_BRANDS = {"QUADRO", "QUADRO_RTX", "NVIDIA_RTX", "NVS"}
BUSY_PERCENT = 20  # a GPU busier than this is "under load" for PCIe link judgements


def product_class(gpu: GPU) -> Optional[str]:
    """consumer, workstation or data-centre, from the NVML brand and the name."""
    brand = (gpu.brand or "").upper()
    if brand in CONSUMER_BRANDS or "GeForce" in (gpu.name or ""):
        return "consumer"
    if brand in WORKSTATION_BRANDS:
        return "workstation"
    return "data-centre" if brand or gpu.name else None


#: NVLink counters that mean a link had to replay or retrain. CRC counters alone are corrected by
#: retry: NVIDIA's DCGM treats them as a problem only at 100 or more per second on a link
#: (DCGM_LIMIT_MAX_NVLINK_CRC_ERROR in dcgmlib's GpuHardwareLimits.h: "RM has informed us that CRC
#: errors only matter at rates of 100+ per second"), which only a rate between two reads can show.
LINK_FAULT_COUNTERS = ("replay", "recovery")
CRC_RATE_LIMIT = 100.0


def nvlink_error_total(gpu: GPU, names: Optional[tuple[str, ...]] = None) -> Optional[int]:
    """The sum of the GPU's NVLink error counters (``names`` only, where given) that were read; None,
    not 0, when none was (an imported paste, NVML not answering): N/A is not a count of zero."""
    if not gpu.nvlinks:
        return 0  # no NVLink, no NVLink error
    read = [v for l in gpu.nvlinks for k, v in l.counters.items() if v is not None and (names is None or k in names)]
    return sum(read) if read else None


def nvlink_counters_na(gpu: GPU) -> Optional[str]:
    """Why no NVLink error counter of the GPU could be read (e.g. "not in the paste"), or None when one was."""
    if not gpu.nvlinks or nvlink_error_total(gpu) is not None:
        return None
    why = [v for l in gpu.nvlinks for k, v in l.na.items() if k == "counters" or k.startswith("counters.")]
    return why[0] if why else "not read"


def p2p_unknown(pair: Optional[Pair]) -> Optional[str]:
    """Why the pair's P2P status is not known: read or write was not read (None, e.g. "not in the
    paste", or NVML could not say) and neither was refused. None when the status is known. A status
    not known is never taken as working: no finding, state or fact assumes P2P works."""
    if pair is None:
        return "not read for this pair"
    caps = ("read", "write")
    if any(pair.p2p.get(c) not in (None, "OK") for c in caps):
        return None  # refused: known, and a problem of its own
    missing = [c for c in caps if pair.p2p.get(c) is None]
    if not missing:
        return None
    why = sorted({pair.na.get(f"p2p.{c}") or "not read" for c in missing})
    return f"{' and '.join(missing)} {', '.join(why)}"


def gpu_facts(gpu: GPU) -> dict:
    facts = {
        "gpu.name": gpu.name,
        "gpu.brand": gpu.brand,
        "gpu.consumer": product_class(gpu) == "consumer",
        "gpu.product_class": product_class(gpu),
        "gpu.architecture": gpu.architecture,
        "gpu.virtualization": gpu.virtualization_mode,
        "gpu.nvlink_down": sum(1 for l in gpu.nvlinks if l.state == "inactive"),
        "gpu.nvlink_errors": nvlink_error_total(gpu),  # None (no fact) where no counter was read
        "gpu.nvlink_replay_recovery": nvlink_error_total(gpu, LINK_FAULT_COUNTERS),
        "gpu.fabric_state": gpu.fabric.state,
        "gpu.fabric_status": gpu.fabric.status,
        "gpu.pcie_gen_cur": gpu.pcie_gen_cur,
        "gpu.pcie_gen_max": gpu.pcie_gen_max,
        "gpu.pcie_width_cur": gpu.pcie_width_cur,
        "gpu.pcie_width_max": gpu.pcie_width_max,
        "gpu.mig": {"Enabled": True, "Disabled": False}.get(gpu.mig_mode or ""),
    }
    lost = any("lost" in why.lower() for why in gpu.na.values())
    if lost:
        facts["gpu.lost"] = True
    return {k: v for k, v in facts.items() if v is not None}


def _gpu_findings(gpu: GPU) -> list[Finding]:
    out: list[Finding] = []
    facts = gpu_facts(gpu)
    subj = gpu_subject(gpu.index)
    if facts.get("gpu.lost"):
        out.append(Finding("gpu.lost", subj, "problem", f"GPU{gpu.index}: NVML reports the GPU is lost",
                           [f"{k}: {v}" for k, v in gpu.na.items() if "lost" in v.lower()][:3], facts))
    down = [l.link for l in gpu.nvlinks if l.state == "inactive"]
    if down and gpu.active_links:
        out.append(Finding("nvlink.down", subj, "problem",
                           f"GPU{gpu.index}: {len(down)} of {len(gpu.nvlinks)} NVLinks down (links {', '.join(map(str, down))})",
                           [f"NVML NVLink state link {l} = inactive" for l in down], facts))
    elif down and not gpu.active_links:
        out.append(Finding("nvlink.all_down", subj, "problem", f"GPU{gpu.index}: all {len(down)} NVLinks are down",
                           ["NVML NVLink state = inactive on every link"], facts))
    errs = {l.link: {k: v for k, v in l.counters.items() if v} for l in gpu.nvlinks}
    errs = {k: v for k, v in errs.items() if v}
    if errs:
        ev = [f"link {k}: " + ", ".join(f"{n}={c}" for n, c in v.items()) for k, v in errs.items()]
        faults = [k for k, v in errs.items() if any(c in v for c in LINK_FAULT_COUNTERS)]
        if faults:
            out.append(Finding("nvlink.errors", subj, "warning",
                               f"GPU{gpu.index}: NVLink replay or recovery errors on link{'s' if len(faults) > 1 else ''} "
                               f"{', '.join(map(str, faults))}", ev, facts))
        else:
            out.append(Finding("nvlink.crc_counted", subj, "info",
                               f"GPU{gpu.index}: NVLink CRC errors counted on {len(errs)} links (corrected by retry; "
                               f"a problem only when they rise by {CRC_RATE_LIMIT:g}+ per second on a link)", ev, facts))
    if gpu.pcie_degraded:
        busy = gpu.utilization_gpu is not None and gpu.utilization_gpu >= BUSY_PERCENT
        width_low = gpu.pcie_width_cur is not None and gpu.pcie_width_max is not None and gpu.pcie_width_cur < gpu.pcie_width_max
        text = f"PCIe Gen{gpu.pcie_gen_cur} x{gpu.pcie_width_cur} of Gen{gpu.pcie_gen_max} x{gpu.pcie_width_max}"
        if width_low or busy:
            f = dict(facts, **{"gpu.pcie_degraded_under_load": True})
            load = f"{gpu.utilization_gpu}% busy" if gpu.utilization_gpu is not None else "load not known"
            out.append(Finding("pcie.degraded", subj, "problem", f"GPU{gpu.index}: {text} ({load})",
                               [f"NVML current/max link: {text}", f"utilization {load}"], f))
        elif gpu.utilization_gpu is None:
            out.append(Finding("pcie.low_load_unknown", subj, "info",
                               f"GPU{gpu.index}: {text}; load not known, so an idle slow-down cannot be told from a fault",
                               [f"NVML current/max link: {text}", "utilization N/A"], facts))
        else:
            f = dict(facts, **{"gpu.pcie_idle_downclock": True})
            out.append(Finding("pcie.idle_downclock", subj, "info",
                               f"GPU{gpu.index}: {text} while idle (links slow down when idle; not a fault)",
                               [f"NVML current/max link: {text}", f"utilization {gpu.utilization_gpu}%"], f))
    if facts.get("gpu.consumer"):
        out.append(Finding("gpu.consumer", subj, "info",
                           f"GPU{gpu.index}: {gpu.name} is a consumer card; NVIDIA's stock driver offers no PCIe P2P on most of them",
                           [f"NVML brand {gpu.brand}, name {gpu.name}"], facts))
    if gpu.fabric.state not in (None, "NOT_SUPPORTED", "COMPLETED") or (gpu.fabric.status not in (None, "Success")):
        out.append(Finding("fabric.not_ready", subj, "problem",
                           f"GPU{gpu.index}: NVSwitch fabric registration {gpu.fabric.state} ({gpu.fabric.status})",
                           [f"NVML fabric state {gpu.fabric.state}, status {gpu.fabric.status}"], facts))
    return out


def pair_facts(snapshot: Snapshot, fabric: Fabric, a: int, b: int, gpu_cache: Optional[dict] = None) -> dict[str, Any]:
    """The facts of an ordered pair: path, NVLinks, NVML P2P status, and both GPUs' facts merged
    (``gpu_cache``: GPU index -> gpu_facts, shared over one snapshot's pairs)."""
    pair = snapshot.pair(a, b)
    path = fabric.path_class(a, b)
    facts: dict = {"pair.path": path, "pair.nvlink_count": fabric.nvlink_count(a, b), "pair.cross_socket": path == "SYS"}
    if pair is None:
        return facts
    for cap, status in pair.p2p.items():
        if status is not None:
            facts[f"p2p.{cap}"] = status
    for i in (a, b):
        gpu = snapshot.gpu(i)
        if gpu:
            if gpu_cache is None:
                gf = gpu_facts(gpu)
            elif i in gpu_cache:
                gf = gpu_cache[i]
            else:
                gf = gpu_cache[i] = gpu_facts(gpu)
            for k, v in gf.items():
                if isinstance(v, bool):
                    facts[k] = facts.get(k, False) or v
                elif isinstance(v, int) and k in ("gpu.nvlink_down", "gpu.nvlink_errors", "gpu.nvlink_replay_recovery"):
                    facts[k] = max(facts.get(k, 0), v)
                else:
                    facts.setdefault(k, v)
    return facts


def pair_findings(snapshot: Snapshot, fabric: Fabric, a: int, b: int, gpu_cache: Optional[dict] = None) -> list[Finding]:
    pair = snapshot.pair(a, b)
    if pair is None:
        return []
    path = fabric.path_class(a, b)
    out: list[Finding] = []
    subj = pair_subject(a, b)
    bad = {cap: s for cap, s in pair.p2p.items() if cap in ("read", "write") and s not in (None, "OK")}
    unknown = None if bad else p2p_unknown(pair)
    if not bad and unknown is None and (path not in ("PHB", "NODE", "SYS") or fabric.nvlink_count(a, b)):
        return out  # a healthy pair: no finding, and its facts (both GPUs' merged) are not gathered
    facts = pair_facts(snapshot, fabric, a, b, gpu_cache)
    if bad:
        reasons = sorted(set(bad.values()))
        text = ", ".join(P2P_STATUS_TEXT.get(r, r) for r in reasons)
        out.append(Finding("p2p.not_supported", subj, "problem", f"GPU{a}->GPU{b}: P2P not available ({text}); copies go through host memory",
                           [f"NVML P2P {cap} = {P2P_STATUS_TEXT.get(s, s)}" for cap, s in bad.items()] + [f"path {path}"], facts))
    elif unknown is not None:
        # the paste (or NVML) says nothing of P2P here: say so; never "P2P works" on a status not read
        out.append(Finding("p2p.unknown", subj, "info", f"GPU{a}->GPU{b}: P2P status not known ({unknown}); path {path}",
                           [f"P2P status read/write: N/A ({unknown})", f"path {path}"], facts))
    elif path in ("PHB", "NODE", "SYS") and not facts["pair.nvlink_count"]:
        out.append(Finding("p2p.through_cpu", subj, "info", f"GPU{a}->GPU{b}: P2P works but crosses the CPU ({path})",
                           [f"path {path}"], facts))
    return out


def pair_fact_findings(snapshot: Snapshot, fabric: Optional[Fabric] = None) -> list[Finding]:
    """One ok finding "pair.facts" per ordered pair, healthy or not: its path, NVLink count and NVML
    P2P status as facts, so the matcher knows the pairs that have no finding of their own (a log
    about a healthy NV18 pair meets the pair's facts, not a question about them). Not shown by doctor
    or the report; explain and the knowledge matching use them."""
    fabric = fabric or Fabric(snapshot)
    out = []
    for a in snapshot.gpu_indices:
        for b in snapshot.gpu_indices:
            if a != b:
                out.extend(pair_fact_finding(snapshot, fabric, a, b))
    return out


def pair_fact_finding(snapshot: Snapshot, fabric: Fabric, a: int, b: int) -> list[Finding]:
    """The "pair.facts" finding of one ordered pair (none where the snapshot has no such pair): what
    explain and doctor match with, and the dashboard's pair panel too, so all three agree."""
    pair = snapshot.pair(a, b)
    if a == b or pair is None:
        return []
    facts = pair_facts(snapshot, fabric, a, b)
    unknown = p2p_unknown(pair)
    p2p = ", ".join(f"{k[4:]} {v}" for k, v in facts.items() if k.startswith("p2p."))
    if unknown:
        p2p = f"{p2p + '; ' if p2p else ''}N/A: {unknown}"
    return [Finding("pair.facts", pair_subject(a, b), "ok",
                    f"GPU{a}->GPU{b}: {facts['pair.path']}, {facts['pair.nvlink_count']} NVLinks",
                    [f"path {facts['pair.path']}, {facts['pair.nvlink_count']} NVLinks, NVML P2P {p2p or 'N/A'}"], facts)]


def findings_for(snapshot: Snapshot, fabric: Optional[Fabric] = None) -> list[Finding]:
    """Every finding about a snapshot: GPUs, ordered pairs, then host facts and copy tests where present."""
    fabric = fabric or Fabric(snapshot)
    out: list[Finding] = []
    cache: dict = {}  # gpu_facts per GPU, for this call's pairs
    for gpu in snapshot.gpus:
        out.extend(_gpu_findings(gpu))
    for a in snapshot.gpu_indices:
        for b in snapshot.gpu_indices:
            if a != b:
                out.extend(pair_findings(snapshot, fabric, a, b, cache))
    out.extend(host_findings(snapshot, fabric))
    for f in bench_findings(snapshot, fabric):
        if f.pair:  # copy-test findings carry the pair's facts too, so the KB can weigh both
            f.facts = {**pair_facts(snapshot, fabric, *f.pair, cache), **f.facts}
        out.append(f)
    return out


# --- host findings (from snapshot.host, see p2ptop/host/) -----------------------------------

SHM_MIN_MB = 512  # below this /dev/shm is too small for NCCL's shared-memory transport
#: Xid codes that mean hardware or link trouble (NVIDIA's Xid catalogue), rather than an application error.
SERIOUS_XIDS = {48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120, 140}
TRUE_WORDS = {"1", "true", "yes", "on"}


def host_fact(snapshot: Snapshot, name: str) -> dict[str, Any]:
    """One collected host fact ({value, how, na}), or an empty dict when it was not collected."""
    f = ((snapshot.host or {}).get("facts") or {}).get(name)
    return f if isinstance(f, dict) else {}


def host_facts(snapshot: Snapshot) -> dict[str, Any]:
    """The scalar host facts of the vocabulary, from snapshot.host and what NVML said about the host."""
    facts: dict[str, Any] = {}
    for name, f in ((snapshot.host or {}).get("facts") or {}).items():
        v = f.get("value") if isinstance(f, dict) else None
        if isinstance(v, (str, int, float, bool)) and (name in FACT_KEYS or name.startswith("env.")):
            facts[name] = v
    if "as_root" in (snapshot.host or {}):
        facts["host.as_root"] = bool(snapshot.host["as_root"])
    for key, value in (("host.driver_version", snapshot.driver_version),
                       ("host.cuda_driver_version", snapshot.cuda_driver_version),
                       ("host.nvml_version", snapshot.nvml_version),
                       ("host.cc_mode", snapshot.cc_mode)):
        if value:
            facts.setdefault(key, value)
    if "host.driver_major" not in facts and facts.get("host.driver_version", "").split(".")[0].isdigit():
        facts["host.driver_major"] = int(facts["host.driver_version"].split(".")[0])
    facts["host.gpu_count"] = len(snapshot.gpus)
    if _gpu_virtualization(snapshot):
        facts["host.virtualized"] = True
    if any(l.remote_type == "NVSWITCH" for g in snapshot.gpus for l in g.nvlinks) or host_fact(snapshot, "host.nvswitch_pci_count").get("value"):
        facts["host.nvswitch_present"] = True
    elif snapshot.gpus and all(_nvlinks_known(g) for g in snapshot.gpus):
        # every GPU's NVLinks were read (none, or all to known remotes) and none leads to an NVSwitch:
        # a known "no", which rules NVLS and Fabric Manager entries out (knowledge/fact_roles.py)
        facts["host.nvswitch_present"] = False
    return facts


def _nvlinks_known(gpu: GPU) -> bool:
    """Were the GPU's NVLinks read? NVML's "Not Supported" is its answer for a GPU without usable
    NVLink (a PCIe card, or links disabled by the driver), a known none; other reasons are unknowns."""
    why = " ".join(v for k, v in gpu.na.items() if "nvlink" in k.lower())
    if why and "not supported" not in why.lower():
        return False
    return all(l.remote_type not in (None, "") for l in gpu.nvlinks)


def _gpu_virtualization(snapshot: Snapshot) -> list[str]:
    return sorted({g.virtualization_mode for g in snapshot.gpus if g.virtualization_mode not in (None, "NONE")})


def _pcie_pairs(snapshot: Snapshot, fabric: Fabric) -> list[tuple[int, int]]:
    """Ordered pairs with no NVLink between them: their peer traffic, if any, goes over PCIe."""
    idx = snapshot.gpu_indices
    return [(a, b) for a in idx for b in idx if a != b and not fabric.nvlink_count(a, b)]


def _gpu_index_by_bdf(snapshot: Snapshot) -> dict[str, int]:
    from .sources.sysfs import sysfs_bdf

    out = {}
    for g in snapshot.gpus:
        try:
            out[sysfs_bdf(g.pci_bus_id)] = g.index
        except (ValueError, AttributeError):
            continue
    return out


def _is_true(value: Any) -> bool:
    return str(value).strip().lower() in TRUE_WORDS


def _summary(facts: dict[str, Any]) -> str:
    parts = [facts.get("host.os"), facts.get("host.kernel") and f"kernel {facts['host.kernel']}",
             facts.get("host.driver_version") and f"driver {facts['host.driver_version']}",
             facts.get("host.cuda_driver_version") and f"CUDA {facts['host.cuda_driver_version']}"]
    if facts.get("host.virtualized"):
        parts.append(f"VM ({facts.get('host.hypervisor') or 'hypervisor not named'})")
    if facts.get("host.container"):
        parts.append(f"container ({facts['host.container']})")
    return "Host: " + ", ".join(p for p in parts if p)


def host_findings(snapshot: Snapshot, fabric: Fabric) -> list[Finding]:
    facts = host_facts(snapshot)
    pcie_pairs = _pcie_pairs(snapshot, fabric)
    if len(snapshot.gpus) >= 2 and not pcie_pairs:
        # every pair joined by NVLink: no peer traffic crosses PCIe, where ACS and the IOMMU act (a text's topology
        # matrix gives the same fact, evidence/read.py)
        facts["host.all_pairs_nvlink"] = True
    out = [Finding("host.facts", "host", "ok", _summary(facts),
                   [f"{k} = {v}" for k, v in facts.items() if not k.startswith("env.")], facts)]

    def add(id: str, severity: str, summary: str, evidence: list[str]) -> None:
        out.append(Finding(id, "host", severity, summary, evidence, dict(facts)))

    def how(name: str) -> str:
        f = host_fact(snapshot, name)
        if not f:
            return f"{name}: not collected"
        value = f["value"] if f.get("value") is not None else f"N/A ({f.get('na')})" if f.get("na") else "none"
        return f"{name} = {value}: {f.get('how')}"

    if facts.get("host.iommu_active"):
        args = facts.get("host.kernel_iommu_args") or "no IOMMU switch on the kernel command line"
        add("iommu.on", "warning" if pcie_pairs else "info",
            f"The IOMMU translates DMA ({args}): PCIe peer traffic goes through it and may be refused or slow"
            + ("" if pcie_pairs else "; the GPUs talk over NVLink, which it does not touch"),
            [how("host.iommu_active"), how("host.kernel_iommu_args")])
    out.extend(_acs_findings(snapshot, fabric, facts, pcie_pairs, add, how))
    if facts.get("host.virtualized"):
        modes = _gpu_virtualization(snapshot)
        add("host.virtualized", "info",
            f"Running in a VM ({facts.get('host.hypervisor') or 'hypervisor not named'}"
            + (f"; GPU virtualization {', '.join(modes)}" if modes else "") + "): peer-to-peer depends on what the hypervisor exposes",
            [how("host.hypervisor_flag"), how("host.hypervisor")] + [f"NVML virtualization mode {m}" for m in modes])
    shm = facts.get("host.shm_mb")
    if isinstance(shm, int) and shm < SHM_MIN_MB:
        where = f" in a {facts['host.container']} container" if facts.get("host.container") else ""
        add("host.shm_small", "warning",
            f"/dev/shm is {shm} MiB{where}: too small for NCCL's shared-memory transport (e.g. docker run --shm-size=1g)",
            [how("host.shm_mb"), how("host.container")])
    _env_findings(facts, add, how)
    fm = facts.get("host.fabric_manager")
    if facts.get("host.nvswitch_present") and not facts.get("host.virtualized") and fm in ("not running", "failed", "not installed"):
        add("fabric_manager.not_running", "problem",
            f"NVSwitch system but Fabric Manager is {fm}: GPUs cannot join the NVLink fabric",
            [how("host.fabric_manager"), "NVLink remotes or PCI functions are NVSwitches"])
    regkeys = facts.get("host.registry_dwords")
    if regkeys:
        add("driver.registry_keys", "warning" if "p2p" in regkeys.lower() else "info",
            f"Driver registry keys are set (RegistryDwords={regkeys})", [how("host.registry_dwords")])
    _xid_findings(snapshot, add, how)
    return out


def _acs_findings(snapshot, fabric, facts, pcie_pairs, add, how) -> list[Finding]:
    """ACS redirect: a problem for each PCIe pair NVML offers P2P to, with a redirecting bridge above
    either GPU (with the pair's facts, so the knowledge base sees both); information only when no
    such pair exists (every pair uses NVLink, or NVML refuses P2P anyway)."""
    records = host_fact(snapshot, "host.acs").get("value") or []
    redirect = host_fact(snapshot, "host.acs_redirect")
    if facts.get("host.acs_redirect"):
        by_bdf = _gpu_index_by_bdf(snapshot)
        above: dict[int, list[dict]] = {}
        for r in records:
            if r.get("redirect") and r.get("gpu") in by_bdf:
                above.setdefault(by_bdf[r["gpu"]], []).append(r)
        out = []
        for a, b in pcie_pairs:
            hits = above.get(a, []) + above.get(b, [])
            pair = snapshot.pair(a, b)
            if not hits or (pair and pair.p2p.get("read") not in (None, "OK")):
                continue  # a pair NVML already refuses P2P has its own finding
            bridges = ", ".join(sorted({r["bridge"] for r in hits}))
            out.append(Finding("acs.redirect", pair_subject(a, b), "problem",
                               f"GPU{a}->GPU{b}: ACS redirect at {bridges} sends their PCIe peer traffic up to the root complex (slow or refused)",
                               [f"{r['bridge']} ({r['role']} above {r['gpu']}): {r['acs']} ({r['how']})" for r in hits],
                               dict(facts, **pair_facts(snapshot, fabric, a, b))))
        if not out:
            add("acs.redirect", "info",
                f"ACS redirects peer traffic at {facts.get('host.acs_redirect_bridges')}; no GPU pair uses PCIe P2P through them",
                [how("host.acs_redirect_bridges")])
        return out
    if "root" in str(redirect.get("na") or "") and pcie_pairs:
        add("acs.unreadable", "info", "ACS on the bridges above the GPUs cannot be read without root; run doctor as root to check it",
            [how("host.acs_redirect")])
    return []


def _env_findings(facts, add, how) -> None:
    from .nccl.levels import level_name  # here: importing the nccl package reads its log module (9 ms), not for topo

    if _is_true(facts.get("env.NCCL_P2P_DISABLE", "")):
        add("env.p2p_disabled", "problem", "NCCL_P2P_DISABLE is set: NCCL will not use peer-to-peer and copies through host memory",
            [how("env.NCCL_P2P_DISABLE")])
    level = str(facts.get("env.NCCL_P2P_LEVEL", "")).strip().upper()
    level_off = level_name(level) == "LOC" if level else False  # NCCL's own reading: LOC, 0 (ncclGetLevel)
    if level_off:
        add("env.p2p_level_off", "problem", f"NCCL_P2P_LEVEL={level}: NCCL uses no peer-to-peer between GPUs",
            [how("env.NCCL_P2P_LEVEL")])
    if _is_true(facts.get("env.NCCL_SHM_DISABLE", "")):
        add("env.shm_disabled", "info", "NCCL_SHM_DISABLE is set: without P2P, NCCL falls back to the network transport",
            [how("env.NCCL_SHM_DISABLE")])
    shown = ("env.NCCL_P2P_DISABLE", "env.NCCL_SHM_DISABLE")
    from .host.env import changes_transport  # here, not at the top: the dashboard's first frame needs no host facts

    # only what changes P2P/transport choice; the rest (NCCL_DEBUG, CUDA_HOME, ...) is doctor's "Other"
    rest = {k: v for k, v in facts.items() if k.startswith("env.") and changes_transport(k[4:]) and k not in shown
            and not (k == "env.NCCL_P2P_LEVEL" and level_off)}
    if rest:
        add("env.set", "info", "Variables that change P2P are set: " + ", ".join(f"{k[4:]}={v}" for k, v in rest.items()),
            [how(k) for k in rest])


def _xid_findings(snapshot, add, how) -> None:
    xids = host_fact(snapshot, "host.xid").get("value") or []
    if not xids:
        return
    codes = sorted({x["xid"] for x in xids})
    serious = [c for c in codes if c in SERIOUS_XIDS]
    last = xids[-1]
    add("xid.recent", "problem" if serious else "warning",
        f"Kernel log has {len(xids)} NVIDIA Xid message(s), codes {', '.join(map(str, codes))}; latest Xid {last['xid']} on {last['pci']}",
        [f"Xid {x['xid']} on {x['pci']}: {x['text']}" for x in xids[-5:]] + [how("host.xid_codes")])
