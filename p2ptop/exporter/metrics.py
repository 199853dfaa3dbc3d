"""One snapshot (with its findings, knowledge-base matches and copy tests) -> Prometheus metric families.

Labels follow NVIDIA dcgm-exporter's (``gpu``, ``UUID``, ``pci_bus_id``, ``modelName``, ``Hostname``)
so a dashboard can join the two on ``Hostname`` and ``UUID``. Pair metrics carry the GPU the data
comes from (``gpu``, ``UUID``) and the one it goes to (``peer_gpu``); the peer's UUID and every GPU's
other labels are on ``p2ptop_gpu_info`` (join on ``Hostname`` and ``gpu``): at 72 GPUs a host has 5,112
ordered pairs, and each label repeated on every pair series costs scrape time and Prometheus memory. Every family is listed in :data:`METRICS` with its help text: the
Grafana test and the alert rules check their queries against that list.

Values read from NVML, demo files or logs are label values, never metric names; prometheus-client
escapes them.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from ..bench.judge import JUDGED
from ..findings import SEVERITIES, Finding
from ..model import P2P_CAPS, BenchResult, Snapshot

GPU_LABELS = ("gpu", "UUID", "pci_bus_id", "modelName", "Hostname")
PAIR_LABELS = ("Hostname", "gpu", "UUID", "peer_gpu")  # the peer's UUID and the rest: join p2ptop_gpu_info on Hostname, gpu
P2P_CODES = {"OK": 0, "CHIPSET_NOT_SUPPORTED": 1, "GPU_NOT_SUPPORTED": 2, "TOPOLOGY_NOT_SUPPORTED": 3,
             "DISABLED_BY_REGKEY": 4, "NOT_SUPPORTED": 5, "UNKNOWN": 6}
SEVERITY_VALUE = {s: i for i, s in enumerate(SEVERITIES)}  # ok 0, info 1, warning 2, problem 3

#: name (as scraped; counters with their _total) -> (type, help). The exporter emits these and no others.
METRICS: dict[str, tuple[str, str]] = {
    "p2ptop_source_info": ("gauge", "Where the figures come from: kind nvml|demo|replay; simulated=true for demos and replays of demos"),
    "p2ptop_simulated": ("gauge", "1 when the figures are simulated (a demo, or a replay of one), 0 for a live host"),
    "p2ptop_gpus": ("gauge", "GPUs in the last read"),
    "p2ptop_gpu_info": ("gauge", "One per GPU, with its identity as labels (dcgm-exporter's label names)"),
    "p2ptop_gpu_lost": ("gauge", "1 when NVML says the GPU is lost"),
    "p2ptop_p2p_ok": ("gauge", "1 when NVML reports P2P OK for the ordered pair and capability, 0 when not"),
    "p2ptop_p2p_status_code": ("gauge", "NVML P2P status (nvmlGpuP2PStatus_t: 0 OK, 1 chipset not supported, 2 GPU not supported, "
                                        "3 topology not supported, 4 disabled by regkey, 5 not supported, 6 unknown)"),
    "p2ptop_pair_path_info": ("gauge", "Path class of the ordered pair as nvidia-smi topo -m prints it (NV#, PIX, PXB, PHB, NODE, SYS)"),
    "p2ptop_pair_nvlinks": ("gauge", "Active NVLinks joining the pair"),
    "p2ptop_pair_expected_gbps": ("gauge", "What the pair's link should give one way (raw link rate, GB/s)"),
    "p2ptop_nvlinks_active": ("gauge", "Active NVLinks of the GPU"),
    "p2ptop_nvlinks_down": ("gauge", "NVLinks of the GPU that are not active"),
    "p2ptop_nvlink_active": ("gauge", "1 when the NVLink is active, 0 when down"),
    "p2ptop_nvlink_errors_total": ("counter", "NVLink error counter of the link as NVML reports it (replay, recovery, crc_flit, crc_data)"),
    "p2ptop_pcie_link_gen_current": ("gauge", "Current PCIe generation of the GPU's link"),
    "p2ptop_pcie_link_gen_max": ("gauge", "Highest PCIe generation the GPU and slot can reach"),
    "p2ptop_pcie_link_width_current": ("gauge", "Current PCIe width (lanes)"),
    "p2ptop_pcie_link_width_max": ("gauge", "Widest PCIe link the GPU and slot can reach"),
    "p2ptop_pcie_replay_total": ("counter", "PCIe replay counter of the GPU"),
    "p2ptop_gpu_utilization_percent": ("gauge", "GPU utilisation at the read (tells a link trained low under load from an idle one)"),
    "p2ptop_copy_test_gbps": ("gauge", "Last copy-test figure of the ordered pair, per test (GB/s)"),
    "p2ptop_copy_test_expected_gbps": ("gauge", "What the link should give for that test (GB/s)"),
    "p2ptop_copy_test_expected_share": ("gauge", "Last copy-test figure over what the link should give (0..1; healthy from 0.7)"),
    "p2ptop_copy_test_latency_seconds": ("gauge", "Last copy-test latency of the ordered pair, per test"),
    "p2ptop_copy_test_result": ("gauge", "1 per ordered pair tested, with its status and verdict as labels"),
    "p2ptop_copy_test_timestamp_seconds": ("gauge", "When the pair's last copy test started (Unix time)"),
    "p2ptop_copy_test_age_seconds": ("gauge", "Seconds since the pair's last copy test started"),
    "p2ptop_findings": ("gauge", "Findings by severity and key (id)"),
    "p2ptop_finding": ("gauge", "One per finding that is not ok, with its subject (host, gpu:N, pair:A-B)"),
    "p2ptop_worst_severity": ("gauge", "Worst finding of the host: 0 ok, 1 info, 2 warning, 3 problem"),
    "p2ptop_kb_match_score": ("gauge", "Knowledge-base entries the findings match, with their score (0..1)"),
    "p2ptop_read_ok": ("gauge", "1 when the last read (NVML, demo or file) succeeded, 0 when it failed"),
    "p2ptop_read_error_info": ("gauge", "1 while the last read failed, with its error as a label"),
    "p2ptop_reads_total": ("counter", "Reads attempted"),
    "p2ptop_read_failures_total": ("counter", "Reads that failed"),
    "p2ptop_read_duration_seconds": ("gauge", "How long the last read and its diagnosis took"),
    "p2ptop_data_age_seconds": ("gauge", "Seconds since the figures served were read (a scrape never waits for a read)"),
    "p2ptop_copy_tests_skipped_total": ("counter", "Scheduled copy tests skipped, by reason (busy: a GPU was in use)"),
}


def _family(name: str, labels: Iterable[str]) -> Metric:
    kind, doc = METRICS[name]
    if kind == "counter":
        return CounterMetricFamily(name[: -len("_total")], doc, labels=list(labels))
    return GaugeMetricFamily(name, doc, labels=list(labels))


def _s(v: Any) -> str:
    return "" if v is None else str(v)


@dataclass
class Families:
    """Builds families by name, in METRICS order."""

    fams: dict[str, Metric] = field(default_factory=dict)
    labels: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def add(self, name: str, labels: tuple[str, ...], values: Iterable[str], value: float) -> None:
        fam = self.fams.get(name)
        if fam is None:
            fam = self.fams[name] = _family(name, labels)
            self.labels[name] = labels
        fam.add_metric([_s(v) for v in values], value)

    def ordered(self) -> list[Metric]:
        return [self.fams[n] for n in METRICS if n in self.fams]


def hostname_of(snap: Optional[Snapshot], fallback: str) -> str:
    return (snap.source.hostname if snap is not None and snap.source.hostname else None) or fallback


def _unix(iso: Optional[str]) -> Optional[float]:
    if not iso:
        return None
    try:
        t = _dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=_dt.timezone.utc)
    return t.timestamp()


def snapshot_families(snap: Snapshot, findings: list[Finding], matches: list[dict[str, Any]],
                      bench: list[BenchResult], host: str, fabric: Any) -> Families:
    """Everything that changes only when a new read arrives (ages are added at scrape time)."""
    f = Families()
    src = snap.source
    sim = bool(src.simulated or src.kind == "demo")
    f.add("p2ptop_source_info", ("Hostname", "kind", "detail", "simulated"),
          (host, src.kind, src.detail, "true" if sim else "false"), 1)
    f.add("p2ptop_simulated", ("Hostname",), (host,), 1 if sim else 0)
    f.add("p2ptop_gpus", ("Hostname",), (host,), len(snap.gpus))
    ident = {g.index: (g.index, g.uuid, g.pci_bus_id, g.name, host) for g in snap.gpus}
    uuid = {g.index: g.uuid for g in snap.gpus}
    for g in snap.gpus:
        lab = ident[g.index]
        f.add("p2ptop_gpu_info", GPU_LABELS + ("architecture", "driver_version"), lab + (g.architecture, snap.driver_version), 1)
        lost = any("lost" in why.lower() for why in g.na.values())
        f.add("p2ptop_gpu_lost", GPU_LABELS, lab, 1 if lost else 0)
        active = [l for l in g.nvlinks if l.active]
        if g.nvlinks:
            f.add("p2ptop_nvlinks_active", GPU_LABELS, lab, len(active))
            f.add("p2ptop_nvlinks_down", GPU_LABELS, lab, sum(1 for l in g.nvlinks if l.state == "inactive"))
        for l in g.nvlinks:
            if l.state in ("active", "inactive"):
                f.add("p2ptop_nvlink_active", GPU_LABELS + ("link",), lab + (l.link,), 1 if l.active else 0)
            for counter, v in sorted(l.counters.items()):
                if v is not None:
                    f.add("p2ptop_nvlink_errors_total", GPU_LABELS + ("link", "counter"), lab + (l.link, counter), v)
        for name, v in (("p2ptop_pcie_link_gen_current", g.pcie_gen_cur), ("p2ptop_pcie_link_gen_max", g.pcie_gen_max),
                        ("p2ptop_pcie_link_width_current", g.pcie_width_cur), ("p2ptop_pcie_link_width_max", g.pcie_width_max),
                        ("p2ptop_pcie_replay_total", g.pcie_replay_counter), ("p2ptop_gpu_utilization_percent", g.utilization_gpu)):
            if v is not None:
                f.add(name, GPU_LABELS, lab, v)
    for p in snap.pairs:
        if p.a not in ident or p.b not in ident:
            continue
        pl = (host, p.a, uuid[p.a], p.b)
        for cap in P2P_CAPS:
            st = p.p2p.get(cap)
            if st is None:
                continue
            f.add("p2ptop_p2p_ok", PAIR_LABELS + ("capability",), pl + (cap,), 1 if st == "OK" else 0)
            f.add("p2ptop_p2p_status_code", PAIR_LABELS + ("capability",), pl + (cap,), P2P_CODES.get(st, 6))
        path = fabric.path_class(p.a, p.b)
        if path:
            f.add("p2ptop_pair_path_info", PAIR_LABELS + ("path",), pl + (path,), 1)
        f.add("p2ptop_pair_nvlinks", PAIR_LABELS, pl, fabric.nvlink_count(p.a, p.b))
        exp = fabric.expected(p.a, p.b).gbps
        if exp:
            f.add("p2ptop_pair_expected_gbps", PAIR_LABELS, pl, exp)
    for r in bench:
        if r.a not in ident or r.b not in ident:
            continue
        pl = (host, r.a, uuid[r.a], r.b)
        f.add("p2ptop_copy_test_result", PAIR_LABELS + ("status", "verdict", "simulated"),
              pl + (r.status, r.verdict or "", "true" if r.simulated else "false"), 1)
        ts = _unix(r.started_at)
        if ts is not None:
            f.add("p2ptop_copy_test_timestamp_seconds", PAIR_LABELS, pl, ts)
        for m in r.measurements:
            if m.value is None:
                continue
            if m.unit == "us":
                f.add("p2ptop_copy_test_latency_seconds", PAIR_LABELS + ("test",), pl + (m.name,), m.value / 1e6)
                continue
            f.add("p2ptop_copy_test_gbps", PAIR_LABELS + ("test",), pl + (m.name,), m.value)
            if m.expected:
                f.add("p2ptop_copy_test_expected_gbps", PAIR_LABELS + ("test",), pl + (m.name,), m.expected)
                if m.name in JUDGED:
                    f.add("p2ptop_copy_test_expected_share", PAIR_LABELS + ("test",), pl + (m.name,), round(m.value / m.expected, 4))
    counts: dict[tuple[str, str], int] = {}
    worst = 0
    for x in findings:
        counts[(x.severity, x.id)] = counts.get((x.severity, x.id), 0) + 1
        worst = max(worst, SEVERITY_VALUE.get(x.severity, 0))
        if x.severity != "ok":
            f.add("p2ptop_finding", ("Hostname", "severity", "id", "subject"), (host, x.severity, x.id, x.subject), 1)
    for (sev, fid), n in sorted(counts.items()):
        f.add("p2ptop_findings", ("Hostname", "severity", "id"), (host, sev, fid), n)
    f.add("p2ptop_worst_severity", ("Hostname",), (host,), worst)
    for m in matches:
        f.add("p2ptop_kb_match_score", ("Hostname", "entry", "confidence", "failure_class"),
              (host, m["id"], m["confidence"], m.get("failure_class")), m["score"])
    return f
