"""Node health check: what each finding's threshold is, what to do about it and who can, in one line.

Schedulers read a health check's exit status and one line of text: LBNL NHC (``check_cmd_status``,
``check_cmd_output``) and Kubernetes node-problem-detector's custom plugins (exit 0 OK, 1 problem,
2 unknown; stdout is the condition's message, cut at ``max_output_length``, 80 by default). ``p2ptop
doctor --oneline`` / ``--npd`` print that line; ``advice(finding)`` gives each finding

- its **threshold**: the rule that raised it, in words;
- its **actions**, in NVIDIA's health-check vocabulary where one applies (``drain``, ``reset GPU``,
  ``reboot``, ``service`` = hardware service), else ``configure``, ``restart Fabric Manager``,
  ``watch`` or ``none``;
- **who** can act: ``tenant`` (a user inside a VM or container can fix it: a variable, /dev/shm, job
  placement) or ``operator`` (only whoever runs the host: BIOS, kernel, driver, hypervisor, hardware).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Optional

from ..findings import Finding
from ..host.facts import clean

NPD_MAX_OUTPUT = 80  # node-problem-detector's default max_output_length
ACTIONS = ("drain", "reset GPU", "reboot", "service", "restart Fabric Manager", "configure", "watch", "none")
WHO = ("tenant", "operator")


@dataclass(frozen=True)
class Advice:
    threshold: str
    actions: tuple[str, ...]
    who: str  # tenant | operator
    how: str  # one sentence on what to do

    @property
    def tenant_can_act(self) -> bool:
        return self.who == "tenant"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["actions"] = list(self.actions)
        d["tenant_can_act"] = self.tenant_can_act
        return d


_OP, _TEN = "operator", "tenant"
#: finding id -> advice. Thresholds restate the rule in diagnose.py / bench/judge.py that raises the finding.
ADVICE: dict[str, Advice] = {
    "gpu.lost": Advice("NVML answers 'GPU is lost' for the GPU", ("drain", "reset GPU", "reboot", "service"), _OP,
                       "Drain the node, reset the GPU (nvidia-smi -r) or reboot; service the GPU if it is lost again."),
    "nvlink.down": Advice("any NVLink of the GPU inactive while its other links are active", ("drain", "reset GPU", "reboot", "service"), _OP,
                          "Drain; a GPU reset or reboot may retrain the link; service (reseat, replace) if it stays down."),
    "nvlink.all_down": Advice("every NVLink of the GPU inactive", ("drain", "restart Fabric Manager", "reset GPU", "service"), _OP,
                              "Drain; check Fabric Manager and the GPU's fabric state, reset the GPU; service if the links stay down."),
    "nvlink.errors": Advice("any NVLink replay or recovery count (NVML error counters)", ("watch", "drain", "service"), _OP,
                            "Watch the rate (p2ptop_nvlink_errors_total); drain and have the link serviced if it keeps rising."),
    "nvlink.crc_counted": Advice("CRC counts alone; a problem only at 100+ per second on a link (DCGM's limit)", ("watch",), _OP,
                                 "Nothing now; the exporter's rate shows whether they rise past DCGM's limit."),
    "pcie.degraded": Advice("PCIe width below its maximum, or generation below its maximum while the GPU is >= 20 % busy",
                            ("drain", "reboot", "service"), _OP,
                            "Drain; a reboot may retrain the link; else reseat the GPU or riser (service)."),
    "pcie.idle_downclock": Advice("PCIe generation below maximum while the GPU is idle (power saving, not a fault)", ("none",), _OP,
                                  "Nothing: the link speeds up under load."),
    "pcie.low_load_unknown": Advice("PCIe generation below maximum and the GPU's load not readable", ("watch",), _OP,
                                    "Check again under load."),
    "gpu.consumer": Advice("GeForce/Titan brand: NVIDIA's stock driver offers no PCIe P2P on most of them", ("configure",), _TEN,
                           "Expect copies through host memory; NCCL falls back on its own."),
    "fabric.not_ready": Advice("NVML fabric state not COMPLETED, or registration status not Success", ("restart Fabric Manager", "reset GPU", "reboot"), _OP,
                               "Restart nvidia-fabricmanager, then reset the GPU or reboot."),
    "fabric_manager.not_running": Advice("NVSwitch system and Fabric Manager not running", ("drain", "restart Fabric Manager"), _OP,
                                         "Start nvidia-fabricmanager (its version must match the driver's)."),
    "p2p.not_supported": Advice("NVML P2P read or write status not OK for the ordered pair", ("drain", "configure"), _OP,
                                "See the matched knowledge-base entries (ACS, IOMMU, hypervisor, driver); in a VM only the host's operator can change it."),
    "p2p.through_cpu": Advice("P2P OK but the path crosses a host bridge or the CPU interconnect (PHB, NODE, SYS)", ("none",), _TEN,
                              "Place jobs on GPUs under the same switch where bandwidth matters."),
    "iommu.on": Advice("the IOMMU translates DMA while some GPU pair talks over PCIe", ("configure", "reboot"), _OP,
                       "Boot with iommu=pt (or turn the IOMMU off in the BIOS) and reboot."),
    "acs.redirect": Advice("ACS P2P redirect on a bridge between a GPU and its root port", ("configure", "reboot"), _OP,
                           "Turn ACS redirect off on those bridges (BIOS, or setpci at boot) and reboot."),
    "acs.unreadable": Advice("ACS control of the bridges above the GPUs needs root to read", ("none",), _OP,
                             "Run doctor as root to check it."),
    "host.virtualized": Advice("a hypervisor CPU flag or a GPU virtualization mode", ("none",), _OP,
                               "P2P depends on what the hypervisor exposes; ask the host's operator."),
    "host.shm_small": Advice("/dev/shm smaller than 512 MiB", ("configure",), _TEN,
                             "Give the container more shared memory (docker --shm-size=1g; Kubernetes: an emptyDir with medium Memory)."),
    "env.p2p_disabled": Advice("NCCL_P2P_DISABLE set to a true value", ("configure",), _TEN, "Unset NCCL_P2P_DISABLE."),
    "env.p2p_level_off": Advice("NCCL_P2P_LEVEL=LOC or 0", ("configure",), _TEN, "Unset NCCL_P2P_LEVEL or raise it."),
    "env.shm_disabled": Advice("NCCL_SHM_DISABLE set to a true value", ("configure",), _TEN, "Unset NCCL_SHM_DISABLE unless meant."),
    "env.set": Advice("a variable that changes P2P behaviour is set", ("none",), _TEN, "Check it is meant."),
    "driver.registry_keys": Advice("the driver's RegistryDwords parameter is set", ("configure", "reboot"), _OP,
                                   "Review the keys (those naming P2P change it) with whoever set them."),
    "xid.recent": Advice("an NVIDIA Xid in the kernel log; a problem for hardware/link codes (48, 61-64, 74, 79, 92, 94, 95, 119, 120, 140)",
                         ("drain", "reset GPU", "reboot", "service"), _OP,
                         "Look the code up in NVIDIA's Xid catalogue; drain, then reset the GPU or reboot; service if it recurs."),
    "bench.slow": Advice("a copy-test figure between 25 % and 70 % of what the link should give", ("drain", "watch"), _OP,
                         "Compare with the same pair on identical nodes (p2ptop fleet); drain if it is the odd one out."),
    "bench.failing": Advice("a copy-test figure below 25 % of what the link should give", ("drain", "reset GPU", "service"), _OP,
                            "Drain; check the pair's links and P2P status; reset the GPUs; service if it stays."),
    "bench.corrupt": Advice("a P2P copy delivered data that differs from what was sent", ("drain", "service"), _OP,
                            "Drain at once and have the GPUs and links serviced."),
    "bench.timeout": Advice("a copy test hung past its timeout", ("drain", "reset GPU", "reboot"), _OP, "Drain; reset the GPUs or reboot."),
    "bench.crashed": Advice("the copy-test process crashed", ("drain", "reset GPU"), _OP, "Drain; reset the GPUs; check the kernel log for Xids."),
    "bench.failed": Advice("a step of the copy test returned a CUDA error", ("drain", "reset GPU"), _OP, "Drain; the error text says which step."),
    "bench.peer_access": Advice("enabling CUDA peer access failed", ("drain", "configure"), _OP, "See the pair's P2P status and the matched entries."),
    "bench.unavailable": Advice("copy tests could not run (no CuPy or no second GPU)", ("none",), _TEN, "Install p2ptop[cuda12] or p2ptop[cuda13]."),
}
DEFAULT = Advice("as the finding says", ("none",), _OP, "See the finding and the matched knowledge-base entries.")


def advice(f: Finding) -> Advice:
    return ADVICE.get(f.id, DEFAULT)


def _rank(f: Finding) -> tuple:
    order = {"problem": 0, "warning": 1, "info": 2, "ok": 3}
    return (order.get(f.severity, 9),)


def oneline(status: int, findings: list[Finding], *, gpus: int, simulated: bool, error: Optional[str] = None,
            limit: Optional[int] = None) -> str:
    """The one line a scheduler reads: ``OK: ...``, ``PROBLEM: <worst finding> [actions; who] (+N more)``, ``UNKNOWN: ...``.

    ``limit`` cuts it to that many characters (node-problem-detector's max_output_length)."""
    sim = " (simulated)" if simulated else ""
    if status == 2:
        line = f"UNKNOWN{sim}: p2ptop could not read the GPUs: {error or 'no reason given'}"
    elif status == 0:
        warn = [f for f in findings if f.severity == "warning"]
        line = f"OK{sim}: {gpus} GPUs, no GPU peer-to-peer problem" + (f", {len(warn)} warnings" if warn else "")
    else:
        bad = sorted((f for f in findings if f.is_problem), key=_rank)
        a = advice(bad[0])
        more = f" (+{len(bad) - 1} more)" if len(bad) > 1 else ""
        if limit:  # short: who and the first action before the text, which may be cut
            line = f"PROBLEM{sim}: [{a.actions[0]}; {a.who}] {bad[0].summary}{more}"
        else:
            line = f"PROBLEM{sim}: {bad[0].summary} [{', '.join(a.actions)}; {a.who} can act]{more}"
    line = " ".join(clean(line).split())  # one line of plain text, whatever the finding's text held
    if limit and len(line) > limit:
        line = line[: limit - 3].rstrip() + "..."
    return line
