"""The checklist of a problem: every workaround of the matched knowledge-base entries, with what to do
and its caveats, and the before state of the test that failed."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Optional

from ..model import BenchResult, Snapshot

#: Words in a workaround that mean the change takes effect only after a reboot (or a driver reload).
_REBOOT = re.compile(r"\b(reboot|grub|kernel (?:command line|parameter|cmdline)|bios|uefi|firmware|modprobe|"
                     r"nvidia-drm|options nvidia|initramfs|update-initramfs|dracut|driver (?:update|upgrade|install|"
                     r"version)|install (?:the )?driver|iommu=|intel_iommu|amd_iommu|pcie_acs_override|setpci|"
                     r"vbios|above 4g|resizable bar|rebar|nps\d?)\b", re.IGNORECASE)
#: ``VAR=value`` assignments of the variables that act on a job's environment.
_ENV = re.compile(r"(?<![\w.-])((?:NCCL|CUDA|TORCH|NVIDIA|PYTORCH|TORCH_NCCL)_[A-Z0-9_]+)=([^\s;&|'\"]+)")
_UNSET = re.compile(r"\bunset\s+((?:NCCL|CUDA|TORCH|NVIDIA)_[A-Z0-9_]+)")


@dataclass
class PlanItem:
    entry_id: Optional[str]
    entry_title: str
    workaround: int  # index in the entry's workarounds
    action: str
    command: Optional[str] = None
    needs_reboot: bool = False
    env: dict[str, str] = field(default_factory=dict)  # variables the fix sets (value '' = unset)
    success_rate: Optional[float] = None  # the entry's public estimate
    sources: list[str] = field(default_factory=list)

    def caveats(self, test: str) -> list[str]:
        out = []
        if self.needs_reboot:
            out.append("Changes to the kernel, BIOS or driver take effect only after a reboot (or a driver reload): "
                       "reboot, open p2ptop again and the review picks up here for the re-test.")
        if self.env:
            names = ", ".join(f"{k}={v}" if v else f"unset {k}" for k, v in self.env.items())
            if test == "nccl":
                out.append(f"Environment variables act on the job's own environment: the NCCL test is re-run with {names}.")
            else:
                out.append(f"Environment variables ({names}) act on the job's environment, not on the GPUs: "
                           "the copy test does not see them; re-test with the job (or p2ptop nccl) instead.")
        return out

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "PlanItem":
        known = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        return cls(**known)


def _env_of(text: str) -> dict[str, str]:
    env = {m.group(1): m.group(2) for m in _ENV.finditer(text or "")}
    for m in _UNSET.finditer(text or ""):
        env.setdefault(m.group(1), "")
    return env


def plan_items(matches: Iterable[Any], host_outcomes: Optional[dict] = None) -> list[PlanItem]:
    """One item per workaround of each matched entry (knowledge.matcher.Match), best entry first; within
    an entry, workarounds that did not help on this host (``host_outcomes``, review.site_outcomes) go last."""
    from .outcomes import order_workarounds

    items: list[PlanItem] = []
    for m in matches:
        entry = getattr(m, "entry", m)
        workarounds = list(entry.workarounds or [])
        for i in order_workarounds(entry.id, len(workarounds), host_outcomes or {}):
            w = workarounds[i]
            action = str(w.get("action") or w.get("how") or "").strip()
            command = w.get("command") or None
            words = " ".join(str(x) for x in (action, w.get("how") or "", command or "", w.get("condition") or ""))
            rate = w.get("success_rate")
            items.append(PlanItem(
                entry_id=entry.id, entry_title=str(entry.signature or entry.id), workaround=i, action=action,
                command=command, needs_reboot=bool(_REBOOT.search(words)), env=_env_of(command or action),
                success_rate=float(rate) if isinstance(rate, (int, float)) else None,
                sources=[str(s) for s in (w.get("sources") or [])]))
    items.append(other_item())
    return items


OTHER_ACTION = "Another fix, not in the knowledge base (say what you did in the note: e)"


def other_item() -> PlanItem:
    """The last item of every checklist: a fix of the user's own, recorded and re-tested the same way."""
    return PlanItem(entry_id=None, entry_title="your own fix", workaround=-1, action=OTHER_ACTION)


def test_of(result: BenchResult) -> str:
    """Which test a result comes from: a pair's copy test, a GPU's host-link test, or an NCCL run."""
    kind = (result.params or {}).get("test") or (result.params or {}).get("kind")
    if kind in ("nccl", "host_link", "copy"):
        return kind
    return "host_link" if result.a == result.b else "copy"


def problem_from_result(result: BenchResult, snapshot: Snapshot) -> dict[str, Any]:
    """What a review records of a failing or slow result: subject, test, a line saying what failed, and
    the before state (the result and the snapshot it was measured on)."""
    test = test_of(result)
    subject = f"gpu:{result.a}" if test == "host_link" else f"pair:{result.a}-{result.b}"
    what = f"GPU{result.a} host link" if test == "host_link" else f"GPU{result.a} -> GPU{result.b}"
    verdict = result.verdict if result.status == "ok" else result.status
    problem = f"{what}: {test.replace('_', '-')} test {verdict or 'not judged'}"
    if result.simulated:
        problem += " (simulated)"
    return {"host": snapshot.source.hostname, "subject": subject, "test": test, "problem": problem,
            "before": {"result": _result_dict(result), "snapshot": snapshot.to_dict()}}


def problem_from_log(text: str, host: Optional[str], summary: str) -> dict[str, Any]:
    """A review of a pasted log (an explain answer): its re-test is the log of the job run again."""
    return {"host": host, "subject": "paste", "test": "log", "problem": summary,
            "before": {"log": text[-20000:]}}


def _result_dict(result: BenchResult) -> dict[str, Any]:
    from dataclasses import asdict as _asdict
    return _asdict(result)
