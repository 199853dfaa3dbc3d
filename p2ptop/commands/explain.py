"""``p2ptop explain [FILE|-]``: which knowledge-base entries explain a log, and what to do.

The log's text is matched together with the findings of a snapshot: live by default when NVML
works (text only, with a note, when it does not), or ``--demo``/``--replay``. Findings are matched
per pair (the pair's, its GPUs' and the host's findings together), so facts of different pairs are
not mixed; an entry is reported once, for the pair where it scores best.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Optional

from ..diagnose import findings_for
from ..findings import Finding, gpu_subject
from ..knowledge import load_kb, match
from ..knowledge.matcher import POSSIBLE, Match
from ..knowledge.render import clean, fact_help, match_text
from ..model import Snapshot, SnapshotError
from ..sources import SourceUnavailable, open_snapshot
from .common import EXIT_OK, add_source_options, fail

DEFAULT_TOP = 3
MAX_BYTES = 20 * 1024 * 1024  # a log larger than this is read only up to here


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("explain", help="match a log (FILE, or - for stdin) and the host's findings to knowledge-base entries")
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
    if name is None:
        return None, None
    try:
        if name == "-":
            data = sys.stdin.buffer.read(MAX_BYTES)
        else:
            with open(name, "rb") as f:
                data = f.read(MAX_BYTES)
    except OSError as e:
        return None, f"cannot read {name}: {e.strerror or e}"
    return data.decode("utf-8", errors="replace"), None


def _stdin_is_piped() -> bool:
    try:
        return not sys.stdin.isatty()
    except (AttributeError, OSError, ValueError):
        return False


def finding_groups(findings: list[Finding]) -> dict[str, list[Finding]]:
    """Findings to match together: per pair (pair + its GPUs + host), per GPU with findings of its own, or the host alone."""
    host = [f for f in findings if f.subject == "host"]
    by_subject: dict[str, list[Finding]] = {}
    for f in findings:
        by_subject.setdefault(f.subject, []).append(f)
    groups: dict[str, list[Finding]] = {}
    covered: set[str] = set()
    for subject, fs in by_subject.items():
        if subject.startswith("pair:"):
            a, b = fs[0].pair
            gpus = by_subject.get(gpu_subject(a), []) + by_subject.get(gpu_subject(b), [])
            covered.update({gpu_subject(a), gpu_subject(b)})
            groups[f"GPU{a}->GPU{b}"] = fs + gpus + host
    for subject, fs in by_subject.items():
        if subject.startswith("gpu:") and subject not in covered:
            groups[f"GPU{subject[4:]}"] = fs + host
    if not groups:
        groups["host"] = host
    return groups


def explain(kb, text: Optional[str], findings: list[Finding], top: Optional[int]) -> list[tuple[Match, str]]:
    """Best match per entry over all finding groups, with the group it came from ('' for text alone)."""
    best: dict[str, tuple[Match, str]] = {}
    groups = finding_groups(findings) if findings else {"": []}
    for label, fs in groups.items():
        for m in match(kb, text, fs):
            if m.entry.id not in best or m.score > best[m.entry.id][0].score:
                best[m.entry.id] = (m, label)
    ranked = sorted(best.values(), key=lambda ml: (-ml[0].score, ml[0].entry.benign, ml[0].entry.id))
    return ranked[:top] if top else ranked


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
    findings = findings_for(snap) if snap is not None else []
    results = explain(kb, text, findings, args.top)
    source = snap.source.label if snap is not None else None
    if args.json:
        print(json.dumps(_as_json(results, text, source, note, kb, args.lang), indent=1, ensure_ascii=False))
    else:
        print(_as_text(results, text, source, note, kb, args.lang))
    return EXIT_OK


def _as_json(results, text, source, note, kb, lang) -> dict:
    out = []
    for m, label in results:
        d = m.to_dict()
        e = m.entry
        d.update({"where": label or None, "signature": e.text("signature", lang), "root_cause": e.text("root_cause", lang),
                  "dead_ends": e.dead_ends, "workarounds": e.workarounds, "sources": e.sources,
                  "verification_tier": e.verification_tier, "file": e.file})
        out.append(d)
    return {"kind": "p2ptop-explain", "text_lines": len(text.splitlines()) if text else 0, "source": source, "note": note,
            "kb_entries": len(kb.entries), "kb_problems": [str(p) for p in kb.problems], "matches": out}


def _as_text(results, text, source, note, kb, lang) -> str:
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
    if not results:
        lines.append("No knowledge-base entry matches. Nothing known explains this; if something is wrong, "
                     "the log lines that show it and `p2ptop doctor` help a person judge.")
        return "\n".join(lines)
    if results[0][0].score < POSSIBLE:
        lines.append("Unsure: the best match is weak; read the candidates as leads, not answers.")
    missing: list[str] = []
    for m, _ in results:
        missing.extend(f for f in m.deciding_facts if f not in missing)
    if missing and len(results) > 1:
        lines.append("Would decide between them: " + "; ".join(fact_help(f) for f in missing))
    for rank, (m, label) in enumerate(results, 1):
        lines.append("")
        block = match_text(rank, m, lang)
        if label:
            block = block.replace("\n", f"\n   on: {label}\n", 1)
        lines.append(block)
    return "\n".join(lines)
