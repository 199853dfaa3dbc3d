"""A paste and the facts read from it: the lines (with their numbers) and the collector every
format parser writes into. Pure: imports nothing of ours but findings."""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any, Optional

from ..findings import Finding

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
EXCERPT = 160

#: Facts about what went wrong (an entry needs one of them); every other key is context.
SYMPTOM_PREFIXES = ("error.", "symptom.", "tool.", "nccl.p2p_fallback", "bench.")


class Paste:
    """The text, split into lines once; ``line_of(offset)`` for matches over the whole text."""

    def __init__(self, text: str) -> None:
        if "\x1b" in text:
            text = _ANSI.sub("", text)  # terminal colours (nvidia-smi underlines its header)
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        self.text = text
        self.lines = text.split("\n")
        self._starts: Optional[list[int]] = None
        self._lower: Optional[str] = None

    @property
    def lower(self) -> str:
        if self._lower is None:
            self._lower = self.text.lower()
        return self._lower

    @property
    def starts(self) -> list[int]:
        if self._starts is None:
            starts = [0]
            pos = 0
            for line in self.lines[:-1]:
                pos += len(line) + 1
                starts.append(pos)
            self._starts = starts
        return self._starts

    def line_of(self, offset: int) -> int:
        """1-based line number of a character offset of ``text``."""
        return bisect_right(self.starts, offset)

    def line(self, no: int) -> str:
        return self.lines[no - 1] if 0 < no <= len(self.lines) else ""

    def cite(self, no: int) -> str:
        s = " ".join(self.line(no).split())
        if len(s) > EXCERPT:
            s = s[:EXCERPT - 1] + "…"
        return f"line {no} of the paste: {s}"


@dataclass
class Fact:
    subject: str
    key: str
    value: Any
    line: int


@dataclass
class Collector:
    """Where parsers put what they read. The first value of a (subject, key) wins; later ones are
    kept only with ``again=True`` (several CUDA errors in one paste)."""

    paste: Paste
    findings: list[Finding] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    facts: dict[tuple[str, str], Fact] = field(default_factory=dict)
    bus_to_gpu: dict[str, int] = field(default_factory=dict)  # "0000:3b:00.0" -> GPU index
    structured: dict[str, Any] = field(default_factory=dict)  # per format, what import needs
    notes: list[str] = field(default_factory=list)

    def kind(self, name: str) -> None:
        if name not in self.kinds:
            self.kinds.append(name)

    def has(self, subject: str, key: str) -> bool:
        return (subject, key) in self.facts

    def get(self, subject: str, key: str, default: Any = None) -> Any:
        f = self.facts.get((subject, key))
        return f.value if f else default

    def add(self, subject: str, key: str, value: Any, line: int, summary: Optional[str] = None,
            severity: Optional[str] = None, again: bool = False) -> bool:
        if value is None or value == "":
            return False
        if (subject, key) in self.facts and not again:
            return False
        if (subject, key) not in self.facts:
            self.facts[(subject, key)] = Fact(subject, key, value, line)
        if severity is None:
            severity = "problem" if key.startswith(SYMPTOM_PREFIXES) and value not in (False, "ok", "OK") else "info"
        who = "" if subject == "host" else f"{subject}: "
        self.findings.append(Finding(
            id=f"text.{key}", subject=subject, severity=severity,
            summary=summary or f"{who}{key} = {value}",
            evidence=[self.paste.cite(line)], facts={key: value}))
        return True

    def gpu_of_bus(self, bus: Optional[str]) -> Optional[int]:
        return self.bus_to_gpu.get(norm_bus(bus)) if bus else None

    def note_bus(self, bus: Optional[str], gpu: int) -> None:
        b = norm_bus(bus) if bus else None
        if b and b not in self.bus_to_gpu:
            self.bus_to_gpu[b] = gpu


def norm_bus(bus: str) -> str:
    """"00000000:3B:00.0", "0000:3b:00.0", "3b:00.0", "PCI:0000:3b:00" -> "0000:3b:00.0"."""
    b = bus.strip().lower().removeprefix("pci:")
    parts = b.split(":")
    if len(parts) == 2:
        parts = ["0000", *parts]
    if len(parts) != 3:
        return b
    dom, busno, rest = parts
    if "." not in rest:
        rest += ".0"
    return f"{dom[-4:].rjust(4, '0')}:{busno.rjust(2, '0')}:{rest}"


def pair_subject(a: int, b: int) -> str:
    lo, hi = (a, b) if a < b else (b, a)
    return f"pair:{lo}-{hi}"
