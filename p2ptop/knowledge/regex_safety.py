"""Regexes from KB files: compiled once, with the same flags everywhere, and checked for
catastrophic backtracking two ways: a static look for nested unbounded repeats (cheap, at every
load) and a timed run against adversarial lines in a worker process (``lint``)."""

from __future__ import annotations

import functools
import multiprocessing as mp
import re
from typing import Iterable, Optional

try:  # Python 3.11+
    import re._parser as _sre_parse  # type: ignore[import-not-found]
    from re._constants import MAXREPEAT  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse as _sre_parse  # type: ignore[no-redef]
    from sre_constants import MAXREPEAT  # type: ignore[no-redef]

FLAGS = re.IGNORECASE | re.MULTILINE | re.ASCII
#: Lines are cut to this many characters before searching, so no regex sees more.
MAX_LINE = 2000
#: A line an issue template writes around what the reporter says, the same in every report of a repository (GitHub Docs,
#: "Syntax for issue forms": each field rendered as a "### Label" heading and its value, "_No response_" for one left empty,
#: a checkboxes field as task-list items "- [X] ..."; a markdown template's "## Environment" or "**Describe the bug**"
#: line): a heading of level two or more (a "# " line is nccl-tests' own) of 80 characters at most (a longer line is a
#: paste whose breaks were lost after its heading), a line that is all bold in six words at most (a longer one is the
#: reporter's sentence), an empty field, a task-list item (250 characters at most); and, as a copy of the rendered page
#: leaves them (no markup), a line that is only a label of the templates people fill in (GitHub's default bug_report.md:
#: Describe the bug, To Reproduce, Expected behavior,
#: Screenshots, Additional context; PyTorch's bug-report form: 🐛 Describe the bug, Versions; its old ISSUE_TEMPLATE.md:
#: Issue description, Code example, System Info; vLLM's: Your current environment, Before submitting a new issue...;
#: Hugging Face's: System Info, Who can help?, Information, Tasks, Reproduction; and the common Steps to reproduce,
#: Actual behavior, Environment, Error messages, No response). The retrieval query leaves such lines out
#: (knowledge.retrieval), and a tool's output that ends where the template goes on ends there (evidence.nccl_tests: a
#: table's header with no row after it).
ISSUE_TEMPLATE_LINE = re.compile(
    r"^[ \t]*(?:#{2,6}[ \t][^\n]{0,80}|\*\*(?:[^*\s]+[ \t]*){1,6}\*\*[ \t]*:?|_No response_|[-*][ \t]+\[[ xX]\][ \t][^\n]{0,250}|"
    r"(?:#[ \t]*)?(?:\U0001f41b[ \t]*)?(?:describe the bug|bug description|issue description|description|bug|to reproduce|"
    r"steps to reproduce(?: the behaviou?r)?|reproduction(?: steps)?|expected behaviou?r|actual behaviou?r|"
    r"current behaviou?r|environment(?: info)?|your current environment|system info|additional context|screenshots|"
    r"error messages?|code example|versions?|who can help\??|information|tasks|before submitting a new issue\.*|"
    r"no response)[ \t]*:?)[ \t]*$", re.M | re.I)


#: Characters a web page or chat puts inside words and a reader never sees (soft hyphen, zero-width space, non-joiner and
#: joiner, word joiner, byte-order mark): both readers of a paste drop them before any pattern runs (the matcher's lines,
#: evidence.paste.tidy), so "pe\u200ber access" still reads "peer access"
INVISIBLE_CHARS = "\u00ad\u200b\u200c\u200d\u2060\ufeff"
#: What a word processor, a chat or a web page makes of the quote marks a program printed (typographic single and double
#: quotes, primes): both readers of a paste read them back as ASCII quotes, so "Cuda failure ‘invalid argument’" is
#: CUDA's "Cuda failure 'invalid argument'"
TYPOGRAPHIC_QUOTES = {ord(c): "'" for c in "\u2018\u2019\u201a\u201b\u2032"} | {ord(c): '"' for c in "\u201c\u201d\u201e\u201f\u2033"}
#: What an East Asian input method types in place of ASCII (Unicode's fullwidth forms, U+FF01-FF5E, whose compatibility
#: decomposition is the ASCII character 0xFEE0 below: "RuntimeError\uff1aCUDA error\uff1a out of memory", "\uff08CUDA\uff09",
#: "\uff23\uff35\uff24\uff21"): both readers of a paste read them back as ASCII (read_fullwidth)
FULLWIDTH_FORMS = {c: chr(c - 0xFEE0) for c in range(0xFF01, 0xFF5F)}
_FULLWIDTH = re.compile("[\uff01-\uff5e]")
#: a fullwidth colon, comma, semicolon, "!" and "?" hold their own space (the input method types none after them): a space
#: where a word, a number or an opening bracket or quote follows, as ASCII text has it (the readers cut clauses at ", " as at "\uff0c": "2 \u5361\u6b63\u5e38\uff0c8 \u5361" is "2 \u5361\u6b63\u5e38, 8 \u5361"), but not between
#: hexadecimal digits nor before a number written right after a word (a bus id's or a clock's "01\uff1a00", "c1\uff1a0a", CUDA's
#: device "cuda\uff1a0", a source line "nvls.cpp\uff1a258" stay whole)
_FULLWIDTH_SPACED = re.compile("([\uff1a\uff0c\uff1b\uff01\uff1f])(?=[^\\W_]|[(\\[{\"'`\uff08\u300c\u300e\u3010])"
                               "(?!(?<=[0-9A-Za-z].)[0-9])(?:(?<![0-9A-Fa-f].)|(?![0-9A-Fa-f]))")


def read_fullwidth(text: str) -> str:
    """The text with Unicode's fullwidth forms as the ASCII characters they stand for, a space after a fullwidth colon,
    comma, semicolon, "!" or "?" that a word, a number or an opening bracket or quote follows (as ASCII text has it:
    "error\uff1aCUDA" reads "error: CUDA", "USE_NCCL \uff1a= 1" reads "USE_NCCL := 1"), not between hexadecimal digits nor before a number right after a
    word ("nvls.cpp\uff1a258"); the same text where it holds none."""
    if text.isascii() or not _FULLWIDTH.search(text):
        return text
    return _FULLWIDTH_SPACED.sub(r"\1 ", text).translate(FULLWIDTH_FORMS)


#: HTML's escapes of a paste copied from a page's source, a mail archive or an API ("&lt;inactive&gt;", "&#39;out of
#: memory&#39;", "GPU(row) -&gt; GPU(column)"): both readers read them back (unescape_html), the evidence readers in
#: paste.tidy and the matcher in its lines, so an entry's pattern ("Cuda failure 401 'the operation ...'") reads them too
_HTML_HINTS = ("&lt;", "&gt;", "&amp;", "&quot;", "&#", "&apos;")
#: the escapes of a line break, which would add a line that the other reader does not have (one numbering for both)
_HTML_BREAK = re.compile(r"&(?:#0*1[03]|#[xX]0*[aAdD]|NewLine);?")


def unescape_html(text: str) -> str:
    """``text`` with HTML's character references read back where it holds any of the common ones (_HTML_HINTS), each
    escaped line break as a space (the lines stay the lines of the paste); else ``text`` itself, unread."""
    if "&" not in text or not any(h in text for h in _HTML_HINTS):
        return text
    import html

    return html.unescape(_HTML_BREAK.sub(" ", text))


#: A line that starts a record of its own, never the rest of a wrapped one: a log's timestamp, date or bracket, a label
#: ("3: "), host:pid:tid, syslog's "Mon  5 ", a traceback's lines, an exception or a level word, a list or prompt mark.
#: A "(" or "<" only as the records that start so (a Ray worker's "(pid=123)" or "(RayWorker pid=123)", a shell prompt's
#: "(venv) ", a tag or MPI's "<stdout>"): a terminal's wrap leaves either at the start of a continued line ("...is too old"
#: / "(found version 11030)", "...driver 7.5" / "< image 8.0").
#: Both readers' wrap joining use it (the matcher's wrapped_line, evidence.paste.unwrap, which adds a table's rows).
RECORD_START = re.compile(r"^(?:[\[{#$>*|-]|\((?:[\w-]+\s+)?pid=|\([\w.-]+\)\s|<[\w/!?]|\d{4}-\d\d-\d\d|\d{1,2}:\d\d:\d\d|\d{1,2}/\d{1,2}/\d{2,4}|\d+: |[\w.-]+:\d+:\d+ |"
                          r"[A-Z][a-z]{2} [ \d]?\d |Traceback|File \"|During handling|The above exception|"
                          r"[\w.]*(?:Error|Exception|Warning)\b|(?:INFO|WARN(?:ING)?|ERROR|DEBUG)\b)")
#: A regex that needs longer than this on one adversarial line is rejected.
TIME_LIMIT_S = 0.5


@functools.lru_cache(maxsize=4096)
def compile_pattern(pattern: str) -> re.Pattern:
    """Compile as the matcher uses it, once per pattern (cached); raises re.error."""
    return re.compile(pattern, FLAGS)


def nested_repeat(pattern: str) -> Optional[str]:
    """A description of an unbounded repeat inside another unbounded repeat (e.g. ``(a+)+``), or None."""
    try:
        tree = _sre_parse.parse(pattern, FLAGS)
    except re.error:
        return None

    def walk(items, inside: bool) -> Optional[str]:
        for op, av in items:
            name = str(op)
            if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                lo, hi, sub = av
                unbounded = hi == MAXREPEAT or hi > 100
                if unbounded and inside and name != "POSSESSIVE_REPEAT":
                    return "an unbounded repeat inside another unbounded repeat (catastrophic backtracking)"
                found = walk(sub, inside or (unbounded and name != "POSSESSIVE_REPEAT"))
                if found:
                    return found
            elif name == "SUBPATTERN":
                found = walk(av[-1], inside)
                if found:
                    return found
            elif name == "BRANCH":
                for b in av[1]:
                    found = walk(b, inside)
                    if found:
                        return found
            elif name in ("ASSERT", "ASSERT_NOT"):
                found = walk(av[1], inside)
                if found:
                    return found
            elif name == "ATOMIC_GROUP":
                found = walk(av, False)
                if found:
                    return found
        return None

    return walk(tree, False)


@functools.lru_cache(maxsize=4096)
def required_literal(pattern: str) -> str:
    """The longest run of plain characters every match of ``pattern`` contains, lower-cased ('' when
    there is none worth using). A log without it cannot match, which a substring search tells fast."""
    try:
        tree = _sre_parse.parse(pattern, FLAGS)
    except re.error:
        return ""
    best, run = "", ""
    for op, av in tree:
        if str(op) == "LITERAL":
            run += chr(av).lower()
            continue
        best, run = max(best, run, key=len), ""
    best = max(best, run, key=len)
    return best if len(best) >= 3 else ""


def adversarial_lines(pattern: str) -> list[str]:
    """Lines built to make a backtracking regex work hard: long runs of the characters the pattern
    mentions (and common log characters), each ended by a character that breaks the match."""
    chars = {c for c in re.sub(r"\\[a-zA-Z]", "", pattern) if c.isprintable() and c not in "()[]{}|*+?^$\\"}
    chars.update(" a0:._-/=\tA")
    out = []
    for c in sorted(chars):
        out.append(c * MAX_LINE)
        out.append((c * (MAX_LINE - 1)) + "\x00")
    words = re.findall(r"[A-Za-z]{3,}", pattern)
    for w in words[:6]:
        out.append(((w + " ") * (MAX_LINE // (len(w) + 1)))[: MAX_LINE - 1] + "\x00")
    out.append(("a " * MAX_LINE)[:MAX_LINE])
    out.append(("0." * MAX_LINE)[:MAX_LINE])
    return out


def _worker(conn, patterns: list[str]) -> None:  # pragma: no cover - runs in the child
    for p in patterns:
        rx = compile_pattern(p)
        for line in adversarial_lines(p):
            rx.search(line)
        conn.send(p)
    conn.close()


def slow_patterns(patterns: Iterable[str], limit_s: float = TIME_LIMIT_S) -> set[str]:
    """The patterns that take longer than ``limit_s`` over their adversarial lines.

    One worker runs them in turn and reports each one done; when it falls silent for longer than the
    limit, the pattern it is on is slow, the worker is killed and a fresh one goes on with the rest."""
    todo = [p for p in dict.fromkeys(patterns)]
    slow: set[str] = set()
    ctx = mp.get_context("spawn")  # safe from threaded callers (the dashboard loads the KB in a thread)
    while todo:
        parent, child = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_worker, args=(child, todo), daemon=True)
        proc.start()
        child.close()
        done = 0
        while done < len(todo):
            # allow for the worker to start before timing its first pattern
            if not parent.poll(limit_s + (2.0 if done == 0 else 0.0)):
                break
            try:
                parent.recv()
            except EOFError:
                break
            done += 1
        if done < len(todo):
            slow.add(todo[done])
            proc.kill()
        proc.join()
        parent.close()
        todo = todo[done + 1:]
    return slow


def _literal_run(items, min_len: int = 3) -> str:
    best, run = "", ""
    for op, av in items:
        if str(op) == "LITERAL":
            run += chr(av).lower()
            continue
        best, run = max(best, run, key=len), ""
    best = max(best, run, key=len)
    return best if len(best) >= min_len else ""


def _branches(item) -> list:
    """The branches of a group holding one alternation (``(?:a|b)``, or a bare ``a|b``); [] for anything else."""
    op, av = item
    if str(op) == "SUBPATTERN":
        inner = list(av[-1])
        return _branches(inner[0]) if len(inner) == 1 else []
    return [list(b) for b in av[1]] if str(op) == "BRANCH" else []


def _branch_set(item, min_len: int) -> tuple[str, ...]:
    """For a group holding one alternation, one literal per branch (all needed); () otherwise."""
    runs = [_literal_run(branch, min_len) for branch in _branches(item)]
    return tuple(dict.fromkeys(runs)) if runs and all(runs) else ()


def _branch_heads(item) -> tuple[str, ...]:
    """For a group holding one alternation, the plain characters each branch starts with (one or more
    each); () when a branch starts with anything else or is empty."""
    heads = []
    for branch in _branches(item):
        head = ""
        for op, av in branch:
            if str(op) != "LITERAL":
                break
            head += chr(av).lower()
        heads.append(head)
    return tuple(dict.fromkeys(heads)) if heads and all(heads) else ()


#: a character class of at most this many characters after a literal run extends the run, one literal per character
CLASS_CHARS = 10


def _class_chars(item) -> tuple[str, ...]:
    """For a character class of plain characters and ranges only (``[0-4]``, ``[67]``, ``[-_]``; no negation, no
    category such as ``\\d``, which also matches digits of other scripts) of at most CLASS_CHARS characters, none of
    them upper case (a case-sensitive class of capitals is not the lower-cased literals), its characters; () for
    anything else."""
    op, av = item
    if str(op) != "IN":
        return ()
    chars: list[str] = []
    for kind, value in av:
        if str(kind) == "LITERAL":
            chars.append(chr(value))
        elif str(kind) == "RANGE" and value[1] - value[0] < CLASS_CHARS:
            chars.extend(chr(c) for c in range(value[0], value[1] + 1))
        else:
            return ()
        if len(chars) > CLASS_CHARS:
            return ()
    if any(c != c.lower() for c in chars):
        return ()
    return tuple(dict.fromkeys(chars))


#: at most this many literals in one set built by joining a run with the classes after it (``[0-4][0-9]``: 50)
JOINED_MAX = 32


def _sets_of(tree, min_run: int = 3) -> list[tuple[str, ...]]:
    sets: list[tuple[str, ...]] = []
    run = ""
    joined: tuple[str, ...] = ()  # the run before a small class joined with each of its characters, then with what follows
    least = 0  # what the joined literals must reach to be a set: longer than the run they grew from, and min_run

    def close() -> None:
        if joined and min(map(len, joined)) >= least:
            sets.append(joined)

    for item in tree:
        if str(item[0]) == "LITERAL":
            ch = chr(item[1]).lower()
            run += ch
            joined = tuple(j + ch for j in joined)
            continue
        chars = _class_chars(item)
        if joined and chars and len(joined) * len(chars) <= JOINED_MAX:
            joined = tuple(j + c for j in joined for c in chars)  # 2\.2[4-6]\. -> 2.24., 2.25., 2.26.
            if len(run) >= min_run:
                sets.append((run,))
            run = ""
            continue
        close()
        joined = ()
        if len(run) >= min_run:
            sets.append((run,))
        if run:  # a run and the alternation right after it: one literal per branch, e.g. 2\.(?:1\d|2[0-2]) -> 2.1, 2.2
            heads = tuple(run + head for head in _branch_heads(item))
            if heads and min(map(len, heads)) >= max(min_run, len(run) + 1):
                sets.append(heads)
            elif chars:  # or the small class right after it, one literal per character (v?2\.[0-4]\. -> 2.0. ... 2.4.),
                # joined with the literals and small classes that follow it
                joined, least = tuple(run + c for c in chars), max(min_run, len(run) + 1)
        run = ""
        b = _branch_set(item, 2)
        if b:
            sets.append(b)
        elif str(item[0]) == "SUBPATTERN" and not _branches(item):  # a group matched once, e.g. (?m:^less than ...)
            sets.extend(_sets_of(list(item[1][-1]), min_run))
    close()
    if len(run) >= min_run:
        sets.append((run,))
    if not sets and min_run > 2:
        return _sets_of(tree, 2)  # a short literal still narrows the lines, where the text says how often it occurs
    return list(dict.fromkeys(sets))


@functools.lru_cache(maxsize=4096)
def literal_sets(pattern: str) -> tuple[tuple[tuple[str, ...], ...], ...]:
    """Per top-level branch of ``pattern`` (one branch when it has no top-level ``|``), the sets of
    lower-cased literals a match of that branch contains one literal of each: runs of plain characters
    (3+) and groups that are one alternation (a literal of 2+ per branch). A match of the pattern holds,
    for some branch, one literal of every set of that branch; a caller picks per branch the set rarest
    in its text, and the union of those picks the candidate lines. () when a branch has no set."""
    try:
        return _tree_literal_sets(_sre_parse.parse(pattern, FLAGS))
    except re.error:
        return ()


def _tree_literal_sets(parsed) -> tuple[tuple[tuple[str, ...], ...], ...]:
    """literal_sets of a parsed pattern."""
    tree = list(parsed)
    while len(tree) == 1 and str(tree[0][0]) == "SUBPATTERN":
        tree = list(tree[0][1][-1])
    branches = [list(b) for b in tree[0][1][1]] if len(tree) == 1 and str(tree[0][0]) == "BRANCH" else [tree]
    out = []
    for b in branches:
        sets = _sets_of(b)
        if not sets:
            return ()
        out.append(tuple(sets))
    return tuple(out)


@functools.lru_cache(maxsize=4096)
def required_literals(pattern: str) -> tuple[str, ...]:
    """Literals one of which every match holds: the longest required literal, else one per branch, or ()."""
    lit = required_literal(pattern)
    if lit:
        return (lit,)
    branches = literal_sets(pattern)
    return tuple(dict.fromkeys(b[0][0] for b in branches)) if branches else ()


#: Texts shorter than this are searched directly: asking for the literals first costs more than it saves.
GATE_MIN = 4096
#: The literals are found by parsing the pattern (about as long as compiling it), once per process: the first text a pattern
#: meets is searched directly unless it is at least this long, and the parse waits for a second text (a command reads one
#: paste; a 10 KB one read with the gates cost 0.3 s instead of 0.25 s, the parses more than the searches they saved).
GATE_PARSE_MIN = 32_000


def _upper_literal(node) -> bool:
    """Does a parsed pattern (a tree of (op, argument) pairs) hold an upper-case literal character anywhere?"""
    if isinstance(node, tuple) and len(node) == 2 and str(node[0]) == "LITERAL" and isinstance(node[1], int):
        return chr(node[1]) != chr(node[1]).lower()
    if isinstance(node, (list, tuple, _sre_parse.SubPattern)):
        return any(_upper_literal(x) for x in node)
    return False


#: escapes that may spell a letter (\x41, \u0041, \N{...}, octal): where a pattern has one, its parse is asked
_LETTER_ESCAPE = re.compile(r"\\(?:[xuUN0-7])")
_OTHER_ESCAPE = re.compile(r"\\[A-Za-z]")


@functools.lru_cache(maxsize=4096)
def _gate_sets(pattern: str, flags: int) -> tuple[tuple[tuple[str, ...], ...], ...]:
    """literal_sets(pattern) where they decide a search exactly (a case-sensitive pattern whose literals are lower
    case, as literal_sets gives them), else (). One parse."""
    if flags & re.IGNORECASE or "(?i" in pattern:
        return ()
    try:
        parsed = _sre_parse.parse(pattern, flags)
    except re.error:
        return ()
    bare = _OTHER_ESCAPE.sub("", pattern)  # \S, \W, \B... are classes, not letters
    if (bare != bare.lower() or _LETTER_ESCAPE.search(pattern)) and _upper_literal(parsed):
        return ()
    return _tree_literal_sets(parsed)


class LiteralGate:
    """A compiled regex whose searches of a long text first ask, in C, whether the text holds the literals every
    match needs (:func:`literal_sets`: for some top-level branch, one literal of each of its sets): a text without
    them cannot match and is not searched. The evidence readers run each of their sentence patterns once over a
    100 KB sample of the paste, and most patterns are absent from most pastes: a substring search per literal is
    some microseconds where the regex engine takes milliseconds. Exact, never a guess: only patterns whose literals
    are case-sensitive and lower case are gated (the others search directly). ``match`` and ``fullmatch`` (at a
    position) are not gated. The last text asked about is remembered (one tuple, replaced whole)."""

    __slots__ = ("rx", "_sets", "_memo")

    def __init__(self, rx: re.Pattern):
        self.rx = rx
        self._sets: Optional[tuple] = None  # found on the first long text or the second text (a parse: nothing at import)
        self._memo: tuple[Optional[str], bool] = (None, True)

    def possible(self, text: str) -> bool:
        """False only where ``text`` lacks what every match needs."""
        if len(text) < GATE_MIN:
            return True
        sets = self._sets
        if sets is None:
            if len(text) < GATE_PARSE_MIN and (self._memo[0] is None or self._memo[0] is text):
                self._memo = (text, True)  # the first text, short: searched as it is (see GATE_PARSE_MIN)
                return True
            sets = self._sets = _gate_sets(self.rx.pattern, self.rx.flags) if isinstance(self.rx.pattern, str) else ()
        if not sets:
            return True
        memo = self._memo
        if memo[0] is text:
            return memo[1]
        ok = any(all(any(lit in text for lit in st) for st in group) for group in sets)
        self._memo = (text, ok)
        return ok

    def search(self, string: str, *args):
        return self.rx.search(string, *args) if self.possible(string) else None

    def finditer(self, string: str, *args):
        return self.rx.finditer(string, *args) if self.possible(string) else iter(())

    def findall(self, string: str, *args):
        return self.rx.findall(string, *args) if self.possible(string) else []

    def __getattr__(self, name: str):  # match, fullmatch, sub, split, pattern, flags, groups, groupindex
        return getattr(self.rx, name)

    def __repr__(self) -> str:
        return f"LiteralGate({self.rx!r})"
