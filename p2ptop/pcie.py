"""PCIe link arithmetic shared by the hardware readers (sysfs), the fabric model and the text readers (evidence):
a generation from a transfer rate, the bandwidth a trained link gives, and the bits of a bridge's ACS Control register
(config space on the host, lspci's ACSCtl or setpci's word in a paste). No imports beyond the standard library: the text
readers use it without loading the model."""

from __future__ import annotations

import re
from typing import Optional

#: PCIe bandwidth per lane, per direction, in GB/s after line encoding, by generation.
#: Source: PCI-SIG specifications as tabulated in https://en.wikipedia.org/wiki/PCI_Express#Comparison_table
#: (Gen1/2 8b/10b; Gen3-5 128b/130b; Gen6 64 GT/s PAM4 with 242/256 FLIT; Gen7 128 GT/s).
PCIE_GBPS_PER_LANE: dict[int, float] = {
    1: 0.25,
    2: 0.5,
    3: 0.985,
    4: 1.969,
    5: 3.938,
    6: 7.563,
    7: 15.125,
}
#: a generation by its transfer rate in GT/s (sysfs "16.0 GT/s PCIe", lspci "Speed 16GT/s", the kernel's "16.0 GT/s")
_GTS_TO_GEN = {"2.5": 1, "5": 2, "8": 3, "16": 4, "32": 5, "64": 6, "128": 7}
_RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:GT/s\b|$)")


def pcie_gbps(gen: Optional[int], width: Optional[int]) -> Optional[float]:
    """GB/s one way of a link trained at this generation and width, None when either is unknown."""
    if gen is None or width is None or gen not in PCIE_GBPS_PER_LANE:
        return None
    return round(PCIE_GBPS_PER_LANE[gen] * width, 1)


def link_gen(speed: Optional[str]) -> Optional[int]:
    """'16.0 GT/s PCIe', '16GT/s', '16.0' or '16' -> 4; None when unknown."""
    m = _RATE.match(speed or "")
    if not m:
        return None
    rate = m.group(1)
    if "." in rate:
        rate = rate.rstrip("0").rstrip(".")
    return _GTS_TO_GEN.get(rate)


#: ACS Control register bits (PCIe Base Specification, ACS Extended Capability, 7.7.8.3), bit 0 first, with the
#: names lspci prints for them (pciutils ls-ecaps.c cap_acs: "ACSCtl: SrcValid+ TransBlk- ReqRedir+ ...").
ACS_BITS = ("SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl", "DirectTrans")
#: P2P Request Redirect, P2P Completion Redirect and P2P Egress Control send (or block) peer traffic up to the root
#: complex instead of across the switch.
ACS_REDIRECT_MASK = (1 << 2) | (1 << 3) | (1 << 5)
ACS_ALL_BITS = (1 << len(ACS_BITS)) - 1  # any control bit on: ACS is enabled at the bridge, redirecting or not
_ACS_FLAG = re.compile(r"\b(SrcValid|TransBlk|ReqRedir|CmpltRedir|UpstreamFwd|EgressCtrl|DirectTrans)([+-])")


def acs_text(ctrl: int) -> str:
    """0x1d -> 'SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-'."""
    return " ".join(f"{name}{'+' if ctrl >> bit & 1 else '-'}" for bit, name in enumerate(ACS_BITS))


def acs_ctrl_of_lspci(line: str) -> Optional[int]:
    """The ACS Control register an lspci "ACSCtl:" line spells out ('SrcValid+ TransBlk- ReqRedir+ ...' -> 0x5), None
    where the line names none of its bits."""
    flags = dict(_ACS_FLAG.findall(line))
    if not flags:
        return None
    return sum(1 << bit for bit, name in enumerate(ACS_BITS) if flags.get(name) == "+")
