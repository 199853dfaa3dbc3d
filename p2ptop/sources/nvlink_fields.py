"""NVLink states and error counters through ``nvmlDeviceGetFieldValues``: which field asks what, and, per
GPU, which way the driver answers, learned at each full read (:class:`CounterPlan`).

Imports nothing of NVML: :mod:`p2ptop.sources.nvml` makes the calls. Field ids are nvml.h's (the same
numbers as nvidia-ml-py 13.x's ``NVML_FI_DEV_*``).

The ways a GPU's link counters can be read without one call per link and counter, best first:

- **per link in the batch** ("direct"): the scoped fields ``NVML_FI_DEV_NVLINK_ERROR_DL_REPLAY`` (161) and
  ``..._DL_RECOVERY`` (162) with ``scopeId`` = link give the replay and recovery counters of every link; the
  per-link ids ``NVML_FI_DEV_NVLINK_{CRC_FLIT,CRC_DATA,REPLAY,RECOVERY}_ERROR_COUNT_L0..L11`` give the four
  counters of links 0 to 11 (nvml.h has no ids past link 11).
- **a total that moves** ("total"): ``..._ERROR_COUNT_TOTAL`` (38 flit CRC, 45 data CRC, 52 replay,
  59 recovery) is one counter summed over the GPU's links; when it moves, that counter is read link by link.
- **a CRC count that moves** ("dl_crc"): ``NVML_FI_DEV_NVLINK_ERROR_DL_CRC`` (163, scope = link). nvml.h
  calls it "NVLink CRC Error Counter" and does not say whether it counts flow-control (flit) CRC errors,
  data CRC errors or both (DCGM reads it as its device-level ``nvlink_crc_err`` and reads the flit and data
  counters per link with nvmlDeviceGetNvLinkErrorCounter). So it is never shown as either counter: it
  only triggers a per-link read of the CRC counters it was seen to follow, on this GPU, at a full read
  (:func:`dl_crc_follows`). A CRC counter it was not seen to follow is not covered by it.
- **the round**: a counter no batched field covers is read link by link, a slice of the links each refresh,
  so that every such link is read once every :data:`ROUND_REFRESHES` refreshes; all of a link's round counters
  are read at the same refresh, so a rise is a rate over the time since that link was last read.
- **what it costs**: a batched field is no saving where the driver serves each link's counters with a query of
  its own. Measured on 2 H200s (driver 580.159.04, 2026-11-27, benchmarks/results/h200x2-2026-11-27/): the
  scoped fields 161/162/163 answer, but 18 links of them cost 14-16 ms whether one field or three are asked a
  link (one ~0.8 ms query a link), as much as nvmlDeviceGetNvLinkErrorCounter's ~0.8 ms a counter; the link
  states (165) of 18 links cost 0.2-0.5 ms. So the plan times the full read's counter fields: where asking them
  every refresh would cost more than :data:`FIELDS_EVERY_REFRESH_S`, the per-link fields join the round too
  (``fields_in_round``), read for the links of each refresh's slice only.

A field whose own ``nvmlReturn`` is not Success counts as not answering.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
TYPE_CHECKING = False  # typing is not imported at run time (start-up); the annotations are strings
if TYPE_CHECKING:
    from typing import Optional

#: our counter names -> nvmlNvLinkErrorCounter_t (nvmlDeviceGetNvLinkErrorCounter's third argument)
NVLINK_COUNTERS = {"replay": 0, "recovery": 1, "crc_flit": 2, "crc_data": 3}
CRC_KINDS = ("crc_flit", "crc_data")

FI_LINK_COUNT = 91  # NVML_FI_DEV_NVLINK_LINK_COUNT: NVLinks present on the device
FI_PCIE_REPLAY_COUNTER = 94  # NVML_FI_DEV_PCIE_REPLAY_COUNTER
FI_NVLINK_GET_STATE = 165  # NVML_FI_DEV_NVLINK_GET_STATE, scope = link
FI_COUNTER_TOTALS = {38: "crc_flit", 45: "crc_data", 52: "replay", 59: "recovery"}  # ..._ERROR_COUNT_TOTAL
FI_DL = {161: "replay", 162: "recovery"}  # NVML_FI_DEV_NVLINK_ERROR_DL_REPLAY / _RECOVERY, scope = link
FI_DL_CRC = 163  # NVML_FI_DEV_NVLINK_ERROR_DL_CRC, scope = link: which CRC it counts is not documented
#: per-link ids, links 0..11: (kind, link) -> field id
FI_LINK_IDS: dict[tuple[str, int], int] = {}
for _kind, _low, _high in (("crc_flit", 32, 96), ("crc_data", 39, 102), ("replay", 46, 108), ("recovery", 53, 114)):
    for _l in range(6):
        FI_LINK_IDS[(_kind, _l)] = _low + _l
        FI_LINK_IDS[(_kind, 6 + _l)] = _high + _l
LINK_ID_MAX = 11

#: a counter no batched field covers is read once every this many refreshes (a slice of the links each refresh)
ROUND_REFRESHES = 12  # 24 s at the dashboard's 2 s (2 H200s: 2 of 18 links a GPU, ~5 ms a GPU a refresh)
#: the per-link counter fields are asked every refresh only where the full read's call for them took at most
#: this long (one GPU); else they join the round (2 H200s: 14-16 ms for 18 links, one query a link)
FIELDS_EVERY_REFRESH_S = 0.002
#: and all GPUs' counter fields asked every refresh (the totals, the per-link fields not in the round) may cost at most
#: this long together (1 % of a core at the dashboard's 2 s); beyond it every GPU's go into the round, its totals
#: asked once every ROUND_REFRESHES refreshes (at 72 GPUs, four totals at ~0.2 ms a field would be ~58 ms a refresh)
COUNTERS_EVERY_REFRESH_HOST_S = 0.02

Field = tuple[int, int]  # (field id, scope id); scope 0 for device-level fields


def counter_fields(links: list[int]) -> list[Field]:
    """Every counter field a full read tries on a GPU with these links (totals, scoped, per-link ids)."""
    out: list[Field] = [(fid, 0) for fid in FI_COUNTER_TOTALS]
    for link in links:
        out += [(fid, link) for fid in FI_DL] + [(FI_DL_CRC, link)]
    out += [(FI_LINK_IDS[(kind, link)], 0) for link in links if link <= LINK_ID_MAX for kind in NVLINK_COUNTERS]
    return out


def dl_crc_follows(per_link: dict[int, tuple[Optional[int], Optional[int], Optional[int]]]) -> tuple[str, ...]:
    """Which CRC counters field 163 was seen to follow on one GPU: ``per_link`` maps a link to its
    (field 163, crc_flit, crc_data) read at the same full read. A kind is followed only when 163 equals
    the sum of the kinds on every link and that kind counted something somewhere (all zero proves nothing)."""
    rows = [(c, f, d) for c, f, d in per_link.values() if c is not None]
    if not rows:
        return ()
    for kinds in (("crc_flit", "crc_data"), ("crc_data",), ("crc_flit",)):
        def total(f: Optional[int], d: Optional[int]) -> Optional[int]:
            parts = [f if k == "crc_flit" else d for k in kinds]
            return None if any(p is None for p in parts) else sum(parts)  # type: ignore[misc]
        if all(c == total(f, d) for c, f, d in rows):
            seen = tuple(k for k in kinds if any((f if k == "crc_flit" else d) for _, f, d in rows))
            if seen:
                return seen
    return ()


@dataclass
class CounterPlan:
    """How one GPU's NVLink counters are read between full reads (learned at the full read)."""

    links: list[int]
    direct: dict[Field, tuple[int, str]] = field(default_factory=dict)  # field -> (link, kind) it gives
    totals: dict[int, str] = field(default_factory=dict)  # total field id -> kind (answered at the full read)
    dl_crc: dict[int, tuple[str, ...]] = field(default_factory=dict)  # link -> CRC kinds field 163 follows there
    by_call: dict[int, list[str]] = field(default_factory=dict)  # link -> kinds read by a call, in the round
    fields_in_round: bool = False  # the per-link fields cost too much to ask every refresh: the round asks them
    field_cost_s: float = 0.0  # what the full read's call for the counter fields took (one GPU)
    totals_in_round: bool = False  # all GPUs' totals every refresh cost too much: this GPU's every ROUND_REFRESHES
    totals_cost_s: float = 0.0  # what a call for the totals alone took at the full read (one GPU)
    pos: int = 0  # where the round goes on

    @property
    def round(self) -> list[tuple[int, str]]:
        """(link, kind) of every counter read in the round (by a call, or by its field where those are in it)."""
        items = [(link, kind) for link, kinds in self.by_call.items() for kind in kinds]
        if self.fields_in_round:
            items += sorted(set(self.direct.values()))
            items += [(link, kind) for link, kinds in self.dl_crc.items() for kind in kinds]
        return items

    def per_link_fields(self) -> list[Field]:
        return list(self.direct) + [(FI_DL_CRC, link) for link in self.dl_crc]

    def fields(self, links: "Optional[list[int]]" = None, totals: bool = True) -> list[Field]:
        """The counter fields a refresh asks (beyond link states and the PCIe replays): the totals (unless
        ``totals`` is False: in the round and not this GPU's turn), and the per-link fields, of every link or,
        where they are in the round, of this refresh's ``links``."""
        per = self.per_link_fields()
        if self.fields_in_round:
            wanted = set(links or ())
            per = [f for f in per if (self.direct[f][0] if f in self.direct else f[1]) in wanted]
        return ([(fid, 0) for fid in self.totals] if totals else []) + per

    def every_refresh_cost(self) -> float:
        """What this GPU's counter fields asked every refresh cost, as timed at the full read."""
        return (self.totals_cost_s if self.totals and not self.totals_in_round else 0.0) + \
            (self.field_cost_s if self.per_link_fields() and not self.fields_in_round else 0.0)

    def covered_by_total(self, kind: str) -> bool:
        return kind in self.totals.values()

    def direct_pairs(self) -> set[tuple[int, str]]:
        return set(self.direct.values())

    def slice(self) -> list[int]:
        """The links whose round counters this refresh reads: every such link once per ROUND_REFRESHES refreshes."""
        links = sorted({link for link, _ in self.round})
        if not links:
            return []
        n = math.ceil(len(links) / ROUND_REFRESHES)
        start = self.pos % len(links)
        part = (links + links)[start:start + n]
        self.pos = (start + n) % len(links)
        return part

    def way(self) -> str:
        """One line: how this GPU's counters are read."""
        n = len(self.links) * len(NVLINK_COUNTERS)
        parts = []
        if self.direct:
            parts.append(f"{len(self.direct)} per link in one field-values call"
                         + (f" (in the round: {self.field_cost_s * 1000:.1f} ms for them at the full read)"
                            if self.fields_in_round else ""))
        if self.totals:
            parts.append(f"{', '.join(sorted(self.totals.values()))} through the GPU's totals")
        if self.dl_crc:
            kinds = sorted({k for ks in self.dl_crc.values() for k in ks})
            parts.append(f"{'/'.join(kinds)} through field 163 (NVLink CRC) per link")
        if self.totals_in_round:
            parts.append(f"the totals in a round of {ROUND_REFRESHES} refreshes (all GPUs' every refresh cost too much)")
        if self.round:
            parts.append(f"{len(self.round)} of {n} in a round of {ROUND_REFRESHES} refreshes")
        return "; ".join(parts) or "none (no counter answers)"
