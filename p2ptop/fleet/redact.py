"""One redactor for a whole fleet: every host's name is registered first, so each host keeps one
placeholder (host-1, host-2, ...) in every file and line, and UUIDs, serials, IP and MAC addresses and
user names in paths are replaced the same way wherever they appear (see p2ptop/export/redact.py)."""

from __future__ import annotations

from ..export.redact import Redactor
from .load import Fleet


def fleet_redactor(fleet: Fleet) -> Redactor:
    r = Redactor(pad=False)
    for h in sorted(fleet.hosts, key=lambda h: h["host"]):
        r.add("host", h["host"])
    return r
