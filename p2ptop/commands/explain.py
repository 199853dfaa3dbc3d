"""``p2ptop explain [FILE|-]``: which knowledge-base entries explain a log, and what to do.

The log's text is matched together with the findings of a snapshot: live by default when NVML
works (text only, with a note, when it does not), or ``--demo``/``--replay``. Findings are matched
per pair (the pair's, its GPUs' and the host's findings together), so facts of different pairs are
not mixed; an entry is reported once, for the pair where it scores best.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Optional

from ..diagnose import findings_for, pair_fact_findings
from ..findings import Finding
from ..knowledge import load_kb
from ..knowledge.fact_roles import deciding_command, first_look
from ..knowledge.matcher import POSSIBLE, Match, known_facts, match_grouped, prepare, ruled_out_by_host
from ..knowledge.render import clean, fact_help, match_text
from ..model import Snapshot, SnapshotError
from ..sources import SourceUnavailable, open_snapshot
from .common import EXIT_OK, add_source_options, fail, read_input
from . import SUMMARIES

DEFAULT_TOP = 3
MAX_BYTES = 20 * 1024 * 1024  # a log larger than this is read only up to here


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("explain", help=SUMMARIES["explain"])
    p.add_argument("file", nargs="?", metavar="FILE|-", help="log file, or - to read stdin")
    add_source_options(p)
    p.add_argument("--text-only", action="store_true", help="do not read the live host; match the text alone")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--top", type=int, default=DEFAULT_TOP, metavar="N", help=f"show the N best entries (default {DEFAULT_TOP})")
    p.add_argument("--lang", choices=("en", "zh"), default="en", help="language of the entries' text")
    p.add_argument("--kb", metavar="DIR", action="append", default=argparse.SUPPRESS, help="extra entry directory (repeatable)")
    p.set_defaults(func=run)


def read_text(name: Optional[str]) -> tuple[Optional[str], Optional[str]]:
    """(text, None) or (None, why it could not be read)."""
    return (None, None) if name is None else read_input(name, MAX_BYTES)


def _stdin_is_piped() -> bool:
    try:
        return not sys.stdin.isatty()
    except (AttributeError, OSError, ValueError):
        return False


def host_origin(snap: Optional[Snapshot]) -> str:
    """How reasons name the host's facts: live host, demo, replay (or the source's kind)."""
    if snap is None:
        return "host"
    return {"nvml": "live host", "demo": "demo", "replay": "replay"}.get(snap.source.kind, snap.source.kind or "host")


# ---- the text's evidence -----------------------------------------------------------------------

def read_evidence(text: Optional[str], log=None, links=None):
    """The text's facts (p2ptop.evidence.Evidence: findings "text.*" with "line N of the paste: ...",
    gpu_related, kinds); kept on the prepared log so the matcher does not read the text again. ``links``: the
    host's links by bus id (:func:`host_links`), against which a pasted tool's figures are judged."""
    from ..evidence import Evidence, read_text as evidence_read_text

    ev = evidence_read_text(text, host_links=links) if text is not None else Evidence()
    if log is not None:
        log.evidence = list(ev.findings)
    return ev


def host_links(snap: Optional[Snapshot]):
    """``(bus_a, bus_b) -> (GB/s one way, what the link is)`` for two GPUs of the snapshot named by bus id (the form
    p2ptop.evidence.paste.norm_bus gives): the raw rate of the pair's link (fabric.Fabric.expected), so that a tool's
    figures in a text read beside this host are judged against the link they ran on where the text does not say it.
    None for no snapshot or fewer than two GPUs, and for a pair whose link the fabric cannot give (a fabric that fails
    to build must not cost the text's reading its tool facts). The fabric is built on the first question, once."""
    if snap is None or len(snap.gpus) < 2:
        return None
    from ..evidence.paste import norm_bus
    from ..fabric import Fabric

    index = {norm_bus(g.pci_bus_id): g.index for g in snap.gpus if g.pci_bus_id}
    fabric: list = []

    def link(bus_a: str, bus_b: str):
        a, b = index.get(bus_a), index.get(bus_b)
        if a is None or b is None or a == b:
            return None
        try:
            if not fabric:
                fabric.append(Fabric(snap))
            e = fabric[0].expected(a, b)
        except Exception:  # noqa: BLE001 - a fabric that cannot be built leaves the link unsaid, the text's reading whole
            return None
        return (e.gbps, f"{e.basis} between GPU{a} and GPU{b} of this host") if e.gbps else None

    return link


def _snapshot(args) -> tuple[Optional[Snapshot], Optional[str], Optional[int]]:
    """(snapshot, note, exit status on failure)."""
    if args.text_only and not (args.demo or args.replay):
        return None, "host not read (--text-only)", None
    try:
        return open_snapshot(demo=args.demo, replay=args.replay), None, None
    except SourceUnavailable as e:
        return None, f"live host not read ({e}); matching the text alone", None
    except SnapshotError as e:
        return None, None, fail(str(e))


def explain(kb, text: Optional[str], findings: list[Finding], top: Optional[int], origin: str = "host") -> list[tuple[Match, str]]:
    """The ranked matches alone (best first, with the pair each came from): answer()["results"]."""
    return answer(kb, text, findings, top, origin)["results"]


def answer(kb, text: Optional[str], findings: list[Finding], top: Optional[int], origin: str = "host",
           evidence=None, links=None) -> dict:
    """The whole answer as data: ranked matches (with the pair they came from), the symptom facts,
    where text and host disagree, what kind of answer it is and the one next command.

    kind: "matches" (an entry offered on its text or its facts), "unsure" (only candidates on a
    symptom, or symptoms no entry fits), "healthy" (GPUs in the text or host, no sign of trouble), "before_gpu" (the
    text's only trouble lies before any GPU communication: a launch or rendezvous that failed before the processes met),
    "no_gpu_trace" (the text holds nothing about GPUs or P2P), "empty_text" (the text given is empty or
    blank and the host, if read, shows no trouble), "nothing" (no text and no findings)."""
    log = prepare(text)
    evidence = evidence if evidence is not None else read_evidence(text, log, links)
    # a text that names no GPU, CUDA, NCCL, NVLink or P2P says nothing about GPUs: alone it gets no entry, and beside a
    # host's facts only what a GPU pair can cause in any job (a hang, slowness, wrong results: "training hangs" on the
    # host) joins them, not a failure or an error of its own ("Failed to parse --display/-d flags": a one-GPU host's
    # context would make a lead of it); the answer then says that the text holds no trace of GPUs
    text_says = text is None or bool(evidence.gpu_related)
    empty_text = text is not None and not log.text.strip()
    said = list(evidence.findings) if text_says else _job_symptoms(evidence.findings) if findings else []
    log.evidence = said  # what the matcher reads of the text (text_findings), as it joins the host's findings
    everything = list(findings) + said
    results = match_grouped(kb, log, everything, top, origin)
    facts = known_facts(log, everything, origin)
    symptoms = facts.symptoms()
    if not text_says and not findings:
        results, symptoms = [], []  # alone, such a text gets no entry, not even on an entry's own words
    if any(m.confidence in ("likely", "possible") for m, _ in results):
        kind = "matches"
    elif results or symptoms:
        kind = "unsure"
    elif not text_says:
        kind = "no_gpu_trace"
    elif text is None and not findings:
        kind = "nothing"
    elif facts.known("text.trouble_before_gpu"):
        kind = "before_gpu"
    else:
        kind = "healthy"
    missing: list[str] = []
    for m, _ in results:
        missing.extend(f for f in m.deciding_facts if f not in missing)
    nc = deciding_command([m.deciding_facts or m.own_deciding for m, _ in results])
    if nc is None and kind == "unsure":
        nc = first_look(facts.known)  # the first look at any pair trouble (on one GPU: the GPUs it can see)
    if empty_text and kind in ("healthy", "no_gpu_trace"):
        kind = "empty_text"
    conflicts = list(dict.fromkeys(c for m, _ in results for c in m.notes)) or facts.conflicts
    lost: list[dict] = []
    if findings and text is not None and kind in ("healthy", "unsure") and evidence.gpu_related:
        for entry, line, why, confidence in ruled_out_by_host(kb, log, everything, origin, facts=facts):
            lost.append({"entry": entry.id, "failure_class": entry.failure_class, "line": line, "why": why,
                         "confidence_on_text": confidence})
            said = "points at" if confidence in ("likely", "possible") else "suggests (unsure)"
            conflicts = conflicts + [f"line {line} of the text {said} {entry.id} ({entry.failure_class}), which the "
                                     f"host's facts rule out ({why}); if the text comes from another machine, explain "
                                     "it on its own (--text-only)"]
    return {"kind": kind, "results": results, "symptoms": symptoms, "conflicts": conflicts, "ruled_out_by_host": lost,
            "warnings_unread": warnings_unread(evidence) if kind == "healthy" else [],
            "deciding_facts": missing, "next_command": {"fact": nc[0], "command": nc[1]} if nc else None,
            # of the text where one is given (the host's GPUs do not make a text about them), else of the host
            "gpu_related": text_says if text is not None else bool(findings), "text_kinds": list(getattr(evidence, "kinds", []) or []),
            "text_empty": empty_text, "read": what_was_read(evidence), "text_notes": list(getattr(evidence, "notes", []) or [])}


_NOT_OF_GPUS = ("symptom.fails", "symptom.reported", "symptom.crash", "error.")


def _job_symptoms(findings: list[Finding]) -> list[Finding]:
    """The findings of a text that names no GPU without its failures and errors (prose's "failed", "error", a crash, an
    error line): what stays (a hang, slowness, wrong results, a setup) is what a GPU pair of the host can cause or
    shape in a job whose log does not name its GPUs."""
    out = []
    for f in findings:
        facts = {k: v for k, v in f.facts.items() if not k.startswith(_NOT_OF_GPUS)}
        if facts:
            out.append(dataclasses.replace(f, facts=facts))
    return out


def warnings_unread(evidence, limit: int = 3) -> list[dict]:
    """NCCL's WARN lines of a text that the answer reads no trouble in (NCCL's WARN() is its error level,
    src/include/debug.h): an answer that says "no sign of P2P trouble" names them, so it never reads as "no error"
    where NCCL printed one. Asked only for a healthy answer, so every WARN left says no failure p2ptop knows (one with a
    failure word, evidence/nccl.py FAILED_WORDS, would have been the text's error and made the answer unsure): NCCL
    refusing a use of its API ("Trying to send to self without a matching recv", "ncclGroupEnd: not in a group call")
    or an internal check. The lines NCCL prints as WARN on healthy runs (nccl.BENIGN_WARN) are left out. (The evidence
    package is imported here, as in read_evidence, so that commands without a text do not load it.)"""
    from ..evidence.nccl import BENIGN_WARN
    log = getattr(evidence, "nccl_log", None)
    if log is None:
        return []
    out = [{"line": m.line, "location": m.location, "message": m.message[:200]}
           for m in log.warnings if not BENIGN_WARN.search(m.message)]
    return out[:limit]


def what_was_read(evidence, limit: int = 8) -> list[str]:
    """The facts read from the text, as 'key = value (line N)', for an answer that offers nothing:
    it says what it looked at (the formats and facts it recognised), not just that it found nothing."""
    out: list[str] = []
    for f in getattr(evidence, "findings", []) or []:
        for k, v in (f.facts or {}).items():
            if k in ("text.language", "text.tool") or v is None:
                continue
            where = f.evidence[0].split(":", 1)[0] if f.evidence else ""
            item = f"{k} = {v}" + (f" ({where})" if where else "")
            if item not in out:
                out.append(item)
        if len(out) >= limit:
            break
    return out[:limit]


def run(args: argparse.Namespace) -> int:
    if args.top is not None and args.top < 1:
        return fail("--top must be at least 1")
    text, why = read_text(args.file)
    if why:
        return fail(why)
    snap, note, status = _snapshot(args)
    if status is not None:
        return status
    if text is None and _stdin_is_piped():
        note = "; ".join(n for n in (note, "a log on standard input is read only with - as FILE") if n)
    if text is None and snap is None:
        return fail("nothing to explain: give a log FILE (or - for stdin), or a host (live, --demo, --replay)")
    kb = load_kb(extra_dirs=getattr(args, "kb", []) or [])
    findings = findings_for(snap) + pair_fact_findings(snap) if snap is not None else []
    result = answer(kb, text, findings, args.top, host_origin(snap), links=host_links(snap))
    source = snap.source.label if snap is not None else None
    if args.json:
        print(json.dumps(_as_json(result, text, source, note, kb, args.lang), indent=1, ensure_ascii=False, default=str))
    else:
        print(_as_text(result, text, source, note, kb, args.lang))
    return EXIT_OK


def _as_json(answer, text, source, note, kb, lang) -> dict:
    out = []
    for m, label in answer["results"]:
        d = m.to_dict()
        e = m.entry
        d.update({"where": label or None, "signature": e.text("signature", lang), "root_cause": e.text("root_cause", lang),
                  "dead_ends": e.dead_ends, "workarounds": e.workarounds, "sources": e.sources,
                  "verification_tier": e.verification_tier, "file": e.file})
        out.append(d)
    return {"kind": "p2ptop-explain", "answer": answer["kind"], "text_lines": len(text.splitlines()) if text else 0,
            "source": source, "note": note, "gpu_related": answer["gpu_related"], "text_kinds": answer["text_kinds"],
            "text_empty": answer["text_empty"], "read": answer.get("read", []), "symptoms": answer["symptoms"], "conflicts": answer["conflicts"], "ruled_out_by_host": answer["ruled_out_by_host"], "deciding_facts": answer["deciding_facts"],
            "text_notes": answer.get("text_notes", []), "warnings_unread": answer.get("warnings_unread", []), "next_command": answer["next_command"], "kb_entries": len(kb.entries),
            "kb_problems": [str(p) for p in kb.problems], "matches": out}


def _as_text(answer, text, source, note, kb, lang) -> str:
    results = answer["results"]
    head = []
    if text is not None:
        head.append(f"Log: {len(text.splitlines())} lines")
    if source:
        head.append(f"host: {clean(source)}")
    lines = ["p2ptop explain — " + ("; ".join(head) or "nothing read")]
    if note:
        lines.append(f"Note: {clean(note)}")
    if kb.problems:
        lines.append(f"Note: {len(kb.problems)} knowledge-base file(s) skipped as broken (p2ptop kb lint)")
    for c in answer["conflicts"]:
        lines.append(f"Note: {clean(c)}")
    for n in answer.get("text_notes") or []:  # how the text was read where it could be misread (evidence's notes)
        lines.append(f"Note: {clean(n)}")
    nc = answer["next_command"]
    kind = answer["kind"]
    if kind == "empty_text":
        lines.append("The text is empty (nothing but blank space): nothing in it to explain. Did the command that "
                     "should have written it print anything, or print to the other stream (2>&1)?"
                     + (" The host's findings show no sign of P2P trouble." if source else ""))
        return "\n".join(lines)
    if kind == "no_gpu_trace":
        lines.append("Nothing to explain: the text holds no trace of GPUs or P2P (no GPU, CUDA, NCCL, NVLink or "
                     "peer-access words, error names or tool output), so no entry is offered."
                     + (" The host's findings show no sign of P2P trouble." if source else ""))
        return "\n".join(lines)
    if kind == "before_gpu":
        lines.append("Not a GPU-to-GPU fault as far as the text shows: its trouble lies before any GPU communication "
                     "(see the note above), so no knowledge-base entry is offered. If a process failed on a GPU error "
                     "before it, explain that process's output.")
        return "\n".join(lines)
    if kind == "healthy" and answer.get("ruled_out_by_host"):
        lines.append("No entry applies to this host: the text's own lines give entries that the host's facts rule out "
                     "(see the notes above), and nothing else in the text or the host's findings points at P2P trouble.")
        return "\n".join(lines)
    if kind == "healthy":
        lines.append(("No sign of P2P trouble: no P2P, transport or system error, hang, slowness, wrong result or failing "
                      "P2P state in " if answer.get("warnings_unread") else
                      "No sign of P2P trouble: no error, hang, slowness, wrong result or failing P2P state in ")
                     + ("the text or the host's findings" if text is not None and source else "the text" if text is not None else "the host's findings")
                     + ", so no knowledge-base entry is offered.")
        for w in answer.get("warnings_unread") or []:
            lines.append(f"NCCL warned on line {w['line']}" + (f" ({clean(w['location'])})" if w.get("location") else "")
                         + f": {clean(w['message'])!r}. It names no P2P, transport or system failure that p2ptop "
                         "knows: most WARNs of this kind are NCCL refusing how the program calls it, or an internal "
                         "check; read it with the program's own error.")
        if text is not None:
            kinds = answer.get("text_kinds") or []
            lines.append("Read in the text: " + (", ".join(clean(k) for k in kinds) if kinds else "no tool output or log format")
                         + (("; facts: " + "; ".join(clean(r) for r in answer.get("read") or [])) if answer.get("read") else ""))
        return "\n".join(lines)
    if kind == "unsure":
        if answer["symptoms"]:
            lines.append("Symptoms: " + "; ".join(clean(s) for s in answer["symptoms"][:8]))
        if not results:
            lines.append("Unsure: these facts point at trouble, but no knowledge-base entry fits them.")
        elif all(m.basis == "retrieval" for m, _ in results):
            lines.append("Unsure: no entry's own text or facts match; these candidates share the most words with the "
                         + ("text (and its symptom)" if answer["symptoms"] else
                            ("text, which names GPU communication but no setup of theirs"
                             if all(any("names GPU communication" in r for r in m.reasons) for m, _ in results) else
                             "text, and the setup it describes fits their conditions")
                            + "; the text names no symptom (no error, "
                            "hang, slowness or wrong data): if nothing fails, nothing needs fixing")
                         + ". Read them as leads, not answers: run the next command to decide.")
        else:
            lines.append("Unsure: no entry's text matches; these candidates share a symptom with the facts"
                         + (" or words with the text" if any(m.basis == "retrieval" for m, _ in results) else "")
                         + ". Read them as leads, not answers.")
        lines.append("(Ranked by score, the words each shares with the text and the conditions of its own that hold; "
                     "different causes first.)")
    elif results[0][0].score < POSSIBLE:
        lines.append("Unsure: the best match is weak; read the candidates as leads, not answers.")
    missing = answer["deciding_facts"]
    if missing and len(results) > 1:
        lines.append("Would decide between them: " + "; ".join(fact_help(f) for f in missing))
    if nc:
        lines.append(f"Next: $ {clean(nc['command'])}   (reads {clean(nc['fact'])})")
    for rank, (m, label) in enumerate(results, 1):
        lines.append("")
        block = match_text(rank, m, lang)
        if label:
            block = block.replace("\n", f"\n   on: {clean(label)}\n", 1)
        lines.append(block)
    return "\n".join(lines)
