"""report.md: what a ticket about a GPU host needs, paste-ready in a GitHub or Jira issue.

Sections, in order: a simulated-data warning where it applies, a summary, findings, copy tests,
knowledge-base matches, host facts (GPUs, host, notes), then the path and P2P matrices. Long parts
are folded in ``<details>``. The whole stays within GitHub's 65,536-character issue limit: when it
would not, the least needed parts are cut first (matrices, host facts, then the rest), each cut
saying so and pointing at snapshot.json, which holds everything.

Every string that came from NVML, logs, host facts or the knowledge base goes through
:mod:`.markdown` (escaped, terminal codes dropped).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional, Sequence

from .. import __version__
from ..diagnose import findings_for
from ..fabric import Fabric
from ..findings import Finding, group_pair_findings
from ..model import BenchResult, Snapshot
from ..topo_text import topo_report
from . import markdown as md

#: GitHub rejects issue and comment bodies longer than this (characters).
GITHUB_LIMIT = 65_536
#: What the report aims at, leaving room for a line a person adds when pasting.
REPORT_LIMIT = GITHUB_LIMIT - 536
KB_TOP = 5
#: A host fact longer than this (a kernel log, say) is cut in the table; snapshot.json has it whole.
HOST_CELL_LIMIT = 400
#: Findings shown unfolded; the rest fold.
OPEN_FINDINGS = 12
SEVERITY_ORDER = ("problem", "warning", "info")
CUT_NOTE = "_… cut here to stay within GitHub's 65,536-character limit; snapshot.json in the bundle has everything._"


@dataclass
class Part:
    """One section: fixed head and tail around lines that may be cut, and its rank when space runs out."""

    head: str
    lines: list[str] = field(default_factory=list)
    tail: str = ""
    rank: int = 0  # lower ranks keep their space first

    def render(self, keep: Optional[int] = None) -> str:
        lines = self.lines if keep is None else self.lines[:keep]
        cut = "" if keep is None or keep >= len(self.lines) else f"\n{CUT_NOTE}\n"
        return self.head + "".join(lines) + self.tail + cut

    def fit(self, budget: int) -> str:
        """The part in at most ``budget`` characters: whole, cut by lines, or an omission note."""
        whole = self.render()
        if len(whole) <= budget:
            return whole
        size = len(self.render(0))
        keep = 0
        for line in self.lines:
            if size + len(line) > budget:
                break
            size += len(line)
            keep += 1
        if len(self.render(keep)) <= budget and keep:
            return self.render(keep)
        note = f"{CUT_NOTE}\n\n"
        return note if len(note) <= budget else ""


def build_report(
    snapshot: Snapshot,
    *,
    kb_dirs: Sequence[str] = (),
    notes: Iterable[str] = (),
    limit: int = REPORT_LIMIT,
    kb_matcher: Optional[Callable[[list[Finding], Sequence[str]], tuple[list, Optional[str]]]] = None,
    trail: str = "",
) -> str:
    """The report as Markdown, at most ``limit`` characters.

    ``notes`` are lines about the bundle itself (for example why there is no PNG); they are ours,
    not escaped. ``kb_matcher`` replaces the knowledge-base lookup (tests). ``trail`` is the Markdown of
    the fixes tried on this host (p2ptop.review), already redacted where asked.
    """
    fabric = Fabric(snapshot)
    findings = findings_for(snapshot, fabric)
    matches, kb_note = (kb_matcher or match_knowledge)(findings, kb_dirs)
    parts = [
        Part(_header(snapshot, findings, list(notes)), rank=0),
        _findings_part(findings),
        _bench_part(snapshot),
        Part("", [line + "\n" for line in trail.splitlines()], "\n", rank=2) if trail else Part("", rank=9),
        _kb_part(matches, kb_note),
        _gpus_part(snapshot),
        _host_part(snapshot),
        _matrices_part(snapshot, fabric),
        Part(_footer(), rank=0),
    ]
    return assemble(parts, limit)


def assemble(parts: list[Part], limit: int) -> str:
    """Give each part its space by rank (ties in document order), then join them in document order."""
    budget = limit
    out: dict[int, str] = {}
    for i in sorted(range(len(parts)), key=lambda i: (parts[i].rank, i)):
        out[i] = parts[i].fit(budget)
        budget -= len(out[i])
    text = "".join(out[i] for i in range(len(parts)))
    assert len(text) <= limit, "report parts exceeded their budget"
    return text


# --- the parts -----------------------------------------------------------------------------


def _header(snapshot: Snapshot, findings: list[Finding], notes: list[str]) -> str:
    src = snapshot.source
    host = md.inline(src.hostname or "N/A")
    lines = [f"# p2ptop report: {host}, {len(snapshot.gpus)} GPUs\n\n"]
    if src.simulated or any(r.simulated for r in snapshot.bench):
        what = "a bundled demo" if src.kind == "demo" or src.origin_kind == "demo" else "simulated data"
        lines.append(
            f"> **Simulated data.** This report was made from {what}, not read from real hardware "
            f"({md.inline(src.label)}).\n\n"
        )
    counts = {s: sum(1 for f in findings if f.severity == s) for s in SEVERITY_ORDER}
    verdicts = [r.verdict or r.status for r in snapshot.bench]
    facts = [
        ("Source", src.label),
        ("Host", src.hostname),
        ("Taken", src.taken_at),
        ("Driver", snapshot.driver_version),
        ("CUDA (driver)", snapshot.cuda_driver_version),
        ("GPUs", ", ".join(sorted({g.name or "N/A" for g in snapshot.gpus})) or "none"),
        ("Findings", ", ".join(f"{n} {s}" for s, n in counts.items()) or "none"),
        ("Copy tests", _count_words(verdicts) if verdicts else "none run"),
    ]
    lines.append("".join(f"- **{name}:** {md.inline(value) or 'N/A'}\n" for name, value in facts) + "\n")
    for note in notes:
        lines.append(f"> {note}\n\n")
    return "".join(lines)


def _count_words(values: list[str]) -> str:
    counts: dict[str, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return ", ".join(f"{n} {v}" for v, n in counts.items())


def _finding_lines(f: Finding, others: list[Finding]) -> str:
    also = " " + md.inline(f"(also pairs {', '.join(g.subject[5:] for g in others)})") if others else ""
    lines = [f"- **{md.inline(f.severity)}** {md.code(f.subject)}: {md.inline(f.summary)}{also}\n"]
    lines.extend(f"  - {md.inline(e)}\n" for e in f.evidence)
    return "".join(lines)


def _findings_part(findings: list[Finding]) -> Part:
    ordered = sorted((f for f in findings if f.severity in SEVERITY_ORDER), key=lambda f: SEVERITY_ORDER.index(f.severity))
    shown = group_pair_findings(ordered)
    if not shown:
        return Part("## Findings\n\nNo problems found in the snapshot.\n\n", rank=1)
    lines = [_finding_lines(group[0], group[1:]) for group in shown]
    if len(lines) <= OPEN_FINDINGS:
        return Part("## Findings\n\n", lines, "\n", rank=1)
    head = "## Findings\n\n" + "".join(lines[:OPEN_FINDINGS])
    rest = lines[OPEN_FINDINGS:]
    return Part(
        head + f"\n<details><summary>{len(rest)} more findings</summary>\n\n", rest, "\n</details>\n\n", rank=1
    )


def _measurement_text(m: Any) -> str:
    if m.error:
        return f"{m.name}: error {m.error}"
    value = "N/A" if m.value is None else f"{m.value:g} {m.unit}"
    extra = []
    if m.expected is not None:
        extra.append(f"expected {m.expected:g} {m.unit}")
    if m.verdict:
        extra.append(m.verdict)
    return f"{m.name} {value}" + (f" ({', '.join(extra)})" if extra else "")


def _bench_row(r: BenchResult) -> list[Any]:
    one_way = r.measurement("h2d" if r.host_link else "ce_one_way")
    return [
        (f"GPU{r.a} ⇄ host" if r.host_link else f"GPU{r.a} → GPU{r.b}") + (" (simulated)" if r.simulated else ""),
        r.status,
        r.verdict or "N/A",
        _measurement_text(one_way) if one_way else "N/A",
        r.integrity or "N/A",
        "; ".join(r.errors) if r.errors else "none",
    ]


def _bench_part(snapshot: Snapshot) -> Part:
    head = "## Copy tests\n\n"
    if not snapshot.bench:
        return Part(head + "No copy test was run (`p2ptop bench` or the dashboard's pair panel runs one).\n\n", rank=2)
    table = md.table(("pair", "status", "verdict", "one-way copy", "integrity", "errors"), (_bench_row(r) for r in snapshot.bench))
    detail_lines = []
    for r in snapshot.bench:
        detail_lines.append(f"- GPU{r.a} → GPU{r.b}" + (f", started {md.inline(r.started_at)}" if r.started_at else "")
                            + (f", {r.duration_s:.1f} s" if r.duration_s is not None else "") + "\n")
        detail_lines.extend(f"  - {md.inline(_measurement_text(m))}\n" for m in r.measurements)
        if r.first_bad_offset is not None:
            detail_lines.append(f"  - first corrupt byte at offset {r.first_bad_offset}\n")
        detail_lines.extend(f"  - error: {md.code(e)}\n" for e in r.errors)
        if r.contention is not None and r.contention.busy:
            detail_lines.extend(f"  - contended: {md.inline(reason)}\n" for reason in r.contention.reasons)
        if r.params:
            detail_lines.append("  - parameters: " + md.inline(", ".join(f"{k}={v}" for k, v in r.params.items())) + "\n")
    return Part(
        head + table + "\n<details><summary>All measurements</summary>\n\n", detail_lines, "\n</details>\n\n", rank=2
    )


def match_knowledge(findings: list[Finding], kb_dirs: Sequence[str]) -> tuple[list, Optional[str]]:
    """(matches, note): the knowledge base's best entries for these findings, or a note why there are none."""
    try:
        from ..knowledge import load_kb, match
    except ImportError:
        return [], "The knowledge base is not part of this build of p2ptop; no entries were matched."
    try:
        kb = load_kb(list(kb_dirs))
        return list(match(kb, text=None, findings=findings, top=KB_TOP)), None
    except Exception as e:  # a broken knowledge base must not stop a ticket from being written
        return [], f"The knowledge base could not be read ({type(e).__name__}: {md.clean(e)}); no entries were matched."


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _sources(value: Any) -> list[str]:
    out = []
    for s in value or []:
        if isinstance(s, str):
            out.append(s)
        else:
            url, title = _get(s, "url"), _get(s, "title")
            out.append(" ".join(x for x in (title, f"<{url}>" if url else None) if x) or str(s))
    return out


def _source_text(value: Any) -> str:
    """Sources as Markdown: a URL stays a link, any other text is escaped."""
    out = []
    for s in _sources(value):
        s = md.clean(s).strip()
        if s.startswith(("http://", "https://")) and not any(c in s for c in " <>()[]`"):
            out.append(f"<{s}>")
        else:
            out.append(md.inline(s))
    return ", ".join(out)


def _entry_lines(m: Any) -> list[str]:
    entry = _get(m, "entry", m)
    about = []
    score = _get(m, "score")
    if isinstance(score, (int, float)):
        about.append(f"score {score:.2f}" + (f", {md.inline(_get(m, 'confidence'))}" if _get(m, "confidence") else ""))
    if _get(entry, "failure_class"):
        about.append(f"class {md.inline(_get(entry, 'failure_class'))}")
    if _get(entry, "verification_tier"):
        about.append(f"verification: {md.inline(_get(entry, 'verification_tier'))}")
    lines = [f"### {md.inline(_get(entry, 'id', '?'))}" + (f" ({'; '.join(about)})" if about else "") + "\n\n"]
    if _get(entry, "signature"):
        lines.append(f"Signature: {md.code(_get(entry, 'signature'))}\n\n")
    reasons = list(_get(m, "reasons", []) or [])
    reasons += [f"not known, would decide: {d}" for d in _get(m, "deciding_facts", []) or []]
    if reasons:
        lines.append("Why it matched:\n" + "".join(f"- {md.inline(r)}\n" for r in reasons) + "\n")
    if _get(entry, "root_cause"):
        lines.append(f"**Root cause.** {md.inline(_get(entry, 'root_cause'))}\n\n")
    works = _get(entry, "workarounds", []) or []
    if works:
        lines.append("**Workarounds**\n\n")
        for w in works:
            lines.append(_action_line(w, "success_rate", "success"))
    dead = _get(entry, "dead_ends", []) or []
    if dead:
        lines.append("\n**Dead ends** (do not help)\n\n")
        for d in dead:
            lines.append(_action_line(d, "fail_rate", "fails"))
    srcs = _source_text(_get(entry, "sources"))
    if srcs:
        lines.append(f"\nSources: {srcs}\n")
    lines.append("\n")
    return lines


def _action_line(item: Any, rate_key: str, rate_word: str) -> str:
    if isinstance(item, str):
        return f"- {md.inline(item)}\n"
    action = _get(item, "action") or _get(item, "how") or ""
    how = _get(item, "how")
    why = _get(item, "why_fails")
    text = md.inline(action)
    if how and how != action:
        text += f" — {md.inline(how)}"
    if why:
        text += (": " if text else "") + md.inline(why)
    rate = _get(item, rate_key)
    extra = []
    if isinstance(rate, (int, float)):
        extra.append(f"{rate_word} {rate:.0%}")
    if _get(item, "condition"):
        extra.append(f"when {md.inline(_get(item, 'condition'))}")
    srcs = _source_text(_get(item, "sources"))
    if srcs:
        extra.append(f"source: {srcs}")
    command = _get(item, "command")
    line = f"- {text}" + (f" ({'; '.join(extra)})" if extra else "") + "\n"
    if command:
        line += "\n" + "\n".join("  " + l for l in md.code_block(str(command), "sh").splitlines()) + "\n\n"
    return line


def _kb_part(matches: list, note: Optional[str]) -> Part:
    head = "## Knowledge base\n\n"
    if note:
        return Part(head + f"_{md.inline(note)}_\n\n", rank=3)
    if not matches:
        return Part(head + "No knowledge-base entry matches these findings.\n\n", rank=3)
    lines = [line for m in matches for line in _entry_lines(m)]
    return Part(head + f"The {len(matches)} best-matching entries, best first.\n\n", lines, "", rank=3)


def _gpus_part(snapshot: Snapshot) -> Part:
    rows = []
    for g in snapshot.gpus:
        pcie = f"Gen{g.pcie_gen_cur or '?'} x{g.pcie_width_cur or '?'} of Gen{g.pcie_gen_max or '?'} x{g.pcie_width_max or '?'}"
        links = f"{len(g.active_links)}/{len(g.nvlinks)}" if g.nvlinks else "none"
        rows.append([g.label, g.name, g.serial, g.pci_bus_id, pcie, links, g.numa_node, g.virtualization_mode, g.fabric.state])
    table = md.table(("GPU", "name", "serial", "bus id", "PCIe", "NVLinks up", "NUMA", "virtualization", "fabric"), rows)
    lines = table.splitlines(keepends=True)
    return Part(
        f"## GPUs\n\n<details><summary>{len(snapshot.gpus)} GPUs</summary>\n\n" + "".join(lines[:2]),
        lines[2:],
        "\n</details>\n\n",
        rank=4,
    )


def _flatten(value: Any, prefix: str = "") -> Iterable[tuple[str, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _flatten(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        for i, v in enumerate(value):
            yield from _flatten(v, f"{prefix}[{i}]")
    else:
        yield prefix, _flat_value(value)


def _short(value: Any, limit: int = HOST_CELL_LIMIT) -> Any:
    text = str(value) if value is not None else None
    if text is None or len(text) <= limit:
        return value
    return text[:limit] + f"… ({len(text) - limit} more characters in snapshot.json)"


def _flat_value(value: Any) -> Any:
    if isinstance(value, list):
        return ", ".join(map(str, value))
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    return value


def _host_part(snapshot: Snapshot) -> Part:
    head = "## Host\n\n"
    facts: list[tuple[str, Any, str]] = [
        ("driver", snapshot.driver_version, "NVML"),
        ("CUDA (driver)", snapshot.cuda_driver_version, "NVML"),
        ("NVML", snapshot.nvml_version, "NVML"),
    ]
    facts += [(f"socket {s.id}", f"NUMA {', '.join(map(str, s.numa_nodes)) or 'N/A'}; CPUs {s.cpus or 'N/A'}", "sysfs")
              for s in snapshot.sockets]
    collected = snapshot.host.get("facts") if isinstance(snapshot.host.get("facts"), dict) else {}
    for name, item in collected.items():
        if isinstance(item, dict) and "value" in item:
            value = item["value"] if item.get("na") is None else f"N/A: {item['na']}"
            facts.append((name, _short(_flat_value(value)), item.get("how") or ""))
        else:
            facts.extend((f"{name}.{k}" if k else name, _short(v), "") for k, v in _flatten(item))
    others = {k: v for k, v in snapshot.host.items() if k != "facts"}
    facts += [(k, _short(v), "") for k, v in _flatten(others)]
    facts += [(f"N/A: {k}", why, "") for k, why in snapshot.na.items()]
    table = md.table(("fact", "value", "how it was read"), facts).splitlines(keepends=True)
    notes = "".join(f"- {md.inline(n)}\n" for n in snapshot.notes)
    if notes:
        head += "Notes from the reader:\n\n" + notes + "\n"
    return Part(
        head + "<details><summary>Host facts</summary>\n\n" + "".join(table[:2]), table[2:], "\n</details>\n\n", rank=5
    )


def _matrices_part(snapshot: Snapshot, fabric: Fabric) -> Part:
    text = md.clean(topo_report(snapshot, fabric))
    fence = md.fence_for(text)
    return Part(
        "## Path and P2P matrices\n\n<details><summary>As <code>nvidia-smi topo -m</code> and "
        f"<code>topo -p2p</code> print them</summary>\n\n{fence}text\n",
        text.splitlines(keepends=True),
        f"{fence}\n\n</details>\n\n",
        rank=6,
    )


def _footer() -> str:
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"---\n_Made by p2ptop {__version__} on {now}. The bundle's snapshot.json opens on any machine, "
        "GPU or not: `p2ptop --replay snapshot.json` (dashboard) or `p2ptop topo --replay snapshot.json`._\n"
    )
