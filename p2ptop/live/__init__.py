"""The live path, one face for the dashboard, ``p2ptop snapshot`` and an exporter.

``LiveSource`` polls NVML: static and dynamic parts apart, NVML events in a thread of their own, the
change log (p2ptop.changes). ``read_once`` is one full live snapshot for the commands.
"""

from __future__ import annotations

from .poll import RESTATIC_KINDS, STATIC_EVERY_S, LiveSource, Poll

__all__ = ["LiveSource", "Poll", "RESTATIC_KINDS", "STATIC_EVERY_S", "read_once"]


def read_once(nvml=None, sysfs_root: str = "/", host_facts: bool = True, what: str = "all"):
    """One live snapshot (NVML opened and closed around it, no event thread); SourceUnavailable when
    there is no usable driver. ``what="topo"``: only what ``p2ptop topo`` prints."""
    source = LiveSource(nvml, sysfs_root, host_facts=host_facts, events=False, what=what)
    try:
        return source.read()
    finally:
        source.close()
