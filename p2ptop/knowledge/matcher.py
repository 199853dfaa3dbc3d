"""Which entries explain a log and/or a set of findings, ranked, with the reasons and the facts
that are missing and would decide between candidates.

Text: every line (control characters stripped, runs of whitespace folded, cut to MAX_LINE) is
searched with each entry's regexes (case-insensitive) and for the error codes it names (CUDA names
and numbers, NCCL results, Xids). A few facts are also read from the log itself (NCCL_* settings,
driver version, GeForce names, IOMMU switches) where the findings do not give them.

Facts: the findings' facts (p2ptop/findings.py FACT_KEYS), the pseudo-fact ``finding`` (their ids)
and ``log`` (a condition's regex searched in the whole log). An entry's ``match.require``
conditions must all hold: one that fails makes it unlikely, one whose fact is unknown is named in
``deciding_facts``. ``support`` conditions add weight; any ``exclude`` that holds rules it out.
An entry is a candidate on text evidence, or on facts alone when every ``require`` holds and, where
it has ``trigger`` conditions, at least one of them holds (a trigger is the fact that says something
is wrong; with text evidence a trigger that holds adds weight like ``support``).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from ..findings import Finding
from .codes import GATES, codes_in_line, key as code_key
from .entry import Entry
from .regex_safety import MAX_LINE, compile_pattern, required_literal
from .schema import FINDING_FACT, LOG_FACT

PRIMARY_REGEX, CODE = 0.7, 0.45  # default weight of a line matched by the main regex, or naming an error code
EXTRA_DISCOUNT = 0.1  # a line matched only by one of the further regexes weighs this much less than the main one
REQUIRE_WEIGHT, SUPPORT_WEIGHT = 0.5, 0.2  # default weight of a condition that holds
UNKNOWN_FACTOR, CONTRADICTED_FACTOR = 0.8, 0.3
LIKELY, POSSIBLE = 0.75, 0.45

_CONTROL = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|[\x00-\x08\x0b-\x1f\x7f]")
_DELETE = {c: None for c in [*range(0x00, 0x09), *range(0x0b, 0x20), 0x7f] if c not in (0x0d,)}
_OPS = ("equals", "in", "not_in", "lt", "lte", "gt", "gte", "present", "regex")


@dataclass
class Match:
    entry: Entry
    score: float
    reasons: list[str] = field(default_factory=list)
    deciding_facts: list[str] = field(default_factory=list)  # facts that are missing and would decide between candidates

    @property
    def confidence(self) -> str:
        return "likely" if self.score >= LIKELY else "possible" if self.score >= POSSIBLE else "unsure"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.entry.id, "failure_class": self.entry.failure_class, "score": round(self.score, 3),
                "confidence": self.confidence, "reasons": self.reasons, "deciding_facts": self.deciding_facts}


def clean_lines(text: str) -> list[str]:
    """The log as the matcher reads it: one string per line, no terminal codes, whitespace folded."""
    if "\x1b" in text:
        text = _CONTROL.sub("", text)
    return [" ".join(line.split())[:MAX_LINE] for line in text.translate(_DELETE).splitlines()]


class Log:
    """A cleaned log, as lines and as one text, with the line of any offset in the text."""

    def __init__(self, text: Optional[str]):
        self.lines = clean_lines(text) if text else []
        self.text = "\n".join(self.lines)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line) + 1)
        lower = self.text.lower()
        self.lower = lower if len(lower) == len(self.text) else None  # case folding that changes lengths: search per line

    def line_at(self, offset: int) -> int:
        """1-based number of the line holding ``offset`` of :attr:`text`."""
        return bisect.bisect_right(self.starts, offset)

    def lines_with(self, literals) -> list[int]:
        """1-based numbers of the lines holding any of ``literals`` (lower case), in order."""
        found: set[int] = set()
        for lit in literals:
            if self.lower is None:
                found.update(n for n, line in enumerate(self.lines, 1) if lit in line.lower())
                continue
            pos = self.lower.find(lit)
            while pos != -1:
                n = self.line_at(pos)
                found.add(n)
                pos = self.lower.find(lit, self.starts[n])
        return sorted(found)

    def first_line(self, rx: re.Pattern) -> Optional[int]:
        """The first line ``rx`` matches. A substring search for the pattern's required literal picks
        the candidate lines, so a long log costs one pass per pattern in C, not one regex per line."""
        lit = required_literal(rx.pattern)
        if lit and self.lower is not None:
            pos = self.lower.find(lit)
            while pos != -1:
                n = self.line_at(pos)
                if rx.search(self.lines[n - 1]):
                    return n
                pos = self.lower.find(lit, self.starts[n])
            return None
        if not lit and rx.search(self.text) is None:
            return None
        return next((n for n, line in enumerate(self.lines, 1) if (not lit or lit in line.lower()) and rx.search(line)), None)


# ---- facts -----------------------------------------------------------------------------------

#: (pattern, what it gives, lower-case literals a line must hold for the pattern to be tried there)
_TEXT_FACTS: list[tuple[re.Pattern, Any, tuple[str, ...]]] = [
    (re.compile(r"\b((?:NCCL|CUDA|TORCH_NCCL|NVIDIA)_[A-Z0-9_]+)\s*=\s*['\"]?([^\s'\",;)]+)"), "env", ("nccl_", "cuda_", "nvidia_")),
    (re.compile(r"\b(NCCL_[A-Z0-9_]+) set by environment to (\S+)", re.IGNORECASE), "env", ("set by environment",)),
    (re.compile(r"\bDriver Version:\s*((\d+)\.\d+(?:\.\d+)?)", re.IGNORECASE), "driver", ("driver version",)),
    (re.compile(r"\bKernel Module\s+((\d+)\.\d+(?:\.\d+)?)\b", re.IGNORECASE), "driver", ("kernel module",)),
    (re.compile(r"\bGeForce\b|\bTITAN (?:RTX|V|Xp?)\b|\bRTX ?[2345]0[5-9]0(?: ?Ti| ?SUPER)?\b", re.IGNORECASE), ("gpu.consumer", True), ("geforce", "titan", "rtx")),
    (re.compile(r"\b(?:intel_iommu=on|amd_iommu=on|DMAR: IOMMU enabled|AMD-Vi: .*enabled)", re.IGNORECASE), ("host.iommu_active", True), ("iommu", "amd-vi")),
    (re.compile(r"\biommu(?:\.passthrough=1|=pt)\b", re.IGNORECASE), ("host.iommu_passthrough", True), ("iommu",)),
]


def _text_facts(log: Log) -> dict[str, tuple[Any, int]]:
    """fact -> (value, line number) read from the log (the first mention wins)."""
    found: list[tuple[int, str, Any]] = []
    for rx, what, gates in _TEXT_FACTS:
        for n in log.lines_with(gates):
            for m in rx.finditer(log.lines[n - 1]):
                if what == "env":
                    found.append((n, f"env.{m.group(1).upper()}", m.group(2).rstrip(".,;:")))
                elif what == "driver":
                    found.append((n, "host.driver_version", m.group(1)))
                    found.append((n, "host.driver_major", int(m.group(2))))
                else:
                    found.append((n, what[0], what[1]))
    out: dict[str, tuple[Any, int]] = {}
    for n, k, v in sorted(found, key=lambda f: f[0]):
        out.setdefault(k, (v, n))
    return out


class Facts:
    """What is known: fact -> values (several findings may disagree), and where each came from."""

    def __init__(self, findings: Iterable[Finding], log: Log):
        self.values: dict[str, list[Any]] = {}
        self.origin: dict[str, str] = {}
        for f in findings:
            self._add(FINDING_FACT, f.id, f"finding {f.id}")
            for k, v in (f.facts or {}).items():
                self._add(k, v, "")
        for k, (v, n) in _text_facts(log).items():
            if k not in self.values:
                self._add(k, v, f"line {n} of the log")
        self.log = log.text

    def _add(self, k: str, v: Any, origin: str) -> None:
        vals = self.values.setdefault(k, [])
        if v not in vals:
            vals.append(v)
        if origin:
            self.origin.setdefault(k, origin)

    def check(self, cond: dict[str, Any]) -> Optional[bool]:
        """True or False when the fact is known, None when it is not."""
        fact = cond["fact"]
        if fact == LOG_FACT:
            if not self.log:
                return None
            return compile_pattern(cond["regex"]).search(self.log) is not None
        if "present" in cond:
            return (fact in self.values) == cond["present"]
        vals = self.values.get(fact)
        if not vals:
            return None
        return any(_holds(cond, v) for v in vals)

    def shown(self, fact: str) -> str:
        vals = self.values.get(fact) or []
        text = " / ".join(str(v) for v in vals)
        where = self.origin.get(fact)
        return f"{text} ({where})" if where and where.startswith("line") else text


def _norm(v: Any) -> Any:
    return v.upper() if isinstance(v, str) else v


def _num(v: Any) -> Optional[float]:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return float(str(v).split(".")[0]) if re.fullmatch(r"\d+(\.\d+)*", str(v)) else None
    except ValueError:
        return None


def _holds(cond: dict[str, Any], v: Any) -> bool:
    if "equals" in cond:
        return _norm(v) == _norm(cond["equals"]) or str(v).upper() == str(cond["equals"]).upper()
    if "in" in cond:
        return _norm(v) in {_norm(x) for x in cond["in"]}
    if "not_in" in cond:
        return _norm(v) not in {_norm(x) for x in cond["not_in"]}
    if "regex" in cond:
        return compile_pattern(cond["regex"]).search(str(v)) is not None
    n = _num(v)
    if n is None:
        return False
    for op, fn in (("lt", n.__lt__), ("lte", n.__le__), ("gt", n.__gt__), ("gte", n.__ge__)):
        if op in cond:
            return fn(float(cond[op]))
    return False


def _describe(cond: dict[str, Any], facts: Facts) -> str:
    if cond.get("reason"):
        base = cond["reason"]
    else:
        op = next(o for o in _OPS if o in cond)
        base = f"{cond['fact']} {op.replace('_', ' ')} {cond[op]}"
    if cond["fact"] in (LOG_FACT, FINDING_FACT):
        return base
    return f"{base} ({cond['fact']} = {facts.shown(cond['fact'])})"


# ---- text ------------------------------------------------------------------------------------

def _excerpt(line: str, width: int = 100) -> str:
    return line if len(line) <= width else line[: width - 1] + "…"


def _text_hits(entry: Entry, log: Log, codes: dict[str, list[tuple[int, str]]]) -> tuple[list[float], list[str]]:
    """The text evidence for one entry: per log line the strongest hit (regex or error code), so one
    line counts once however many of the entry's patterns it satisfies."""
    primary = float(entry.data.get("regex_weight", PRIMARY_REGEX))
    best: dict[int, tuple[float, str]] = {}

    def hit(n: int, weight: float, reason: str) -> None:
        if n not in best or weight > best[n][0]:
            best[n] = (weight, reason)

    for i, rx in enumerate(entry.patterns):
        n = log.first_line(rx)
        if n is not None:
            weight = primary if i == 0 and entry.data.get("regex") else primary - EXTRA_DISCOUNT
            hit(n, weight, f"regex matched line {n}: {_excerpt(log.lines[n - 1])}")
    for code in entry.error_codes:
        for n, written in codes.get(code_key(code), [])[:1]:
            hit(n, CODE, f"error code {written} on line {n}")
    ordered = sorted(best.items())
    return [w for _, (w, _r) in ordered], [r for _, (_w, r) in ordered]


def _codes(log: Log) -> dict[str, list[tuple[int, str]]]:
    """error-code key -> [(line, as written)], in the order of the log."""
    out: dict[str, list[tuple[int, str]]] = {}
    for n in log.lines_with(GATES):
        for k, written in codes_in_line(log.lines[n - 1]):
            out.setdefault(k, []).append((n, written))
    return out


def _combine(weights: Iterable[float]) -> float:
    miss = 1.0
    for w in weights:
        miss *= 1.0 - w
    return 1.0 - miss


def score_entry(entry: Entry, log: Log, codes, facts: Facts) -> Optional[Match]:
    text_w, reasons = _text_hits(entry, log, codes) if log.lines else ([], [])
    m = entry.data.get("match") or {}
    for cond in m.get("exclude") or []:
        if facts.check(cond):
            return None
    fact_w: list[float] = []
    deciding: list[str] = []
    factor = 1.0
    requires = m.get("require") or []
    all_hold = True
    for cond in requires:
        ok = facts.check(cond)
        if ok:
            fact_w.append(cond.get("weight", REQUIRE_WEIGHT))
            reasons.append(_describe(cond, facts))
        else:
            all_hold = False
            if ok is None:
                factor *= UNKNOWN_FACTOR
                if cond["fact"] not in deciding:
                    deciding.append(cond["fact"])
            else:
                factor *= CONTRADICTED_FACTOR
                reasons.append("against: " + _describe(cond, facts))
    for cond in m.get("exclude") or []:
        if facts.check(cond) is None and cond["fact"] not in deciding and cond["fact"] != LOG_FACT:
            deciding.append(cond["fact"])
    triggers = m.get("trigger") or []
    fired = [c for c in triggers if facts.check(c)]
    if not text_w and not (all_hold and (fired if triggers else requires)):
        return None
    for cond in fired:
        fact_w.append(cond.get("weight", REQUIRE_WEIGHT))
        reasons.append(_describe(cond, facts))
    for cond in m.get("support") or []:
        if facts.check(cond):
            fact_w.append(cond.get("weight", SUPPORT_WEIGHT))
            reasons.append(_describe(cond, facts))
    score = _combine(text_w + fact_w) * factor
    return Match(entry, round(score, 4), list(dict.fromkeys(reasons)), deciding)


def match(kb, text: Optional[str] = None, findings: Iterable[Finding] = (), top: Optional[int] = None) -> list[Match]:
    """Entries of ``kb`` that explain ``text`` and/or ``findings``, best first."""
    log = Log(text)
    codes = _codes(log)
    facts = Facts(list(findings), log)
    out = []
    for entry in kb.entries:
        m = score_entry(entry, log, codes, facts)
        if m is not None:
            out.append(m)
    _share_deciding_facts(out)
    out.sort(key=lambda m: (-m.score, m.entry.benign, m.entry.id))
    return out[:top] if top else out


_LINE = re.compile(r"^(?:regex matched|error code .*) (?:line|on line) (\d+)")


def _share_deciding_facts(matches: list[Match]) -> None:
    """Entries that explain the same log line compete: each of them names every fact that is
    missing for any of them, since that fact is what would decide between them."""
    groups: dict[frozenset, list[Match]] = {}
    for m in matches:
        lines = frozenset(int(x.group(1)) for r in m.reasons for x in [_LINE.match(r)] if x)
        if lines:
            groups.setdefault(lines, []).append(m)
    for group in groups.values():
        if len(group) < 2:
            continue
        union: list[str] = []
        for m in group:
            union.extend(f for f in m.deciding_facts if f not in union)
        for m in group:
            m.deciding_facts = union
