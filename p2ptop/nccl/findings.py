"""NCCL's choices against the fabric: findings from a transport table (table.py) and NCCL runs.

- ``nccl.transport_fallback`` (problem): NVML says P2P works for the pair, NCCL used SHM or NET; the
  evidence names the reason NCCL gave (its "Could not enable P2P" / "P2P is disabled" lines) or the
  variable that explains it (NCCL_P2P_DISABLE, NCCL_P2P_LEVEL below the pair's path, NCCL_SHM_DISABLE
  for NET instead of SHM), and the container where one is known. Without NVML for the log's host
  (a log from elsewhere) it is a warning: P2P support there is not known.
- ``nccl.transport`` (ok/info): the pair's worst transport, as the fact ``nccl.transport``.
- ``nccl.busbw_low`` (problem): the largest send/recv's busbw under ``BUSBW_FAR_UNDER`` of the link's
  raw one-way figure (fabric.expected).
- ``nccl.error`` (problem): NCCL's warnings and errors in the log (``error.nccl``, ``error.text``).
- ``nccl.run_failed`` (problem): a run that did not finish (timeout, crash, an NCCL call failed).
"""

from __future__ import annotations

from typing import Any, Optional

from ..findings import Finding, gpu_subject, pair_subject
from ..model import Snapshot
from . import levels
from .log import SMI_PATH_OF_NCCL

#: a send/recv busbw under this share of the link's raw one-way rate is "far under" it. Healthy NCCL
#: reaches 0.7-0.8 of it (H200 NV18 capture: sendrecv 356 of 450 GB/s = 0.79; all-reduce 313 = 0.70).
BUSBW_FAR_UNDER = 0.5
BUSBW_MIN_BYTES = 256 << 20


def _truthy(v: Optional[str]) -> bool:
    return v is not None and v.strip().lower() not in ("", "0", "false", "no", "off")


def _reasons(table: dict, pair: dict, path: Optional[str], container: Optional[str]) -> tuple[list[str], dict[str, Any]]:
    """Why NCCL left P2P (and SHM) for this pair: evidence lines and env facts."""
    env = table.get("env") or {}
    lines = table.get("env_lines") or {}
    ev: list[str] = []
    facts: dict[str, Any] = {}
    worst = pair.get("worst") or ""
    if _truthy(env.get("NCCL_P2P_DISABLE")):
        ev.append(f"line {lines.get('NCCL_P2P_DISABLE')}: NCCL_P2P_DISABLE set by environment to {env['NCCL_P2P_DISABLE']}: P2P is off for every pair")
        facts["env.NCCL_P2P_DISABLE"] = env["NCCL_P2P_DISABLE"]
    if env.get("NCCL_P2P_LEVEL") is not None:
        facts["env.NCCL_P2P_LEVEL"] = env["NCCL_P2P_LEVEL"]
        if levels.below_path(env["NCCL_P2P_LEVEL"], path):
            ev.append(f"line {lines.get('NCCL_P2P_LEVEL')}: NCCL_P2P_LEVEL={env['NCCL_P2P_LEVEL']} is below this pair's path "
                      f"{path} ({levels.path_type(path)} in NCCL's terms): P2P is not used over it")
        else:
            ev.append(f"line {lines.get('NCCL_P2P_LEVEL')}: NCCL_P2P_LEVEL set by environment to {env['NCCL_P2P_LEVEL']}")
    if worst.startswith("NET") and _truthy(env.get("NCCL_SHM_DISABLE")):
        ev.append(f"line {lines.get('NCCL_SHM_DISABLE')}: NCCL_SHM_DISABLE set by environment to {env['NCCL_SHM_DISABLE']}: "
                  "without P2P and SHM, NCCL goes through the network")
        facts["env.NCCL_SHM_DISABLE"] = env["NCCL_SHM_DISABLE"]
    for d in table.get("decisions") or []:
        if d["kind"] in ("p2p_not_enabled", "p2p_disabled") and (pair.get("host") is None or d.get("host") in (None, pair.get("host"))):
            ev.append(f"line {d['line']}: NCCL said: {d['detail']}")
            break
    if container:
        ev.append(f"the job runs in a container ({container}): P2P and SHM between processes need the GPUs and "
                  "the IPC namespace (/dev/shm) shared between them")
    return ev, facts


def _nvml_p2p(snapshot: Optional[Snapshot], a: int, b: int) -> Optional[bool]:
    if snapshot is None or snapshot.gpu(a) is None or snapshot.gpu(b) is None:
        return None
    statuses = [p.status(cap) for p in (snapshot.pair(a, b), snapshot.pair(b, a)) if p is not None for cap in ("read", "write")]
    statuses = [s for s in statuses if s is not None]
    if not statuses:
        return None
    return any(s == "OK" for s in statuses)


def _host_fact(snapshot: Optional[Snapshot], name: str) -> Any:
    if snapshot is None:
        return None
    f = ((snapshot.host or {}).get("facts") or {}).get(name)
    return f.get("value") if isinstance(f, dict) else None


def table_findings(table: dict, snapshot: Optional[Snapshot] = None, same_host: bool = True, origin: str = "NCCL log") -> list[Finding]:
    """Findings of a transport table. ``snapshot`` is the host the log is from (``same_host``), or None."""
    snap = snapshot if same_host else None
    out: list[Finding] = []
    path_of = {}
    if snap is not None:
        try:
            from ..fabric import Fabric

            fab = Fabric(snap)
            path_of = {(g.index, h.index): fab.path_class(g.index, h.index) for g in snap.gpus for h in snap.gpus if g.index < h.index}
        except Exception:  # noqa: BLE001 - a fabric that cannot be built leaves the path unknown
            path_of = {}
    container = _host_fact(snap, "host.container")
    for p in table.get("pairs") or []:
        if p.get("cross_node"):
            continue
        if not p.get("gpus"):  # ranks the log never tied to GPUs: said about the host, by rank
            head = (p.get("worst") or "?").split("/")[0]
            if head in ("SHM", "NET", "COLLNET"):
                reasons, env_facts = _reasons(table, p, None, container)
                out.append(Finding("nccl.transport_fallback", "host", "warning",
                                   f"NCCL used {p['worst']} between {p['label']} (which GPUs these ranks are is not in the {origin})",
                                   [f"line {p.get('worst_line')} of the {origin}: Channel ... via {p.get('worst_via')}"] + reasons,
                                   {"nccl.transport": p["worst"], **env_facts}))
            continue
        a, b = p["gpus"]
        worst = p.get("worst") or "?"
        head = worst.split("/")[0]
        where = f"line {p.get('worst_line')} of the {origin}: Channel ... via {p.get('worst_via')}"
        facts: dict[str, Any] = {"nccl.transport": worst}
        if table.get("version"):
            facts["nccl.version"] = table["version"]
        # the host's path wins; else NCCL's own, where the log holds its topology print
        path = path_of.get((a, b)) or SMI_PATH_OF_NCCL.get(p.get("nccl_path") or "")
        if path:
            facts["pair.path"] = path
        if head not in ("SHM", "NET", "COLLNET"):
            out.append(Finding("nccl.transport", pair_subject(a, b), "ok", f"NCCL uses {worst} between GPU{a} and GPU{b}", [where], facts))
            continue
        nvml = _nvml_p2p(snap, a, b)
        reasons, env_facts = _reasons(table, p, path, container)
        facts.update(env_facts)
        if nvml is False:
            out.append(Finding("nccl.transport", pair_subject(a, b), "info",
                               f"NCCL uses {worst} between GPU{a} and GPU{b}: NVML says P2P is not supported for this pair",
                               [where] + reasons, facts | {"p2p.read": snap.pair(a, b).status("read") if snap.pair(a, b) else None}))
            continue
        if nvml is True:
            facts["nccl.p2p_fallback"] = True
            facts["p2p.read"] = "OK"
            summary = f"NCCL fell back to {worst} between GPU{a} and GPU{b}, though NVML says P2P works" + (f" over {path}" if path else "")
            sev = "problem"
        else:
            summary = f"NCCL used {worst} between GPU{a} and GPU{b} (whether P2P works on that host is not known here: no NVML for it)"
            if p.get("nccl_path") and not path_of:
                summary += f"; NCCL's own topology puts the pair on {p['nccl_path']} (line {p.get('nccl_path_line')})"
            sev = "warning"
        if not reasons:
            reasons = ["NCCL gave no reason in this log (run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,P2P,SHM,ENV to see it)"]
        out.append(Finding("nccl.transport_fallback", pair_subject(a, b), sev, summary, [where] + reasons, facts))
    for m in table.get("messages") or []:
        if m.get("level") not in ("WARN", "ABORT") and not m.get("result"):
            continue
        facts = {"error.text": m["message"][:200]}
        if m.get("result"):
            facts["error.nccl"] = m["result"]
        out.append(Finding("nccl.error", "host", "problem", f"NCCL: {m['message'][:160]}",
                           [f"line {m['line']} of the {origin}" + (f" ({m['location']})" if m.get("location") else "") + f": {m['message'][:300]}"], facts))
    return out


def run_findings(runs: list, snapshot: Optional[Snapshot]) -> list[Finding]:
    """Findings of our own NCCL runs: their tables (same host), failures, and busbw far under the link."""
    out: list[Finding] = []
    fab = None
    if snapshot is not None:
        try:
            from ..fabric import Fabric

            fab = Fabric(snapshot)
        except Exception:  # noqa: BLE001
            fab = None
    for r in runs:
        label = "GPUs " + ",".join(map(str, r.gpus))
        subject = pair_subject(*r.gpus) if len(r.gpus) == 2 else gpu_subject(r.gpus[0]) if len(r.gpus) == 1 else "host"
        if r.table:
            out += table_findings(r.table, snapshot, True, origin=f"NCCL log of the run on {label}")
        if r.status != "ok":
            facts = {"nccl.status": r.status}
            for e in r.errors:
                for name in ("ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError", "ncclInvalidArgument",
                             "ncclInvalidUsage", "ncclRemoteError"):
                    if name in e:
                        facts["error.nccl"] = name
            if r.errors:
                facts["error.text"] = r.errors[-1][:200]
            out.append(Finding("nccl.run_failed", subject, "problem" if r.status != "cancelled" else "info",
                               f"NCCL run on {label}: {r.status}", r.errors[:6], facts))
        if len(r.gpus) == 2 and fab is not None:
            big = [x for x in r.rows if x["op"] == "sendrecv" and x["bytes"] >= BUSBW_MIN_BYTES]
            exp = fab.expected(*r.gpus)
            if big and exp.gbps:
                row = max(big, key=lambda x: x["bytes"])
                share = row["busbw"] / exp.gbps
                if share < BUSBW_FAR_UNDER:
                    out.append(Finding("nccl.busbw_low", subject, "problem",
                                       f"NCCL send/recv reaches {row['busbw']:.1f} GB/s between GPU{r.gpus[0]} and GPU{r.gpus[1]}, "
                                       f"{share:.0%} of the link's {exp.gbps:g} GB/s ({exp.basis})",
                                       [f"sendrecv busbw {row['busbw']} GB/s at {row['bytes']} B (nccl-tests' formula); expected one way "
                                        f"{exp.gbps:g} GB/s from {exp.basis}; far under = below {BUSBW_FAR_UNDER:.0%}"],
                                       {"nccl.busbw": row["busbw"], "nccl.busbw_share": round(share, 3)}))
    return out
