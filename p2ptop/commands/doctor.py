"""``p2ptop doctor``: host facts, findings and the knowledge-base entries they match.

Exit status: 0 when nothing is wrong, 1 when a finding is a problem, 2 when it could not run.
It never needs root; it says which facts root could read and this run could not.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any, Optional

from ..diagnose import findings_for, gpu_facts, nvlink_counters_na, pair_fact_findings
from ..findings import SEVERITIES, Finding, group_pair_findings
from ..host import NEEDS_ROOT, SECTIONS, collect, needs_root
from ..host.facts import clean
from ..model import Snapshot, SnapshotError, Source
from ..sources import SourceUnavailable, open_snapshot
from ..health import NPD_MAX_OUTPUT, advice, oneline
from .common import EXIT_CANNOT_RUN, EXIT_OK, EXIT_PROBLEM, add_source_options, fail
from . import SUMMARIES

KB_TOP = 5
SEVERITY_ORDER = {s: i for i, s in enumerate(reversed(SEVERITIES))}  # problem first


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("doctor", help=SUMMARIES["doctor"])
    add_source_options(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--pid", type=int, metavar="PID", help="judge a running process's own NCCL_*/CUDA_* variables, container, "
                   "/dev/shm and IPC namespace (read from /proc; another user's process needs root)")
    p.add_argument("--oneline", action="store_true", help="one line for a node health check (LBNL NHC): OK/PROBLEM/UNKNOWN, the worst finding, its actions and who can act")
    p.add_argument("--npd", action="store_true", help=f"as --oneline, cut to {NPD_MAX_OUTPUT} characters (Kubernetes node-problem-detector custom plugin)")
    p.add_argument("--bench-budget", type=float, metavar="SECONDS", help="also run copy tests of every pair, stopping at this many seconds")
    p.set_defaults(func=run)


def _snapshot(args: argparse.Namespace) -> tuple[Optional[Snapshot], Optional[str]]:
    """The snapshot, or (a snapshot holding only host facts, why NVML could not be read) for a live run
    without a driver; (None, why) after printing why the source failed."""
    try:
        return open_snapshot(demo=args.demo, replay=args.replay), None
    except SourceUnavailable as e:
        snap = Snapshot(source=Source(kind="nvml"), host=collect())
        return snap, str(e)
    except SnapshotError as e:
        fail(str(e))
        return None, str(e)


def _knowledge(findings: list[Finding], extra_dirs: list[str], origin: str = "host", text: Optional[str] = None) -> dict[str, Any]:
    """Entries matched per pair (as explain does: facts of different pairs never mix), healthy pairs' facts included;
    with ``text`` (a log the findings were read from), its lines are read as explain reads them."""
    try:
        from ..knowledge import load_kb
        from ..knowledge.matcher import match_grouped
    except ImportError as e:
        return {"available": False, "why": f"no knowledge base available ({e})", "matches": []}
    kb = load_kb(extra_dirs)
    out = []
    for m, where in match_grouped(kb, text, findings, top=KB_TOP, origin=origin):
        d = m.to_dict()
        d["signature"] = m.entry.signature
        d["where"] = where or None
        out.append(d)
    return {"available": True, "entries": len(kb.entries), "problems": [str(p) for p in kb.problems], "matches": out}


def busy_gpu_findings(snap: Snapshot) -> list[Finding]:
    """Live only: GPUs that other work uses now (processes, utilisation, link traffic), as warnings."""
    if snap.source.kind != "nvml":
        return []
    try:
        from ..bench.contention import WINDOW_S, busy_findings, busy_now
    except ImportError:
        return []
    # the traffic window is for the NVLink data counters (read at both ends of it); without an active
    # NVLink there is nothing to wait for: PCIe throughput is NVML's own 20 ms sample
    window = WINDOW_S if any(g.active_links for g in snap.gpus) else 0.0
    try:
        return busy_findings(busy_now(snap, window_s=window))
    except Exception:  # noqa: BLE001 - a failing check adds nothing rather than stopping doctor
        return []


def _status(findings: list[Finding], nvml_error: Optional[str]) -> int:
    if nvml_error:
        return EXIT_CANNOT_RUN
    return EXIT_PROBLEM if any(f.is_problem for f in findings) else EXIT_OK


def run(args: argparse.Namespace) -> int:
    pid = getattr(args, "pid", None)
    if pid is not None:
        from ..host.proc import process_exists

        if pid < 1 or not process_exists(pid):
            return fail(f"no process {pid} (see ps)")
    short = getattr(args, "oneline", False) or getattr(args, "npd", False)
    if getattr(args, "bench_budget", None) is not None and args.bench_budget <= 0:
        return fail("--bench-budget must be a positive number of seconds")
    snap, nvml_error = _snapshot(args)
    if snap is None:
        if short:
            print(oneline(EXIT_CANNOT_RUN, [], gpus=0, simulated=False, error=nvml_error, limit=NPD_MAX_OUTPUT if args.npd else None))
        return EXIT_CANNOT_RUN
    if pid is not None:  # that process's environment, container and /dev/shm in place of ours
        from ..host.proc import apply_to_host, read_process

        snap.host = apply_to_host(snap.host or {}, read_process(pid))
    if not nvml_error and getattr(args, "bench_budget", None):
        _bench_within(snap, args.bench_budget)
    findings = [] if nvml_error else findings_for(snap) + busy_gpu_findings(snap)
    if pid is not None and not nvml_error:
        from ..host.proc import process_findings

        findings += process_findings(snap.host)
    if short:
        status = _status(findings, nvml_error)
        print(oneline(status, findings, gpus=len(snap.gpus), simulated=snap.source.simulated, error=nvml_error,
                      limit=NPD_MAX_OUTPUT if args.npd else None))
        return status
    from .explain import host_origin  # reasons name the host as explain's and the pair panel's do

    origin = host_origin(snap)
    kb = _knowledge(findings + pair_fact_findings(snap), getattr(args, "kb", []) or [], origin) if findings else {"available": None, "why": "nothing to match", "matches": []}
    status = _status(findings, nvml_error)
    if args.json:
        print(json.dumps(_as_json(snap, findings, kb, status, nvml_error), indent=1, default=str))
    else:
        print(_as_text(snap, findings, kb, status, nvml_error), end="")
    return status


def _bench_within(snap: Snapshot, budget_s: float) -> None:
    """Copy tests of every pair until the budget is spent (the pair under test is cancelled then); results
    join ``snap.bench``, cancelled ones are left out. Nothing runs where copy tests cannot."""
    import threading

    from ..bench.runner import BenchOptions, all_pairs, bench_available, run_all

    options = BenchOptions(size_mib=64, copies=4, repeats=3, warmup=1, tests={"ce", "integrity"},
                           timeout_s=max(5.0, budget_s), simulated_pair_s=0.0)
    if not all_pairs(snap) or not bench_available(snap, options)[0]:
        return
    cancel = threading.Event()
    timer = threading.Timer(budget_s, cancel.set)
    timer.start()
    try:
        results = run_all(snap, all_pairs(snap), options, cancel=cancel)
    finally:
        timer.cancel()
    snap.bench.extend(r for r in results if r.status != "cancelled")


# --- JSON -----------------------------------------------------------------------------------

STATUS_WORDS = {EXIT_OK: "ok", EXIT_PROBLEM: "problem", EXIT_CANNOT_RUN: "could not run"}


def _as_json(snap: Snapshot, findings: list[Finding], kb: dict[str, Any], status: int, nvml_error: Optional[str]) -> dict[str, Any]:
    return {
        "kind": "p2ptop-doctor",
        "source": dataclasses.asdict(snap.source) | {"label": snap.source.label},
        "status": STATUS_WORDS[status], "exit_status": status, "error": nvml_error,
        "driver_version": snap.driver_version, "cuda_driver_version": snap.cuda_driver_version,
        "nvml_version": snap.nvml_version, "gpu_count": len(snap.gpus),
        "gpus": gpu_rows(snap), "host": snap.host, "needs_root": needs_root(snap.host),
        "findings": [dataclasses.asdict(f) | {"advice": advice(f).to_dict()} for f in findings],
        "knowledge": kb,
    }


# --- text -----------------------------------------------------------------------------------

NAME_WIDTH = 28


def _value(fact: dict[str, Any]) -> str:
    v = fact.get("value")
    if v is None:
        return f"N/A ({fact['na']})" if fact.get("na") else "none"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, list):
        return ", ".join(map(str, v)) if v and not isinstance(v[0], dict) else f"{len(v)} entries" if v else "none"
    if isinstance(v, dict):
        return ", ".join(f"{k}={x}" for k, x in v.items()) or "none"
    return str(v) if v != "" else '""'


def _fact_line(name: str, fact: dict[str, Any]) -> list[str]:
    lines = [f"  {name:<{NAME_WIDTH}} {_value(fact)}   [{fact.get('how', '')}]"]
    pad = f"  {'':<{NAME_WIDTH}}   "
    if name == "host.acs":
        for r in fact.get("value") or []:
            lines.append(f"{pad}{r['bridge']} {r['role']} above {r['gpu']}: {r.get('acs') or 'N/A (' + str(r.get('na')) + ')'}")
    if name == "host.xid":
        for x in (fact.get("value") or [])[-5:]:
            lines.append(f"{pad}Xid {x['xid']} on {x['pci']}: {x['text']}")
    return lines


def _fact_lines(snap: Snapshot) -> list[str]:
    facts = {k: v for k, v in ((snap.host or {}).get("facts") or {}).items() if isinstance(v, dict)}
    if not facts:
        return ["", "Host facts", "  none in this snapshot (it was taken without them)"]
    lines: list[str] = []
    shown: set[str] = set()
    from ..host.proc import FACTS as PROC_FACTS

    process = (snap.host or {}).get("process")
    extra = ((f"Process {process['pid']}", PROC_FACTS),) if process else ()
    from ..host.env import TITLE as ENV_TITLE, changes_transport

    # the variables section holds every variable that changes the transport (a job's NCCL_IB_HCA too); the rest is Other
    sections = tuple((t, names + tuple(k for k in facts if k.startswith("env.") and changes_transport(k[4:]) and k not in names))
                     if t == ENV_TITLE else (t, names) for t, names in SECTIONS)
    for title, names in extra + sections + (("Other", tuple(facts)),):
        section = []
        unset = []
        for name in names:
            if name not in facts or name in shown:
                continue
            shown.add(name)
            if name.startswith("env.") and facts[name].get("value") is None and not facts[name].get("na"):
                unset.append(name[4:])
                continue
            section += _fact_line(name, facts[name])
        if unset:
            section.append(f"  {'not set':<{NAME_WIDTH}} {', '.join(unset)}")
        if section:
            lines += ["", f"Host facts: {title}"] + section
    return lines


def _na(v: Any) -> str:
    return "N/A" if v is None else str(v)


def gpu_rows(snap: Snapshot) -> list[dict[str, Any]]:
    """Per GPU: product class, PCIe current against maximum and load, NVLinks and their errors."""
    rows = []
    for g in snap.gpus:
        facts = gpu_facts(g)
        rows.append({
            "gpu": g.index, "name": g.name, "product_class": facts.get("gpu.product_class"),
            "pcie": f"Gen{_na(g.pcie_gen_cur)} x{_na(g.pcie_width_cur)} of Gen{_na(g.pcie_gen_max)} x{_na(g.pcie_width_max)}",
            "pcie_below_max": g.pcie_degraded, "utilization_percent": g.utilization_gpu,
            "nvlinks_active": len(g.active_links), "nvlinks": len(g.nvlinks), "nvlink_errors": facts.get("gpu.nvlink_errors"),
            "nvlink_errors_na": nvlink_counters_na(g),
            "virtualization": g.virtualization_mode, "fabric_state": g.fabric.state,
        })
    return rows


def _gpu_lines(snap: Snapshot) -> list[str]:
    lines = []
    for r in gpu_rows(snap):
        link = r["pcie"] + (" (below max)" if r["pcie_below_max"] else "")
        errors = f"{r['nvlink_errors']} errors" if r["nvlink_errors"] is not None else f"errors N/A ({r['nvlink_errors_na']})"
        nv = f"NVLink {r['nvlinks_active']}/{r['nvlinks']} active, {errors}" if r["nvlinks"] else "no NVLink"
        lines.append(f"  GPU{r['gpu']:<3} {_na(r['name'])} ({_na(r['product_class'])}); PCIe {link}, {_na(r['utilization_percent'])}% busy; "
                     f"{nv}; virtualization {_na(r['virtualization'])}; fabric {_na(r['fabric_state'])}")
    return lines or ["  none"]


def _finding_lines(findings: list[Finding]) -> list[str]:
    """Problems first; pair findings with the same id and evidence are shown once with their pairs."""
    shown = [f for f in sorted(findings, key=lambda f: SEVERITY_ORDER.get(f.severity, 9)) if f.id != "host.facts"]
    lines = []
    for group in group_pair_findings(shown):  # host.facts: its facts are listed above
        f = group[0]
        lines.append(f"  {f.severity.upper():<8} {f.subject:<10} {f.summary}   ({f.id})")
        if len(group) > 1:
            lines.append(f"  {'':<8} {'':<10}   also pairs " + ", ".join(g.subject[5:] for g in group[1:]))
        for ev in f.evidence[:6]:
            lines.append(f"  {'':<8} {'':<10}   - {ev}")
        if f.severity in ("warning", "problem"):
            a = advice(f)
            lines.append(f"  {'':<8} {'':<10}   threshold: {a.threshold}")
            lines.append(f"  {'':<8} {'':<10}   action: {', '.join(a.actions)} ({'a tenant in a VM can act' if a.tenant_can_act else 'only the host operator can act'}): {a.how}")
    return lines or ["  none"]


def _kb_lines(kb: dict[str, Any]) -> list[str]:
    if not kb.get("available"):
        return [f"  {kb.get('why')}"]
    lines = [f"  {len(kb['matches'])} of {kb['entries']} entries match"
             + (f" ({len(kb['problems'])} entries not loaded: `p2ptop kb` shows why)" if kb["problems"] else "")]
    for m in kb["matches"]:
        lines.append(f"  {m['confidence']:<8} {m['id']} ({m['score']:.2f}): {m['signature']}"
                     + (f"  [on {m['where']}]" if m.get("where") else ""))
        for reason in m["reasons"][:4]:
            lines.append(f"  {'':<8}   - {reason}")
        if m["deciding_facts"]:
            lines.append(f"  {'':<8}   would decide: {', '.join(m['deciding_facts'])}")
        if m.get("confidence") == "unsure" and m.get("next_command"):
            lines.append(f"  {'':<8}   next: $ {m['next_command']['command']}")
    return lines


def _as_text(snap: Snapshot, findings: list[Finding], kb: dict[str, Any], status: int, nvml_error: Optional[str]) -> str:
    src = snap.source
    out = [f"p2ptop doctor: {src.label}" + (f" on {src.hostname}" if src.hostname else "")]
    proc = (snap.host or {}).get("process")
    if proc:
        out.append(f"  process {proc['pid']}: {proc.get('command') or 'N/A'} -- the variables, container, /dev/shm and "
                   "namespaces below are that process's")
    if src.simulated:
        out.append("  (simulated data: a demo, not this machine)")
    if nvml_error:
        out.append(f"  NVML: {nvml_error}")
    else:
        out.append(f"  {len(snap.gpus)} GPUs, driver {snap.driver_version or 'N/A'}, CUDA {snap.cuda_driver_version or 'N/A'}, "
                   f"NVML {snap.nvml_version or 'N/A'}")
    if not nvml_error:
        out += ["", "GPUs (NVML)"] + _gpu_lines(snap)
    out += _fact_lines(snap)
    if not nvml_error:
        counts = {s: sum(1 for f in findings if f.severity == s) for s in ("problem", "warning", "info")}
        out += ["", "Findings (" + ", ".join(f"{n} {s}" for s, n in counts.items()) + ")"] + _finding_lines(findings)
        out += ["", "Knowledge base"] + _kb_lines(kb)
    root = needs_root(snap.host)
    if root:
        out += ["", f"With root, doctor could also read: {', '.join(root)} ({NEEDS_ROOT}; doctor itself never needs it)"]
    verdict = {EXIT_OK: "nothing wrong found", EXIT_PROBLEM: "a problem was found",
               EXIT_CANNOT_RUN: "could not run: no NVML (host facts above only)"}[status]
    unknown = sorted({f.subject for f in findings if f.id == "p2p.unknown"})
    if status == EXIT_OK and unknown:  # not "all is well": part of it was never read
        verdict += f" in what is known (P2P status not known for {len(unknown)} pair{'s' if len(unknown) != 1 else ''})"
    out += ["", f"Result: {verdict} (exit {status})"]
    return "\n".join(clean(line) for line in out) + "\n"
