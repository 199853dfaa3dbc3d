"""Redaction for tickets that leave the company: hostnames, serial numbers, UUIDs and IP addresses.

One :class:`Redactor` serves a whole bundle, so the same original becomes the same placeholder in
every file (report, snapshot, screenshot text and SVG). It knows the identifying values of the
snapshot (hostname, GPU UUIDs and serials, fabric cluster UUIDs, host facts whose key names a
host, serial or UUID) and also finds UUIDs and IP addresses in free text (notes, errors, logs).

Placeholders keep a readable shape: ``redacted-host-1``, ``redacted-serial-1``,
``GPU-redacted-uuid-0001-0000-000000000001`` (a UUID keeps its ``GPU-``/``MIG-`` prefix and its
length), ``redacted-ip-1``. The nil UUID (all zeros) identifies nothing and is kept.
"""

from __future__ import annotations

import html
import ipaddress
import re
from typing import Any, Callable, Optional

from ..model import Snapshot

KINDS = ("host", "serial", "uuid", "ip")
NIL_UUID = "00000000-0000-0000-0000-000000000000"
_HEX_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_UUID_RE = re.compile(rf"(?<![0-9A-Za-z-])(?:(?:GPU|MIG)-)?{_HEX_UUID}(?![0-9A-Za-z])")
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_IPV4_RE = re.compile(rf"(?<![\d.]){_OCTET}(?:\.{_OCTET}){{3}}(?![\d.])")
_IPV6_CANDIDATE = re.compile(r"(?<![0-9A-Za-z:])[0-9A-Fa-f:]*::?[0-9A-Fa-f:]+(?:%\w+)?(?![0-9A-Za-z:])")
_UUID_PREFIX = re.compile(r"^(GPU-|MIG-)", re.IGNORECASE)
#: host-fact key fragments that say what a value identifies.
_KEY_KINDS = (("serial", "serial"), ("uuid", "uuid"), ("hostname", "host"), ("fqdn", "host"), ("nodename", "host"))
#: keys of host facts whose text says how a fact was read or why it is missing.
_NOT_IDENTIFYING = {"how", "na"}
#: shorter hostnames than this are redacted where they stand in a field, but not searched for in text.
MIN_SEARCH_LEN = 3


def _is_ipv6(token: str) -> bool:
    if token.count(":") < 2 or len(token) < 6:
        return False
    if "::" not in token and token.count(":") != 7:
        return False  # times (10:25:00), PCI bus ids and MACs are not addresses
    try:
        ipaddress.IPv6Address(token.split("%")[0])
    except ValueError:
        return False
    return True


class Redactor:
    """Original -> placeholder, consistent over everything passed through one instance."""

    def __init__(self) -> None:
        self.mapping: dict[str, str] = {}  # lower-cased original -> placeholder
        self.kinds: dict[str, str] = {}  # lower-cased original -> kind
        self._counts = {k: 0 for k in KINDS}
        self._pattern: Optional[re.Pattern] = None

    # -- building --
    @classmethod
    def for_snapshot(cls, snapshot: Snapshot) -> "Redactor":
        r = cls()
        r.add("host", snapshot.source.hostname)
        for gpu in snapshot.gpus:
            r.add("uuid", gpu.uuid)
            r.add("serial", gpu.serial)
            r.add("uuid", gpu.fabric.cluster_uuid)
        r._add_host_facts(snapshot.host)
        return r

    def _add_host_facts(self, value: Any, path: tuple[str, ...] = ()) -> None:
        """Strings under a key path naming a host, serial or UUID (not a fact's "how" or "na" text)."""
        if isinstance(value, dict):
            for k, v in value.items():
                self._add_host_facts(v, path + (str(k).lower(),))
        elif isinstance(value, list):
            for v in value:
                self._add_host_facts(v, path)
        elif isinstance(value, str) and path and path[-1] not in _NOT_IDENTIFYING:
            key = ".".join(path)
            for fragment, kind in _KEY_KINDS:
                if fragment in key:
                    self.add(kind, value)

    def add(self, kind: str, original: Optional[str]) -> Optional[str]:
        """Register an original; returns its placeholder (None for values that identify nothing)."""
        if original is None:
            return None
        original = original.strip()
        if not original or original.lower() == NIL_UUID or _UUID_PREFIX.sub("", original).lower() == NIL_UUID:
            return None
        low = original.lower()
        if low in self.mapping:
            return self.mapping[low]
        if low in {p.lower() for p in self.mapping.values()}:
            return original  # already a placeholder
        if kind == "uuid":
            return self._add_uuid(original)
        if kind == "host":
            return self._add_host(original)
        self._counts[kind] += 1
        return self._register(kind, low, f"redacted-{kind}-{self._counts[kind]}")

    def _add_host(self, original: str) -> str:
        """A host's FQDN and its short name get one placeholder."""
        low = original.lower()
        short = low.split(".")[0]
        if short in self.mapping:
            placeholder = self.mapping[short]
        else:
            self._counts["host"] += 1
            placeholder = self._register("host", short, f"redacted-host-{self._counts['host']}")
        return self._register("host", low, placeholder)

    def _add_uuid(self, original: str) -> str:
        """A UUID with and without its GPU-/MIG- prefix gets one number; the placeholder keeps the prefix."""
        m = _UUID_PREFIX.match(original)
        prefix = m.group(1) if m else ""
        bare = original[len(prefix):].lower()
        if bare in self.mapping:
            body = self.mapping[bare]
        else:
            self._counts["uuid"] += 1
            n = self._counts["uuid"]
            body = self._register("uuid", bare, f"redacted-uuid-{n:04d}-0000-{n:012d}")
        return self._register("uuid", original.lower(), prefix + body)

    def _register(self, kind: str, low: str, placeholder: str) -> str:
        self.mapping[low] = placeholder
        self.kinds[low] = kind
        self._pattern = None
        return placeholder

    # -- applying --
    def _known(self) -> Optional[re.Pattern]:
        if self._pattern is None:
            originals = sorted(
                (o for o in self.mapping if len(o) >= MIN_SEARCH_LEN), key=len, reverse=True
            )
            if not originals:
                return None
            alt = "|".join(re.escape(o) for o in originals)
            self._pattern = re.compile(rf"(?<![0-9A-Za-z])(?:{alt})(?![0-9A-Za-z])", re.IGNORECASE)
        return self._pattern

    def text(self, text: str) -> str:
        """Redact a text: first UUIDs and IP addresses found in it are registered, then every known original goes."""
        if not text:
            return text
        for m in _UUID_RE.finditer(text):
            self.add("uuid", m.group(0))
        for m in _IPV4_RE.finditer(text):
            self.add("ip", m.group(0))
        for m in _IPV6_CANDIDATE.finditer(text):
            if _is_ipv6(m.group(0)):
                self.add("ip", m.group(0))
        pattern = self._known()
        if pattern is None:
            return text
        return pattern.sub(lambda m: self.mapping.get(m.group(0).lower(), m.group(0)), text)

    def svg(self, svg: str) -> str:
        """Redact a Rich/Textual SVG screenshot.

        Its text is HTML-escaped with spaces as &#160;, which originals never hold, so the text pass
        finds whole originals. An original split over differently styled runs of one line is found by
        joining the line's runs; that line is then redrawn as one run (its styling beyond the first
        run's is lost) holding the redacted text.
        """
        runs: dict[str, list[re.Match]] = {}
        for m in _SVG_TEXT.finditer(svg):
            runs.setdefault(m.group("y"), []).append(m)
        edits: list[tuple[int, int, str]] = []
        for line_runs in runs.values():
            line = _join_runs(line_runs)
            if not self.leaks(line):
                continue
            per_run = _join_runs(line_runs, self.text)
            if not self.leaks(per_run):
                continue  # each original lies within one run: the text pass below is enough
            redacted = self.text(line).rstrip()
            first = line_runs[0]
            width = _char_width(first)
            attrs = re.sub(r'\btextLength="[^"]*"', f'textLength="{width * len(redacted):g}"', first.group("attrs"))
            attrs = re.sub(r'\bx="[^"]*"', 'x="0"', attrs)
            body = html.escape(redacted).replace(" ", "&#160;")
            edits.append((first.start(), first.end(), f"<text{attrs}>{body}</text>"))
            edits.extend((m.start(), m.end(), "") for m in line_runs[1:])
        for start, end, new in sorted(edits, reverse=True):
            svg = svg[:start] + new + svg[end:]
        return self.text(svg)

    def value(self, value: Any) -> Any:
        """Redact every string in a JSON-like value (dict keys too)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        return value

    def snapshot(self, snapshot: Snapshot) -> Snapshot:
        """A redacted copy of the snapshot (the original is untouched)."""
        return Snapshot.from_dict(self.value(snapshot.to_dict()), where="redacted snapshot")

    # -- checking --
    def leaks(self, text: str) -> list[str]:
        """The kinds of originals still present in a text (empty when the redaction is complete)."""
        found = set()
        pattern = self._known()
        if pattern is not None:
            for m in pattern.finditer(text):
                kind = self.kinds.get(m.group(0).lower())
                if kind:
                    found.add(kind)
        return sorted(found)

    def svg_leaks(self, svg: str) -> list[str]:
        """Leaks in an SVG screenshot, also where one original is split over several styled <text> runs."""
        return sorted(set(self.leaks(svg)) | {k for line in svg_lines(svg) for k in self.leaks(line)})


_SVG_TEXT = re.compile(r"<text(?P<attrs>\b[^>]*\by=\"(?P<y>[^\"]+)\"[^>]*)>(?P<body>.*?)</text>", re.DOTALL)


def _run_text(m: re.Match) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", m.group("body"))).replace("\xa0", " ")


def _attr(m: re.Match, name: str) -> Optional[float]:
    found = re.search(rf'\b{name}="([0-9.]+)"', m.group("attrs"))
    return float(found.group(1)) if found else None


def _char_width(m: re.Match) -> float:
    text, length = _run_text(m), _attr(m, "textLength")
    return length / len(text) if text and length else 1.0


def _join_runs(runs: list[re.Match], each: Callable[[str], str] = str) -> str:
    """The text of one line from its runs, each placed at its column (gaps are spaces), after ``each``."""
    width = _char_width(runs[0])
    cells: list[str] = []
    for m in runs:
        col = round((_attr(m, "x") or 0.0) / width)
        text = each(_run_text(m))
        if len(cells) < col:
            cells.extend(" " * (col - len(cells)))
        cells[col : col + len(text)] = list(text)
    return "".join(cells)


def svg_lines(svg: str) -> list[str]:
    """The text of each line of a Rich/Textual SVG screenshot."""
    runs: dict[str, list[re.Match]] = {}
    for m in _SVG_TEXT.finditer(svg):
        runs.setdefault(m.group("y"), []).append(m)
    return [_join_runs(r) for r in runs.values()]
