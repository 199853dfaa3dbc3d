"""The odd one out: each host against its siblings (same GPU model and topology).

For every ordered pair and copy test, a host's figure is compared with the median of the same pair and
test on its siblings: below ``ODD_SHARE`` of it, the pair is odd ("node17 GPU3->GPU5 reaches 61 % of
what that pair reaches on 63 identical nodes"). A link down where most siblings have it up, and link
fault counters (replay, recovery) where the siblings' median is far lower, are odd too. Groups need
``MIN_SIBLINGS`` other hosts for a median to mean anything.
"""

from __future__ import annotations

from collections import defaultdict
import bisect
from typing import Any

ODD_SHARE = 0.85  # a pair below 85 % of its siblings' median is the odd one out
MIN_SIBLINGS = 2
FAULT_MIN = 10  # fewer link faults than this are not compared
FAULT_TIMES = 10  # ... nor counts within 10x the siblings' median


def group_key(h: dict[str, Any]) -> tuple[str, str]:
    return (h["model"], h["topology"])


def compare(hosts: list[dict[str, Any]]) -> None:
    """Adds ``odd`` (pairs), ``odd_links`` and ``siblings`` to every host summary, in place."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for h in hosts:
        groups[group_key(h)].append(h)
    for members in groups.values():
        for h in members:
            h["siblings"] = len(members) - 1
            h["odd"], h["odd_links"] = [], []
        if len(members) - 1 < MIN_SIBLINGS:
            continue
        _pairs(members)
        _links(members)


def _median_without(ordered: list[float], own: float) -> float:
    """The median of a sorted list with one occurrence of ``own`` left out, in O(log n) (a fleet of
    10,000 hosts compares millions of figures)."""
    i = bisect.bisect_left(ordered, own)
    m = len(ordered) - 1

    def at(j: int) -> float:
        return ordered[j] if j < i else ordered[j + 1]

    return at(m // 2) if m % 2 else (at(m // 2 - 1) + at(m // 2)) / 2


def _pairs(members: list[dict[str, Any]]) -> None:
    figures: dict[tuple[str, str], list[float]] = defaultdict(list)
    for h in members:
        for pair, tests in h["pairs"].items():
            for test, v in tests.items():
                figures[(pair, test)].append(v)
    for values in figures.values():
        values.sort()
    for h in members:
        for pair, tests in h["pairs"].items():
            for test, v in tests.items():
                values = figures[(pair, test)]
                if len(values) - 1 < MIN_SIBLINGS:
                    continue
                med = _median_without(values, v)
                if med > 0 and v < ODD_SHARE * med:
                    a, b = pair.split("-")
                    h["odd"].append({"pair": pair, "test": test, "value": v, "median": round(med, 2), "share": round(v / med, 3),
                                     "siblings": len(values) - 1,
                                     "text": f"{h['host']} GPU{a}->GPU{b} {test} reaches {v / med:.0%} of what that pair reaches "
                                             f"on {len(values) - 1} identical nodes ({v:g} of {med:g} GB/s)"})
        h["odd"].sort(key=lambda o: o["share"])


def _links(members: list[dict[str, Any]]) -> None:
    down: dict[tuple[str, str], int] = defaultdict(int)
    present: dict[str, int] = defaultdict(int)
    faults: dict[tuple[str, str], list[int]] = defaultdict(list)
    for h in members:
        for gpu, l in h["links"].items():
            present[gpu] += 1
            for link in l["down"]:
                down[(gpu, str(link))] += 1
            for link in range(l["n"]):
                faults[(gpu, str(link))].append(l["faults"].get(str(link), 0))
    for values in faults.values():
        values.sort()
    for h in members:
        n = len(members) - 1
        for gpu, l in h["links"].items():
            for link in l["down"]:
                up_elsewhere = present[gpu] - down[(gpu, str(link))]
                if up_elsewhere > n / 2:
                    h["odd_links"].append({"gpu": int(gpu), "link": link, "what": "down",
                                           "text": f"{h['host']} GPU{gpu} NVLink {link} is down; it is up on {up_elsewhere} of {n} identical nodes"})
            for link, v in l["faults"].items():
                values = faults[(gpu, link)]
                if v < FAULT_MIN or len(values) - 1 < MIN_SIBLINGS:
                    continue
                med = _median_without(values, v)
                if v > FAULT_TIMES * max(med, 1):
                    h["odd_links"].append({"gpu": int(gpu), "link": int(link), "what": "faults", "value": v, "median": med,
                                           "text": f"{h['host']} GPU{gpu} NVLink {link}: {v} replay/recovery errors; "
                                                   f"the median on {len(values) - 1} identical nodes is {med:g}"})
