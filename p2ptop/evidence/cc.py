"""The GPUs' confidential-computing mode as its tools print it: ``host.cc_mode``.

In NVIDIA's confidential computing (Hopper and Blackwell, in a confidential VM under Intel TDX or AMD SEV-SNP) a GPU in CC
mode is passed through alone to one confidential VM (single GPU passthrough with a bounce buffer): NVIDIA's release notes
allow one GPU per VM, and several CC-mode GPUs in one VM outside the multi-GPU mode (Hopper's protected PCIe, PPCIe, on an
8-GPU HGX board) are "undefined behavior". Read here, each from its source:

* NVIDIA's gpu-admin-tools (nvidia_gpu_tools.py --query-cc-mode / --query-ppcie-mode, cli/per_gpu.py and
  cli/per_gpu_nvswitch.py: ``info(f"{gpu} CC mode is {cc_mode}")`` with on, devtools or off, ``... PPCIe mode is on``);
* ``nvidia-smi conf-compute -f`` ("CC status: ON") and ``-mgm`` ("Multi-GPU Mode: Protected PCIe");
* the GPU Operator's node label ``nvidia.com/cc.mode=on|ppcie|off`` (its CC manager);
* NCCL's own line (src/init.cc: ``CC On, workFifoBytes 0``), read by the NCCL reader: "enabled", since NCCL prints it for
  every CC mode, the multi-GPU ones included (evidence/nccl.py).

Values: "on" and "devtools" (a GPU in CC mode), "ppcie" (the multi-GPU mode), "off", "enabled" (a CC mode, which one
not said). A fact of context: the entry it raises needs a symptom between the GPUs.
"""

from __future__ import annotations

import re

from .paste import Collector

_ADMIN = re.compile(r"\b(?P<which>cc|ppcie) mode is (?P<v>on|off|devtools)\b", re.I)
_SMI = re.compile(r"\bcc status\s*:\s*(?P<v>on|off)\b|\bmulti-gpu mode\s*:\s*(?P<m>protected pcie|none|nvle|nvlink encryption)\b", re.I)
_LABEL = re.compile(r"\bnvidia\.com/cc\.mode\s*[=:]\s*[\"']?(?P<v>on|off|ppcie|devtools)\b", re.I)


def parse(c: Collector) -> bool:
    low = c.paste.lower
    if "cc mode is" not in low and "ppcie mode is" not in low and "cc status" not in low and "multi-gpu mode" not in low \
            and "cc.mode" not in low:
        return False
    v = c.paste.select(("cc mode is", "ppcie mode is", "cc status", "multi-gpu mode", "cc.mode"), context=0)
    found: dict[str, int] = {}
    for m in _ADMIN.finditer(v.text):
        mode = m.group("v").lower()
        found.setdefault("ppcie" if m.group("which").lower() == "ppcie" and mode == "on" else mode, v.line_of(m.start()))
    for m in _SMI.finditer(v.text):
        if m.group("v"):
            found.setdefault(m.group("v").lower(), v.line_of(m.start()))
        elif m.group("m").lower() == "protected pcie":
            found.setdefault("ppcie", v.line_of(m.start()))
    for m in _LABEL.finditer(v.text):
        found.setdefault(m.group("v").lower(), v.line_of(m.start()))
    if not found:
        return False
    # the multi-GPU mode wins (a paste that says PPCIe is on is in that mode, whatever else it says); then a CC mode on any
    # GPU; off only where nothing is on
    for mode in ("ppcie", "on", "devtools", "off"):
        if mode in found:
            c.add("host", "host.cc_mode", mode, found[mode], severity="info",
                  summary={"ppcie": "the GPUs are in confidential computing's multi-GPU mode (protected PCIe)",
                           "off": "confidential computing is off on the GPUs"}.get(mode, f"a GPU is in confidential-computing mode ({mode})"))
            break
    c.tool("cc-mode", min(found.values()))
    return True
