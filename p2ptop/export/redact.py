"""Redaction for tickets that leave the company: hostnames, serial numbers, UUIDs, IP and MAC addresses and
user names in home-directory paths (/home/NAME/...).

One :class:`Redactor` serves a whole bundle, so the same original becomes the same placeholder in
every file (report, snapshot, screenshot text and SVG). It knows the identifying values of the
snapshot (hostname, GPU UUIDs and serials, fabric cluster UUIDs, host facts whose key names a
host, serial or UUID) and also finds UUIDs and IP addresses in free text (notes, errors, logs).

Placeholders keep the original's length where they can, so the screenshot's columns stay put:
``host-1``, ``serial-1``, ``ip-1`` padded with dots (``dgx-a100-demo`` -> ``host-1.......``), and
``GPU-redacted-uuid-0001-0000-000000000001`` (a UUID keeps its ``GPU-``/``MIG-`` prefix). A host's
FQDN and short name share one placeholder. The nil UUID (all zeros) identifies nothing and is kept.
A hostname that is a common word is also replaced where that word stands alone (safe, if noisy).
"""

from __future__ import annotations

import html
import ipaddress
import json
import string
import re
from typing import Any, Callable, Optional

from rich.cells import cell_len

from ..model import Snapshot

KINDS = ("host", "serial", "uuid", "ip", "mac", "user")
PAD = "."
NIL_UUID = "00000000-0000-0000-0000-000000000000"
_HEX_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_UUID_RE = re.compile(rf"(?<![0-9A-Za-z-])(?:(?:GPU|MIG)-)?{_HEX_UUID}(?![0-9A-Za-z])")
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_IPV4_RE = re.compile(rf"(?<![\d.]){_OCTET}(?:\.{_OCTET}){{3}}(?![\d.])")
_IPV6_CANDIDATE = re.compile(r"(?<![0-9A-Za-z:])[0-9A-Fa-f:]*::?[0-9A-Fa-f:]+(?:%\w+)?(?![0-9A-Za-z:])")
_UUID_PREFIX = re.compile(r"^(GPU-|MIG-)", re.IGNORECASE)
#: MAC addresses: six hex pairs joined by colons or dashes (PCI bus ids and times have fewer groups).
_MAC_RE = re.compile(r"(?<![0-9A-Za-z:-])(?:[0-9A-Fa-f]{2}([:-]))(?:[0-9A-Fa-f]{2}\1){4}[0-9A-Fa-f]{2}(?![0-9A-Za-z:-])")
#: a user's name in a home directory path: /home/NAME, /Users/NAME, /export/home/NAME.
_HOME_RE = re.compile(r"(?<![\w.])((?:/export)?/home/|/Users/)([^/\s\"'<>:;,|\\]+)")
#: user names that name no one
_NOT_USERS = {"user", "username", "runner", "ubuntu"}
#: host-fact key fragments that say what a value identifies.
_KEY_KINDS = (("serial", "serial"), ("uuid", "uuid"), ("hostname", "host"), ("fqdn", "host"), ("nodename", "host"))
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_WORD = frozenset(string.ascii_letters + string.digits)
#: keys of host facts whose text says how a fact was read or why it is missing.
_NOT_IDENTIFYING = {"how", "na"}
#: shorter hostnames than this are redacted where they stand in a field, but not searched for in text.
MIN_SEARCH_LEN = 3


def _placeholder(kind: str, n: int, original: str) -> str:
    """``host-1``, ``serial-2``, ``ip-3``, padded with dots to the original's length where it is longer."""
    return f"{kind}-{n}".ljust(len(original), PAD)


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

    def __init__(self, pad: bool = True) -> None:
        """``pad``: placeholders keep the original's length (screenshots); off for fleet tables and JSON."""
        self.pad = pad
        self.mapping: dict[str, str] = {}  # lower-cased original -> placeholder
        self.kinds: dict[str, str] = {}  # lower-cased original -> kind
        self._counts = {k: 0 for k in KINDS}
        self._placeholders: set[str] = set()  # ASCII-folded
        self._originals: Optional[list[str]] = None  # searchable originals, longest first

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
        if not original or original.translate(_ASCII_LOWER) == NIL_UUID or _UUID_PREFIX.sub("", original).translate(_ASCII_LOWER) == NIL_UUID:
            return None
        low = original.translate(_ASCII_LOWER)
        if low in self.mapping:
            return self.mapping[low]
        if low in self._placeholders:
            return original  # already a placeholder
        if kind == "uuid":
            return self._add_uuid(original)
        if kind == "host":
            return self._add_host(original)
        self._counts[kind] += 1
        return self._register(kind, low, _placeholder(kind, self._counts[kind], original if self.pad else ""))

    def _add_host(self, original: str) -> str:
        """A host's FQDN and its short name get one placeholder."""
        low = original.translate(_ASCII_LOWER)
        short = low.split(".")[0]
        if short in self.mapping:
            placeholder = self.mapping[short]
        else:
            self._counts["host"] += 1
            placeholder = self._register("host", short, _placeholder("host", self._counts["host"], short if self.pad else ""))
        return self._register("host", low, placeholder)

    def _add_uuid(self, original: str) -> str:
        """A UUID with and without its GPU-/MIG- prefix gets one number; the placeholder keeps the prefix."""
        m = _UUID_PREFIX.match(original)
        prefix = m.group(1) if m else ""
        bare = original[len(prefix):].translate(_ASCII_LOWER)
        if bare in self.mapping:
            body = self.mapping[bare]
        else:
            self._counts["uuid"] += 1
            n = self._counts["uuid"]
            body = self._register("uuid", bare, f"redacted-uuid-{n:04d}-0000-{n:012d}")
        return self._register("uuid", original.translate(_ASCII_LOWER), prefix + body)

    def _register(self, kind: str, low: str, placeholder: str) -> str:
        self.mapping[low] = placeholder
        self._placeholders.add(placeholder.translate(_ASCII_LOWER))
        self.kinds[low] = kind
        self._originals = None
        return placeholder

    # -- applying --
    def _searchable(self) -> list[str]:
        if self._originals is None:
            self._originals = sorted((o for o in self.mapping if len(o) >= MIN_SEARCH_LEN), key=len, reverse=True)
        return self._originals

    def _hits(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, original) of every known original in ``text`` as a whole word, longest first where they overlap.

        Plain substring search (fast on a megabyte of snapshot with hundreds of originals), ASCII
        case folded so that positions in the folded text are positions in ``text``."""
        low = text.translate(_ASCII_LOWER)
        hits = []
        for o in self._searchable():
            i = low.find(o)
            while i != -1:
                j = i + len(o)
                if (i == 0 or low[i - 1] not in _WORD) and (j == len(low) or low[j] not in _WORD):
                    hits.append((i, j, o))
                i = low.find(o, i + 1)
        hits.sort(key=lambda h: (h[0], h[0] - h[1]))
        out, end = [], -1
        for h in hits:
            if h[0] >= end:
                out.append(h)
                end = h[1]
        return out

    def text(self, text: str) -> str:
        """Redact a text: first UUIDs, IP and MAC addresses and home-directory user names found in it are
        registered, then every known original goes."""
        if not text:
            return text
        self._discover(text)
        text = _HOME_RE.sub(lambda m: m.group(1) + (self.mapping.get(m.group(2).translate(_ASCII_LOWER)) or m.group(2)), text)
        parts, at = [], 0
        for start, end, original in self._hits(text):
            parts += [text[at:start], self.mapping[original]]
            at = end
        return "".join(parts) + text[at:] if parts else text

    def _discover(self, text: str) -> None:
        for m in _UUID_RE.finditer(text):
            self.add("uuid", m.group(0))
        for m in _MAC_RE.finditer(text):
            self.add("mac", m.group(0))
        for m in _HOME_RE.finditer(text):
            if m.group(2).lower() not in _NOT_USERS and not m.group(2).startswith(("user-", "$", "~")):
                self.add("user", m.group(2))
        for m in _IPV4_RE.finditer(text):
            self.add("ip", m.group(0))
        for m in _IPV6_CANDIDATE.finditer(text):
            if _is_ipv6(m.group(0)):
                self.add("ip", m.group(0))

    def svg(self, svg: str) -> str:
        """Redact a Rich/Textual SVG screenshot, keeping each line's runs where they belong.

        The SVG holds one ``<text>`` per styled run with its column (``x``) and width
        (``textLength``). Where an original lies within a run, the run gets the placeholder and the
        runs after it on the line move by the difference in length. Where an original is split over
        runs (a styled part of a serial, say), the line is redrawn as one run holding the redacted
        line (its styling beyond the first run's is lost). Everything else (title, attributes) then
        goes through :meth:`text`.
        """
        lines: dict[str, list[re.Match]] = {}
        for m in _SVG_TEXT.finditer(svg):
            lines.setdefault(m.group("y"), []).append(m)
        edits: list[tuple[int, int, str]] = []
        for runs in lines.values():
            line, spans = _join_runs(runs)
            self._discover(line)
            found = [(a, b) for a, b, _ in self._hits(line)]
            if not found:
                continue
            width = _char_width(runs[0])
            if all(any(s <= a and b <= e for s, e in spans) for a, b in found):
                edits.extend(_shifted(runs, self.text, width))
            else:
                edits.extend(_merged(runs, self.text(line).rstrip(), width))
        for start, end, new in sorted(edits, reverse=True):
            svg = svg[:start] + new + svg[end:]
        return self.text(svg)

    def snapshot(self, snapshot: Snapshot) -> Snapshot:
        """A redacted copy of the snapshot (the original is untouched): its JSON text redacted as one text.

        Placeholders hold only letters, digits, dots and dashes, so the JSON stays valid; non-ASCII
        text is kept as itself (not \\u-escaped) so that originals are found in it."""
        text = json.dumps(snapshot.to_dict(), ensure_ascii=False)
        return Snapshot.from_json(self.text(text), where="redacted snapshot")

    # -- checking --
    def leaks(self, text: str) -> list[str]:
        """The kinds of originals still present in a text (empty when the redaction is complete)."""
        kinds = {self.kinds[o] for _, _, o in self._hits(text)}
        for m in _HOME_RE.finditer(text):
            if self.kinds.get(m.group(2).translate(_ASCII_LOWER)) == "user":
                kinds.add("user")
        return sorted(kinds)

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


def _with(attrs: str, name: str, value: float) -> str:
    return re.sub(rf'\b{name}="[^"]*"', f'{name}="{value:g}"', attrs)


def _run(attrs: str, text: str) -> str:
    return f"<text{attrs}>{html.escape(text).replace(' ', '&#160;')}</text>"


def _shifted(runs: list[re.Match], redact: Callable[[str], str], width: float) -> list[tuple[int, int, str]]:
    """Edits giving each run its redacted text and moving the runs after it by the change in length."""
    edits, shift = [], 0
    for m in runs:
        old = _run_text(m)
        new = redact(old)
        if new == old and shift == 0:
            continue
        attrs = _with(m.group("attrs"), "x", (_attr(m, "x") or 0.0) + shift * width)
        if new != old:
            attrs = _with(attrs, "textLength", width * len(new))
            edits.append((m.start(), m.end(), _run(attrs, new)))
        else:
            edits.append((m.start(), m.end(), f"<text{attrs}>{m.group('body')}</text>"))
        shift += cell_len(new) - cell_len(old)
    return edits


def _merged(runs: list[re.Match], text: str, width: float) -> list[tuple[int, int, str]]:
    """Edits replacing a line's runs by one run at column 0 holding ``text``."""
    attrs = _with(_with(runs[0].group("attrs"), "x", 0), "textLength", width * len(text))
    return [(runs[0].start(), runs[0].end(), _run(attrs, text))] + [(m.start(), m.end(), "") for m in runs[1:]]


def _join_runs(runs: list[re.Match]) -> tuple[str, list[tuple[int, int]]]:
    """The text of one line from its runs, each at its column (gaps are spaces), and each run's span in it."""
    width = _char_width(runs[0])
    line, spans, col = "", [], 0
    for m in runs:
        start = round((_attr(m, "x") or 0.0) / width)
        if start > col:
            line, col = line + " " * (start - col), start
        text = _run_text(m)
        spans.append((len(line), len(line) + len(text)))
        line, col = line + text, col + cell_len(text)
    return line, spans


def svg_lines(svg: str) -> list[str]:
    """The text of each line of a Rich/Textual SVG screenshot."""
    runs: dict[str, list[re.Match]] = {}
    for m in _SVG_TEXT.finditer(svg):
        runs.setdefault(m.group("y"), []).append(m)
    return [_join_runs(r)[0] for r in runs.values()]
