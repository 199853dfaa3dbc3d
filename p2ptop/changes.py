"""What changed between two snapshots of one host: links going down or up, counters rising, PCIe
links retraining, GPUs lost or back, NVML calls starting to fail, P2P status changing.

``diff(old, new)`` returns :class:`Change` events in a stable order; the dashboard marks them in its
views and writes them to its events log. This module imports nothing of ours but the model.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Optional

from .model import GPU, P2P_STATUS_TEXT, Snapshot

#: NVIDIA's DCGM counts NVLink CRC errors a problem only from 100 per second on a link (see diagnose.py).
CRC_RATE_LIMIT = 100.0
CRC_COUNTERS = ("crc_flit", "crc_data")

#: Change kinds, with the severity each carries.
KINDS = {
    "nvlink.down": "problem",
    "nvlink.up": "info",
    "nvlink.counter": "warning",  # replay or recovery errors rising: the link had to retrain or replay
    "nvlink.crc": "info",  # CRC errors rising slower than CRC_RATE_LIMIT per link: corrected by retry
    "nvlink.crc_fast": "warning",  # CRC errors rising at CRC_RATE_LIMIT or more per second on a link
    "pcie.replay": "warning",
    "pcie.retrain": "warning",
    "gpu.lost": "problem",
    "gpu.back": "info",
    "gpu.added": "info",
    "nvml.failing": "problem",
    "nvml.recovered": "info",
    "p2p.status": "warning",
    # from NVML events (p2ptop/live/events.py), the moment they arrive rather than at a refresh
    "gpu.xid": "problem",
    "gpu.ecc_dbe": "problem",
    "gpu.ecc_sbe": "warning",
    "gpu.clock": "info",
    "gpu.event": "info",
    # from the live path: how this host's NVLink counters are read (a slower round where nothing batched answers)
    "nvml.counters": "info",
    # from the live path: the static parts are read again less often than every 5 minutes (a full read is long here)
    "nvml.static": "info",
}


@dataclass(frozen=True)
class Change:
    kind: str  # a key of KINDS
    subject: str  # "host", "gpu:N", "pair:A-B"
    text: str  # one line a person reads
    at: str  # ISO 8601 time (UTC) of the snapshot that showed it

    @property
    def severity(self) -> str:
        return KINDS[self.kind]

    @property
    def gpus(self) -> tuple[int, ...]:
        """The GPU indices the change is about (none for host changes)."""
        kind, _, rest = self.subject.partition(":")
        if kind == "gpu":
            return (int(rest),)
        if kind == "pair":
            a, b = rest.split("-")
            return int(a), int(b)
        return ()


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _seconds_between(a: Optional[str], b: Optional[str]) -> Optional[float]:
    try:
        seconds = (_dt.datetime.fromisoformat(b) - _dt.datetime.fromisoformat(a)).total_seconds()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return seconds if seconds > 0 else None


def _lost_reason(gpu: GPU) -> Optional[str]:
    for why in gpu.na.values():
        if "lost" in why.lower():
            return why
    if "handle" in gpu.na:
        return gpu.na["handle"]
    return None


def _pcie_text(gpu: GPU) -> str:
    return f"Gen{gpu.pcie_gen_cur if gpu.pcie_gen_cur is not None else '?'} x{gpu.pcie_width_cur if gpu.pcie_width_cur is not None else '?'}"


def _gpu_changes(old: GPU, new: GPU, at: str, seconds: Optional[float],
                 link_seconds: Optional[dict[tuple[int, int], float]] = None) -> list[Change]:
    subj = f"gpu:{new.index}"
    out: list[Change] = []
    rising: dict[str, list[tuple[int, int, int]]] = {}  # counter -> (link, rise, now)
    link_seconds = link_seconds or {}
    lost_old, lost_new = _lost_reason(old), _lost_reason(new)
    if lost_new and not lost_old:
        return [Change("gpu.lost", subj, f"GPU{new.index} lost: {lost_new}", at)]
    if lost_old and not lost_new:
        out.append(Change("gpu.back", subj, f"GPU{new.index} answers again", at))
    old_links = {link.link: link for link in old.nvlinks}
    for link in new.nvlinks:
        before = old_links.get(link.link)
        if before is None:
            continue
        if before.active and link.state == "inactive":
            out.append(Change("nvlink.down", subj, f"GPU{new.index} NVLink {link.link} went down", at))
        elif before.state == "inactive" and link.active:
            out.append(Change("nvlink.up", subj, f"GPU{new.index} NVLink {link.link} came up", at))
        for name, value in link.counters.items():
            prev = before.counters.get(name)
            if value is not None and prev is not None and value > prev:
                rising.setdefault(name, []).append((link.link, value - prev, value))
    for name, links in rising.items():  # one event per GPU and counter, however many links moved
        total = sum(d for _, d, _ in links)
        where = f"NVLink {links[0][0]}" if len(links) == 1 else f"{len(links)} NVLinks ({', '.join(str(l) for l, _, _ in links)})"
        now_total = sum(v for _, _, v in links)
        text = f"GPU{new.index} {where} {name} errors +{total} (now {now_total})"
        kind = "nvlink.counter"
        if name in CRC_COUNTERS:
            rates = [d / s for l, d, _ in links for s in [link_seconds.get((new.index, l), seconds)] if s]
            worst = max(rates) if len(rates) == len(links) else None
            kind = "nvlink.crc_fast" if worst is None or worst >= CRC_RATE_LIMIT else "nvlink.crc"
            if worst is not None:
                text += f", at most {worst:.1f}/s on a link ({'over' if kind == 'nvlink.crc_fast' else 'under'} the {CRC_RATE_LIMIT:g}/s that matters)"
        out.append(Change(kind, subj, text, at))
    if (old.pcie_replay_counter is not None and new.pcie_replay_counter is not None
            and new.pcie_replay_counter > old.pcie_replay_counter):
        out.append(Change("pcie.replay", subj, f"GPU{new.index} PCIe replays +{new.pcie_replay_counter - old.pcie_replay_counter} "
                                              f"(now {new.pcie_replay_counter})", at))
    if (old.pcie_gen_cur, old.pcie_width_cur) != (new.pcie_gen_cur, new.pcie_width_cur) and None not in (
        old.pcie_gen_cur, old.pcie_width_cur, new.pcie_gen_cur, new.pcie_width_cur
    ):
        out.append(Change("pcie.retrain", subj, f"GPU{new.index} PCIe retrained {_pcie_text(old)} -> {_pcie_text(new)}"
                                               f" (max Gen{new.pcie_gen_max} x{new.pcie_width_max})", at))
    newly_failing = sorted(set(new.na) - set(old.na))
    if newly_failing:
        shown = ", ".join(f"{k}: {new.na[k]}" for k in newly_failing[:3])
        more = f" and {len(newly_failing) - 3} more" if len(newly_failing) > 3 else ""
        out.append(Change("nvml.failing", subj, f"GPU{new.index} NVML calls now failing: {shown}{more}", at))
    return out


def diff(old: Optional[Snapshot], new: Snapshot,
         link_seconds: Optional[dict[tuple[int, int], float]] = None) -> list[Change]:
    """The changes from ``old`` to ``new`` (empty when there is no old snapshot to compare).
    ``link_seconds``: (GPU, link) -> the seconds a link's counter rise covers where that is longer than the
    time between the snapshots (counters read in a slower round: p2ptop.sources.nvlink_fields)."""
    if old is None:
        return []
    at = new.source.taken_at or _now()
    seconds = _seconds_between(old.source.taken_at, new.source.taken_at)
    out: list[Change] = []
    for key in sorted(set(new.na) - set(old.na)):
        out.append(Change("nvml.failing", "host", f"NVML {key} failing: {new.na[key]}", at))
    for key in sorted(set(old.na) - set(new.na)):
        out.append(Change("nvml.recovered", "host", f"NVML {key} answers again", at))
    new_gpus = {g.index: g for g in new.gpus}
    for g in old.gpus:
        if g.index not in new_gpus:
            out.append(Change("gpu.lost", f"gpu:{g.index}", f"GPU{g.index} is gone (NVML no longer lists it)", at))
    old_gpus = {g.index: g for g in old.gpus}
    for g in new.gpus:
        if g.index in old_gpus:
            out.extend(_gpu_changes(old_gpus[g.index], g, at, seconds, link_seconds))
        else:
            out.append(Change("gpu.added", f"gpu:{g.index}", f"GPU{g.index} appeared ({g.name or 'name N/A'})", at))
    old_pairs = {(p.a, p.b): p for p in old.pairs}
    for p in new.pairs:
        before = old_pairs.get((p.a, p.b))
        if before is None:
            continue
        for cap, status in p.p2p.items():
            prev = before.p2p.get(cap)
            if status is not None and prev is not None and status != prev:
                out.append(Change("p2p.status", f"pair:{p.a}-{p.b}",
                                  f"GPU{p.a}->GPU{p.b} P2P {cap}: {P2P_STATUS_TEXT.get(prev, prev)} -> "
                                  f"{P2P_STATUS_TEXT.get(status, status)}", at))
    return out
