"""Which entries explain a log and/or a set of findings, ranked, with the reasons and the facts
that are missing and would decide between candidates.

Text: every line (control characters stripped, runs of whitespace folded, cut to MAX_LINE) is
searched with each entry's regexes (case-insensitive) and for the error codes it names (CUDA names
and numbers, NCCL results, Xids). The text's facts (versions, settings, GPU models, topology,
transports, errors, symptoms) are read by p2ptop.evidence, once per text, as "text.*" findings
whose origin is their line ("line 14 of the paste"); the caller may pass them (explain does).

Facts: the findings' facts (p2ptop/findings.py FACT_KEYS), the pseudo-fact ``finding`` (their ids)
and ``log`` (a condition's regex searched in the whole log). An entry's ``match.require``
conditions must all hold: one that fails makes it unlikely, one whose fact is unknown is named in
``deciding_facts``. ``support`` conditions add weight; any ``exclude`` that holds rules it out.
An entry is a candidate on text evidence, or on facts alone when every ``require`` holds and, where
it has ``trigger`` conditions, at least one of them holds (a trigger is the fact that says something
is wrong; with text evidence a trigger that holds adds weight like ``support``).

Where no entry is likely and the facts hold a symptom, the answer is completed with *leads* (context
that fits) and with candidates on the entries' own words (``retrieved``: BM25, knowledge/retrieval.py),
all unsure; unsure candidates rank by score, relevance and the context conditions of their own that
hold, different classes first (``ranked``), and each names one next command (``give_next_command``).
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any, Iterable, NamedTuple, Optional

from ..findings import SHM_TRANSPORT_FACTS, Finding
from .codes import (CUDA_BY_NUMBER, GATES, GENERIC_CUDA_MESSAGES, codes_in_line, cuda_error, is_generic_cuda_text,
                    key as code_key, unusable_cuda_in_line)
from .entry import Entry
from .fact_roles import (CLASS_FACT, COMPLAINT_EXEMPT, NEXT_COMMAND, NVLINK_CLASSES, OWN_TEXT_CLASSES, READ_FROM_OUTPUT,
                         first_look, is_info_line, is_setting_line, is_symptom, next_command, readable, role, ruled_out)
from .regex_safety import INVISIBLE_CHARS, MAX_LINE, RECORD_START, TYPOGRAPHIC_QUOTES, compile_pattern, read_fullwidth, unescape_html, literal_sets, required_literal, required_literals
from .schema import FINDING_FACT, LOG_FACT

PRIMARY_REGEX, CODE = 0.7, 0.45  # default weight of a line matched by the main regex, or naming an error code
EXTRA_DISCOUNT = 0.1  # a line matched only by one of the further regexes weighs this much less than the main one
REQUIRE_WEIGHT, SUPPORT_WEIGHT = 0.5, 0.2  # default weight of a condition that holds
UNKNOWN_FACTOR, CONTRADICTED_FACTOR = 0.8, 0.3
LIKELY, POSSIBLE = 0.75, 0.45
COUNT_SAMPLE = 2_000_000  # characters of a long text its literals are counted on (first and last halves)
COMMON_LITERAL = 50000  # a literal on more lines than this no longer narrows the search
#: facts in which the text ties its trouble to a change: a version changed, a variable set (prose.py reads them only beside
#: a symptom of the text)
CAUSE_SAID = frozenset({"text.fixed_by", "text.broken_by", "symptom.caused_by_env"})
UNSURE_CAP = 0.44  # a candidate offered on its symptom alone (a required fact unknown) stays below POSSIBLE
WEAK_SYMPTOMS = frozenset({"symptom.fails", "symptom.reported"})  # symptoms too generic to make an entry a candidate without its context
#: a lead (context that fits beside a symptom no entry claims) scores half; its fitting context still earns CONTEXT_BONUS in
#: rank_key, so a lead whose setup fits can pass a candidate on a bare symptom (ranking every lead under every candidate
#: was measured in the eighteenth session: 757 -> 711 of 876 in the top 3, the fitting setup is most often the cause)
LEAD_FACTOR = 0.5
DOUBT_FACTOR = 0.5  # an entry in doubt (match.doubt holds) ranks as a lead does: under the candidates nothing speaks against
MIN_CANDIDATES = 3  # an answer with fewer candidates than this on a symptom is completed with leads

_CONTROL = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|[\x00-\x08\x0b-\x1f\x7f]")
#: what the matcher's lines drop (control and invisible characters) and read back (typographic quotes as ASCII ones)
_TRANSLATE = {c: None for c in [*range(0x00, 0x09), *range(0x0b, 0x20), 0x7f, *map(ord, INVISIBLE_CHARS)] if c != 0x0d} \
    | TYPOGRAPHIC_QUOTES
_OPS = ("equals", "in", "not_in", "lt", "lte", "gt", "gte", "present", "regex")


@dataclass(frozen=True)
class Hit:
    """A line of the text an entry's own text hit: "regex" (one of its regexes), "code" (an error code it lists, named on
    the line), "code_read" (such a code read from the text's facts, "(read from the text)"), "code_origin" (read from the
    facts with no line of its own: ``line`` is None)."""
    kind: str
    line: Optional[int]


@dataclass
class Match:
    entry: Entry
    score: float
    reasons: list[str] = field(default_factory=list)
    deciding_facts: list[str] = field(default_factory=list)  # facts that are missing and would decide between candidates
    unsure: bool = False  # a candidate on its symptom alone: some required fact is unknown (never likely/possible)
    facts_for: list[str] = field(default_factory=list)  # conditions that hold, with the fact's value and origin
    facts_against: list[str] = field(default_factory=list)  # conditions that fail, likewise
    notes: list[str] = field(default_factory=list)  # where the text and the host disagree
    own_deciding: list[str] = field(default_factory=list)  # this entry's own missing facts, its requires first
    basis: str = "signs"  # what offered it: "signs" (its own text or facts), "lead" (context beside a symptom), "retrieval" (its words)
    relevance: float = 0.0  # how much of its own text the text shares (retrieval, 0..1 of the best entry); ranks unsure ones
    context_held: int = 0  # conditions of its own on context (not a symptom) that hold: a VM, a GeForce card, a setting
    first_failure: bool = False  # its own text is the earliest failure line of a log several offered entries read
    shared_line: bool = False  # offered on a line that entries of several classes share, nothing of its own (_one_of_several)
    shared_code: bool = False  # offered on an error code that entries of several classes share alone (score_entry)
    code_hits: frozenset = frozenset()  # the keys of the error codes it lists that the text names (score_entry)
    quiet: bool = False  # offered only on lines of settings or information, no complaint beside them (score_entry)
    shared_score: float = 0.0  # its score before one of those two rules capped it: ranks it among the others so capped
    sign_score: float = 0.0  # its score without weak symptoms ("it fails"), which every entry of a shared line holds alike
    own_signs: int = 0  # its own conditions that hold beyond the error itself (a setup, a measured state; not a weak symptom)
    words_lead: bool = False  # of the entries of a shared line, the one the text's words clearly favour (_one_of_several)
    weak_offer: bool = False  # offered with its setup held but on no symptom of its own beyond "it fails" (score_entry)
    cause_said: bool = False  # a trigger of its own on a fact that ties the text's trouble to a change (CAUSE_SAID) held
    hits: tuple[Hit, ...] = ()  # the text's lines its own regexes and error codes hit (the reasons say them in words)
    held_facts: tuple[str, ...] = ()  # the facts of its own conditions that hold (require, trigger, support), in order

    @property
    def confidence(self) -> str:
        if self.unsure:
            return "unsure"
        return "likely" if self.score >= LIKELY else "possible" if self.score >= POSSIBLE else "unsure"

    @property
    def next_command(self) -> Optional[dict[str, str]]:
        """The one command that reads the first deciding fact (fact_roles.NEXT_COMMAND), or None."""
        nc = next_command(self.own_deciding or self.deciding_facts, ordered=True)
        return {"fact": nc[0], "command": nc[1]} if nc else None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.entry.id, "failure_class": self.entry.failure_class, "score": round(self.score, 3),
                "confidence": self.confidence, "unsure": self.unsure, "reasons": self.reasons, "deciding_facts": self.deciding_facts,
                "facts_for": self.facts_for, "facts_against": self.facts_against,
                "next_command": self.next_command, "notes": self.notes, "basis": self.basis,
                "relevance": round(self.relevance, 3)}


def clean_lines(text: str) -> list[str]:
    """The log as the matcher reads it: one string per line, no terminal codes, HTML's escapes read back, whitespace folded."""
    if "\x1b" in text:
        text = _CONTROL.sub("", text)
    text = unescape_html(text)  # a paste with HTML's escapes, read back as the evidence readers do (paste.tidy)
    # an ASCII line with single spaces only is folded already (after the translation its only whitespace is space and
    # tab); any other is split and joined (str.split folds every Unicode space too): half the time on a 20 MB log
    return [(line if line.isascii() and "  " not in line and "\t" not in line and line[:1] != " " and line[-1:] != " "
             else " ".join(line.split()))[:MAX_LINE] for line in text.translate(_TRANSLATE).splitlines()]


class Log:
    """A cleaned log, as lines and as one text, with the line of any offset in the text."""

    def __init__(self, text: Optional[str]):
        from ..evidence.paste import line_ends, rejoin_cut_names, reline, unprefix

        # the line breaks a paste lost, restored as the evidence readers see them, and an error's name a single hard cut
        # split joined again (one numbering for the facts' lines and the entries' hits: "line 14 of the paste" means the
        # same line to both), and the launchers' prefixes off every line as the evidence readers have them (an entry's
        # pattern for a program's line start, "^Cuda failure", reads it under "[1,0]<stdout>:" or a timestamp too); an input
        # method's fullwidth forms as ASCII first, as paste.tidy reads them ("CUDA error\uff1a" is "CUDA error: ")

        if text:
            text = line_ends(text)  # one line end each, as the evidence readers read them ("\r\r\n" too: paste.CR_TWICE)
        self.prefixes: list[str] = []  # the launchers' prefixes taken off (their distinct forms): a condition on the text reads them
        self.source = text  # the text as given (not a copy): what the evidence readers read, its alignment kept
        self.lines = clean_lines(rejoin_cut_names(unprefix(read_fullwidth(reline(text)), self.prefixes))) if text else []
        self.text = "\n".join(self.lines)
        self.starts = [0, *accumulate(len(line) + 1 for line in self.lines)]
        lower = self.text.lower()
        self.lower = lower if len(lower) == len(self.text) else None  # case folding that changes lengths: search per line
        self.codes: Optional[dict[str, list[tuple[int, str]]]] = None  # set by prepare()
        self._searched: dict[str, bool] = {}
        self._counts: dict[str, int] = {}
        self.evidence: Optional[list[Finding]] = None  # the text's findings, see text_findings()

    def line_at(self, offset: int) -> int:
        """1-based number of the line holding ``offset`` of :attr:`text`."""
        return bisect.bisect_right(self.starts, offset)

    def lines_with(self, literals) -> list[int]:
        """1-based numbers of the lines holding any of ``literals`` (lower case), in order."""
        found: set[int] = set()
        for lit in literals:
            if self.lower is not None and not self._exact and self._absent(lit):
                continue
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
        """The first line ``rx`` matches; failing that, in a paste of at most WRAP_TEXT characters, the first
        line whose message a hard wrap cut onto the next line(s) (:meth:`wrapped_line`)."""
        n = self._first_line(rx)
        if n is None and len(self.text) <= WRAP_TEXT:
            n = self.wrapped_line(rx)
        return n

    def wrapped_line(self, rx: re.Pattern) -> Optional[int]:
        """The first line where ``rx`` matches only once a wrapped line is joined again with the lines that
        continue it: a line of at least WRAP_MIN characters followed by one that does not start a record of
        its own (a timestamp, a bracket, host:pid:tid, a traceback's lines). Both ways a wrap is pasted are
        tried: the space at the break lost (a reflowed paragraph, joined with a space) or a word cut at the
        terminal's width (joined with nothing). One search over the joined text per way (in C); a match
        that crosses a line break that was not joined is skipped."""
        flats = self.__dict__.get("_flats")
        if flats is None:
            flats = self.__dict__["_flats"] = _flat_texts(self.lines)
        if not flats:
            return None
        seen = self.__dict__.setdefault("_wrapped_hits", {})
        if rx.pattern in seen:
            return seen[rx.pattern]
        seen[rx.pattern] = None
        for text, starts in flats:
            pos = 0
            while True:
                m = rx.search(text, pos)
                if m is None:
                    break
                if "\n" not in m.group(0):
                    seen[rx.pattern] = bisect.bisect_right(starts, m.start())
                    return seen[rx.pattern]
                pos = text.index("\n", m.start()) + 1
        return None

    def _first_line(self, rx: re.Pattern) -> Optional[int]:
        """The first line ``rx`` matches. A substring search for the pattern's required literals (one,
        or one per branch of an alternation) picks the candidate lines, so a long log costs a pass per
        literal in C, not one regex per line."""
        if self.lower is not None:
            # of the literal sets every match needs one of, the rarest in this text picks the candidate lines
            branches = literal_sets(rx.pattern)
            if not branches and required_literal(rx.pattern):
                branches = (((required_literal(rx.pattern),),),)
            picked: list[str] = []
            total = 0
            possible = 0
            for sets in branches:
                if not self._exact:  # a long text: drop the literals its words prove absent (see _absent)
                    sets = [tuple(l for l in st if not self._absent(l)) for st in sets]
                    if not all(sets):
                        continue  # every match of this branch needs one of a set none of which is in the text
                possible += 1
                n, st = min((sum(self._count(l) for l in st), st) for st in sets)
                total += n
                picked.extend(st if n or not self._exact else ())  # an estimate of 0 is no proof of absence
            if branches and (possible == 0 or (total == 0 and self._exact)):
                return None  # (counted on a sample of a long text, a literal not in it may still be further on)
            lits = tuple(dict.fromkeys(picked))
            if total > COMMON_LITERAL:
                lits = ()  # on most lines (e.g. "p2p" in an NCCL log): one regex search over the whole text is faster
        else:
            lits = required_literals(rx.pattern)
        if lits and self.lower is not None:
            nxt = {lit: self.lower.find(lit) for lit in lits}
            while True:
                live = [p for p in nxt.values() if p != -1]
                if not live:
                    return None
                n = self.line_at(min(live))
                if rx.search(self.lines[n - 1]):
                    return n
                after = self.starts[n]
                for lit, p in nxt.items():
                    if p != -1 and p < after:
                        nxt[lit] = self.lower.find(lit, after)
        if lits:
            return next((n for n, line in enumerate(self.lines, 1) if any(l in line.lower() for l in lits) and rx.search(line)), None)
        # one search over the whole text (in C), then the line it found is checked alone: a match
        # that only exists across a line break (\s matching the newline) is skipped, as per line
        pos = 0
        while True:
            m = rx.search(self.text, pos)
            if m is None:
                return None
            n = self.line_at(m.start())
            if rx.search(self.lines[n - 1]):
                return n
            if n >= len(self.lines):
                return None
            pos = self.starts[n]

    def _count(self, lit: str) -> int:
        """How often ``lit`` occurs: exact in a text up to COUNT_SAMPLE characters, else estimated from its first
        and last parts (the count only picks which literal narrows the search; the search itself finds every
        occurrence). Counting each literal of each entry over a 20 MB log took most of explain's time there."""
        n = self._counts.get(lit)
        if n is None:
            low = self.lower
            if self._exact:
                n = low.count(lit)
            else:
                half = COUNT_SAMPLE // 2
                n = (low.count(lit, 0, half) + low.count(lit, len(low) - half)) * len(low) // COUNT_SAMPLE
            self._counts[lit] = n
        return n

    def _absent(self, lit: str) -> bool:
        """Is ``lit`` (lower case) proven absent from a long text by the text's distinct words? A literal
        occurs only where each of its whitespace-separated pieces lies inside one word of the text (the first
        and last may be a word's end or start), so a piece found in no word proves it absent: one search of the
        distinct words joined (a repeating log has few) instead of a pass over the whole text per literal.
        The words are split once, on the first question (a quarter of a second on 20 MB)."""
        words = self.__dict__.get("_words")
        if words is None:
            words = self.__dict__["_words"] = "\n".join(set(self.lower.split())) if self.lower is not None else ""
        return self.lower is not None and any(piece not in words for piece in lit.split())

    @property
    def _exact(self) -> bool:
        return self.lower is not None and len(self.lower) <= COUNT_SAMPLE

    def search(self, pattern: str) -> bool:
        """Does ``pattern`` (a condition's regex on the whole log) occur? Cached: every finding group asks."""
        hit = self._searched.get(pattern)
        if hit is None:
            rx = compile_pattern(pattern)
            if literal_sets(pattern) or required_literal(pattern):
                hit = self.first_line(rx) is not None  # per line, as the entry's own regexes
            else:
                hit = rx.search(self.text) is not None
            if not hit and self.prefixes:  # "[rank5]:" says a multi-rank job as much as a line of the text would
                hit = rx.search("\n".join(self.prefixes)) is not None
            self._searched[pattern] = hit
        return hit


WRAP_TEXT = 64_000  # a paste this long at most is also read with its wrapped lines joined (a long log is not pasted by hand)
WRAP_MIN = 50  # a line this long may have been wrapped (mail reflows at 64-78, terminals cut at 80 and more)
WRAP_JOIN = 3  # at most this many lines are joined into one message


def _flat_texts(lines: list[str]) -> list[tuple[str, list[int]]]:
    """The paste with each wrapped line joined to the lines continuing it, once with a space and once with
    nothing at the breaks ("\\n" elsewhere), with the offset where each original line starts; [] when no line
    continues another. A break that a reflow of the whole paste made is joined with a space both times."""
    from ..evidence.paste import tidy

    # the breaks that a reflow of the whole paste made (a mail client's, an archive's), as the evidence readers find
    # them (paste.unreflow, which joins them for those readers): a cut where the next word did not fit, however short
    # the line that a long word (a path, an argument list) left behind, and however many lines a message runs over; a
    # reflow cuts at a space, so a line shorter than the paste's longest is never joined with nothing ("network AWS" /
    # "Libfabric" is no "AWSLibfabric"); one as long as the longest may be a terminal's cut inside a word ("...has no
    # attribute "Red" / "uceOp""): both ways
    rejoined: list[int] = []
    tidy("\n".join(lines), rejoined=rejoined)
    reflowed = {n - 1 for n in rejoined}
    longest = max(map(len, lines), default=0)
    joins: list[Optional[str]] = []  # joins[i]: how line i+1 continues line i ("reflow", "wrap" or None)
    run = 1
    for i in range(len(lines) - 1):
        nxt = lines[i + 1]
        if i in reflowed:
            j: Optional[str] = "wrap" if len(lines[i]) == longest else "reflow"
        elif len(lines[i]) >= WRAP_MIN and run < WRAP_JOIN and nxt and not RECORD_START.match(nxt):
            j = "wrap"
        else:
            j = None
        joins.append(j)
        run = run + 1 if j else 1
    if not any(joins):
        return []
    out = []
    for glue in (" ", ""):
        parts: list[str] = []
        starts: list[int] = []
        pos = 0
        for i, line in enumerate(lines):
            starts.append(pos)
            parts.append(line)
            pos += len(line)
            if i < len(joins):
                sep = " " if joins[i] == "reflow" else glue if joins[i] else "\n"
                parts.append(sep)
                pos += len(sep)
        out.append(("".join(parts), starts))
    return out


# ---- facts -----------------------------------------------------------------------------------

HOST, TEXT = "host", "text"


def text_findings(log: Log) -> list[Finding]:
    """The text's facts as findings, read once per text by p2ptop.evidence (the one reader of pasted
    text; cached on the log). Only the host-wide ones and those of pairs join a group here; a caller
    with pairs of its own passes the evidence's findings with the host's (match_grouped)."""
    if log.evidence is None:
        if not log.lines:
            log.evidence = []
        else:
            from ..evidence import read_text  # lazy: the evidence package imports knowledge.codes

            log.evidence = list(read_text(log.text).findings)
    return log.evidence


def finding_origin(f: Finding, host_origin: str) -> tuple[str, str]:
    """(kind, where) of a finding's facts: ("text", "line 14 of the paste") for findings read from
    text (ids "text.*", evidence "line N of the paste: ..."), else ("host", the host's label)."""
    if f.id.startswith("text."):
        ev = f.evidence[0] if f.evidence else ""
        m = re.match(r"(line \d+ of the \w+)", ev)
        return TEXT, m.group(1) if m else (ev.split(": ", 1)[0] if ev else "the paste")
    return HOST, host_origin


_LOG_LINE = re.compile(r"line (\d+)(?: of the log)?[:,]")


def _log_line_of(f: Finding, key: str) -> Optional[str]:
    """Where an NCCL log finding's own fact came from: a variable NCCL printed as set by the environment, or the
    transport it chose, are lines of the opened log, not facts of the host the finding was judged against (its
    p2p.read and path are the host's)."""
    if not f.id.startswith("nccl.") or not (key.startswith("env.") or key.startswith("nccl.")):
        return None
    name = key[4:] if key.startswith("env.") else None
    for ev in f.evidence or ():
        m = _LOG_LINE.match(ev)
        if m and (name is None or name in ev):
            return f"line {m.group(1)} of the NCCL log"
    return None


class Facts:
    """What is known: fact -> values (several findings may disagree), where each came from, and the
    facts where the text and the host disagree (the host's values are kept and the answer says so)."""

    def __init__(self, findings: Iterable[Finding], log: Log, origin: str = "host"):
        self.values: dict[str, list[Any]] = {}
        self.origin: dict[str, str] = {}
        self.severity: dict[str, str] = {}  # finding id -> its worst severity
        self.conflicts: list[str] = []
        self._has_symptom: Optional[bool] = None
        text: dict[str, list[tuple[Any, str]]] = {}
        findings = list(findings)
        for f in findings:
            kind, where = finding_origin(f, origin)
            if kind == HOST or f.id not in self.severity:
                self._add(FINDING_FACT, f.id, where)
                rank = ("ok", "info", "warning", "problem")
                if rank.index(f.severity if f.severity in rank else "info") >= rank.index(self.severity.get(f.id, "ok")):
                    self.severity[f.id] = f.severity
            for k, v in (f.facts or {}).items():
                if v is None:
                    continue
                if kind == HOST:
                    self._add(k, v, _log_line_of(f, k) or where)
                else:
                    text.setdefault(k, []).append((v, where))
        if not any(f.id.startswith("text.") for f in findings):
            findings = findings + text_findings(log)
            for f in findings:
                if f.id.startswith("text."):
                    _kind, where = finding_origin(f, origin)
                    for k, v in (f.facts or {}).items():
                        if v is not None:
                            text.setdefault(k, []).append((v, where))
        for k, vals in text.items():
            if k in self.values and k != "nccl.transport":
                said = [v for v, _ in vals if _norm(v) not in {_norm(h) for h in self.values[k]}]
                if said:
                    where = vals[[v for v, _ in vals].index(said[0])][1]
                    self.conflicts.append(f"{where} says {k} = {said[0]}; the {self.origin.get(k, origin)} says "
                                          f"{' / '.join(map(str, self.values[k]))} (the host's value is used)")
                continue
            for v, where in vals:
                self._add(k, v, where)
        self._derive()
        self.log = log.text
        self._log = log

    def _derive(self) -> None:
        """Facts that only the text and the host together give: NCCL left P2P (SHM, NET) on a pair
        that the host (or the text) says can do P2P (nccl.p2p_fallback), or, with no NCCL_P2P_* setting, on a pair
        whose path crosses the CPU (nccl.p2p_off_by_path, NCCL's default P2P level); and on a pair whose path is above the
        NCCL_P2P_LEVEL set (nccl.p2p_off_by_level), beside a fallback too: the setting is its reason."""
        from ..evidence import is_p2p_fallback, is_p2p_off_by_level, is_p2p_off_by_path  # the rules (evidence applies them within a paste)

        paths = [str(v) for v in self.values.get("pair.path", [])] or [None]
        levels = [str(v) for v in self.values.get("env.NCCL_P2P_LEVEL", [])]
        disable = next((str(v) for v in self.values.get("env.NCCL_P2P_DISABLE", [])), None)
        if "nccl.p2p_off_by_level" not in self.values and any(
                is_p2p_off_by_level(str(t), p, lv, disable) for t in self.values.get("nccl.transport", []) for p in paths for lv in levels):
            where = [self.origin.get(k) for k in ("env.NCCL_P2P_LEVEL", "nccl.transport", "pair.path")]
            self._add("nccl.p2p_off_by_level", True, " and ".join(dict.fromkeys(w for w in where if w)))
        if "nccl.p2p_fallback" in self.values or "nccl.p2p_off_by_path" in self.values:
            return
        reads = [str(v).upper() for v in self.values.get("p2p.read", [])] or [None]
        worse = [t for t in self.values.get("nccl.transport", [])
                 if any(is_p2p_fallback(str(t), p, r) for p in paths for r in reads)]
        if worse:
            where = [self.origin.get(k) for k in ("nccl.transport", "p2p.read" if "p2p.read" in self.values else "pair.nvlink_count")]
            self._add("nccl.p2p_fallback", True, " and ".join(dict.fromkeys(w for w in where if w)))
            return
        settings = {k[4:] for k in self.values if k.startswith("env.")}
        if any(is_p2p_off_by_path(str(t), p, settings) for t in self.values.get("nccl.transport", []) for p in paths):
            where = [self.origin.get(k) for k in ("nccl.transport", "pair.path")]
            self._add("nccl.p2p_off_by_path", True, " and ".join(dict.fromkeys(w for w in where if w)))

    def _add(self, k: str, v: Any, origin: str) -> None:
        vals = self.values.setdefault(k, [])
        if v not in vals:
            vals.append(v)
        if origin:
            self.origin.setdefault(k, origin)

    def origin_line(self, fact: str) -> Optional[int]:
        """The line of the text a fact was read from ("line 14 of the paste"), or None (the host's, or not known)."""
        m = re.match(r"line (\d+) ", self.origin.get(fact, ""))
        return int(m.group(1)) if m else None

    def code_facts(self) -> list[tuple[str, str, Optional[int]]]:
        """(code key, as named, line) for the error facts (error.cuda, error.cuda_code, error.nccl, Xids):
        the text's framework spellings read as the canonical names entries list in error_codes."""
        out = []
        for fact in ("error.cuda", "error.cuda_code", "error.nccl"):
            line = self.origin_line(fact)
            for v in self.values.get(fact, []):
                if isinstance(v, bool) or v in (None, ""):
                    continue
                try:
                    out.append((code_key(v), str(v), self._code_line(v) or line))
                except (TypeError, ValueError):
                    continue
        return out

    def _code_line(self, v: Any) -> Optional[int]:
        """The first line that names this CUDA error (its runtime or driver name or its message, CUDA's error table):
        a fact's origin is one line for all its values, and a second error of the text must not be counted as a hit
        on another line than its own."""
        cache = self.__dict__.setdefault("_code_lines", {})
        if v not in cache:
            cache[v] = self._find_code_line(v)
        return cache[v]

    def _find_code_line(self, v: Any) -> Optional[int]:
        log = getattr(self, "_log", None)
        if log is None or log.lower is None or not log.lines:
            return None
        hit = cuda_error(v) if isinstance(v, (int, str)) and not isinstance(v, bool) else None
        if not hit:
            return None
        rt, drv, msg = CUDA_BY_NUMBER[hit[0]]
        lits = [x.lower().rstrip(".") for x in (rt, drv, msg) if x and (x != msg or x.lower() not in GENERIC_CUDA_MESSAGES)]
        found = [log.lower.find(x) for x in lits]
        found = [f for f in found if f >= 0]
        return log.line_at(min(found)) if found else None

    def known(self, fact: str) -> list[Any]:
        return self.values.get(fact) or []

    def check(self, cond: dict[str, Any]) -> Optional[bool]:
        """True or False when the fact is known, None when it is not."""
        fact = cond["fact"]
        if fact == LOG_FACT:
            if not self.log:
                return None
            # a text that does not say a thing does not say it is absent: no match is unknown, not false; except a
            # condition on given NCCL releases where the text names its NCCL release, another one: that is false
            if self._log.search(cond["regex"]):
                return True
            return False if self._other_nccl_release(cond["regex"]) else None
        if "present" in cond:
            return (fact in self.values) == cond["present"]
        vals = self.values.get(fact)
        if not vals:
            return None
        return any(_holds(cond, v) for v in vals)

    def check_every(self, cond: dict[str, Any]) -> Optional[bool]:
        """As :meth:`check`, but True only where every value read of the fact holds the condition: a fact that is said
        both ways (a matrix of several pairs read onto one subject, "CAN" for one pair and "CANNOT" for another) does not
        hold it. A condition on the log, or on a fact's presence, is :meth:`check`'s."""
        if cond["fact"] == LOG_FACT or "present" in cond:
            return self.check(cond)
        vals = self.values.get(cond["fact"])
        if not vals:
            return None
        return all(_holds(cond, v) for v in vals)

    def _other_nccl_release(self, regex: str) -> bool:
        """Is ``regex`` a condition on some NCCL releases only (_release_specific) while every NCCL version the text
        names is another release ("NCCL version 2.26.2" against a 2.18 bug)?"""
        versions = [v for v in self.values.get("nccl.version", []) if isinstance(v, str) and v]
        if not versions or not _release_specific(regex):
            return False
        rx = re.compile(regex, re.I)
        return not any(rx.search(f"NCCL version {v}") for v in versions)

    def symptom(self, cond: dict[str, Any]) -> bool:
        """Does this (holding) condition rest on a symptom: a failing state, an error, a warning/problem finding?"""
        fact = cond["fact"]
        if fact == LOG_FACT:
            return False  # a log condition qualifies an entry (a version, a setting); the entry's regexes are its text symptom
        if fact == FINDING_FACT:
            return any(_holds(cond, i) and self.severity.get(i) in ("warning", "problem") for i in self.values.get(fact, []))
        if "present" in cond:
            return cond["present"] and any(is_symptom(fact, v) for v in self.values.get(fact, []))
        return any(_holds(cond, v) and is_symptom(fact, v) for v in self.values.get(fact, []))

    def has_symptom(self) -> bool:
        """Is a symptom fact that opens leads known (an error, a described hang/slowness/failure, a failing state)?"""
        if self._has_symptom is None:
            # a crash alone (a segfault, a killed process) says nothing about P2P: it opens no lead
            self._has_symptom = any(k not in (FINDING_FACT, "symptom.crash") and is_symptom(k, v)
                                    for k, vals in self.values.items() for v in vals)
        return self._has_symptom

    def has_complaint(self, ignore_lines: Iterable[int] = ()) -> bool:
        """Is a symptom known that is a complaint (an error, a hang, slowness, a failing test), not only what NCCL
        does because of a setting (fact_roles.COMPLAINT_EXEMPT), nor a weak word read from one of ``ignore_lines``?"""
        ignore = set(ignore_lines)
        for k, vals in self.values.items():
            if k in COMPLAINT_EXEMPT or not any(is_symptom(k, v) for v in vals):
                continue
            m = re.match(r"line (\d+) ", self.origin.get(k, ""))
            if k in WEAK_SYMPTOMS and m and int(m.group(1)) in ignore:
                continue
            return True
        return False

    def health(self) -> list[str]:
        """State facts that read healthy (a P2P status OK, NCCL going via P2P, a copy test healthy), as
        'key = value (origin)': what the text shows working."""
        return [f"{k} = {v} ({self.origin.get(k, '?')})" for k, vals in self.values.items() for v in vals
                if (role(k) == "state" and v not in (None, "", False) and str(v).upper() != "UNKNOWN" and not is_symptom(k, v))
                or (k == "pair.path" and re.fullmatch(r"NV\d*", str(v).upper()))]  # GPUs joined by NVLink ("NV": NCCL names no count)

    def symptoms(self) -> list[str]:
        """Every symptom fact known, as 'key = value (origin)'."""
        return [f"{k} = {v} ({self.origin.get(k, '?')})" for k, vals in self.values.items()
                for v in vals if k != FINDING_FACT and is_symptom(k, v)]

    def shown(self, fact: str) -> str:
        vals = self.values.get(fact) or []
        text = " / ".join(str(v) for v in vals)
        where = self.origin.get(fact)
        return f"{text}, {where}" if where and where != "host" else text  # "host": a caller that named no origin


def _unknown_release(cond: dict[str, Any], facts: "Facts") -> bool:
    """Is ``cond`` a log condition on given NCCL releases (_release_specific) where the text names no NCCL release?"""
    return (cond["fact"] == LOG_FACT and not facts.values.get("nccl.version") and facts.check(cond) is None
            and _release_specific(cond["regex"]))


@functools.lru_cache(maxsize=512)
def _release_specific(regex: str) -> bool:
    """Does a ``log`` regex name some NCCL releases and not others (it matches NCCL's "NCCL version 2.M.P" line for some
    releases 2.0 .. 2.39, not for all): a condition on a release, which a text naming another release contradicts."""
    try:
        rx = re.compile(regex, re.I)
    except re.error:
        return False
    hits = [bool(rx.search(f"NCCL version 2.{m}.{p}")) for m in range(40) for p in (1, 3, 5)]
    return any(hits) and not all(hits)


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
    if cond["fact"] == LOG_FACT:
        return f"{base} (in the text)"
    if cond["fact"] == FINDING_FACT:
        where = facts.origin.get(FINDING_FACT)
        return f"{base} ({where})" if where and where != "host" else base
    return f"{base} ({cond['fact']} = {facts.shown(cond['fact'])})"


# ---- text ------------------------------------------------------------------------------------

def _excerpt(line: str, width: int = 100) -> str:
    return line if len(line) <= width else line[: width - 1] + "…"


#: NCCL results that only wrap a CUDA error: CUDACHECK returns ncclUnhandledCudaError for any failing CUDA call
#: (src/include/checks.h), so the CUDA error the text names beside it is the one that tells causes apart
WRAPPER_RESULTS = frozenset({"nccl:unhandledcudaerror"})


def _fails_is_error_line(facts: "Facts", log: Log) -> bool:
    """Is the line "it fails" (symptom.fails) was read from one that holds the text's error line (error.text)?"""
    n, err = facts.origin_line("symptom.fails"), facts.values.get("error.text")
    if not n or not err or n > len(log.lines):
        return False
    return str(err[0]).strip()[:60].lower() in log.lines[n - 1].lower()


def _void_wrapper_codes(entry: Entry, facts: "Facts") -> set[str]:
    """The entry's wrapper codes (ncclUnhandledCudaError) that say nothing for it here: the text names the
    CUDA error(s) behind the wrapper and none of them is one the entry lists."""
    wrappers = {code_key(c) for c in entry.error_codes} & WRAPPER_RESULTS
    if not wrappers:
        return set()
    named = {code_key(v) for v in facts.known("error.cuda") if isinstance(v, str) and v}
    if not named or named & {code_key(c) for c in entry.error_codes}:
        return set()
    return wrappers


def _text_hits(entry: Entry, log: Log, codes: dict[str, list[tuple[int, str]]],
               void: frozenset = frozenset()) -> tuple[list[float], list[str], list[Hit]]:
    """The text evidence for one entry: per log line the strongest hit (regex or error code), so one
    line counts once however many of the entry's patterns it satisfies: weights, reasons ("regex matched line N: ...",
    "error code X on line N") and the hits themselves."""
    primary = float(entry.data.get("regex_weight", PRIMARY_REGEX))
    best: dict[int, tuple[float, str, str]] = {}

    def hit(n: int, weight: float, reason: str, kind: str) -> None:
        if n not in best or weight > best[n][0]:
            best[n] = (weight, reason, kind)

    listed = None
    blames_setting = entry.failure_class == "nccl_env_misconfig"
    for i, rx in enumerate(entry.patterns):
        n = log.first_line(rx)
        if n is not None and (_said_absent(log.lines[n - 1], rx) or (blames_setting and _said_as_fix(log.lines[n - 1], rx))):
            n = _next_unnegated(log, rx, n, blames_setting)
        if n is not None:
            unusable = unusable_cuda_in_line(log.lines[n - 1]) if n <= len(log.lines) else set()
            if unusable:
                # the line says CUDA itself could not start (codes.CUDA_UNUSABLE): it is the symptom of the entries
                # that list that error, not of the NCCL transport or call it surfaced in
                if listed is None:
                    listed = {k for k in (code_key(c) for c in entry.error_codes)}
                if not any(code_key(u) in listed for u in unusable):
                    continue
            weight = primary if i == 0 and entry.data.get("regex") else primary - EXTRA_DISCOUNT
            hit(n, weight, f"regex matched line {n}: {_excerpt(log.lines[n - 1])}", "regex")
    for code in entry.error_codes:
        if code_key(code) in void:
            continue
        for n, written in codes.get(code_key(code), [])[:1]:
            hit(n, CODE, f"error code {written} on line {n}", "code")
    ordered = sorted(best.items())
    return [w for _, (w, _r, _k) in ordered], [r for _, (_w, r, _k) in ordered], [Hit(k, n) for n, (_w, _r, k) in ordered]


#: a message said to be ABSENT where it is written: a checklist of what was not seen ("No related errors were observed:
#: * No `NVRM: Xid` * No `GPU has fallen off the bus`", "without any 'peer access is not supported'", "never saw Xid 79")
#: ("non-zero status: 800 ..." is no "zero": a program's status line, not a message said absent)
_ABSENT_BEFORE = re.compile(r"(?:^|(?<!\bnon)[\s*\-•(\[])(?:no|without(?: any)?|never (?:saw|seen|see|had|got)|not (?:seeing|seen|observed)|zero)"
                            r"\s*(?:[`'\"“]\s*(?:[\w:/-]+\s+){0,3})?$", re.I)  # "No `GPU has fallen off the bus`": the quote opens the message
NEGATED_SCAN = 2000  # lines searched past a negated hit for one that is not (a long log rarely negates)


def _said_absent(line: str, rx) -> bool:
    """Is the first match of ``rx`` in ``line`` a message said to be absent ("No `GPU has fallen off the bus`")?"""
    m = rx.search(line)
    return m is not None and _ABSENT_BEFORE.search(line[max(0, m.start() - 24):m.start()]) is not None


#: a setting said, in its own sentence, to make the trouble go away ("Setting `NCCL_SHM_DISABLE=1` seems to circumvent the
#: issue", "with NCCL_X=1 it works"): the trouble was seen without it, so the line is no sign that the setting is wrong
_AS_FIX_AFTER = re.compile(r"^[^.;\n]{0,80}?\b(?:circumvent\w*|work(?:s|ed)? ?around|workaround|fix(?:es|ed)?|solve[sd]?|resolve[sd]?|"
                           r"helps|helped|avoids?|(?:it |this |that |everything )?works?(?: fine| now| again| well)?|went away|goes away|"
                           r"no (?:longer )?hangs?)\b", re.I)
_NOT_AS_FIX = re.compile(r"\b(?:not|n't|no|never|neither|nor)\b[^.;\n]{0,30}\b(?:circumvent|work|fix|solve|resolve|help|avoid)", re.I)


def _said_as_fix(line: str, rx) -> bool:
    """Is the first match of ``rx`` in ``line`` an NCCL setting said to make the trouble go away (_AS_FIX_AFTER)?"""
    m = rx.search(line)
    if m is None or "NCCL_" not in m.group(0).upper():
        return False
    after = line[m.end():]
    return _AS_FIX_AFTER.search(after) is not None and not _NOT_AS_FIX.search(after[:90])


def _next_unnegated(log: Log, rx, n: int, blames_setting: bool = False) -> Optional[int]:
    """The first line after ``n`` where ``rx`` matches and is not said to be absent (within NEGATED_SCAN lines), nor,
    for an entry that blames a setting, a setting said to be the fix."""
    for k in range(n, min(len(log.lines), n + NEGATED_SCAN)):
        if rx.search(log.lines[k]) and not _said_absent(log.lines[k], rx) and not (blames_setting and _said_as_fix(log.lines[k], rx)):
            return k + 1
    return None


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


def why_excluded(entry: Entry, facts: "Facts", own_text: bool) -> Optional[str]:
    """Why the facts rule this entry out (None when they do not): a rule of its class (fact_roles.ruled_out, said in
    words), or one of its own ``exclude`` conditions. An entry reporting absent multicast escapes its class's "no
    multicast here" rules, but only on its own message (``own_text``: its regex or code matched a line)."""
    why = ruled_out(entry.failure_class, facts.known, multicast_absent=entry.multicast_absent and own_text,
                    nic_peer=entry.nic_peer, own_text=own_text)
    held = why or next((c for c in (entry.data.get("match") or {}).get("exclude") or [] if facts.check(c)), None)
    return held if held is None or isinstance(held, str) else _describe(held, facts)


def _weigh(cond: dict[str, Any], default: float, fact_w: list[float], sign_w: list[float]) -> None:
    """A condition that holds adds its weight to the entry's score, and to its score on its own signs unless it is a weak
    symptom ("it fails", which every candidate of an error holds alike)."""
    w = cond.get("weight", default)
    fact_w.append(w)
    if cond["fact"] not in WEAK_SYMPTOMS:
        sign_w.append(w)


def score_entry(entry: Entry, log: Log, codes, facts: Facts, lead: bool = False,
                shared_codes: Optional[frozenset] = None) -> Optional[Match]:
    """The entry's match on this text and these facts, or None when it is not offered: ruled out
    (an ``exclude`` holds, or fact_roles.ruled_out), or without a symptom of its own (no regex or
    code of it matched a line and none of its conditions holds on a symptom fact).

    ``lead``: the pass for answers that would otherwise stay short or silent although the facts hold a
    symptom (issue 22 point 4): an entry none of whose own signs hold, but some of whose context
    conditions (require, trigger or support) hold, is a *lead*: labelled unsure, ranked after every
    candidate on a symptom of its own, never likely or possible."""
    m = entry.data.get("match") or {}
    if why_excluded(entry, facts, own_text=True):
        return None
    void = _void_wrapper_codes(entry, facts)
    text_w, reasons, hits = _text_hits(entry, log, codes, void) if log.lines else ([], [], [])
    if (entry.multicast_absent or entry.failure_class in OWN_TEXT_CLASSES) and not text_w \
            and why_excluded(entry, facts, own_text=False):
        return None
    code_hits: set[str] = set()  # the error codes of this entry that the text names
    if entry.error_codes:
        wanted = {code_key(c) for c in entry.error_codes} - void
        code_hits.update(k for k in wanted if codes.get(k))
        hit_lines = set(_hit_lines(hits))
        for k, named, n in facts.code_facts():
            if k in wanted:
                code_hits.add(k)
            if k in wanted and (n is None or n not in hit_lines):
                text_w.append(CODE)
                reasons.append(f"error code {named} on line {n} (read from the text)" if n else f"error code {named} ({facts.origin.get('error.cuda') or facts.origin.get('error.nccl') or 'the text'})")
                hits.append(Hit("code_read" if n else "code_origin", n))
                if n:
                    hit_lines.add(n)
    fact_w: list[float] = []
    sign_w: list[float] = []  # fact_w without weak symptoms ("it fails"): the entry's own signs (sign_score)
    deciding: list[str] = []
    against: list[str] = []
    factor = 1.0
    symptom = bool(text_w)
    requires = m.get("require") or []
    all_hold = True
    held: list[str] = []
    held_facts: list[str] = []  # the facts of those conditions (Match.held_facts: where each came from, by Facts.origin_line)
    for cond in requires:
        ok = facts.check(cond)
        if ok:
            _weigh(cond, REQUIRE_WEIGHT, fact_w, sign_w)
            held.append(_describe(cond, facts))
            held_facts.append(cond["fact"])
            symptom = symptom or facts.symptom(cond)
        else:
            all_hold = False
            if ok is None:
                factor *= UNKNOWN_FACTOR
                if cond["fact"] not in deciding and cond["fact"] != LOG_FACT:
                    deciding.append(cond["fact"])
                elif _unknown_release(cond, facts) and "nccl.version" not in deciding:
                    deciding.append("nccl.version")  # the release the entry is about, where the text names none
            else:
                factor *= CONTRADICTED_FACTOR
                against.append(_describe(cond, facts))
    triggers = m.get("trigger") or []
    fired = [c for c in triggers if facts.check(c)]
    weak_only: list[str] = []  # weak symptoms that held without the entry's context: no lead on them alone
    strong = bool(text_w)  # a symptom of this entry's own beyond "it fails" (its text, a measured state, a hang...)
    for cond in fired:
        # a trigger marked with_setup (a hang or wrong data points at a VM's fault only where the VM is said) neither
        # counts nor weighs while the entry's setup is not said
        if cond.get("with_setup") and not (all_hold and requires):
            continue
        _weigh(cond, REQUIRE_WEIGHT, fact_w, sign_w)
        held.append(_describe(cond, facts))
        held_facts.append(cond["fact"])
        # a failure only said in words ("P2P does not work") is the symptom of every entry: it makes an
        # entry a candidate only with its requires held (a consumer GPU, a VM), never on its own
        if cond["fact"] in WEAK_SYMPTOMS and not (all_hold and requires):
            weak_only.append(_describe(cond, facts))
            continue
        symptom = symptom or facts.symptom(cond)
        strong = strong or (cond["fact"] not in WEAK_SYMPTOMS and facts.symptom(cond))
    offered = bool(text_w) or (all_hold and bool(fired if triggers else requires))
    # a log condition the text does not meet rules the entry out, except a condition on given NCCL releases where the text
    # names no release at all: the release is unknown, as any other required fact the text does not give (UNSURE_CAP)
    log_unmet = any(c["fact"] == LOG_FACT and not facts.check(c) and not _unknown_release(c, facts) for c in requires)
    if not offered and (against or log_unmet or (triggers and all(facts.check(c) is False for c in triggers))):
        return None  # a candidate on facts alone whose own conditions are known false: ruled out, not 'unsure'
    for cond in m.get("support") or []:
        if facts.check(cond):
            _weigh(cond, SUPPORT_WEIGHT, fact_w, sign_w)
            held.append(_describe(cond, facts))
            held_facts.append(cond["fact"])
            if cond["fact"] in WEAK_SYMPTOMS:
                weak_only.append(held[-1])  # "it fails" in support is no context of this entry's: no lead on it
            # a symptom in support counts for an entry its require/trigger offer, but never makes an
            # 'unsure' candidate of one whose own signs (text, require, trigger) are absent
            symptom = symptom or (offered and facts.symptom(cond))
            strong = strong or (offered and cond["fact"] not in WEAK_SYMPTOMS and facts.symptom(cond))
    is_lead = False
    if not symptom:
        # a host's absence ("no NVSwitch on this host", equals false, read from the host) is true of most hosts: it fits
        # any text, so it makes no lead on its own (a slow job on a one-GPU host is no sign of Fabric Manager started
        # without NVSwitch); an absence the text itself says ("deployed without NVSwitch") is the writer's context, and counts.
        # So is the host's count of GPUs: one GPU on this host fits every text read on it (a hang on a one-GPU host is no
        # sign of a peer hidden from the process, whose sign is an error of its own)
        absent = {_describe(c, facts) for c in requires + fired + list(m.get("support") or [])
                  if _host_absence(c, facts) and facts.check(c)}
        if not (lead and set(held) - set(weak_only) - absent and facts.has_symptom()):
            return None  # context alone never offers an entry
        is_lead = True  # context that fits, beside a symptom of the text that no entry claims
        offered = False
    if triggers and not fired and not text_w and all(facts.check(c) is False for c in triggers):
        factor *= CONTRADICTED_FACTOR  # every sign of this entry's fault is known and absent
        against.extend(_describe(c, facts) for c in triggers)
    if triggers and not fired and not text_w:
        for cond in triggers:
            if facts.check(cond) is None and cond["fact"] not in deciding and cond["fact"] != LOG_FACT:
                deciding.append(cond["fact"])
    for cond in m.get("exclude") or []:
        if facts.check(cond) is None and cond["fact"] not in deciding and cond["fact"] != LOG_FACT \
                and cond["fact"] not in READ_FROM_OUTPUT:
            deciding.append(cond["fact"])
    # an error code that entries of several classes list says only "one of them": an entry that has text
    # of its own (a regex) which did not match, and no condition of it that holds, is not offered on the
    # code alone (issue 22: a 217 is a consumer GPU, a VM, a hidden peer, NCCL's IPC or cuMem...)
    # (a weak symptom, "it fails", holds for every entry of a shared code: it is no condition of this one's own)
    # (nor is a condition on the error fact itself: "error.nccl = ncclSystemError" restates the shared code, it adds no sign)
    own_held = [c for c in requires + fired + list(m.get("support") or [])
                if c["fact"] not in WEAK_SYMPTOMS and not c["fact"].startswith("error.") and facts.check(c)]
    words_unmet = False  # offered on a shared code alone while the words it requires of the text are absent
    shared_code = False
    if offered and code_hits and shared_codes is not None and entry.patterns and not own_held \
            and not any(h.kind == "regex" for h in hits) and code_hits <= shared_codes:
        offered = False
        shared_code = True
        reasons.append("only an error code that entries of several classes share; this entry's own text is absent")
        # the words it requires of the text (its setup named: "WSL", "Windows", MIG) are absent too: of the entries the
        # code is shared by, it ranks under those that need nothing the text does not say (OTHER_SETUP_FACTOR)
        words_unmet = log_unmet
    # "it fails" beside a specific error the text names (a CUDA or NCCL code) is that error: an entry offered on the
    # words alone, with its setup held (a VM, a GeForce), but which neither matches the error's text nor lists its code,
    # does not explain the failure the text shows: unsure (an AWS instance's 802 is Fabric Manager's, not the VM's)
    # (a trigger that ties the trouble itself to a change, "it began after the driver update", "works again without
    # NCCL_X", is no context: it says what brought the error, whatever the error's code; CAUSE_SAID)
    cause_said = any(c["fact"] in CAUSE_SAID for c in fired)
    if offered and symptom and not strong and not code_hits and facts.code_facts() and not cause_said:
        offered = False
        reasons.append("only 'it fails' in words, beside an error this entry does not explain (" +
                       ", ".join(named for _, named, _ in facts.code_facts()[:2]) + ")")
    # ... and where the "it fails" is the very words of an error line the text holds (a framework's "RuntimeError:
    # ProcessGroupNCCL does not support barrier" read as "does not support"), that error, which this entry's text does not
    # match, is what failed: its setup (a GeForce) beside it is context, not its explanation
    elif offered and symptom and not strong and not code_hits and not cause_said and _fails_is_error_line(facts, log):
        offered = False
        reasons.append("only 'it fails' in words, read from an error line this entry does not explain (" +
                       _excerpt(str(facts.values["error.text"][0]), 60) + ")")
    # a setting is context, and an informational line is no failure: an entry whose only text is a line stating an NCCL
    # variable (NCCL's INFO echo "NCCL_P2P_LEVEL set by environment to LOC", an export) or a line the framework printed
    # at its INFO level (NCCL INFO, glog "I"), and no code, is offered only beside a complaint of the text (an error, a
    # hang, slowness, a failing test; not a weak word of those same lines): NCCL and TensorFlow print such lines on
    # healthy runs too (a variable set on purpose, "P2P is disabled between connected GPUs", "cannot enable peer access")
    quiet_only = False
    if offered and text_w and not code_hits and not fired:
        quiet = _quiet_lines(hits, log)
        if quiet and not facts.has_complaint(ignore_lines=quiet):
            offered = False
            quiet_only = True
            reasons.append("only lines that state a setting or information; the text shows no failure they cause")
    # a regex that matched only a generic CUDA message (an illegal memory access, a launch failure: codes.CUDA_GENERIC)
    # says what any program bug says: the entry is offered on its own conditions holding, not on the message
    if offered and text_w and not own_held and _generic_only(entry, hits, log):
        offered = False
        reasons.append("only a CUDA error that any program bug gives; none of this entry's own conditions holds")
    # the setup that decides between causes of one error (a GeForce, a VM, MIG, a pair across sockets): an entry whose
    # own setup is not said, while the text or host says another one, stays unsure (context lowers it, issue 22 point 3);
    # so does one whose setup is not said while the words it requires of the text are absent (the MIG entry's "the
    # text is about MIG instances" on an "invalid device ordinal" that names no MIG: the error is shared, its setup absent)
    if offered:
        own_setup = {c["fact"] for c in requires if c["fact"] in SETUP_FACTS}
        unsaid = [f for f in own_setup if facts.check({"fact": f, "equals": True}) is None]
        other = [f for f in SETUP_FACTS if f not in own_setup and facts.check({"fact": f, "equals": True})]
        if unsaid and other:
            offered = False
            factor *= OTHER_SETUP_FACTOR
            reasons.append(f"its setup ({', '.join(sorted(unsaid))}) is not said, another is ({other[0]} = {facts.shown(other[0])})")
        elif unsaid and log_unmet:
            offered = False
            reasons.append(f"its setup ({', '.join(sorted(unsaid))}) is not said, nor does the text name it")
    # a doubt (match.doubt) is a fact that says the entry's symptom may be by design (NVLinks a board may leave unwired):
    # an entry offered on its own signs while one holds is an unsure candidate, never likely or possible, and it ranks as a
    # lead does (DOUBT_FACTOR): a fact says otherwise, so it goes under the candidates nothing speaks against (on a live
    # NVLink pair that NVML calls P2P-capable, a slow table's NCCL setting before "no P2P in the VM")
    # (an unsure candidate in doubt ranks lower too: a fact speaks against it as against an offered one)
    doubted = False
    # a fact said both ways is no doubt; nor is one the entry's own setup answers ("unless": one GPU per process is the hidden
    # peer's cause, except where the text splits the job across containers, the IPC boundary's own setup)
    doubt = [c for c in m.get("doubt") or [] if facts.check_every(c) and not any(facts.check(u) for u in c.get("unless") or ())]
    if doubt:
        offered = False
        doubted = True
        reasons.append("in doubt: " + _describe(doubt[0], facts))
    deciding = [f for f in deciding if readable(f, facts.known)]  # a pair's fact cannot be read on a one-GPU host
    score = _combine(text_w + fact_w) * factor
    prior = score
    # its score on its own signs: "it fails" holds for every entry of a shared line, so it does not order them (_one_of_several)
    sign_score = round(_combine(text_w + sign_w) * factor, 4)
    if not offered:
        score = min(score, UNSURE_CAP)
    if doubted:
        score = round(score * DOUBT_FACTOR, 4)
    if words_unmet:
        score = round(score * OTHER_SETUP_FACTOR, 4)
        reasons.append("the words it requires of the text are absent: " + "; ".join(
            c.get("reason") or c["fact"] for c in requires if c["fact"] == LOG_FACT and not facts.check(c)))
    if is_lead:
        score = round(score * LEAD_FACTOR, 4)
        reasons.append("lead: its context fits, beside the text's symptom (" + "; ".join(facts.symptoms()[:2]) + ")")
    held = list(dict.fromkeys(held))
    reasons = list(dict.fromkeys(reasons + held + ["against: " + a for a in against]))
    ctx = 0 if doubted else _context_held(m, facts)  # a setup that fits earns no bonus where a fact speaks against the entry
    return Match(entry, round(score, 4), reasons, deciding, unsure=not offered, context_held=ctx, own_signs=len(own_held),
                 quiet=quiet_only, shared_code=shared_code, code_hits=frozenset(code_hits), weak_offer=offered and not strong,
                 shared_score=round(prior, 4) if quiet_only else 0.0,
                 cause_said=cause_said, sign_score=sign_score, hits=tuple(hits), held_facts=tuple(dict.fromkeys(held_facts)),
                 facts_for=[r for r in reasons if not r.startswith("against: ")], facts_against=against,
                 notes=list(facts.conflicts), own_deciding=list(deciding), basis="lead" if is_lead else "signs")


#: words that point at an error shown elsewhere in the text, not an error of their own
_POINTS_AT_ERROR = re.compile(r"\b(?:this|that|these|the following|following|the same|the above|the below)\s+(?:[\w-]+\s+)?"
                              r"(?:errors?|exceptions?|tracebacks?|messages?)\b|\b(?:errors?|exceptions?|tracebacks?)\s+(?:above|below)\b",
                              re.IGNORECASE)


def _fails_explained_elsewhere(out: list[Match], facts: Facts, log: Log) -> None:
    """"It fails" read from a line that another offered entry's own text explains is that entry's error (issue 22 point 3:
    no entry of another class on context alone for an error it does not explain): an entry offered there only on that
    weak symptom and its setup (a VM, a GeForce card) becomes an unsure candidate, as score_entry does beside an error
    code it does not list. (A Transformer Engine multicast error on a VM read "does not support" as "P2P fails in the
    guest" and offered the VM entry as possible.)"""
    explained = frozenset().union(*(_hit_lines(m.hits, regex_only=True) for m in out if not m.unsure and m.basis == "signs"))
    if not explained:
        return
    weak_lines = {n for n in (facts.origin_line(key) for key in WEAK_SYMPTOMS) if n is not None}
    # a line that only points at an error the text shows ("I got this error", "the following error") is explained
    # where that error is: by the offered entry whose own pattern reads a line of the text
    pointing = {n for n in weak_lines if 0 < n <= len(log.lines) and _POINTS_AT_ERROR.search(log.lines[n - 1])}
    if not weak_lines or not (weak_lines - pointing) <= explained:
        return
    for m in out:
        if m.cause_said:
            continue  # the text ties its trouble to this entry's cause (a change of version, a variable): no context
        if m.weak_offer and not m.unsure and not any(h.kind == "regex" for h in m.hits):
            m.unsure = True
            m.score = min(m.score, UNSURE_CAP)
            m.reasons.append("only 'it fails' in words, read from a line another entry's own text explains (line "
                             + ", ".join(str(n) for n in sorted(weak_lines)) + ")")


def _generic_only(entry: Entry, hits: Iterable[Hit], log: Log) -> bool:
    """Are all this entry's regex hits matches of a generic CUDA error's name or message (codes.is_generic_cuda_text),
    with no error code of the entry's own beside them (one named on a line, or read with no line of its own)?"""
    lines = sorted(_hit_lines(hits, regex_only=True))
    if not lines or any(h.kind in ("code", "code_origin") for h in hits):
        return False
    for n in lines:
        line = log.lines[n - 1] if 0 < n <= len(log.lines) else ""
        spans = [m.group(0) for rx in entry.patterns for m in [rx.search(line)] if m]
        if not spans or not all(is_generic_cuda_text(t) for t in spans):
            return False
    return True


def _quiet_lines(hits: Iterable[Hit], log: Log) -> set[int]:
    """The lines of these text hits when every one is a regex match on a line that only states a setting or
    information (fact_roles.is_setting_line / is_info_line); else the empty set."""
    lines = set(_hit_lines(hits))
    if not lines or any(h.kind != "regex" for h in hits):
        return set()
    ok = all(0 < n <= len(log.lines) and (is_setting_line(log.lines[n - 1]) or is_info_line(log.lines[n - 1])) for n in lines)
    return lines if ok else set()


def _host_absence(c: dict[str, Any], facts: Facts) -> bool:
    """Does condition ``c`` hold only by what the host lacks, read from the host and not the text ("no NVSwitch on this
    host", equals false; the host's GPU count)? Such a fact is true of most hosts, so it fits any text: no lead on it alone
    (score_entry) and no bonus over the candidates whose context the text itself gives (_context_held)."""
    return (c.get("equals") is False or c["fact"] == "host.gpu_count") and facts.origin_line(c["fact"]) is None


def _context_held(cond: dict[str, Any], facts: Facts) -> int:
    """How many of an entry's own conditions on context (require, trigger, support; not a symptom, not a
    log regex, not a host's absence) hold on these facts."""
    n = 0
    for c in list(cond.get("require") or []) + list(cond.get("trigger") or []) + list(cond.get("support") or []):
        if c["fact"] in (LOG_FACT, FINDING_FACT) or role(c["fact"]) != "context":
            continue
        if facts.check(c) and not _host_absence(c, facts):
            n += 1
    return n


def prepare(text: Optional[str]) -> Log:
    """The text read once for matching (lines, error codes), reusable across finding groups."""
    log = text if isinstance(text, Log) else Log(text)
    if log.codes is None:
        log.codes = _codes(log)
    return log


def match(kb, text=None, findings: Iterable[Finding] = (), top: Optional[int] = None, origin: str = "host") -> list[Match]:
    """Entries of ``kb`` that explain ``text`` (a str, or a :func:`prepare`d log) and/or ``findings``,
    best first. Findings whose id starts with "text." were read from the text; the others are the
    host's, and ``origin`` names where those came from ("live host", "demo", "replay").

    Where no entry is offered as likely or possible, fewer than MIN_CANDIDATES are candidates and the
    facts hold a symptom, the answer is completed with leads (score_entry's ``lead``): entries whose
    context fits, labelled unsure. An entry offered on its symptom is never joined by leads."""
    log = prepare(text)
    facts = Facts(list(findings), log, origin)
    shared = shared_codes(kb)
    out = []
    for entry in kb.entries:
        m = score_entry(entry, log, log.codes, facts, shared_codes=shared)
        if m is not None:
            out.append(m)
    _fails_explained_elsewhere(out, facts, log)
    if len(out) < MIN_CANDIDATES and facts.has_symptom() and not any(m.confidence in ("likely", "possible") for m in out):
        have = {m.entry.id for m in out}
        for entry in kb.entries:
            if entry.id not in have and not entry.benign:
                m = score_entry(entry, log, log.codes, facts, lead=True, shared_codes=shared)
                if m is not None:
                    out.append(m)
    # never silent where there is evidence (issue 22 point 4): beside a symptom, or on a text that names GPUs
    # and shows nothing working (a bare topology, a description of a setup), candidates on its words, unsure; not a
    # text whose trouble is shown to lie before any GPU communication (processes that never met: its own answer)
    described = (not facts.has_symptom() and not facts.health() and _gpu_trace(log, facts, own=True)
                 and not facts.known("text.trouble_before_gpu")
                 and not any(m.confidence in ("likely", "possible") for m in out))
    if (facts.has_symptom() or described) and not any(m.confidence == "likely" for m in out):
        out.extend(retrieved(kb, log, facts, out))
        if described and not out and (facts.known("text.topic") or _trouble_said(log)):
            # a text that names GPUs and GPU communication (P2P, NCCL, NVLink...) in a sentence, with no symptom and
            # no setup of an entry's own: the entries nearest its words, labelled so (issue 22 point 4, never silent)
            out.extend(retrieved(kb, log, facts, out, on_topic=True))
        rel = relevance(kb, log, facts) if _gpu_trace(log, facts) or any(m.basis == "signs" for m in out) else {}
        for m in out:
            m.relevance = rel.get(m.entry.id, 0.0)
    _setup_unsaid(out, facts, log)
    for m in out:
        give_next_command(m, facts)
    _share_deciding_facts(out)
    _one_of_several(out)
    _mark_first_failure(out, log)
    _named_error_over_wrapper(out, log)
    _code_after_explained_failure(out, log, shared)
    out = ranked(out)
    return out[:top] if top else out


class Setup(NamedTuple):
    """A setup a class's cause lives in (SETUPS)."""
    name: str  # how a reason names it
    fact_words: tuple[str, ...]  # words of the keys of facts that say it is there
    words: str  # a pattern of the words of a line that say it
    exempt: tuple[str, ...] = ()  # symptoms that point at it though unsaid


#: the setups a class's cause lives in. NVLink hardware: the link and the switch, NCCL's NVLS and the CUDA multicast
#: objects it builds, nvidia-smi topo's NV# codes, the SXM/HGX/DGX/NVL boards that carry NVSwitches, Fabric Manager and
#: IMEX. An NCCL variable: nccl_env_misconfig is "NCCL_P2P_* and kin forcing a transport the hardware does not need", and
#: what that costs is speed (NCCL's troubleshooting guide: P2P or SHM disabled, traffic goes over sockets): a slow run
#: points at a variable nobody named (set in an image, a launcher, a module file), a hang or an error does not. (MIG, a
#: VM, a CUDA IPC boundary and the BAR1 aperture were tried the same way and left out: reporters leave those setups unsaid
#: far more often, a cloud instance being a VM, a launcher's processes an IPC boundary; the corpus lost 7 right answers in
#: the top 3 for 2 gained.)
_NVLINK_SETUP = Setup("NVLink or NVSwitch hardware", ("nvlink", "nvswitch", "fabric", "nvls", "multicast"),
                      r"nvlink|nvswitch|\bnvls|multicast|\bnv\d{1,2}\b|\bsxm\d?\b|\bhgx\b|\bdgx|\bnvl\d{1,3}\b|"
                      r"fabric\s?manager|fabricmanager|\bimex\b")
_ENV_SETUP = Setup("an NCCL variable", ("env.NCCL_",), r"nccl_", ("symptom.slow",))
SETUPS = {**{c: _NVLINK_SETUP for c in NVLINK_CLASSES}, "nccl_env_misconfig": _ENV_SETUP}
SETUP_UNSAID_FACTOR = 0.5  # such a candidate ranks under the others, as one whose setup is not said (OTHER_SETUP_FACTOR)
#: the symptoms any cause shows (a hang, slowness, wrong data, a failure or crash said, trouble reported in words): a
#: candidate that holds nothing else is there on the symptom alone, not on a measured state or a setup of its own
GENERIC_SYMPTOMS = frozenset({"symptom.hang", "symptom.slow", "symptom.wrong_results", "symptom.fails", "symptom.crash",
                              "symptom.reported"})


def _setup_said(setup: Setup, facts: Facts, log: Log) -> bool:
    """Does the text (or the host) say ``setup`` is there: a fact of its own known with a value that is not an absence
    (False, a "host.no_..." key), its words in a line; for NVLink hardware also a pair's NV# path or a data-centre GPU
    named (one without NVLink, evidence/gpus.no_nvlink_hardware, has ruled the NVLink classes out already)?"""
    if any(any(w in k for w in setup.fact_words) and "no_" not in k and any(x not in (False, None, "") for x in v)
           for k, v in facts.values.items()):
        return True
    if setup is _NVLINK_SETUP and (any(str(p).upper().startswith("NV") for p in facts.values.get("pair.path", []))
                                   or "data-centre" in facts.values.get("gpu.product_class", [])):
        return True
    return log.search(setup.words)


def _setup_unsaid(out: list[Match], facts: Facts, log: Log) -> None:
    """A cause that lives in a setup of its own (SETUPS: NVLink hardware, an NCCL variable) is an unsure candidate on a
    generic symptom or its words (no line or code of its own, no fact beyond GENERIC_SYMPTOMS: not a measured state,
    such as a slow table on a pair the host calls P2P-capable) wherever that symptom shows. Where neither
    the text nor the host says that setup, it ranks under the candidates whose setup may be there (SETUP_UNSAID_FACTOR):
    a hang on "a server with 4 GPUs" is far more often anything else than an NVSwitch fabric's or a variable nobody named."""
    # an entry of the same setup offered on signs of its own (Fabric Manager not running on code 802) says that setup is there
    said: dict[str, bool] = {SETUPS[m.entry.failure_class].name: True for m in out
                             if m.entry.failure_class in SETUPS and m.confidence in ("likely", "possible")}
    for m in out:
        setup = SETUPS.get(m.entry.failure_class or "")
        # (a code that entries of several classes share, and nothing of its own, is as generic as a symptom: "one of them")
        coded = m.shared_code
        if setup is None or m.confidence != "unsure" or m.shared_line or m.quiet or (m.hits and not coded) \
                or not GENERIC_SYMPTOMS.issuperset(f for f in m.held_facts if not (coded and f.startswith("error."))) \
                or set(setup.exempt) & set(m.held_facts):
            continue
        if setup.name not in said:
            said[setup.name] = _setup_said(setup, facts, log)
        if not said[setup.name]:
            m.score = round(m.score * SETUP_UNSAID_FACTOR, 4)
            m.relevance = round(m.relevance * SETUP_UNSAID_FACTOR, 4)
            m.reasons.append(f"neither the text nor the host names {setup.name}, which this cause needs")


def ruled_out_by_host(kb, text=None, findings: Iterable[Finding] = (), origin: str = "host",
                      limit: int = 3, facts: Optional[Facts] = None) -> list[tuple[Entry, int, str, str]]:
    """Entries that ``text`` alone gives on their own regex, error code or facts (offered, likely or possible, or
    unsure candidates on a symptom of their own; never leads on context) and that the HOST's facts rule out (the
    text's facts alone do not): (entry, first line of its evidence, why, its confidence on the text alone), offered
    ones first, at most ``limit``.
    Where text and host disagree the host's facts win (issue 22 point 2); this says which of the text's own lines lost,
    so an answer that offers nothing does not read as "nothing in the text", and the text can be explained on its own
    (--text-only) when it comes from another machine. ``facts``: the facts of these findings and text where the caller
    holds them already (known_facts), so they are not gathered twice."""
    log = prepare(text)
    if not log.lines:
        return []
    findings = list(findings)
    facts = facts if facts is not None else Facts(findings, log, origin)
    text_facts = Facts([f for f in findings if f.id.startswith("text.")], log, origin)
    shared = shared_codes(kb)
    out: list[tuple[Match, int, str]] = []
    for entry in kb.entries:
        if entry.benign:
            continue
        why = why_excluded(entry, facts, own_text=True)
        if why is None or why_excluded(entry, text_facts, own_text=True) is not None:
            continue
        m = score_entry(entry, log, log.codes, text_facts, shared_codes=shared)
        if m is None or m.basis != "signs":
            continue  # given on the text alone only as a lead on context, or not at all: nothing the host took away
        lines = [*_hit_lines(m.hits), *(n for f in m.held_facts for n in [text_facts.origin_line(f)] if n)]
        out.append((m, min(lines) if lines else 1, why))
    out = ranked(out, key=lambda x: x[0])[:limit]  # offered first, then the unsure ones, classes apart
    return [(m.entry, line, why, m.confidence) for m, line, why in out]


#: entries of at least this many classes offered on the very same line(s) and nothing else of their own: the line is a
#: message that several causes share (CUDA's 217 'peer access is not supported between these two devices' is a GeForce,
#: a VM, a pair across sockets, hardware without P2P, or a program enabling access it was told is unavailable)
SHARED_LINE_CLASSES = 3
WORDS_MARGIN = 0.3  # relevance (0..1 of the best entry) by which one entry of a shared line must lead the others to rank first
WORDS_LEAD = 0.3  # what that lead adds to its rank among the line's entries (more than their scores differ)


def _one_of_several(out: list[Match]) -> None:
    """The shared-code rule for shared messages: entries offered on the same text lines only (no condition of their own
    holds: no setup said, no state measured) whose classes are SHARED_LINE_CLASSES or more say "one of these", not which:
    each stays an unsure candidate, its deciding fact named, as with a shared error code alone."""
    groups: dict[tuple, list[Match]] = {}
    for m in out:
        # an entry the informational-line rule already made unsure (m.quiet) still names a class the line is shared by
        if (m.confidence not in ("likely", "possible") and not m.quiet) or m.entry.benign or m.own_signs or m.basis != "signs":
            continue
        lines = tuple(sorted(_hit_lines(m.hits, regex_only=True)))
        if lines:
            groups.setdefault(lines, []).append(m)
    for ms in groups.values():
        if len({m.entry.failure_class for m in ms}) < SHARED_LINE_CLASSES:
            continue
        for m in ms:
            if m.quiet:
                continue  # already unsure, ranked on its line's own score
            m.unsure = m.shared_line = True
            m.shared_score = m.sign_score
            m.score = min(m.score, UNSURE_CAP)
            m.reasons.append("its line is a message that entries of several classes share, and nothing of its own holds")
        # the text's words around the shared line (a framework's name, a tool's words) put first the entry they clearly
        # favour: its relevance over every other one of the line's by WORDS_MARGIN (else their scores order them)
        shared = sorted((m for m in ms if m.shared_line), key=lambda m: -m.relevance)
        if len(shared) >= 2 and shared[0].relevance - shared[1].relevance >= WORDS_MARGIN:
            shared[0].words_lead = True
            shared[0].reasons.append("the text's words favour it among the entries of its line")


FIRST_FAILURE_BONUS = 0.05  # ranks the entry of a log's first failure over those of the errors that follow from it
#: a line that reports a failure: NCCL's WARN level (src/include/debug.h: WARN(...) prints "NCCL WARN"), an error or
#: exception line, a CUDA error report ("Cuda failure", "CUDA error"), a kernel NVRM/Xid line
_FAILURE_LINE = re.compile(r"\bNCCL WARN\b|\berror\b|\bexception\b|\bcuda failure\b|\bfailed\b|\bxid\b", re.I)


def _first_line_of(m: Match) -> Optional[int]:
    # the lines its own regexes or codes matched (not a code read from the text's facts: one origin line for them all)
    ns = _hit_lines(m.hits, codes_read_from_text=False)
    return min(ns) if ns else None


_LAST_ERROR = re.compile(r"\bLast error:\s*$", re.I)


def _after_last_error(log: Log, n: int) -> bool:
    """Is line ``n`` the one PyTorch prints NCCL's last error on (the line after "Last error:")?"""
    return n >= 2 and _LAST_ERROR.search(log.lines[n - 2]) is not None


def _mark_first_failure(out: list[Match], log: Log) -> None:
    """In a log, the first failure is the cause and the later ones its consequences (NCCL's WARN chain: a CUDA call
    fails, then every caller reports what it could no longer do, e.g. 'API call is not supported in the installed CUDA
    driver' and then 'invalid device ordinal'). Among the entries offered on text of their own at different failure
    lines, the one on the earliest line ranks first where the scores are close (FIRST_FAILURE_BONUS)."""
    offered = [(n, m) for m in out if m.confidence in ("likely", "possible") and not m.entry.benign
               for n in [_first_line_of(m)] if n and n <= len(log.lines)
               and (_FAILURE_LINE.search(log.lines[n - 1]) or _after_last_error(log, n))]
    if len({n for n, _m in offered}) < 2:
        return
    first = _first_failure_line([n for n, _m in offered], log)
    for n, m in offered:
        m.first_failure = n == first


def _first_failure_line(lines: list[int], log: Log) -> int:
    """Of a log's failure lines, the first failure's: NCCL's own last error, which PyTorch prints under "Last error:" after
    its wrapper line (ProcessGroupNCCL's "NCCL error in: ..., internal error - please report ..., NCCL version X" /
    "ncclInternalError: ..." / "Last error:" / ncclGetLastError()), where there is one (the lines above it only say which
    call returned it), else the earliest."""
    under = [n for n in lines if _after_last_error(log, n)]
    return min(under) if under else min(lines)


def _named_cuda_errors(line: str) -> set[str]:
    """The CUDA errors a line names (codes.codes_in_line: a runtime or driver name, a number beside CUDA's words), not
    NCCL results or Xids."""
    return {k for k, _w in codes_in_line(line) if not k.startswith(("nccl:", "xid"))}


def _named_error_over_wrapper(out: list[Match], log: Log) -> None:
    """A framework's line around a CUDA call says what it could not do, the CUDA error it names says why (TensorFlow's
    gpu_device.cc: "Unable to enable peer access between device ordinals 9 and 8, status: Internal: failed to enable
    peer access from ... : CUDA_ERROR_TOO_MANY_PEERS"; TensorFlow prints every cuCtxEnablePeerAccess status there).
    An entry offered only on such lines (no condition of its own holds) that does not list any CUDA error they name
    ranks under an offered entry that lists one of them: the named error is the more specific sign."""
    offered = [m for m in out if m.confidence in ("likely", "possible") and not m.entry.benign]
    listed = {id(m): {code_key(c) for c in m.entry.error_codes} for m in offered}
    for m in offered:
        if m.own_signs:
            continue
        lines = _hit_lines(m.hits, regex_only=True)
        if not lines or any(h.kind != "regex" for h in m.hits):
            continue
        named: set[str] = set()
        for n in lines:
            if n <= len(log.lines):
                # what the entry's own patterns matched is its text (CuPy's "CUDARuntimeError: cudaErrorInvalidDevice")
                line = log.lines[n - 1]
                for rx in m.entry.patterns:
                    line = rx.sub(" ", line)
                named |= _named_cuda_errors(line)
        if not named or named & listed[id(m)]:
            continue
        rivals = [o for o in offered if o is not m and named & listed[id(o)]]
        if not rivals:
            continue
        best = max(rivals, key=lambda o: o.score)
        if m.score >= best.score:
            m.score = round(max(0.0, best.score - 0.01), 4)
            m.reasons.append(f"its line names a CUDA error it does not explain ({', '.join(sorted(named))}), "
                             f"which {best.entry.id} lists")


def _code_after_explained_failure(out: list[Match], log: Log, shared: frozenset) -> None:
    """A log's error code is what its first failure returned: NCCL's WARN names the failure and the call returns a code
    the caller then reports ("transport.cc:40 NCCL WARN No transport found for rank 0 -> rank 1" and then "unhandled
    system error ... ncclSystemError", selectTransport's return). An entry offered only on a code that entries of
    several classes share (no text of its own matched; a condition on context held, a small /dev/shm, a container),
    whose code lines all follow a failure line another offered entry's own regex explains (or, where that line is NCCL's
    last error, which PyTorch prints under its wrapper: _first_failure_line, the wrapper's code above it), is that
    failure's consequence, not a cause of its own: it stays an unsure candidate."""
    offered = [m for m in out if m.confidence in ("likely", "possible") and not m.entry.benign]
    explained: dict[int, str] = {}  # failure line -> the first entry (by id) whose own regex explains it
    for m in sorted(offered, key=lambda m: m.entry.id):
        if m.basis == "signs" and not m.shared_line:
            for n in _hit_lines(m.hits, regex_only=True):
                if n <= len(log.lines) and _FAILURE_LINE.search(log.lines[n - 1]) and not is_info_line(log.lines[n - 1]):
                    explained.setdefault(n, m.entry.id)
    if not explained:
        return
    first = _first_failure_line(list(explained), log)  # as _mark_first_failure takes it: NCCL's last error first
    last_error = _after_last_error(log, first)
    for m in offered:
        if any(h.kind == "regex" for h in m.hits) or not m.hits:
            continue
        lines = [h.line for h in m.hits if h.line is not None]
        # its code printed after that failure, or, where that failure is NCCL's last error, by PyTorch's wrapper above it
        if not lines or first in lines or (min(lines) < first and not last_error) \
                or not m.code_hits or not m.code_hits <= shared:
            continue
        m.unsure = True
        m.score = min(m.score, UNSURE_CAP)
        where = "follows" if min(lines) > first else "is PyTorch's wrapper of"
        m.reasons.append(f"its only sign is an error code shared by several classes, which {where} line {first}'s "
                         f"failure ({explained[first]}): the code is that failure's")


RELEVANCE_WEIGHT = 0.3  # what sharing the most words with the text adds to an unsure candidate's rank
CONTEXT_BONUS = 0.1  # per condition of its own on context that holds (at most two): a fitting setup beats a bare symptom
RELEVANCE_FLOOR = 20.0  # a BM25 score under this is weak whatever ranks first (about the median best score of a report)


def rank_key(m: Match) -> tuple:
    """Offered entries (likely, possible) first, by score; then the unsure ones by their score plus
    their relevance (its words and the text's: a generic symptom such as a hang makes many entries
    candidates, the words and context of the text tell them apart)."""
    if m.confidence != "unsure":
        return (0, -(m.score + (FIRST_FAILURE_BONUS if m.first_failure else 0.0)), m.entry.benign, m.entry.id)
    if m.shared_line or m.quiet:  # read the text's own line: over the candidates on a missing fact or on words, in their order
        # the shared line ties them; the text's words put first one that they clearly favour (_one_of_several)
        return (1, -(1.0 + m.shared_score + (WORDS_LEAD if m.words_lead else 0.0)), m.entry.benign, m.entry.id)
    return (1, -(m.score + RELEVANCE_WEIGHT * m.relevance + CONTEXT_BONUS * min(2, m.context_held)), m.entry.benign, m.entry.id)


def ranked(matches: list, key=lambda x: x) -> list:
    """``matches`` best first (rank_key), and among the unsure ones a class already named above waits
    until every other class has had its turn: the few lines of an unsure answer name different causes
    rather than three variants of one (``key`` gives the Match of an item)."""
    items = sorted(matches, key=lambda x: rank_key(key(x)))
    sure = [x for x in items if rank_key(key(x))[0] == 0]
    seen = {key(x).entry.failure_class for x in sure}
    first, later = [], []
    for x in items:
        if rank_key(key(x))[0] == 1:
            cls = key(x).entry.failure_class
            (later if cls in seen else first).append(x)
            seen.add(cls)
    return sure + first + later


#: facts of a setup that is itself the cause of a shared error (217 peer access unsupported, an invalid ordinal ...)
SETUP_FACTS = ("gpu.consumer", "host.virtualized", "gpu.mig", "pair.cross_socket", "host.ranks_exceed_gpus")
OTHER_SETUP_FACTOR = 0.5  # such an entry ranks as a lead does: under the candidates whose setup is said
RETRIEVAL_CAP = 0.2  # a candidate on its words alone scores at most this (far under POSSIBLE)
FILL_CLASSES = 3  # retrieval adds at most this many entries, each of a class the answer does not hold yet


def _hits(kb, log: Log, facts: Facts):
    from .retrieval import rank

    cache = log.__dict__.setdefault("_retrieval", {})
    return rank(kb, log.lines, facts.known, cache, log.lines_with if log.lower is not None else None)


_GPU_FACTS = ("gpu.", "p2p.", "pair.", "nccl.", "error.", "bench.", "tool.", "host.gpu_count", "host.xid", "host.nvswitch",
              "host.acs_",  # ACS Control read at the bridges (lspci's ACSCtl, setpci): NCCL's own check for P2P trouble
              *SHM_TRANSPORT_FACTS)


def _gpu_trace(log: Log, facts: Optional[Facts] = None, own: bool = False) -> bool:
    """Does the text (or a fact read from it or the host) name GPUs, CUDA, NCCL or P2P? ``own``: the text itself, or a
    fact read from a line of it, not the host's facts (a host has GPUs whatever the text says)."""
    if facts is not None and any(k.startswith(_GPU_FACTS) and (not own or facts.origin_line(k) is not None)
                                 for k in facts.values):
        return True
    hit = log.__dict__.get("_gpu_trace")
    if hit is None:
        from ..evidence.read import gpu_trace, prefixes_name_gpus  # lazy: the evidence package imports knowledge.codes

        # the text, or what the prefixes taken off its lines say (a logger's "CUDASymmetricMemory.cu:247]")
        hit = log.__dict__["_gpu_trace"] = gpu_trace(log.text) or bool(log.prefixes) and prefixes_name_gpus(log.prefixes)
    return hit


def _trouble_said(log: Log) -> bool:
    """Does a line of the text say, in words, that something goes wrong (an error, a failure, a problem: prose's trouble
    words, not negated), where no sentence names GPU communication? With a trace of GPUs and nothing read working, such a
    text is evidence enough for candidates on its words (issue 22 point 4, never silent)."""
    hit = log.__dict__.get("_trouble_said")
    if hit is None:
        from ..evidence.read import trouble_said  # lazy: the evidence package imports knowledge.codes

        # on the text as the evidence readers read it (paste.Paste), not on the matcher's folded lines: -q's aligned
        # labels ("HW Slowdown      : Not Active") are known by their alignment (smi.q_own_lines), which folding loses
        hit = log.__dict__["_trouble_said"] = trouble_said(log.source if log.source is not None else log.text)
    return hit


def _from_text(cond: dict[str, Any], facts: Facts) -> bool:
    """Does this condition hold on a setup the text itself describes: a fact the evidence readers took from
    a line of the paste (a VM, a GeForce, a path through the CPU), not a host's context, not a version (it
    says which release, not what is set up: every NCCL log names one) and not the entry's own regex on the
    text (its words, already weighed by retrieval)?"""
    if cond["fact"] == LOG_FACT or "version" in cond["fact"] or cond["fact"] == "host.gpu_count":
        return False  # nor a count of GPUs: one GPU listed is a healthy one-GPU host until a symptom says otherwise
    return str(facts.origin.get(cond["fact"], "")).startswith("line")


def give_next_command(m: Match, facts: Facts) -> None:
    """An unsure candidate that names no missing fact of its own gets one all the same: the first fact
    of its own conditions that a command reads, else its class's (fact_roles.CLASS_FACT), else the
    first look at any pair (or, on one GPU, at the GPUs the process sees)."""
    if m.confidence != "unsure" or m.next_command is not None:
        return
    cond = m.entry.data.get("match") or {}
    # a fact the text (or host) already gives is no next command: "read BAR1" under a paste that shows BAR1
    unread = [c["fact"] for c in list(cond.get("require") or []) + list(cond.get("trigger") or []) + list(cond.get("support") or [])
              if c["fact"] in NEXT_COMMAND and readable(c["fact"], facts.known)]
    own = ([f for f in unread if not facts.values.get(f)] or unread)[:1]
    cf = CLASS_FACT.get(m.entry.failure_class or "")
    m.own_deciding = own or ([cf] if cf and readable(cf, facts.known) else []) or [first_look(facts.known)[0]]


def relevance(kb, log: Log, facts: Facts) -> dict[str, float]:
    """entry id -> its BM25 score over the best entry's (0..1) for this text; over RELEVANCE_FLOOR where the
    best is under it (a text of few words, a tool's table: no entry is much like it)."""
    hits = _hits(kb, log, facts) if log.lines else []
    if not hits:
        return {}
    best = max(hits[0][1], RELEVANCE_FLOOR)
    return {e.id: round(s / best, 4) for e, s, _ in hits}


TOPIC_FACTOR = 0.5  # a candidate on the words of a text that names GPU communication but no symptom and no setup


def retrieved(kb, log: Log, facts: Facts, have: list[Match], on_topic: bool = False) -> list[Match]:
    """Candidates on the entry's own words (knowledge.retrieval: BM25 between the text and each entry's
    text, the text's facts as concept terms): up to FILL_CLASSES entries of classes the answer does not
    hold yet, for an answer with no likely entry, where the facts hold a symptom or the text names GPUs and shows nothing working (issue 22 point 4: never silent where
    there is evidence). Labelled unsure; each names the words it shares, the conditions of its own that
    hold (for) and fail (against), and its unknown required facts (its next command). An entry ruled
    out by a fact, or one whose every trigger is known false, is not offered; one whose required fact
    is contradicted ranks lower and says so."""
    classes = {m.entry.failure_class for m in have}
    if not log.lines or not (_gpu_trace(log, facts) or any(m.basis == "signs" for m in have)):
        return []  # "stuck" in a text that names no GPU, CUDA, NCCL or P2P is not this tool's business
    hits = _hits(kb, log, facts)
    if not hits:
        return []
    best = hits[0][1]
    ids = {m.entry.id for m in have}
    out: list[Match] = []
    for entry, s, shared in hits:
        if len(out) >= FILL_CLASSES:
            break
        if entry.id in ids or entry.failure_class in classes or entry.benign:
            continue
        cond = entry.data.get("match") or {}
        if why_excluded(entry, facts, own_text=False):
            continue
        if _void_wrapper_codes(entry, facts):
            continue  # its NCCL result wraps a CUDA error the text names, and not one of the entry's: its words say nothing
        triggers = cond.get("trigger") or []
        if triggers and all(facts.check(c) is False for c in triggers):
            continue
        held, against, deciding, fact_w, factor = [], [], [], 0.0, 1.0
        text_setup = False  # a condition of its own holds on what the text itself describes
        for c in list(cond.get("require") or []) + triggers + list(cond.get("support") or []):
            ok = facts.check(c)
            is_req = c in (cond.get("require") or [])
            if ok:
                text_setup = text_setup or _from_text(c, facts)
                held.append(_describe(c, facts))
                # (what the host lacks fits any text: it weighs nothing for words the text shares, _host_absence)
                fact_w += 0.0 if _host_absence(c, facts) else c.get("weight", REQUIRE_WEIGHT if is_req else SUPPORT_WEIGHT)
            elif ok is False and is_req:
                against.append(_describe(c, facts))
                factor *= CONTRADICTED_FACTOR
            elif ok is None and is_req and c["fact"] != LOG_FACT and c["fact"] not in deciding:
                deciding.append(c["fact"])
        for c in triggers:
            if facts.check(c) is None and c["fact"] != LOG_FACT and c["fact"] not in deciding:
                deciding.append(c["fact"])
        if not on_topic and not facts.has_symptom() and not text_setup:
            continue  # a text with no symptom: only a candidate whose own setup the TEXT describes (a VM, a GeForce,
            # a path through the CPU); the host's context (a container on the live host) describes nothing the text asks
        deciding = [f for f in deciding if readable(f, facts.known)]
        own = [f for f in deciding if f in NEXT_COMMAND]
        score = round(RETRIEVAL_CAP * (0.6 * s / best + 0.4 * min(1.0, fact_w)) * factor * (TOPIC_FACTOR if on_topic else 1.0), 4)
        words = [t.lstrip("_") + ("*" if t.startswith("_") else "") for t in shared[:8]]
        reasons = [f"retrieval: its own text shares these words with the text: {', '.join(words)}"
                   + (" (* a family of words: " + ", ".join(sorted({w[:-1] for w in words if w.endswith('*')})) + ")"
                      if any(w.endswith("*") for w in words) else ""),
                   ("beside the symptom (" + "; ".join(sym.replace(" (", ", ", 1).rstrip(")") for sym in facts.symptoms()[:2]) + ")"
                    if facts.has_symptom() else
                    f"the text names GPU communication ({facts.origin.get('text.topic', 'the text')}) but no symptom and no setup "
                    "of this entry: a candidate on its words alone, to check before anything is changed" if on_topic else
                    "the text names no symptom: a candidate on what it describes, to check before anything is changed")] + held
        m = Match(entry, score, reasons + ["against: " + a for a in against], deciding, unsure=True, context_held=_context_held(cond, facts),
                  facts_for=reasons, facts_against=against, notes=list(facts.conflicts),
                  own_deciding=own, basis="retrieval")
        give_next_command(m, facts)  # its one next command, where no missing fact of its own names one
        m.deciding_facts = m.deciding_facts or list(m.own_deciding)
        out.append(m)
        classes.add(entry.failure_class)
    return out


_SHARED: dict[int, tuple[Any, frozenset]] = {}


#: NCCL results that every misuse or failure of its kind returns, whatever the cause (src/init.cc and kin:
#: ncclInvalidUsage for a duplicate GPU, mismatched versions, a bad rank or a wrong communicator alike): listed by one entry,
#: still shared: an entry offered on such a code alone is a candidate, never more
_GENERIC_NCCL_KEYS = frozenset(code_key(c) for c in ("ncclInvalidUsage",))


def shared_codes(kb) -> frozenset:
    """Error-code keys that entries of two or more failure classes list (cudaErrorPeerAccessUnsupported,
    ncclSystemError...): such a code alone does not say which of them it is. Cached per KB object."""
    hit = _SHARED.get(id(kb))
    if hit is not None and hit[0] is kb:
        return hit[1]
    classes: dict[str, set] = {}
    for e in kb.entries:
        for c in e.error_codes:
            try:
                classes.setdefault(code_key(c), set()).add(e.failure_class)
            except (TypeError, ValueError):
                continue
    out = frozenset(k for k, v in classes.items() if len(v) > 1) | _GENERIC_NCCL_KEYS
    _SHARED[id(kb)] = (kb, out)
    return out


def known_facts(text=None, findings: Iterable[Finding] = (), origin: str = "host") -> Facts:
    """The facts the matcher would hold for this text and these findings (for answers that list them)."""
    return Facts(list(findings), prepare(text), origin)


def _hit_lines(hits: Iterable[Hit], regex_only: bool = False, codes_read_from_text: bool = True) -> frozenset[int]:
    """The text's lines an entry's own text hit: only its regex hits with ``regex_only``; without the codes read from
    the text's facts where ``codes_read_from_text`` is False (those share one origin line)."""
    return frozenset(h.line for h in hits if h.line is not None
                     and (not regex_only or h.kind == "regex")
                     and (codes_read_from_text or h.kind != "code_read"))


def _share_deciding_facts(matches: list[Match]) -> None:
    """Entries that explain the same log line compete: each of them names every fact that is
    missing for any of them, since that fact is what would decide between them."""
    groups: dict[frozenset, list[Match]] = {}
    for m in matches:
        lines = _hit_lines(m.hits)
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


# ---- per pair ---------------------------------------------------------------------------------

def _subject_gpus(subject: str) -> tuple[int, ...]:
    if subject.startswith("pair:"):
        a, b = subject[5:].split("-")
        return int(a), int(b)
    if subject.startswith("gpu:"):
        return (int(subject[4:]),)
    return ()


def finding_groups(findings: Iterable[Finding]) -> dict[str, list[Finding]]:
    """Findings to match together, so facts of different pairs never mix: per pair (the pair's own
    findings, its GPUs' and the host's), per GPU with findings of its own but no pair, else the host
    alone. Findings read from text ("text.*") join the host's by subject: a text pair's facts go to
    that pair (its own group when the host has no such pair), a GPU's to the pairs holding it, the
    host's to every group."""
    findings = list(findings)
    host_pairs = {f.subject for f in findings if f.subject.startswith("pair:") and not f.id.startswith("text.")}
    by_subject: dict[str, list[Finding]] = {}
    for f in findings:
        targets = [f.subject]
        if f.id.startswith("text.") and f.subject.startswith("pair:"):
            a, b = _subject_gpus(f.subject)  # the text names a pair once (A < B); the host has both directions
            targets = [s for s in (f"pair:{a}-{b}", f"pair:{b}-{a}") if s in host_pairs] or [f.subject]
        for t in targets:
            by_subject.setdefault(t, []).append(f)
    host = by_subject.get("host", [])
    groups: dict[str, list[Finding]] = {}
    covered: set[str] = set()
    for subject, fs in by_subject.items():
        if subject.startswith("pair:"):
            a, b = _subject_gpus(subject)
            gpus = [g for g in by_subject.get(f"gpu:{a}", []) + by_subject.get(f"gpu:{b}", []) if g not in fs]
            covered.update({f"gpu:{a}", f"gpu:{b}"})
            groups[f"GPU{a}->GPU{b}"] = fs + gpus + host
    for subject, fs in by_subject.items():
        if subject.startswith("gpu:") and subject not in covered:
            groups[f"GPU{subject[4:]}"] = fs + host
    if not groups:
        groups["host"] = host
    return groups


def _signature(fs: list[Finding]) -> tuple:
    """What a group's answer depends on: its findings' ids, severities and facts (not the subjects)."""
    return tuple(sorted((f.id, f.severity, tuple(sorted((k, repr(v)) for k, v in (f.facts or {}).items())),
                         tuple(f.evidence[:1]) if f.id.startswith("text.") else ()) for f in fs))


def match_grouped(kb, text=None, findings: Iterable[Finding] = (), top: Optional[int] = None,
                  origin: str = "host") -> list[tuple[Match, str]]:
    """The best match of each entry over the finding groups (:func:`finding_groups`), with the
    group it came from ("GPU0->GPU1", "GPU0->GPU1 and 3 more pairs alike"; "" for text alone).
    The text is read once; groups with the same facts are matched once."""
    log = prepare(text)
    findings = list(findings)
    groups = finding_groups(findings) if findings else {"": []}
    alike: dict[tuple, list[str]] = {}
    first: dict[tuple, list[Finding]] = {}
    for label, fs in groups.items():
        sig = _signature(fs)
        alike.setdefault(sig, []).append(label)
        first.setdefault(sig, fs)
    best: dict[str, tuple[Match, str]] = {}
    for sig, fs in first.items():
        labels = alike[sig]
        label = labels[0] + (f" and {len(labels) - 1} more pair{'s' if len(labels) > 2 else ''} alike" if len(labels) > 1 else "")
        for m in match(kb, log, fs, origin=origin):
            old = best.get(m.entry.id)
            if old is None or (old[0].unsure, -old[0].score) > (m.unsure, -m.score):
                best[m.entry.id] = (m, label)
    out = ranked(list(best.values()), key=lambda ml: ml[0])
    return out[:top] if top else out
