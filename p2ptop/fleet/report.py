"""A fleet as JSON (for scripts), Markdown (for tickets) and plain text (a terminal without the TUI).

With ``redact``, one :class:`~p2ptop.export.redact.Redactor` serves every host, so the same host name,
UUID, serial, IP or MAC address gets the same placeholder wherever it appears, across all hosts.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from ..export.markdown import inline, table
from .load import Fleet
from .summary import rank_key

MD_HOSTS = 50  # hosts shown in the Markdown table (the rest are counted)


def state_words(h: dict[str, Any]) -> str:
    parts = []
    for key, word in (("gpus_lost", "GPU lost"), ("nvlinks_down", "NVLink down"), ("refused_pairs", "pair refused"),
                      ("pairs_below_expected", "pair under expected")):
        if h.get(key):
            parts.append(f"{h[key]} {word}" + ("s" if h[key] > 1 and not word.endswith("d") else ""))
    if h.get("odd"):
        parts.append(f"{len(h['odd'])} odd pair figure{'s' if len(h['odd']) > 1 else ''}")
    if h.get("odd_links"):
        parts.append(f"{len(h['odd_links'])} odd link{'s' if len(h['odd_links']) > 1 else ''}")
    if not parts and h.get("problems"):
        parts.append(f"{h['problems']} problem{'s' if h['problems'] > 1 else ''}")
    if not parts and h.get("warnings"):
        parts.append(f"{h['warnings']} warning{'s' if h['warnings'] > 1 else ''}")
    return ", ".join(parts) or "ok"


def ranked(fleet: Fleet, model: Optional[str] = None, topology: Optional[str] = None) -> list[dict[str, Any]]:
    hosts = [h for h in fleet.hosts if (not model or model.lower() in h["model"].lower())
             and (not topology or topology in (h["topology"], h["topology_text"]))]
    return sorted(hosts, key=rank_key)


def groups(fleet: Fleet) -> list[tuple[str, str, str, int]]:
    """(model, topology id, topology words, hosts) per group of identical hosts, biggest first."""
    count: dict[tuple[str, str, str], int] = {}
    for h in fleet.hosts:
        k = (h["model"], h["topology"], h["topology_text"])
        count[k] = count.get(k, 0) + 1
    return sorted(((m, t, w, n) for (m, t, w), n in count.items()), key=lambda g: -g[3])


def as_dict(fleet: Fleet, hosts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "kind": "p2ptop-fleet",
        "source": fleet.source,
        "simulated_hosts": sum(1 for h in fleet.hosts if h.get("simulated")),
        "hosts_loaded": len(fleet.hosts),
        "groups": [{"model": m, "topology": t, "topology_text": w, "hosts": n} for m, t, w, n in groups(fleet)],
        "hosts": [dict(h, state=state_words(h)) for h in hosts],
        "not_loaded": [{"file": f, "why": why} for f, why in fleet.problems],
    }


def to_json(fleet: Fleet, hosts: list[dict[str, Any]], redactor: Any = None) -> str:
    text = json.dumps(as_dict(fleet, hosts), indent=1)
    return redactor.text(text) if redactor else text


def to_markdown(fleet: Fleet, hosts: list[dict[str, Any]], redactor: Any = None) -> str:
    sim = sum(1 for h in fleet.hosts if h.get("simulated"))
    out = [f"# p2ptop fleet: {len(fleet.hosts)} hosts", ""]
    out.append(f"Source: {inline(fleet.source)}. " + (f"**{sim} of them simulated** (demos or generated snapshots). " if sim else "")
               + (f"{len(fleet.problems)} files not loaded (listed at the end)." if fleet.problems else "Every file loaded."))
    out += ["", "## Groups of identical hosts", "",
            table(["GPU model", "topology", "hosts"], [(m, f"{w} ({t})", n) for m, t, w, n in groups(fleet)])]
    bad = [h for h in hosts if state_words(h) != "ok"]
    out += ["## Hosts by worst state", "",
            f"{len(bad)} of {len(hosts)} hosts need a look." + (f" The first {MD_HOSTS}:" if len(bad) > MD_HOSTS else ""), ""]
    out.append(table(["host", "state", "GPU model", "problems", "warnings", "top KB entry", "file"],
                     [(h["host"], state_words(h), h["model"], h["problems"], h["warnings"], h["kb_top"] or "", h["file"]) for h in bad[:MD_HOSTS]]))
    odd = [o["text"] for h in hosts for o in h.get("odd", [])[:3]] + [o["text"] for h in hosts for o in h.get("odd_links", [])[:3]]
    if odd:
        out += ["## The odd ones out", "", "Against the median of the same pair (or link) on hosts of the same GPU model and topology:", ""]
        out += [f"- {inline(t)}" for t in odd[:200]] + [""]
    findings = [(h["host"], f) for h in bad[:MD_HOSTS] for f in h["findings"]]
    if findings:
        out += ["## Findings of those hosts", ""] + [f"- **{inline(host)}**: {inline(f)}" for host, f in findings] + [""]
    if fleet.problems:
        out += ["## Files not loaded", "", table(["file", "why"], fleet.problems)]
    text = "\n".join(out).rstrip() + "\n"
    return redactor.text(text) if redactor else text


def to_text(fleet: Fleet, hosts: list[dict[str, Any]], limit: int = 40) -> str:
    from ..host.facts import clean

    lines = [f"p2ptop fleet: {len(fleet.hosts)} hosts from {fleet.source}" + (f", {len(fleet.problems)} files not loaded" if fleet.problems else "")]
    sim = sum(1 for h in fleet.hosts if h.get("simulated"))
    if sim:
        lines.append(f"  ({sim} simulated: demos or generated snapshots)")
    lines.append(f"  {'HOST':<24} {'STATE':<44} {'MODEL':<26} TOP KB ENTRY")
    for h in hosts[:limit]:
        lines.append(f"  {clean(h['host'])[:24]:<24} {state_words(h)[:44]:<44} {clean(h['model'])[:26]:<26} {h['kb_top'] or ''}")
    if len(hosts) > limit:
        lines.append(f"  ... {len(hosts) - limit} more (--json or --markdown for all)")
    for h in hosts[:limit]:
        for o in (h.get("odd") or [])[:2] + (h.get("odd_links") or [])[:2]:
            lines.append(f"  odd: {clean(o['text'])}")
    for f, why in fleet.problems[:20]:
        lines.append(f"  not loaded: {clean(f)}: {clean(why)}")
    if len(fleet.problems) > 20:
        lines.append(f"  ... {len(fleet.problems) - 20} more files not loaded")
    return "\n".join(lines) + "\n"
