"""A paste and the facts read from it: the lines (with their numbers) and the collector every
format parser writes into. Pure: imports nothing of ours but findings (and the invisible characters and typographic
quotes and the record starts of knowledge.regex_safety, which the matcher reads the same way)."""

from __future__ import annotations

import ast
import csv
import json
import re
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any, Callable, Iterable, Optional

from ..findings import Finding
from ..knowledge.codes import known_across
from ..knowledge.regex_safety import INVISIBLE_CHARS, RECORD_START, TYPOGRAPHIC_QUOTES, read_fullwidth, unescape_html
from ..nccl.log import NCCL_RESULTS

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
#: what a paste carries around the tool's own lines, as people post them: markdown/e-mail quote marks ("> ",
#: "> > "), code fences ("```text", "~~~"), a shell prompt before the command ("$ nvidia-smi topo -m",
#: "user@host:~$ ", "(venv) $ "). Removed line by line (the line numbers stay), so every reader sees the
#: output as the tool printed it: a topo row "> GPU0  X  PHB" is the row "GPU0  X  PHB".
_QUOTE = re.compile(r"\n[ \t]*>(?:[ \t]?>)*(?: |\t|(?=\n)|$)")  # from a newline: a literal first, searched fast in C
#: ... and Jira's: a line "{noformat}" or "{code}" ("{code:python}", "{code:title=log.txt|borderStyle=solid}") around the text
_FENCE = re.compile(r"^[ \t]*(?:(?:```|~~~)[\w+-]*|\{(?:noformat|code)(?::[^}\n]*)?\})[ \t]*$", re.M)
#: ... and GitHub's collapsed section around it (GitHub Docs, "Organizing information with collapsed sections"): the tags
#: <details> and <summary> (the summary's words stay: the reporter's title of what follows, as in vLLM's template "The
#: output of <code>python collect_env.py</code>", its inline tags gone too), and a line that is only an HTML block's tag
#: (<p>, <pre>, <code>, <div>, as such a section's markdown often carries them)
_SECTION_TAG = re.compile(r"</?(?:details|summary)\b[^<>\n]{0,80}>|</?(?:code|kbd|b|i|em|strong)>|"
                          r"^[ \t]*(?:</?(?:p|pre|code|div)\b[^<>\n]{0,80}>[ \t]*)+$", re.M | re.I)
#: ... and a Discourse forum's (NVIDIA's developer forums run Discourse) in its raw BBCode, a line of its own each: a
#: collapsed section "[details="Full log"]" ... "[/details]" (the title's words stay, as a summary's do), a quote of
#: another post "[quote="user, post:3, topic:281234"]" ... "[/quote]" (who and where: no words of the report), "[code]"
_BBCODE_TAG = re.compile(r'^[ \t]*\[(?:/(?:details|quote|code)|code|quote(?:=[^\]\n]{0,120})?|'
                         r'details=["\']?([^\]\n]{0,120}?)["\']?)\][ \t]*$', re.M | re.I)
#: the title of such a section, a GitHub <summary> or a Discourse '[details="..."]' line: the readers keep its words (tidy
#: drops only the tags); the retrieval query leaves them out (knowledge.retrieval: it names the paste that follows)
SECTION_TITLE = re.compile(r"<summary\b[^<>\n]{0,80}>.{0,200}?</summary>|^[ \t]*\[details=[^\]\n]{0,120}\][ \t]*$",
                           re.M | re.I)
_PROMPT = re.compile(r"^[ \t]*(?:\([\w.-]+\)[ \t]*)?(?:[\w.-]+@[\w.-]+(?::[^$#\n]*)?)?[$#][ \t]+(?=[\w./-])", re.M)
#: the GPU tools whose output people paste under the command that ran them (nccl-tests' *_perf and ./programs aside)
GPU_TOOLS = ("nvidia-smi", "dcgmi", "lspci", "dmesg", "journalctl", "nvbandwidth", "nvidia-ctk")
#: after a shell prompt, what makes the line a command typed: a GPU tool, a test binary, a launcher, a shell builtin
_PROMPT_CMD = re.compile("(?:" + "|".join(map(re.escape, GPU_TOOLS)) + r"|\w+_perf|\./|python|torchrun|"
                         r"sudo|cat|grep|NCCL_|CUDA_|export|docker|kubectl|p2ptop)")


#: the journal's and syslog's host and process after their time ("node7 python3[41234]:") before a job's line (run by systemd,
#: read with journalctl -u; -o short-iso and rsyslog's high-precision format write the time as RFC 3339): a process's, with
#: its pid. The kernel's lines ("... kernel: NVRM: Xid") and the daemons' whose name says what the line is (systemd, Fabric
#: Manager, persistenced, DCGM's hostengine, IMEX) keep theirs, as the readers of dmesg and of those logs know them
_JOURNAL_PROCESS = (r" [\w.-]+ (?!(?:systemd|nv-fabricmanager|nvidia-fabricmanager|nvidia-persistenced|nv-hostengine|nvidia-dcgm|"
                    r"nvidia-imex)[\w.-]*\[)[\w./@:-]+\[\d+\]:")
_RFC3339 = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)"
#: what a launcher or a log collector writes before every line of a program's output, each in its own format:
#: torchrun's tee ("[default0]:", TailLog's "[{role}{local_rank}]:"; "[rank3]:" with a rank template), Open MPI's
#: --tag-output ("[1,0]<stdout>:"), Ray's worker prefix ("(RayWorkerVllm pid=4711, ip=10.0.0.2) ", "(pid=909)") and
#: vLLM's multiprocessing one ("(VllmWorker rank=0 pid=467) "),
#: docker compose ("vllm-1  | "), kubectl logs --prefix ("[pod/name/container] "), vLLM's logger ("INFO 11-29 14:03:07
#: [worker.py:123] "), an RFC 3339 timestamp (docker logs -t, kubectl --timestamps, GitHub Actions' raw logs; a node's CRI
#: log file with its stream and tag after it; in brackets, Jenkins' Timestamper). Removed like the quote marks, so a table
#: or a message starts where the tool put it; what was removed is kept aside (``Paste.prefixes``): a prefix can say which program ran (Ray's actor RayWorkerVllm).
_LAUNCHER = re.compile(r"^[ \t]*(?:(?:\[(?:rank|default|[a-z_]+)\d+\]:|\[\d+,\d+\]<std(?:out|err)>:|"
                       r"\((?:[\w.]+ )?(?:rank=\d+ )?pid=\d+(?:, ip=[\d.:a-f]+)?\)|[\w.-]+[-_]\d+[ \t]+\||\[pod/[\w.-]+/[\w.-]+\]|"
                       # (a node's container log in the CRI format, /var/log/pods/...: the timestamp, the stream, "F" for a
                       # full line or "P" for a part of one: "2016-10-06T00:17:09.669794202Z stdout F "; GitLab Runner's
                       # timestamped job log, FF_TIMESTAMPS since 17.0: the stream's two hex digits, "O" stdout or "E"
                       # stderr, then "+" (the line goes on the one before) or a space: "2024-05-30T14:30:00.000000Z 00O ",
                       # "...Z 00O+..." (GitLab's docs and its parser's tests); the journal's)
                       + _RFC3339 + r"(?: (?:stdout|stderr) [FP](?= |$)| [0-9a-f]{2}[OE](?:\+|(?= |$))|" + _JOURNAL_PROCESS + r")?|"
                       # Jenkins' Timestamper in a pipeline's console text: the same timestamp in brackets
                       r"\[" + _RFC3339 + r"\]|"
                       # vLLM's logger ("%(levelname)s %(asctime)s [%(fileinfo)s:%(lineno)d] ", dates "%m-%d %H:%M:%S"; before
                       # 0.6 "%(filename)s:%(lineno)d] " unbracketed), whose NewLineFormatter repeats it before every line
                       # of a message of several (a table, a traceback logged)
                       r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[?[\w.-]+\.py:\d+\]|"
                       # loggers' default record prefixes, before each line a program logs one by one (TensorFlow its peer
                       # matrix's rows, a script each line of nvidia-smi's output): glog's "Lmmdd hh:mm:ss.uuuuuu threadid
                       # file:line] " (PyTorch's C++, Paddle, Caffe, MXNet); TensorFlow's "%Y-%m-%d %H:%M:%S.%f: L file:line] ";
                       # loguru's default "{time} | {level: <8} | {name}:{function}:{line} - "; the logging cookbook's
                       # "%(asctime)s - %(name)s - %(levelname)s - "; SGLang's "[%(asctime)s TP0] "
                       r"[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6}[ \t]+\d+ [\w./-]+:\d+\]|"
                       r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}: [IWEF] [\w./-]+:\d+\]|"
                       r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \| (?:TRACE|DEBUG|INFO|SUCCESS|WARNING|ERROR|CRITICAL) *\| "
                       r"[\w.<>-]+:[\w.<>-]+:\d+ -|"
                       r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - [\w.-]+ - (?:DEBUG|INFO|WARNING|ERROR|CRITICAL) -|"
                       r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?: (?:TP|DP|PP|EP)\d+)*\]|"
                       # PyTorch's c10 logging since 2.4 ("[W403 11:42:02.380967152 ProcessGroupNCCL.cpp:1250] ", after
                       # torchrun's "[rank0]:"); DeepSpeed's logger ("[%(asctime)s] [%(levelname)s] [%(filename)s:%(lineno)d:
                       # %(funcName)s] ")
                       r"\[[IWEF]\d{3,4} \d\d:\d\d:\d\d\.\d{6,9} [\w./-]+:\d+\]|"
                       r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] \[(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\] \[[\w./-]+:\d+:[\w<>.-]+\]|"
                       # Kibana's Discover, a row copied with its time column ("MMM D, YYYY @ HH:mm:ss.SSS", its
                       # dateFormat's default) and the tab between the columns
                       r"[A-Z][a-z]{2} \d{1,2}, \d{4} @ \d\d:\d\d:\d\d\.\d{3}(?=\t)|"
                       # the journal's and syslog's classic "Dec 01 11:38:40 node7 python3[41234]:"
                       r"[A-Z][a-z]{2} [ \d]?\d \d\d:\d\d:\d\d(?:\.\d+)?" + _JOURNAL_PROCESS + r")[ \t]?)+", re.M)
_LAUNCHER_HINT = re.compile(r"\]:|\]<std|pid=\d|\d{4} @ \d\d:|[-_]\d+[ \t]+\||\[pod/|\d\dT\d\d:|(?:INFO|WARNING|ERROR|DEBUG|CRITICAL) \d\d-\d\d \d|"
                            r"\d\d:\d\d\.\d{6}|\d\.\d{3} \| |,\d{3} - |\[\d{4}-\d\d-\d\d \d")
#: Slurm's srun --label ("  0: " before each task's line): only where most lines carry it, as "1: lo: <LOOPBACK" of
#: one `ip a` line does not
_SRUN_LABEL = re.compile(r"^[ \t]*\d{1,4}: (?![ \t]*[YN](?:[ \t]+[YN])+[ \t]*$)", re.M)  # (not TensorFlow's "0:   N Y N N")
#: pdsh's "host: " before each line a remote command printed (DeepSpeed's multi-node launcher runs its workers so: "worker-1:
#: ", "10.0.0.12: "): a host's name (RFC 1123's letters, digits, hyphens and dots, one a digit, as a cluster's are: no
#: program's "qemu-system-x86_64: ") or an IPv4 address; only where most of three or more lines carry one and they are a
#: few hosts, as a log's own "RuntimeError: " or "name: Tesla P100" lines are not; never a device's label ("GPU0: ",
#: "rank3: ", "mlx5_0: "), which says whose the line is
_PDSH_HOST = re.compile(r"^(?:\d{1,3}(?:\.\d{1,3}){3}|(?!(?:gpu|nic|cpu|cuda|card|rank|dev|device|mlx\d_?)\d{1,3}: )"
                        r"[A-Za-z][A-Za-z0-9-]*\d[A-Za-z0-9.-]*): ", re.M | re.I)
PDSH_HOSTS_MAX = 16
#: what grep and cat put before each line of a log file they print: the file's name (grep -H, grep -r over several files:
#: "logs/rank0.log:" for a match, "logs/rank0.log-" for a context line) and the line's number (grep -n "1234:" or
#: "1234-", cat -n "  1234<TAB>", bat's grid "   1   \u2502 "); read as a prefix only where most lines carry one and their numbers rise
#: (_numbered_by_tool), as a log's own fields ("0: ", "1: lo: <LOOPBACK") do not
_FILE_PREFIX = re.compile(r"^[\w./~-]*[\w-]\.(?:log|txt|out|err)\d*[:-]", re.M)
_LINE_NUMBER = re.compile(r"^[ \t]*(\d{1,7})(?::|-(?=\S)|\t|[ \t]+\u2502(?: |$))", re.M)
HEAD_CHECK = 65536  # how much of a paste the checks for a prefix or an indent on every line read
#: what a program that frames its own lines puts before each of them, taken off the lines that carry it: a box's left
#: edge (Julia's ConsoleLogger: "┌ Error: ...", "│   key = value", "└ @ Main file.jl:12"; rich's panels and traceback
#: boxes: "│ ... │", whose right edge comes off too), pytest's fail marker before an exception's lines (_PYTEST_RUN)
_BOX = re.compile(r"^[ \t]*[│┃║┆┊┌└├╭╰](?: |$)(?:(.*?)[ \t]*[│┃║┆┊][ \t]*$)?", re.M)
_BOX_HINT = re.compile("[│┃║┆┊┌└├╭╰]")
#: pytest's exception lines, a run of them: "E" and the indent less one, the message's own indent after it (the run's
#: least indent is pytest's: 4, or 4 and the failing statement's own, _getindent)
_PYTEST_RUN = re.compile(r"(?:^E(?: {3,}[^\n]*)?(?:\n|\Z))+", re.M)
_PYTEST_LINE = re.compile(r"^E( *)", re.M)
#: spaces and tabs at a line's end: a console that pads every line to its width (Windows' conhost, screen), a markdown
#: line break; never a tool's (they would stretch the distance between words that a reader allows). A terminal's hard
#: wrap can cut a line right after a space, though: the line's length says it was cut, so the spaces come off before
#: the wrap checks only where a console padded the paste (:func:`_padded_width`), and after them otherwise (a paste as short
#: as one copied off a screen, WRAP_TEXT_MAX)
_TRAILING = re.compile(r"[ \t]+$", re.M)
_INDENTED_START = re.compile(r"\n*[ \t]")

#: a table's border or row, which a terminal's width never continues: nvidia-smi's "+---", topo's GPU0/NIC0/mlx5_0/CPU
#: rows (regex_safety.RECORD_START has the other records)
_TABLE_ROW = re.compile(r"^(?:\+|(?:GPU|NIC|mlx\d|CPU)\w*\s)")
WRAP_WIDTH_MIN = 60  # a terminal or a fixed-width viewer cuts at 80 columns or more; mail reflows at 64-78
WRAP_TEXT_MAX = 64_000  # a paste this long at most (a hand-copied screen, not a log file)


def _shape(line: str) -> str:
    """How a line starts, letters and digits as classes: records of one kind start alike, a wrapped remainder does not."""
    return "".join("9" if ch.isdigit() else "a" if ch.isalpha() else ch for ch in line[:6])


def unwrap(text: str) -> str:
    """A paste that a terminal hard-wrapped at its width (two or more different lines of exactly the longest line's
    length, each cut where the next line does not start a record of its own or one like it, one of them inside a word,
    and four in five of the lines within a tenth of that width exactly as long, the paste's last line and a cut line's
    remainder that ends a paragraph not counted) with each cut line joined again to its
    continuation, which is left empty: the same number of lines, a message whole on the line where it starts. Anything
    else unchanged."""
    lines, width = _wrap_width(text)
    if not width:
        return text
    # (the end of a line cut at the width, before a blank line or as the paste's last, may be of any length: not counted;
    # inside a paragraph a line after one of the width is a reflow's as much as a wrap's, and counted)
    ends = {i for i in range(1, len(lines)) if len(lines[i - 1]) == width and (i + 1 == len(lines) or not lines[i + 1].strip())}
    ends.add(len(lines) - 1)
    near = sum(1 for i, l in enumerate(lines) if len(l) >= width * 0.9 and i not in ends)
    full = sum(1 for i, l in enumerate(lines) if len(l) == width and i not in ends)
    if full * 5 < near * 4:  # a terminal cuts every long line at its width; lines of a tool's own just under it are no wrap
        return _named_cuts(text, lines, width)
    cut = [i for i in range(len(lines) - 1)
           if len(lines[i]) == width and lines[i + 1] and not RECORD_START.match(lines[i + 1])
           and not _TABLE_ROW.match(lines[i + 1])
           and not (lines[i][0].isspace() and lines[i + 1][0].isspace())  # rows of an indented table
           and _shape(lines[i]) != _shape(lines[i + 1])]  # a run of records alike ("diag: ...", "7  [0] NCCL INFO ...")
    if len({lines[i] for i in cut}) < 2 or not any(lines[i][-1].isalnum() and lines[i + 1][0].isalnum() for i in cut):
        # two different cut lines, one cut inside a word: what a width does and lines of one's own do not; a single cut
        # only where it splits an error's name or message (_named_cuts)
        return _named_cuts(text, lines, width)
    return _joined(lines, cut)


def _named_cuts(text: str, lines: list[str], width: int) -> str:
    """The text with each line of the longest length whose last word runs on into the next line's first as one of the
    error tables' names or messages (codes.known_across: "...cuInit: CUDA_ER" / "ROR_NO_DEVICE") joined to it; the text
    unchanged where none does."""
    cut = [i for i in range(len(lines) - 1)
           if len(lines[i]) == width and lines[i + 1][:1].isalnum() and known_across(lines[i], lines[i + 1])]
    return _joined(lines, cut) if cut else text


def rejoin_cut_names(text: str) -> str:
    """A short paste with every error name or message that a single hard cut split whole again on its first line
    (:func:`_named_cuts`; the matcher's lines, whose own search joins wrapped lines for its patterns, not for codes)."""
    lines, width = _wrap_width(text)
    return _named_cuts(text, lines, width) if width else text


def _wrap_width(text: str) -> tuple[list[str], int]:
    """The lines of a paste short enough to have been copied off a screen, and the width a terminal would have cut them
    at (the longest line's length, at least WRAP_WIDTH_MIN); 0 where none applies."""
    if len(text) > WRAP_TEXT_MAX:
        return [], 0
    lines = text.split("\n")
    width = max((len(l) for l in lines), default=0)
    return (lines, width) if width >= WRAP_WIDTH_MIN else ([], 0)


def _joined(lines: list[str], cut: list[int], sep: str = "") -> str:
    """Each cut line joined again to its continuation, which is left empty (line numbers stay), from the end, so a message
    cut twice is joined whole on its first line. ``sep``: what the cut took away (a terminal's hard wrap nothing, a
    reflow's soft break the space between two words)."""
    for i in reversed(cut):
        lines[i] = lines[i].rstrip() + sep + lines[i + 1].strip() if sep else lines[i] + lines[i + 1]
        lines[i + 1] = ""
    return "\n".join(lines)


def words_rejoined(text: str) -> str:
    """The text with each line of the longest length (at least WRAP_WIDTH_MIN) that ends inside a word joined to the next
    line: what a single hard wrap cut ("...(RuntimeError: The N" / "VIDIA driver on your system is too old)"), which
    :func:`unwrap` leaves alone (it joins only where two or more lines show the width). For asking which words a text
    holds, never for reading its records; "" where nothing was joined."""
    lines, width = _wrap_width(text)
    cut = [i for i in range(len(lines) - 1)
           if len(lines[i]) == width and lines[i][-1:].isalnum() and lines[i + 1][:1].isalnum()]
    return _joined(lines, cut) if cut else ""


#: the spaces a web page or a word processor puts in place of " " (no-break, figure, thin, narrow no-break, ideographic):
#: read as the space the program printed
_WIDE_SPACE = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
_TYPOGRAPHIC = re.compile("[" + "".join(map(chr, TYPOGRAPHIC_QUOTES)) + "]")  # regex_safety.TYPOGRAPHIC_QUOTES
_INVISIBLE = re.compile(f"[{INVISIBLE_CHARS}]")  # what a web page hides inside words (regex_safety.INVISIBLE_CHARS)


def _head(text: str) -> list[str]:
    """The non-blank lines of the text's first 64 KB: what the checks for a prefix or an indent on every line read."""
    return [line for line in text[:HEAD_CHECK].split("\n") if line.strip()]


#: section titles of ``nvidia-smi -q`` that a grep'd excerpt ("nvidia-smi -q | grep -A3 BAR1") may hold without its GPU
#: header; "Fabric" (State, Status) is what fact_roles.NEXT_COMMAND asks for with `nvidia-smi -q | grep -i -A3 fabric`, so
#: its answer must be readable (smi.parse_q_text reads them; reline restores their lines)
Q_SECTIONS = ("BAR1 Memory Usage", "GPU Link Info", "PCIe Generation", "Link Width", "MIG Mode", "GPU Virtualization Mode",
              "Fabric")
#: where ``nvidia-smi -q`` starts a line: a section title, or a field, "Key" padded to the tool's column then " : "
#: ("        Total                             : 256 MiB"): -q nests its sections by indent, which reline keeps
_Q_LINE = r"(?:" + "|".join(map(re.escape, Q_SECTIONS)) + r")(?=\s{2})|[A-Z][A-Za-z0-9()/.+-]*(?: [A-Za-z0-9()/.+-]+){0,6} {2,}: "
#: a raised exception's qualified name as CPython's traceback.format_exception_only prints it ("torch.cuda.OutOfMemoryError",
#: "RuntimeError"): the class's name CamelCase, ending in Error or Exception
EXCEPTION_NAME = r"(?:[a-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)"
#: where programs start a line of their own, and nothing else does: NCCL's "host:pid:tid [dev] NCCL INFO" prefix,
#: PyTorch's "[rank0]:", Python's traceback and its exception line, dmesg's "[  12.345678]" clock, the CUDA samples'
#: "Device=0 CAN Access Peer", "Device: 0, ...", "Unidirectional P2P=Enabled ..." and "D\D" rows, nccl-tests' "#  Rank  0
#: ..." heads and table rows, vLLM's "INFO 05-08 21:28:45", nvidia-smi's "Legend:", dcgmi's "gpuId 0:"
_LINE_STARTS = re.compile(
    r"\s+(?=[\w.-]+:\d+:\d+ \[\d+\] (?:[\w/.-]+:\d+ )?(?:NCCL )?(?:INFO|WARN|ERROR|TRACE)\b|\[rank\d+\]:|Traceback \(most recent call last\):|"
    # the exception line that ends a traceback (traceback.format_exception_only: "module.Type: message", at a line's start)
    + EXCEPTION_NAME + r"(?=: )|"
    r"File \"[^\"\n]{1,300}\", line \d+|\[\s*\d+\.\d{6}\]\s|Device=\d+ CAN(?:NOT)? Access Peer Device=\d+|Device: \d+, |"
    r"(?:Unidirectional|Bidirectional) P2P=(?:Enabled|Disabled)|P2P=(?:Enabled|Disabled) Latency|D\\D\s|"
    # ... and the head of its latency matrices, GPU's then CPU's ("   GPU     0      1 ...", "   CPU     0      1 ...")
    r"(?:GPU|CPU)\s+0\s+1\s|"
    r"#\s+(?:Rank\s+\d+|nThread\b|Using devices|Out of bounds|Avg bus|Collective test|out-of-place|bytes\s|size\s)|"
    r"\d+\s+\d+\s+(?:float|double|half|bfloat16|int8|uint8|int32|uint32|int64|uint64|fp8\w*)\s+(?:sum|prod|max|min|avg|none)\s|"
    r"(?:INFO|WARNING|ERROR|DEBUG) \d\d-\d\d \d\d:\d\d:\d\d|Legend:|gpuId \d+:|"
    # a log record's ISO date and time (log4j's and Python logging's "2020-04-16 01:53:17,099", RFC 3339's "T"), which
    # also ends a shell prompt's command typed before the log it printed ("$ more ts_log.log 2020-04-16 01:53:17,099 ...")
    r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d|"
    # nvidia-smi topo's matrices: the header ("GPU0 GPU1 ... CPU Affinity") and each row ("GPU1 PHB X NV4 0-63")
    r"GPU0[ \t]+(?:GPU1|NIC0)\b|(?:GPU|NIC)\d+[ \t]+(?:X|NV\d+|PIX|PXB|PHB|NODE|SYS|OK|CNS|GNS|TNS|NS|DR|U)[ \t]|"
    # ... and as a markdown table in an issue ("| | GPU0 | GPU1 |", "|---|---|", "| GPU0 | X | NODE |")
    r"\|[ \t]*\|[ \t]*GPU0[ \t]*\||\|[ \t]*:?-{3,}:?[ \t]*\||\|[ \t]*(?:GPU|NIC)\d+[ \t]*\|[ \t]*(?:X|NV\d+|PIX|PXB|PHB|NODE|SYS)[ \t]*\||"
    # nvidia-smi -L's "GPU 0: NVIDIA A100 (UUID: ...)", lspci's device heads and the fields of -v/-vv, NCCL's "Last error:"
    r"GPU \d+: [^()\n]{3,80}\(UUID: |"
    # nvidia-smi's table: a GPU's first row ("|   0  NVIDIA A10G    On  | 00000000:00:1B.0 Off |    0 |": index, name,
    # persistence mode, then the bus id)
    r"\|\s+\d+\s+[^|\n]{3,60}?\s(?:On|Off)\s+\|\s+[0-9A-Fa-f]{8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d|(?:[0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}\.\d (?:VGA compatible|3D|PCI bridge|Bridge|"
    r"Infiniband|Ethernet|Non-Volatile)|(?:Subsystem|Flags|Capabilities|Kernel driver in use|LnkCap|LnkSta|LnkCtl|ACSCap|ACSCtl):|"
    r"Memory at [0-9a-f]+ |BAR \d+: current size|Last error:|"
    # PyTorch's NCCL error detail (c10d NCCLUtils getNcclErrorDetailStr: "\n" + "ncclUnhandledCudaError: Call to CUDA
    # function failed." + "\nLast error:\n" + NCCL's last error)
    r"(?:" + "|".join(NCCL_RESULTS.values()) + r"): |"
    # dcgmi nvlink --link-status: its heads; nvtop's device lines ("Device 0 [GeForce GTX 1080 Ti] PCIe GEN 3@16x")
    r"GPUs:\s(?=\s*gpuId)|NvSwitches:\s|Key: Up=|Device \d+ \[[^\]\n]{3,80}\] PCIe GEN|"
    # TensorFlow's peer matrix head (gpu_device.cc); an interactive Python's prompts, IPython's ("In [2]: ", "Out[2]: ")
    # and the REPL's (">>> "), before what a user typed and what it printed
    r"Device interconnect StreamExecutor with strength \d+ edge matrix:|\d{1,2}:(?:[ \t]+[YN]){2,16}\b|"
    r"(?:In |Out)\[\d+\]: |>>> |"
    r"(?P<q>" + _Q_LINE + r"))"
    r"|(?<=Last error:)[ \t]+(?=\S)")  # ... and NCCL's last error on the line after it
#: a markdown code fence inside a line that lost its breaks ("main() ``` torch.distributed..."): a line of its own again
_INLINE_FENCE = re.compile(r"[ \t]*```([\w+-]*)[ \t]+")
RELINE_AVG = 150  # a text whose lines average more characters than this may have lost its line breaks
RELINE_MIN_STARTS = 2  # ... and did, where at least this many places start a line of a program's own


def _matrix_rows(line: str) -> str:
    """A CUDA sample's matrix that lost its line breaks ("D\\D 0 1 2 0 673.20 13.15 13.15 1 12.99 ...", its latency
    matrices' "GPU 0 1 2 0 1.78 17.52 ...") as its rows: the header's columns 0..n-1, then each row's label and its n
    values; any other line unchanged."""
    if line.startswith(TF_MATRIX):
        return _tf_rows(line)
    row = _TF_ROW_CELLS.match(line)
    if row and row.end() < len(line.rstrip()):  # a row of it with what followed the matrix: that on a line of its own
        return line[:row.end()] + "\n" + line[row.end():].lstrip()
    if not line.startswith(("D\\D", "GPU", "CPU")):
        return line
    t = line.split()
    n = 0
    while 1 + n < len(t) and t[1 + n] == str(n):
        n += 1
    if n < 2 or len(t) <= 1 + n:
        return line
    rows, i = [" ".join(t[:1 + n])], 1 + n
    while i + n < len(t) + 1 and t[i] == str(len(rows) - 1) and len(t[i:i + 1 + n]) == 1 + n:
        rows.append(" ".join(t[i:i + 1 + n]))
        i += 1 + n
    return "\n".join(rows + ([" ".join(t[i:])] if i < len(t) else []))


#: TensorFlow's peer matrix head (gpu_device.cc: "Device interconnect StreamExecutor with strength 1 edge matrix:"), for
#: reline and for its reader (tools.parse_tf_interconnect)
TF_MATRIX = "Device interconnect StreamExecutor with strength"
_TF_ROW_CELLS = re.compile(r"\d{1,2}:(?:[ \t]+[YN]){2,16}\b")


def _tf_rows(line: str) -> str:
    """TensorFlow's peer matrix that lost its line breaks ("... edge matrix: 0 1 2 3 0: N Y N N 1: Y N N N ...") as
    TensorFlow prints it: the head, the devices' ids, then each device's row of n Y/N cells; the rest on a line after."""
    head, sep, rest = line.partition("edge matrix:")
    t = rest.split()
    n = 0
    while n < len(t) and t[n] == str(n):
        n += 1
    if not sep or n < 2:
        return line
    rows, i = [head + sep, " ".join(t[:n])], n
    while i + n < len(t) and t[i] == f"{len(rows) - 2}:" and all(cell in ("Y", "N") for cell in t[i + 1:i + 1 + n]):
        rows.append(" ".join(t[i:i + 1 + n]))
        i += 1 + n
    return "\n".join(rows + ([" ".join(t[i:])] if i < len(t) else []))


def _line_break(m: re.Match) -> str:
    """A line break where a program starts a line; nvidia-smi -q's lines keep their indent (the spaces the lost break
    left, less the one that stood for it), by which -q nests its sections."""
    return "\n" + m.group(0)[1:] if m.group("q") else "\n"


#: a line break written as an escape inside a string (JSON's, Python's repr, a C string): what a job's output looks like when
#: an API, a job scheduler's status, a JSON log or an exception's repr holds it ("{"message": "Traceback ...\\n  File
#: ...\\nRuntimeError: ..."}", "b'NCCL WARN ...\\n...'"); an escaped backslash before it ("\\\\n") is no break
_ESCAPED_BREAK = re.compile(r"(?<!\\)(?:\\r)?\\n")
_ESCAPED_CHAR = re.compile(r"""(?<!\\)\\([tr"']|u[0-9a-fA-F]{4})""")
_ESCAPED_CHARS = {"t": "\t", "r": "", '"': '"', "'": "'"}


def _unescaped(m: re.Match) -> str:
    """An escaped tab, quote or character ("\\u4e2d": JSON writes all but ASCII so) read back; a control character's or half
    a surrogate pair's escape stays as written (text is data)."""
    c = m.group(1)
    if c[0] != "u":
        return _ESCAPED_CHARS[c]
    cp = int(c[1:], 16)
    return m.group(0) if cp < 0x20 or 0x7f <= cp < 0xa0 or 0xd800 <= cp < 0xe000 else chr(cp)


ESCAPED_BREAKS_MIN = 2  # a line with this many escaped breaks holds a string's lines (one alone may be a word's "\\n")
#: a Windows path with single backslashes ("C:\\nvidia\\new"): a line that holds one is no escaped string's (there they are doubled)
_WINDOWS_PATH = re.compile(r"\b[A-Za-z]:\\(?!\\)")


def unescape_breaks(line: str) -> str:
    """A line that holds a string's escaped lines (``_ESCAPED_BREAK``, two or more; none where a Windows path's single
    backslashes show it is no escaped string) with them as lines again, its escaped tabs, quotes and characters read
    back; any other line unchanged."""
    if len(_ESCAPED_BREAK.findall(line, 0, 200000)) < ESCAPED_BREAKS_MIN or _WINDOWS_PATH.search(line):
        return line
    return _ESCAPED_CHAR.sub(_unescaped, _ESCAPED_BREAK.sub("\n", line))


#: HTML's line break tag, in a paste copied from a page's source, an HTML mail or a ticket exported as HTML ("GPU0 X NV4<br>"):
#: at a line's end, nothing; inside a line that holds two or more and no table's pipe (a markdown table's cell may hold one),
#: a line break
_BR = re.compile(r"<br[ \t]*/?>", re.I)
_BR_AT_END = re.compile(r"[ \t]*<br[ \t]*/?>[ \t]*(?=\r?\n|\Z)", re.I)


def _br_lines(text: str) -> str:
    """The text with HTML's line break tags read as :data:`_BR` says."""
    text = _BR_AT_END.sub("", text)
    if "<br" not in text.lower():
        return text
    return "\n".join(_BR.sub("\n", line) if "|" not in line and len(_BR.findall(line)) >= 2 else line
                     for line in text.split("\n"))


#: the fields in which a structured log record or a service's answer holds what a program printed or raised, each
#: format's own: Docker's json-file, Fluentd's and Fluent Bit's "log"; Go's slog, logrus, zap and klog's JSON "msg"
#: (logrus's and zap's "error", zap's "stacktrace"); python-json-logger's "message" and "exc_info"; structlog's "event"
#: and "exception"; Google Cloud Logging's "textPayload" ("jsonPayload" holds a "message"); Elastic's ECS "message" and
#: "error" {"message", "stack_trace"}; Grafana Loki's "line"; a Jupyter notebook's "text", "traceback" and "evalue"; a
#: service's error ("message", "detail", "output", "stderr", "stdout"); an Ansible task's result ("msg", "stdout",
#: "stderr", their lists "stdout_lines" and "stderr_lines", a module's "module_stdout" and "module_stderr"); the journal's
#: "MESSAGE" (journalctl -o json): a key in any case
MESSAGE_KEYS = ("log", "msg", "message", "line", "text", "textPayload", "jsonPayload", "event", "error", "err", "exception",
                "exc_info", "stacktrace", "stack_trace", "traceback", "evalue", "detail", "output", "stderr", "stdout",
                "stdout_lines", "stderr_lines", "module_stdout", "module_stderr")
_MESSAGE_KEY = {k.lower() for k in MESSAGE_KEYS}
#: Ansible's lists of a command's lines: read where the record lacks the string they were split from ("stdout"); the
#: debug module names a variable's field by its path ("result.stdout_lines")
_LINES_OF = {"stdout_lines": "stdout", "stderr_lines": "stderr"}


def _message_key(key: str, record: dict) -> bool:
    """Is ``key`` a message field of ``record`` (one of MESSAGE_KEYS, or a variable's path ending in one: Ansible's debug
    module's "result.stdout_lines"), a list of lines only where the record lacks the string they were split from?"""
    name = key.rpartition(".")[2]
    if name.lower() not in _MESSAGE_KEY:
        return False
    whole = _LINES_OF.get(name)
    return whole is None or not isinstance(record.get(key[: len(key) - len(name)] + whole), str)


#: Ansible's line before a task's result, its JSON after " => " (the default callback's "ok: [host] => ", "fatal: [host]:
#: FAILED! => ", "changed: [host] => (item=x) => "; the minimal one's, ad hoc, "host | FAILED! => "): the result is read as
#: a record, its status and host left out as a launcher's prefix is (what failed, the result says)
_ANSIBLE_RESULT = (r"(?P<result>(?:(?:ok|changed|fatal|failed|skipping|ignored|rescued|unreachable): \[[^\]\n]{1,200}\]"
                   r"(?:: [A-Z]+!)?(?: => \(item=[^\n]{0,200}?\))?|[\w.-]{1,200} \| [A-Z]+!?(?: \| rc=-?\d+)?) => )?")
#: a line that is one JSON object (a JSON-lines log's record, a service's answer): its first key quoted, its last brace
_JSON_OBJECT_LINE = re.compile(r'^[ \t]*' + _ANSIBLE_RESULT + r'\{[ \t]*"[^"\n]{1,64}"[ \t]*:[^\n]*\}[ \t]*,?[ \t]*$', re.M)
#: a line of a JSON object printed over several (jq, an API's pretty answer) that is one message field and its string
_JSON_MESSAGE_FIELD = re.compile(r'^[ \t]*"((?i:' + "|".join(MESSAGE_KEYS) + r'))"[ \t]*:[ \t]*("(?:[^"\\\n]|\\.)*")[ \t]*,?[ \t]*$', re.M)
_RECORD_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # in a record's message: a space (text is data)
RECORD_DEPTH = 3  # how deep in a record's objects its message fields are looked for ("jsonPayload" {"message"}, ECS "error")


def _message_lines(value: Any, depth: int = 0) -> list[str]:
    """What a record's value says, as lines: a string's own lines (its line end, its terminal colours and other control
    characters gone: text is data), a list's strings (a notebook's "traceback", one line each; its "text", lines with
    their ends), an object's message fields (:func:`_message_key`) in the record's order, an empty one left out beside others
    (a record of an empty line is one); nothing for a number or a flag."""
    if isinstance(value, str):
        if "\x1b" in value:
            value = _ANSI.sub("", value)
        return [_RECORD_CONTROL.sub(" ", line) for line in line_ends(value.rstrip("\r\n")).split("\n")]
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return _message_lines("".join(value) if all(v.endswith("\n") for v in value[:-1]) else "\n".join(value), depth)
    if isinstance(value, dict) and depth < RECORD_DEPTH:
        fields = [v for k, v in value.items() if _message_key(k, value)]
        return [line for v in [v for v in fields if v not in ("", [])] or fields[:1] for line in _message_lines(v, depth + 1)]
    return []


#: a record's own bookkeeping, as a launcher's prefix is (its time, level, stream, caller, a collector's ids): left out
RECORD_META = frozenset({"time", "ts", "timestamp", "@timestamp", "asctime", "date", "level", "levelname", "lvl", "severity",
                         "stream", "caller", "logger", "logger_name", "insertId", "logName", "receiveTimestamp",
                         "output_type", "execution_count", "PRIORITY", "SYSLOG_FACILITY", "SYSLOG_PID", "SYSLOG_TIMESTAMP"})


def _meta(key: str) -> bool:
    """A record's bookkeeping (RECORD_META), and the journal's own fields: its address and trusted fields ("__CURSOR",
    "__REALTIME_TIMESTAMP", "_BOOT_ID", "_PID", "_HOSTNAME" ...: journald sets them, the program never does; its
    "SYSLOG_IDENTIFIER" stays, it names the program)."""
    return key in RECORD_META or (key[:1] == "_" and key.isupper())


def _fields(value: Any, key: str = "", depth: int = 0) -> list[str]:
    """A record's other fields, "key=value" each as logfmt writes them (an object's as "outer.inner", a list of plain
    values joined by commas, a value with a space quoted):
    what they say stays data the readers see ("component=accelerator-nvidia-nvlink", "gpu=0000:3b:00.0")."""
    if isinstance(value, dict):
        if depth >= RECORD_DEPTH:
            return []
        return [f for k, v in value.items() if k.rpartition(".")[2].lower() not in _MESSAGE_KEY and not _meta(k)
                for f in _fields(v, f"{key}.{k}" if key else k, depth + 1)]
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value):
        value = ",".join(map(str, value))
    if isinstance(value, (str, int, float)) and not isinstance(value, bool) and key:
        text = _RECORD_CONTROL.sub(" ", _ANSI.sub("", str(value)))
        if re.search(r'[\s="]', text):  # quoted as logfmt quotes a value with a space (Go's strconv.Quote: JSON's)
            text = json.dumps(text, ensure_ascii=False)
        return [f"{key}={text}"] if text.strip() else []
    return []


def _record_text(record: Any, shown: Optional[list] = None) -> Optional[str]:
    """A JSON object as lines: its other fields on one line (:func:`_fields`), then what its message fields say
    (:func:`_message_lines`); None where it holds no message field (nvbandwidth's JSON, a config). ``shown`` (a list of
    one: the fields line the record before had) leaves out a fields line the record before had too: a log's records
    that all carry one program's name ("SYSLOG_IDENTIFIER=python3") keep a table's rows together."""
    lines = _message_lines(record) if isinstance(record, dict) else []
    if not lines:
        return None
    fields = " ".join(_fields(record))
    if shown is not None:
        fields, shown[0] = ("" if fields == shown[0] else fields), fields
    return "\n".join([fields] + lines if fields else lines)


def _record(m: re.Match, shown: Optional[list] = None) -> str:
    """A JSON object's line as :func:`_record_text` reads it (Ansible's status and host before it left out, as a launcher's
    prefix is); the line as written where it is no JSON or holds no message field."""
    result = m.group("result")
    try:
        text = _record_text(json.loads(m.group(0)[m.end("result") - m.start() if result else 0:].strip().rstrip(",")), shown)
    except ValueError:
        return m.group(0)
    return m.group(0) if text is None else text


def _field(m: re.Match) -> str:
    """A pretty-printed record's message field as what its string says."""
    try:
        return "\n".join(_message_lines(json.loads(m.group(2))))
    except ValueError:
        return m.group(0)


#: a line that opens a JSON object printed over several (jq's, an API's; Ansible's result after its line's start)
_JSON_OPEN = re.compile(r"^([ \t]*)" + _ANSIBLE_RESULT + r"\{[ \t]*$", re.M)
JSON_BLOCK_MAX = 1 << 20  # such an object this long at most (a service's answer, not a log file)


def _json_blocks(text: str, shown: Optional[list] = None) -> str:
    """The text with each JSON object printed over several lines (from a line that is "{" to the next "}" at its indent)
    that holds message fields as what they say (:func:`_message_lines`); the rest as written."""
    out, at = [], 0
    for m in _JSON_OPEN.finditer(text):
        if m.start() < at:
            continue
        end = text.find("\n" + m.group(1) + "}", m.end(), m.end() + JSON_BLOCK_MAX)
        if end < 0:
            continue
        close = text.find("\n", end + 1)
        close = len(text) if close < 0 else close
        result = m.group("result")
        try:
            record = json.loads(text[m.end("result") if result else m.start():close])
        except ValueError:
            continue
        lines = _record_text(record, shown)
        if lines is not None:
            out += [text[at:m.start()], lines]
            at = close
    return "".join(out) + text[at:] if out else text


#: a line that is a list of strings, as Python's repr prints one ("['line one\\n', 'line two']": print(out.splitlines()),
#: readlines()) or JSON writes it: its strings are lines where one of them holds a space (a line of text; "['0', '1']"
#: stays a list)
_QUOTED = r"""(?:'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")"""
_STRING_LIST_LINE = re.compile(r"^[ \t]*\[[ \t]*" + _QUOTED + r"(?:[ \t]*,[ \t]*" + _QUOTED + r")*[ \t]*,?[ \t]*\][ \t]*$", re.M)


def _string_list(m: re.Match) -> str:
    """A list's line as its strings' lines (:func:`_message_lines`); the line as written where it is no list of strings
    or none of them holds a space."""
    try:
        items = ast.literal_eval(m.group(0).strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return m.group(0)
    if not (isinstance(items, list) and all(isinstance(i, str) for i in items) and any(" " in i for i in items)):
        return m.group(0)
    return "\n".join(_message_lines(items))


#: a log search's table exported as CSV (RFC 4180: a header row, then a record a row, a field with a comma, a quote or a
#: line break quoted, its quotes doubled): CloudWatch Logs Insights' "@timestamp,@message,@logStream", Grafana's "Time,Line",
#: Kibana's and Datadog's reports ("@timestamp","message"; "Date","Host","Service","Message"), Splunk's "_time,...,_raw".
#: A column is named as a record's key is, a leading "@" or "_" aside (Splunk's "_raw" is the event's text); the header
#: row, 2 to 32 names with no space but quoted, must name the time and one message column (MESSAGE_KEYS): nvidia-smi
#: --query-gpu's CSV ("index, name, pci.bus_id") names neither
_CSV_NAME = r'(?:"[\w@.: -]{1,64}"|[\w@.:-]{1,64})'  # a name with a space only quoted
_CSV_HEADER = re.compile(r"^(" + _CSV_NAME + r"(?:," + _CSV_NAME + r"){1,31})\r?$", re.M)

#: the export's own bookkeeping columns, left out as a record's are (RECORD_META): CloudWatch's "@ptr", "@log" (the log
#: group), "@logStream"; Splunk's "_serial", "_indextime", "index", "linecount", "splunk_server", "sourcetype"
_CSV_META = frozenset({"ptr", "log_group", "logstream", "serial", "indextime", "index", "linecount", "splunk_server", "sourcetype",
                       "punct", "eventtype"})
CSV_ROWS_MAX = 200_000  # an export this long at most is read as one


def _csv_column(name: str) -> str:
    """A CSV column's name as a record's key (:func:`_record_text`): "@message" and "_raw" the message; "@timestamp",
    "_time", "Date" its time; an export's bookkeeping ("@ptr", CloudWatch's "@log", Splunk's "_serial") "_META"; others
    as written ("Host", "@logStream" aside: bookkeeping too)."""
    name = name.strip()
    bare = name.lstrip("@_")
    low = bare.lower()
    if low in _CSV_META or (low == "log" and name.startswith("@")):
        return "_META"
    if low == "raw" or low in _MESSAGE_KEY:
        return "message"
    if low in ("time", "timestamp", "date"):
        return "time"
    return bare


def _csv_export(text: str) -> str:
    """The text with a log search's CSV export (``_CSV_HEADER``: the first line of its head that is a header of plain
    names, one of them a message column) as its records (:func:`_record_text`: the other columns on one line where they
    change, then the message's lines), read with Python's csv module (quoted fields, doubled quotes, a line break inside a
    field) from the header to the first row without the header's number of fields; the rest as written."""
    m = _CSV_HEADER.search(text, 0, HEAD_CHECK)
    if m is None:
        return text
    columns = [_csv_column(n) for n in next(csv.reader([m.group(1)]))]
    if columns.count("message") != 1 or "time" not in columns:
        return text  # a log's export names its time and one message column (a line of prose "error,message" is none)
    lines = text[m.end():].split("\n")[1:]
    reader = csv.reader(line + "\n" for line in lines)  # its line ends kept: a quoted field's own line breaks
    out: list[str] = []
    shown: list = [None]
    used = 0
    try:
        for row in reader:
            if len(row) != len(columns) or reader.line_num > CSV_ROWS_MAX:
                break
            used = reader.line_num
            said = _record_text({c: v for c, v in zip(columns, row) if c != "_META"}, shown)
            out.append("" if said is None else said)
    except csv.Error:
        pass  # a row cut in a quoted field: what was read so far
    if not out:
        return text
    return text[:m.start()] + "\n".join(out + lines[used:])


def read_records(text: str) -> str:
    """The text with each structured log record (a line that is a JSON object: JSON-lines logs, Docker's json-file, a
    service's answer; an object printed over several lines, :func:`_json_blocks`; a row of a log search's CSV export,
    :func:`_csv_export`) and each message field of one that is
    no JSON as a whole (cut, or one of many fields) as what the program printed or raised:
    its other fields on one line ("key=value", its time, level and stream left out: :func:`_meta`), then its message fields'
    strings read back (escapes, "\\u" forms and "\\n" as lines); a line that is a list of strings (a repr, JSON:
    ``_STRING_LIST_LINE``) as its strings' lines; any other line unchanged. A logfmt line (logrus, slog's text handler)
    stays as written: it is a line of its own already, and the knowledge base's patterns read it as its programs print it (ollama's 'msg="NVIDIA driver too old" ...
    driver=535', dockerd's CDI warning and its context). Only where the text's head holds such a record (a 20 MB log of
    plain lines pays a few searches)."""
    head = text[:HEAD_CHECK]
    if "," in head:
        exported = _csv_export(text)  # (its header searched once, there)
        if exported is not text:
            text, head = exported, exported[:HEAD_CHECK]
    if '"' in head:
        shown: list = [None]  # the fields line of the record before (:func:`_record_text`)
        if _JSON_OBJECT_LINE.search(text, 0, HEAD_CHECK):
            text = _JSON_OBJECT_LINE.sub(lambda m: _record(m, shown), text)
        if _JSON_OPEN.search(text, 0, HEAD_CHECK):
            text = _json_blocks(text, shown)
        if _JSON_MESSAGE_FIELD.search(text, 0, HEAD_CHECK):
            text = _JSON_MESSAGE_FIELD.sub(_field, text)
    if ("['" in head or '["' in head) and _STRING_LIST_LINE.search(text, 0, HEAD_CHECK):
        text = _STRING_LIST_LINE.sub(_string_list, text)
    return text


DOUBLED_MIN = 3  # a blank line after each of at least this many lines of the head, and never two lines together
_PROSE_LINE = re.compile(r"\b[a-z]{2,} [a-z]{2,} [a-z]{2,} [a-z]{2,}\b")  # words in a row: a sentence, as programs' lines seldom are


def undouble(text: str) -> str:
    """A paste with a blank line after every line of its own (a web page that made each line a paragraph, a chat that
    spaced them, copied) as the program printed it: no two non-blank lines of its head together, three or more, most
    gaps one blank line, and fewer than half of the lines sentences (paragraphs of one line each, a reporter's, keep their
    gaps); each run of 2k+1 blank lines then k (a blank line of its own became three). Any other text
    unchanged: the check stops at the first two lines together (a log of 20 MB reads a few lines)."""
    if "\n\n" not in text[:HEAD_CHECK]:
        return text
    lines = 0
    single = gaps = blank = prose = 0
    for line in text[:HEAD_CHECK].split("\n"):
        if not line.strip():
            blank += 1
            continue
        if lines and not blank:
            return text  # two lines together: not a doubled paste
        if lines:
            gaps += 1
            single += blank == 1
        lines += 1
        prose += bool(_PROSE_LINE.search(line))
        blank = 0
    if lines < DOUBLED_MIN or single * 2 < gaps or prose * 2 >= lines:
        return text
    return re.sub(r"\n((?:[ \t]*\n)+)", lambda m: "\n" * (1 + (m.group(1).count("\n") - 1) // 2), text)


_MONTHS = {m: n for n, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)}
#: the time at a log line's start, in the forms log viewers and loggers print it, each read to a key that sorts as time
#: does within a paste: ISO 8601 and RFC 3339 (Loki, Kibana's exports, docker logs -t, Python's logging), Kibana's
#: Discover ("Dec 1, 2026 @ 11:38:40.123"), syslog's and the journal's "Dec 01 11:38:40", glog's "I1201 11:38:40.123456",
#: vLLM's "INFO 12-01 11:38:40", dmesg's "[ 1234.567890]"
_STAMP = re.compile(r"^[ \t]*\[?(?:(?P<iso>\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?)|"
                    r"(?P<kmon>[A-Z][a-z]{2}) (?P<kday>\d{1,2}), (?P<kyear>\d{4}) @ (?P<ktime>\d\d:\d\d:\d\d(?:\.\d{1,9})?)|"
                    r"(?P<smon>[A-Z][a-z]{2}) (?P<sday>[ \d]?\d) (?P<stime>\d\d:\d\d:\d\d(?:\.\d{1,9})?)|"
                    r"[IWEF](?P<gdate>\d{4}) (?P<gtime>\d\d:\d\d:\d\d\.\d{1,9})|"
                    r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) (?P<vdate>\d\d-\d\d) (?P<vtime>\d\d:\d\d:\d\d)|"
                    r"\[\s*(?P<dmesg>\d+\.\d+)\])")
NEWEST_FIRST_MIN = 2  # times going back at least this often, and four times as often as forward, read newest first


def _stamp_key(m: re.Match) -> Optional[tuple[str, str]]:
    """A line's time as (its form, a key that sorts as the time), None where a month's name is none."""
    g = m.groupdict()
    digits = lambda s: re.sub(r"\D", "", s[:8]) + (s[9:] if len(s) > 9 and s[8] in ".," else "").ljust(9, "0")
    if g["iso"]:
        return "iso", re.sub(r"\D", "", g["iso"][:10]) + digits(g["iso"][11:])
    if g["kmon"]:
        return ("kibana", f"{g['kyear']}{_MONTHS[g['kmon']]:02}{int(g['kday']):02}" + digits(g["ktime"])) \
            if g["kmon"] in _MONTHS else None
    if g["smon"]:
        return ("syslog", f"{_MONTHS[g['smon']]:02}{int(g['sday']):02}" + digits(g["stime"])) if g["smon"] in _MONTHS else None
    if g["gdate"]:
        return "glog", g["gdate"] + digits(g["gtime"])
    if g["vdate"]:
        return "vllm", g["vdate"].replace("-", "") + digits(g["vtime"])
    return "dmesg", f"{float(g['dmesg']):020.6f}"


def oldest_first(text: str) -> str:
    """A log pasted newest first (Kibana's Discover and Grafana's Loki list the latest record on top, journalctl -r prints
    so) in the order its program wrote it: where the times at the lines' starts (``_STAMP``, one form) go back at least
    NEWEST_FIRST_MIN times in the head and four times as often as they go forward, its records (a timed line and the
    untimed lines under it: a message of several lines, shown in its own order) in the reverse order, any lines before
    the first record kept first. Any other text unchanged: a log in its own order, or one without times."""
    form = None
    back = forward = 0
    last = None
    for line in text[:HEAD_CHECK].split("\n"):
        m = _STAMP.match(line)
        key = _stamp_key(m) if m else None
        if key is None or (form is not None and key[0] != form):
            continue
        form = key[0]
        if last is not None:
            back += key[1] < last
            forward += key[1] > last
        last = key[1]
    if back < NEWEST_FIRST_MIN or back < 4 * forward:
        return text
    records: list[list[str]] = []
    head: list[str] = []
    for line in text.split("\n"):
        m = _STAMP.match(line)
        key = _stamp_key(m) if m else None
        if key is not None and key[0] == form:
            records.append([line])
        elif records:
            records[-1].append(line)
        else:
            head.append(line)
    return "\n".join(head + [line for record in reversed(records) for line in record])


#: CommonMark's backslash escape (spec section 2.4: a backslash before any ASCII punctuation character), as an editor's
#: conversion of a page or a rich-text box to markdown writes it (turndown, behind many "copy as markdown" tools and web
#: clippers: a backslash before every "\\", "*", "_", "`", "[" and "]", and before "-", "+ ", "=", "#", "~~~", ">" and
#: "1. " at a line's start); never a quote: no editor escapes one, and a JSON string's "\\"" stays as written
_MD_PUNCT = r"!#-&(-/:-@\[-`{-~"
_MD_ESCAPE = re.compile(r"\\([" + _MD_PUNCT + r"])")
#: the escapes only markdown writes, where a program's own text has none: a backslash before "_", "*", "`", "[" or "]"
#: ("NCCL\\_P2P\\_DISABLE", "8 \\* H100", "\\[rank0\\]"); a text holding one in an escaped token is read back
MD_TELLS = "_*`[]"
#: a token (no spaces) that holds a backslash, and an escaped one: every backslash in it an escape, and none of MD_TELLS
#: bare inside it, as a converter escapes them all (a Windows path's "\\Users", a string's "\\n" or "\\"", a regex's
#: "\\d" or "\\[rank[0-9]+\\]" is none: the token stays as written); emphasis a converter writes around a word
#: ("**(fully\\_shard)**") does not count
_MD_TOKEN = re.compile(r"[^\s\\]*\\\S*")
_MD_ESCAPED_TOKEN = re.compile(r"(?:[^\\_*`\[\]]|\\[" + _MD_PUNCT + r"])*")
_MD_EMPHASIS = re.compile(r"^[*_]+|(?<!\\)[*_]+$")  # a converter's emphasis around a word, not an escaped "*" or "_"


def _md_escaped(token: str) -> bool:
    return _MD_ESCAPED_TOKEN.fullmatch(_MD_EMPHASIS.sub("", token)) is not None


def _md_token(m: re.Match) -> str:
    token = m.group(0)
    return _MD_ESCAPE.sub(r"\1", token) if _md_escaped(token) else token


def unescape_markdown(text: str) -> str:
    """A paste that an editor's conversion to markdown escaped (CommonMark's backslash escapes: "NCCL\\_P2P\\_LEVEL",
    "\\[rank0\\]:", "\\# nvidia-smi topo -m") with its characters as the program printed them: where a token of the
    text's head outside a code fence escapes one of MD_TELLS, every escaped token (_MD_ESCAPED_TOKEN) outside a fence
    loses its escapes; a Windows path, a string's "\\n" or "\\"", a regex and a fenced block
    (no editor escapes inside one) stay as written, and so does any text without such a token."""
    if "\\" not in text[:HEAD_CHECK]:
        return text
    if not any(_md_escaped(m.group(0)) and any(c in MD_TELLS for c in _MD_ESCAPE.findall(m.group(0)))
               for m in _MD_TOKEN.finditer(text, 0, HEAD_CHECK)):
        return text
    out, fenced = [], False
    for line in text.split("\n"):
        if ("`" in line or "~" in line or "{" in line) and _FENCE.match(line):
            fenced = not fenced
        elif not fenced and "\\" in line:
            line = _MD_TOKEN.sub(_md_token, line)
        out.append(line)
    return "\n".join(out)


def read_forms(text: str) -> str:
    """The text as its program printed it where a log system or a page changed its lines, not its words: an editor's
    markdown escapes read back (:func:`unescape_markdown`), structured records as what they say (:func:`read_records`), a
    blank line after every line taken away (:func:`undouble`), a log pasted newest first in its own order
    (:func:`oldest_first`); any other text unchanged. Lines it makes are no lines a paste lost (``Paste.relined`` does not
    count them)."""
    return oldest_first(undouble(read_records(unescape_markdown(text))))


def reline(text: str) -> str:
    """The text as :func:`read_forms` reads it, and then :func:`restore_breaks`: what both readers number."""
    return restore_breaks(read_forms(text))


def restore_breaks(text: str) -> str:
    """A paste whose line breaks were lost (a chat, a forum mirror or a copy from a web page joined the lines with
    spaces) with a line break again before every place where a program starts a line of its own (``_LINE_STARTS``),
    and a line that holds a string's escaped lines (:func:`unescape_breaks`) or HTML's line break tags (:data:`_BR`)
    with them as lines, so that each reader sees the lines it reads; any other text unchanged."""
    if "<br" in text[:HEAD_CHECK] or "<BR" in text[:HEAD_CHECK]:
        text = _br_lines(text)
    if "\\n" in text:
        text = "\n".join(unescape_breaks(line) if "\\n" in line else line for line in text.split("\n"))
    if len(text) <= RELINE_AVG or text.count("\n") * RELINE_AVG > len(text):
        return text
    out = []
    for line in text.split("\n"):
        if len(line) > RELINE_AVG:
            starts = sum(1 for _ in _LINE_STARTS.finditer(line, 0, 200000))
            if starts >= RELINE_MIN_STARTS:
                line = _INLINE_FENCE.sub(lambda m: "\n```" + m.group(1) + "\n", line)
                line = "\n".join(_matrix_rows(part) for part in _LINE_STARTS.sub(_line_break, line).split("\n"))
        out.append(line)
    return "\n".join(out)


def _keep_prefixes(removed: Optional[list[str]], rx: re.Pattern, text: str) -> None:
    """The distinct prefixes ``rx`` finds in the text's head, appended to ``removed`` (at most 8 kept): what a prefix
    says (``Paste.prefixes``: Ray's actor names the program)."""
    if removed is not None:
        removed.extend(dict.fromkeys(m.group(0).strip() for m in rx.finditer(text, 0, HEAD_CHECK) if m.group(0).strip()))
        del removed[8:]


def _most_lines(text: str, rx: re.Pattern) -> bool:
    """Do four in five of the three or more non-blank lines of the text's head start with ``rx``, or both of two (an
    excerpt of two lines: a match and its context line, grep -A1)?"""
    head = _head(text)
    if len(head) == 2:
        return all(rx.match(line) for line in head)
    return len(head) >= 3 and sum(1 for line in head if rx.match(line)) * 5 >= len(head) * 4


def _numbered_by_tool(text: str) -> bool:
    """Does (nearly) every line of the text's head start with a line number that grep -n or cat -n put there: four in five
    of three or more non-blank lines, or both of two, their numbers rising in nine of ten steps (a log's own counters and
    labels repeat or restart: srun's task ids, "1: lo:", "2: eth0:" of ip a only on some lines)?"""
    if not _most_lines(text, _LINE_NUMBER):
        return False
    numbers = [int(m.group(1)) for m in map(_LINE_NUMBER.match, _head(text)) if m]
    rising = sum(1 for a, b in zip(numbers, numbers[1:]) if b > a)
    return rising * 10 >= (len(numbers) - 1) * 9


#: a pager's or an editor's line number before each line: right-aligned, then one space (less -N: in 7 columns, wider as
#: the numbers grow; vim's 'number': in 'numberwidth' - 1 columns, 3 by default), a blank line's number alone
_VIEWER_NUMBER = re.compile(r"^( *)(\d{1,7})(?: |$)", re.M)
_WORD = re.compile(r"[A-Za-z]{3}")


def _numbered_by_viewer(text: str) -> bool:
    """Does every line of the text's head (nine in ten of three or more; of two, "1" and "2") start with a viewer's line
    number (``_VIEWER_NUMBER``): from 1 up, one more each line in nine of ten steps, right-aligned at one column while
    the numbers fit it, and words after some of them? A program's rows labelled 0, 1, 2 (a bandwidth matrix's, without
    its header) are none: their labels start at 0 and numbers follow them."""
    head = _head(text)
    found = [m for m in map(_VIEWER_NUMBER.match, head) if m]
    if len(head) < 2 or len(found) * 10 < len(head) * 9 or int(found[0].group(2)) < 1:
        return False
    if len(head) == 2 and [m.group(2) for m in found] != ["1", "2"]:
        return False  # two lines: a whole file's (an excerpt's numbers alone say too little)
    numbers = [int(m.group(2)) for m in found]
    if sum(1 for a, b in zip(numbers, numbers[1:]) if b == a + 1) * 10 < (len(numbers) - 1) * 9:
        return False
    width = len(found[0].group(1)) + len(found[0].group(2))
    return (all(len(m.group(1)) + len(m.group(2)) == max(width, len(m.group(2))) for m in found)
            and any(_WORD.search(m.string, m.end()) for m in found))


def unprefix(text: str, removed: Optional[list[str]] = None, rejoined: Optional[list[int]] = None) -> str:
    """The text without the prefixes launchers put before every line (``_LAUNCHER``: torchrun's ``[rank0]:``, Open MPI's
    ``[1,0]<stdout>:``, Ray's ``(pid=...)``, docker compose's ``name-1  |``, a timestamp, the journal's; grep's file name and
    grep -n's or cat -n's line number where most lines carry one (``_FILE_PREFIX``, ``_LINE_NUMBER``); ``_SRUN_LABEL``: srun's
    ``0: `` and pdsh's ``host: `` where most lines carry it) and the marks a program
    frames its lines with (:func:`unframe`), the same lines
    otherwise: what tidy removes first, and what the matcher's lines
    lose too, so that an entry's pattern written for a program's line start reads it under any launcher. ``removed`` gets
    the distinct prefixes of the first lines (``Paste.prefixes``); ``rejoined`` the numbers of the lines a reflow of the
    launcher's lines had cut, joined again here (:func:`unreflow`)."""
    # a frame around a launcher's lines first (a panel printing a job's output, pytest an exception whose message holds
    # them), and again last: Julia and pytest print inside what a launcher or a collector prefixes
    text = unframe(text)
    # then grep's file name and line number: grep reads a file that holds what the job printed, srun's labels included
    # ("logs/run.out:12:0: RuntimeError ..."), and its numbers would read as srun's "12: " label where a line goes on
    # with a space ("103:   D\D     0      1")
    if _FILE_PREFIX.match(text.lstrip("\n")) and _most_lines(text, _FILE_PREFIX):  # grep -H / -r: a file's name
        _keep_prefixes(removed, _FILE_PREFIX, text)
        text = _FILE_PREFIX.sub("", text)
    if _LINE_NUMBER.match(text.lstrip("\n")) and _numbered_by_tool(text):  # grep -n, cat -n: the line's number
        text = _LINE_NUMBER.sub("", text)
    elif _VIEWER_NUMBER.match(text.lstrip("\n")) and _numbered_by_viewer(text):  # less -N, vim's 'number'
        text = _VIEWER_NUMBER.sub("", text)
    if _PDSH_HOST.match(text.lstrip("\n")) and len(_head(text)) >= 3 and _most_lines(text, _PDSH_HOST):  # pdsh's hosts
        hosts = {m.group(0) for m in _PDSH_HOST.finditer(text, 0, HEAD_CHECK)}
        if len(hosts) <= PDSH_HOSTS_MAX:
            _keep_prefixes(removed, _PDSH_HOST, text)
            text = _PDSH_HOST.sub("", text)
    # then srun's --label: Slurm puts it before whatever the task prints, a launcher's own prefix included
    # ("0: (EngineCore_DP1 pid=2944727) RuntimeError: ...")
    if ": " in text[:HEAD_CHECK]:
        head = _head(text)
        if len(head) >= 2 and sum(1 for line in head if _SRUN_LABEL.match(line)) * 2 > len(head):
            text = _SRUN_LABEL.sub("", text)
    if _LAUNCHER_HINT.search(text, 0, HEAD_CHECK):
        _keep_prefixes(removed, _LAUNCHER, text)  # the distinct prefixes of the first lines, for what they say
        if _LAUNCHER.search(text, 0, HEAD_CHECK):
            # a mail client or an archive reflowed the lines as the launcher printed them, its prefix counted in their
            # width, and left each remainder without one: joined first, at that width, where the whole paste shows it
            text = unreflow(unwrap(text), (), rejoined)
        text = _LAUNCHER.sub("", text)
    return unframe(text)


#: bat's grid around a file it prints: its rules ("───────┬──────", "┼", "┴") and its header's "       │ File: train.log";
#: blank lines in their place (its line numbers before each line, "   1   │ ", are _LINE_NUMBER's)
_BAT_RULE = re.compile(r"^[ \t]*\u2500+[\u252c\u253c\u2534]\u2500*[ \t]*$|^[ \t]+\u2502 File: [^\n]*$", re.M)


def unframe(text: str) -> str:
    """The text without the marks a program frames its lines with (a box's edges, pytest's "E" marker, bat's grid), on
    the lines that carry them; the same lines otherwise."""
    if "\u2500\u252c" in text[:HEAD_CHECK]:
        text = _BAT_RULE.sub("", text)
    if "\nE   " in text or text.startswith("E   "):
        text = _PYTEST_RUN.sub(_pytest_unmarked, text)
    if not text.isascii() and _BOX_HINT.search(text):
        text = _BOX.sub(_unboxed, text)
    return text


def _pytest_unmarked(m: re.Match) -> str:
    """A run of pytest's exception lines without the marker and pytest's indent (the run's least), each line's own kept."""
    run = m.group(0)
    if "E   " not in run:  # a lone "E" line is no pytest's
        return run
    indent = min(len(s) for s in _PYTEST_LINE.findall(run) if s) if re.search(r"^E +\S", run, re.M) else 3
    return re.sub(r"^E(?: {%d}| *$)" % indent, "", run, flags=re.M)


def _unboxed(m: re.Match) -> str:
    """What is left of a box's line: nothing before the text, and for a line with a right edge too, what stood inside."""
    return m.group(1) or ""


def tidy(text: str, removed: Optional[list[str]] = None, commands: Optional[list[int]] = None,
         rejoined: Optional[list[int]] = None) -> str:
    """The text without quote marks, launchers' line prefixes (``_LAUNCHER``, ``_SRUN_LABEL``; their distinct forms
    appended to ``removed``), code fences, a collapsed section's tags (GitHub's HTML, a Discourse forum's BBCode) and
    shell prompts (``_QUOTE``, ``_FENCE``, ``_SECTION_TAG``, ``_BBCODE_TAG``, ``_PROMPT``), a common indent, a
    terminal's hard wrap (:func:`unwrap`) or a mail client's reflow of the whole paste (:func:`unreflow`), a markdown table
    as the tool's own (:func:`unpipe_tables`), with HTML's
    escapes read back (a paste copied from a web page or a mail: "&lt;inactive&gt;", "GPU(row) -&gt; GPU(column)"),
    without invisible characters (``_INVISIBLE``) and with a web page's non-breaking spaces as spaces (``_WIDE_SPACE``)
    and typographic quotes and an input method's fullwidth forms as ASCII ones (regex_safety.read_fullwidth); the same
    lines otherwise. ``commands`` gets the numbers of the lines whose shell prompt was removed: a command typed, not a
    sentence; ``rejoined`` the numbers of the lines a reflow's soft break had cut (:func:`unreflow`)."""
    if not text.isascii():  # every character of these three is outside ASCII: a log that is all ASCII skips them (C, ms)
        if _INVISIBLE.search(text):
            text = _INVISIBLE.sub("", text)
        if _WIDE_SPACE.search(text):
            text = _WIDE_SPACE.sub(" ", text)
        if _TYPOGRAPHIC.search(text):
            text = text.translate(TYPOGRAPHIC_QUOTES)
        text = read_fullwidth(text)
    text = unescape_html(text)
    width = _padded_width(text)
    if width:
        text = _unpadded(text, width)
    if text[:1] in (">", " ", "\t") or _QUOTE.search(text):  # one fast search first: a 20 MB log has no quote mark
        text = _QUOTE.sub("\n", "\n" + text)[1:]
    text = unprefix(text, removed, rejoined)
    if "<details" in text or "<summary" in text or "<DETAILS" in text or "<SUMMARY" in text:
        text = _SECTION_TAG.sub("", text)
    if "[/" in text:
        text = _BBCODE_TAG.sub(lambda m: m.group(1) or "", text)
    if "```" in text or "~~~" in text or "{noformat}" in text or "{code" in text:
        text = _FENCE.sub("", text)
    text = unpipe_tables(text)
    if _INDENTED_START.match(text):
        head = _head(text)
        if head and all(line[0] in " \t" for line in head):
            # a block indented as a whole (markdown's code block by indentation, a quoted mail): as the tool printed it
            import textwrap

            text = textwrap.dedent(text)
    typed: list[int] = commands if commands is not None else []
    if "$" in text or "# " in text:
        # a prompt only before a command people run (a "# " row of nccl-tests' table is no prompt)
        at = [0, 1]  # where the line count stands (offset, line): prompts come in order, so each part is counted once

        def prompt(m: re.Match) -> str:
            if not _PROMPT_CMD.match(text, m.end()):
                return m.group(0)
            at[1] += text.count("\n", at[0], m.start())
            at[0] = m.start()
            typed.append(at[1])
            return ""

        text = _PROMPT.sub(prompt, text)
    text = unreflow(unwrap(text), typed, rejoined)
    if len(text) <= WRAP_TEXT_MAX and (" \n" in text or "\t\n" in text or text[-1:] in (" ", "\t")):
        text = _TRAILING.sub("", text)  # (a paste copied off a screen; a long log's own spaces cost 0.4 s per 20 MB)
    return text


#: a markdown table's delimiter row, GitHub's (GFM): cells of dashes, a colon at either end for the alignment, between pipes
#: ("|---|:--:|", "| --- | --- |", "--- | ---"); a line of dashes alone is no table's
MD_SEPARATOR = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$", re.M)
_MD_CELL_SPLIT = re.compile(r"(?<!\\)\|")


def _md_cells(line: str) -> list[str]:
    """The cells of a markdown table's row: between its pipes (an escaped one, "\\|", is a cell's), each stripped."""
    st = line.strip()
    if st.startswith("|"):
        st = st[1:]
    if st.endswith("|") and not st.endswith("\\|"):
        st = st[:-1]
    return [cell.strip().replace("\\|", "|") for cell in _MD_CELL_SPLIT.split(st)]


def unpipe_tables(text: str) -> str:
    """The text with every markdown table (a row of cells between pipes and, under it, a delimiter row of as many cells,
    MD_SEPARATOR; then its body, each line with a pipe until a blank one; where the text's first 64 KB hold one) as a tool
    prints a table: each row's cells
    apart by two spaces, the delimiter row blank (the lines keep their numbers). A tool's own table that someone put into
    markdown in an issue or a blog ("| D\\D | 0 | 1 |", "|---|---|---|", "| 0 | 911.08 | 20.10 |") reads as the tool's:
    p2pBandwidthLatencyTest's matrices, nvbandwidth's, nccl-tests', topo's. nvidia-smi's own table (its rules are "+---+"
    and "|===+===|") has no such delimiter row and stays as it is. The same text where it holds none."""
    # a table in the text's head (an issue's, a post's: markdown is written by hand, not by a program into a long log);
    # one fast scan for a pipe first
    if "|" not in text[:HEAD_CHECK] or not any("|" in m.group(0) for m in MD_SEPARATOR.finditer(text, 0, HEAD_CHECK)):
        return text
    lines = text.split("\n")
    at, pos = 0, 0  # the line of the last delimiter row found, and its offset: counted on from there, once
    for m in MD_SEPARATOR.finditer(text):
        at += text.count("\n", pos, m.start())
        pos = m.start()
        if "|" not in m.group(0) or at == 0 or "|" not in lines[at - 1]:
            continue
        width = len(_md_cells(lines[at]))
        if width < 2 or len(_md_cells(lines[at - 1])) != width:
            continue
        lines[at - 1] = "  ".join(_md_cells(lines[at - 1]))
        lines[at] = ""
        row = at + 1
        while row < len(lines) and "|" in lines[row] and lines[row].strip():
            lines[row] = "  ".join(_md_cells(lines[row]))
            row += 1
    return "\n".join(lines)


def _unpadded(text: str, width: int) -> str:
    """A paste padded to ``width`` without its padding, but for a line that a terminal's width cut right after a space:
    its text ends one column short of the width, and it keeps that space, so that :func:`unwrap` sees it as full as it
    was."""
    return "\n".join(line if len(line) == width and line[-1:] == " " and line[-2:-1] not in (" ", "\t", "")
                     else line.rstrip(" \t") for line in text.split("\n"))


def _padded_width(text: str) -> int:
    """The width a console padded the paste's lines to (of three or more lines in the head, four in five as long as its
    longest, and half of them ending in spaces), or 0."""
    if " \n" not in text[:HEAD_CHECK]:
        return 0
    lines = text[:HEAD_CHECK].split("\n")
    width = max(map(len, lines))
    full = [line for line in lines if len(line) == width]
    padded = (len(lines) >= 3 and len(full) * 5 >= len(lines) * 4
              and sum(1 for line in full if line[-1:] in (" ", "\t")) * 2 >= len(full))
    return width if padded else 0


#: a line end that a text-mode write on Windows made of one already CRLF ("\r\n" written as "\r\r\n": a log saved from a
#: Windows console or a CRLF file copied through a text-mode tool): one line end, as an editor shows it, not a line and a
#: blank one (both readers: Paste and the matcher's Log)
CR_TWICE = "\r\r\n"


def line_ends(text: str) -> str:
    """The text with every line end a "\\n": CR_TWICE, CRLF and a lone CR (an old Mac's, a progress bar's) alike; what both
    readers split lines at (Paste, the matcher's Log)."""
    return text.replace(CR_TWICE, "\n").replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


EXCERPT = 160
#: what the error and prose patterns read of one line: a message is short, and a line of megabytes (a
#: JSON blob, a paste that lost its line breaks) must not cost seconds of regex time
LINE_CAP = 8192

#: Facts about what went wrong (an entry needs one of them); every other key is context.
SYMPTOM_PREFIXES = ("error.", "symptom.", "tool.", "nccl.p2p_fallback", "bench.")


#: what the readers of sentences (prose.py) and of programs' own messages (checks.py) read of a long paste: its first and
#: last characters (whole lines; NCCL INFO lines blanked). People write their sentences, and programs print their verdicts,
#: before or after what they paste; 96 + 32 KB is pages of prose, and the prose patterns cost about 3 ms per KB (a 320 KB
#: sample took 1 s of a 20 MB log's explain)
SAMPLE_HEAD, SAMPLE_TAIL = 96_000, 32_000


#: three words of a sentence (letters, spaces between): what a writer puts before an NCCL line they quote ("every rank
#: freezes at NCCL INFO NVLS tuning"), never NCCL's own prefix ("host:pid:tid [dev] ") nor a launcher's ("(RayWorker
#: pid=4751) ", "[rank0]: ", a log level and a timestamp)
_SENTENCE_BEFORE = re.compile(r"[a-z]{2,}\s+[a-z]{2,}\s+[a-z]{2,}")


#: an INFO line as NCCL prints it: its "host:pid:tid [dev] " prefix (no space in the host) and the message; its head holds
#: no sentence (_quoted_info gives it blank), so the whole run of them is blanked by one substitution (Paste.outside_nccl)
_NCCL_OWN_INFO = re.compile(r"^[^\s:]*:\d+:\d+ \[\d+\] nccl info[^\n]*", re.M | re.I)


def _quoted_info(line: str) -> str:
    """A lower-cased line holding "nccl info", for the readers of sentences: blank where it is NCCL's INFO line (its
    prefix, then the message: NCCL's INFO lines are the NCCL reader's); the writer's words where the line is a sentence
    quoting one, up to the quote (what NCCL printed is still the NCCL reader's alone)."""
    head = line[:line.find("nccl info")]
    return head[:LINE_CAP] if _SENTENCE_BEFORE.search(head) else ""


#: a paragraph that a mail client, a mailing list's archive or a fixed-width page reflowed: its lines at most this long
#: (mail at 72-78 columns, the web's fixed-width views at 80-100) and at least WRAP_WIDTH_MIN; a longer line is written
#: as one, never reflowed
REFLOW_WIDTH_MAX = 100
#: lines of a paragraph that start with the same this many characters are a program's records ("/sys/bus/pci/devices/..."),
#: as lines starting with the same word are ("NCCL DIAG ...", "GPU 0: " / "NVML: "): never a reflow's remainders
RECORD_HEAD = 8
_LIST_ITEM = re.compile(r"^(?:[+•]\s|\d{1,2}[.)]\s|[a-z][.)]\s)")  # (RECORD_START has "-" and "*")


def soft_breaks(lines: list[str], width: int = 0) -> list[int]:
    """The indexes ``i`` of ``lines`` whose break before line ``i + 1`` is a reflow's, not the writer's: in a paragraph (a
    run of non-blank lines) whose longest line W is WRAP_WIDTH_MIN to REFLOW_WIDTH_MAX long, a line that the next line's
    first word would have made longer than W (the rule any reflow follows: a word goes to the next line only where it did
    not fit), neither line indented (code, a traceback), the next one no record of its own (RECORD_START: a timestamp,
    a bracket, a traceback's line; grep's or cat's line number; a line starting with a word, or with the RECORD_HEAD
    characters, that another line of the paragraph starts with, as a program's lines do), no table row and no list item.
    With ``width`` (a whole paste reflowed at that width, :func:`unreflow`), W is that width for every paragraph, an
    indented line may be cut too (a reflow leaves its remainder unindented), and a paragraph counts only where half of
    the breaks between its lines or more are such cuts (a reflow fills every line; a paragraph written at a narrower
    width of its own, beside longer log lines, shows a cut here and there)."""
    out: list[int] = []
    i, n = 0, len(lines)
    while i < n:
        if not lines[i].strip():
            i += 1
            continue
        j = i
        while j < n and lines[j].strip():
            j += 1
        w = width or max(len(line.rstrip()) for line in lines[i:j])
        if j - i >= 2 and WRAP_WIDTH_MIN <= w <= REFLOW_WIDTH_MAX:
            # the first words, and the first RECORD_HEAD characters, of two lines or more: a program's records
            words = Counter(line.split(None, 1)[0] for line in lines[i:j])
            heads = Counter(line.lstrip()[:RECORD_HEAD] for line in lines[i:j])
            record_words = {word for word, count in words.items() if count > 1}
            record_heads = {head for head, count in heads.items() if count > 1 and len(head) == RECORD_HEAD}
            if record_words or record_heads:
                # but the remainders of one message printed again and again (each rank's "NCCL WARN Error: network AWS"
                # / "Libfabric not found.", the kernel's "BAR 1: no space for [mem size" / "0x800000000 64bit pref]"),
                # cut the same way each time: each after a line that ends in the same word and starts otherwise
                remainders = _repeated_remainders(lines[i:j], record_words, w)
                record_words -= remainders
                if remainders:  # a head those remainders share, alone or with a line of its own ("0x80000000-...")
                    for head in list(record_heads):
                        starts = [line.split(None, 1)[0] for line in lines[i:j] if line.lstrip()[:RECORD_HEAD] == head]
                        if not remainders.isdisjoint(starts) and all(s in remainders or words[s] == 1 for s in starts):
                            record_heads.discard(head)
            pairs, cuts = 0, []
            for k in range(i, j - 1):
                a, b = lines[k].rstrip(), lines[k + 1]
                if ((a[:1] in " \t" and not width) or b[:1] in " \t" or RECORD_START.match(b) or _TABLE_ROW.match(b)
                        or _LIST_ITEM.match(b) or _LINE_NUMBER.match(b) or b.split(None, 1)[0] in record_words
                        or b.lstrip()[:RECORD_HEAD] in record_heads):
                    continue  # (lines that start with the same word are a program's records: "NCCL DIAG ...", "Link 0: ...")
                pairs += 1
                if len(a) + 1 + len(b.split(None, 1)[0]) > w:
                    cuts.append(k)
            if not width or len(cuts) * 2 >= pairs:
                out.extend(cuts)  # (a reflow at the paste's width fills every line of a paragraph: a paragraph where it
                # would have cut at most a few of the breaks between its lines was written so, at a width of its own)
        i = j
    return out


_COLUMNS = re.compile(r"\S(?: {2,}|\t)\S")  # words in aligned columns: a table's row, no sentence


def _repeated_remainders(lines: list[str], words: set[str], width: int) -> set[str]:
    """Of ``words`` (the first words of two lines or more of a paragraph), those whose every line follows a line that
    starts otherwise, ends in the same word as the others and would have been longer than ``width`` with that word: the
    remainders of one message that a reflow cut the same way each time it was printed, no program's records (PyTorch's
    "CUDA error: ..." / "Compile with `TORCH_USE_CUDA_DSA` ..." printed twice, once after a short line, is no cut)."""
    out = set()
    firsts = [line.split(None, 1)[0] for line in lines]
    for word in words:
        before = [k - 1 for k in range(1, len(lines)) if firsts[k] == word]
        if (len(before) == firsts.count(word)  # (never the paragraph's first line)
                and not any(_COLUMNS.search(lines[k + 1]) for k in before)  # a table's rows cut ("SYS     0-55 ...")
                and all(firsts[k] != word and len(lines[k].rstrip()) + 1 + len(word) > width for k in before)
                and len({lines[k].rsplit(None, 1)[-1] for k in before}) == 1):
            out.add(word)
    return out


#: how the remainder of a soft break that stands alone starts: mid-sentence, a small letter or a quoted word ("'the
#: operation ..."); the longest line of any paste is "full", and the line a writer or a program starts after it, "NCCL
#: 2.18", "0", is no remainder
_MID_SENTENCE = re.compile(r"""[ \t]*(?:[a-z]|['"(][A-Za-z])""")


def unreflow(text: str, commands: Iterable[int] = (), rejoined: Optional[list[int]] = None) -> str:
    """A paste that a mail client, a mailing list's archive or a fixed-width page reflowed between words at one width (its
    longest line holding a space, WRAP_WIDTH_MIN to REFLOW_WIDTH_MAX long, and a soft break at that width,
    :func:`soft_breaks`; one alone only where its remainder goes on mid-sentence, _MID_SENTENCE) with each cut line
    joined again to its remainder by a space, the remainder's line left empty (the same number of lines, as
    :func:`unwrap` does for a terminal's hard wrap): a message, a JSON value or a table's header whole on the line where
    it starts, for every reader. ``commands``: the numbers of lines typed at a prompt
    (tidy's), never joined to the line before them, nor to the next unless it goes on mid-sentence; ``rejoined`` gets
    the numbers of the lines joined to their remainders. Anything else unchanged."""
    lines, width = _wrap_width(text)
    if not width:
        return text
    # the width is the longest line that holds a space: a reflow puts a word longer than its width (a path, a URL) on a
    # line of its own, longer than the rest
    width = max((len(line.rstrip()) for line in lines if " " in line.strip()), default=0)
    if not WRAP_WIDTH_MIN <= width <= REFLOW_WIDTH_MAX:
        return text
    typed = {n - 1 for n in commands}  # a command typed at a prompt starts a record; what it printed next too, unless
    # it goes on mid-sentence (a long command reflowed)
    cut = [i for i in soft_breaks(lines, width)
           if i + 1 not in typed and (i not in typed or _MID_SENTENCE.match(lines[i + 1]))]
    if not cut or (len(cut) == 1 and not _MID_SENTENCE.match(lines[cut[0] + 1])):
        return text  # one cut alone only mid-sentence: not a writer's "NCCL 2.18", a program's "0" or "-1"
    if rejoined is not None:
        rejoined.extend(i + 1 for i in cut)
    return _joined(lines, cut, " ")


class Paste:
    """The text, split into lines once; ``line_of(offset)`` for matches over the whole text."""

    def __init__(self, text: str) -> None:
        if "\x1b" in text:
            text = _ANSI.sub("", text)  # terminal colours (nvidia-smi underlines its header)
        text = line_ends(text)
        self.prefixes: list[str] = []  # what tidy removed before every line (a launcher's, a collector's)
        self.commands: list[int] = []  # the lines a shell prompt stood before (tidy removed it): commands, not sentences
        self.reflowed: list[int] = []  # the lines a mail client's or an archive's reflow had cut, joined again by tidy
        text = read_forms(text)  # records, doubled lines, newest first: as the program printed them
        relined = restore_breaks(text)  # a paste that lost its line breaks, with them again: the restored lines are counted
        self.relined = relined.count("\n") - text.count("\n")  # line breaks restored (0: the paste's own lines)
        text = tidy(relined, self.prefixes, self.commands, self.reflowed)
        self.text = text
        self.lines = text.split("\n")
        self._starts: Optional[list[int]] = None
        self._lower: Optional[str] = None
        self._plain: Optional[str] = None
        self._plain_lines: Optional[list[str]] = None
        self._plain_starts: list[int] = []
        self._samples: dict[tuple, Any] = {}  # (head, tail): the View; ("flowed", head, tail): its flowed text
        self._outside: Optional["Paste"] = None

    @property
    def lower(self) -> str:
        if self._lower is None:
            self._lower = self.text.lower()
        return self._lower

    def outside_nccl(self) -> "Paste":
        """This paste with NCCL's own INFO lines ("host:pid:tid [d] NCCL INFO ...") blank, every line number kept: what
        the readers of other programs' output read (nvidia-smi, lspci, the kernel log, the CUDA samples, DCGM, df), none
        of which is ever printed on such a line. A 20 MB NCCL log is mostly them, and each of those readers' first
        question (does the text hold my program's words?) was a pass over all of it. The paste itself where there are
        none; built once."""
        if self._outside is None:
            if "nccl info" not in self.lower:
                self._outside = self
            else:
                other = Paste.__new__(Paste)
                other.__dict__.update(self.__dict__)
                other.text = _NCCL_OWN_INFO.sub("", self.text)
                other.lines = other.text.split("\n")
                other._starts = other._lower = other._plain = other._plain_lines = None
                other._plain_starts, other._samples = [], {}
                other._outside = other
                self._outside = other
        return self._outside

    @property
    def plain(self) -> str:
        """The lower-cased text with NCCL's INFO lines blanked (line numbers kept): what the error
        and prose patterns read. The NCCL reader has those lines; a 20 MB log is mostly them."""
        if self._plain is None:
            low = self.lower
            if "nccl info" in low:
                low = self.outside_nccl().text.lower()  # NCCL's own INFO lines blank (a 20 MB log is mostly them)
            lines = low.split("\n")
            if "nccl info" in low or max(map(len, lines)) > LINE_CAP:
                # what is left: sentences quoting an INFO line (_quoted_info), lines too long for a regex
                self._plain = "\n".join(_quoted_info(l) if "nccl info" in l else l[:LINE_CAP] for l in lines)
            else:
                self._plain = low
        return self._plain

    def select(self, words: tuple[str, ...], context: int = 1, cap: int = 20000) -> "View":
        """The lines of ``plain`` holding any of ``words`` (lower case), each with ``context``
        following lines (a message wrapped onto the next line), as one small text to run a regex
        on; ``View.line_of`` maps its offsets back to the paste's line numbers."""
        plain = self.plain
        if self._plain_lines is None:
            self._plain_lines = plain.split("\n")
            self._plain_starts = [0, *accumulate(len(line) + 1 for line in self._plain_lines[:-1])]
        pstarts = self._plain_starts
        nos: set[int] = set()
        for w in words:
            i = plain.find(w)
            while i >= 0 and len(nos) < cap:
                nos.add(bisect_right(pstarts, i))
                end = plain.find("\n", i)
                if end < 0:
                    break
                i = plain.find(w, end)
        n_lines = len(self._plain_lines)
        keep = sorted({n + k for n in nos for k in range(context + 1) if n + k <= n_lines})
        parts, starts, pos = [], [], 0
        for n in keep:
            line = self._plain_lines[n - 1]
            starts.append(pos)
            parts.append(line)
            pos += len(line) + 1
        return View("\n".join(parts), starts, keep)

    def sample(self, head: int = 1_000_000, tail: int = 256_000) -> "View":
        """The first ``head`` and last ``tail`` characters of ``plain`` (whole lines) as a View:
        what the prose patterns read. People write their sentences around a log, not inside it.
        Built once per size and kept (the readers of sentences and of programs' messages read the same one)."""
        view = self._samples.get((head, tail))
        if view is None:
            view = self._samples[(head, tail)] = self._sample(head, tail)
        return view

    def flowed(self, head: int = 1_000_000, tail: int = 256_000) -> str:
        """The text of ``sample(head, tail)`` with each soft line break of a reflowed paragraph a space (:func:`soft_breaks`,
        on the lines as written): what the readers of sentences read, so that a phrase a mail client or a fixed-width
        page broke ("peer access is not" / "supported") is one again. The same length: the sample's ``line_of`` holds
        for every offset. Built once per size."""
        key = ("flowed", head, tail)
        text = self._samples.get(key)
        if text is None:
            view = self.sample(head, tail)
            originals = [self.line(n) for n in view.numbers]
            parts, last = [], 0
            for i in soft_breaks(originals):
                at = view.start(i + 1) - 1  # the "\n" ending line i
                parts += [view.text[last:at], " "]
                last = at + 1
            text = self._samples[key] = "".join(parts) + view.text[last:] if parts else view.text
        return text

    def _sample(self, head: int, tail: int) -> "View":
        self.select(())  # builds the plain lines
        lines = self._plain_lines or []
        keep: list[int] = []
        size = 0
        for n, line in enumerate(lines, 1):
            if size > head:
                break
            keep.append(n)
            size += len(line) + 1
        first_tail = len(lines) + 1
        size = 0
        for n in range(len(lines), keep[-1] if keep else 0, -1):
            if size > tail:
                break
            first_tail = n
            size += len(lines[n - 1]) + 1
        keep += list(range(max(first_tail, (keep[-1] + 1) if keep else 1), len(lines) + 1))
        parts, starts, pos, numbers = [], [], 0, []
        blank = False
        for n in keep:
            line = lines[n - 1]
            if not line and blank:
                continue  # a run of blank lines (an NCCL log's INFO lines, blanked) reads as one paragraph break
            blank = not line
            starts.append(pos)
            parts.append(line)
            numbers.append(n)
            pos += len(line) + 1
        return View("\n".join(parts), starts, numbers)

    @property
    def starts(self) -> list[int]:
        if self._starts is None:
            self._starts = [0, *accumulate(len(line) + 1 for line in self.lines[:-1])]
        return self._starts

    def line_of(self, offset: int) -> int:
        """1-based line number of a character offset of ``text``."""
        return bisect_right(self.starts, offset)

    def first_line(self, *markers: str) -> int:
        """The line of the first of ``markers`` found in the text (1 when none is)."""
        hits = [i for i in (self.text.find(m) for m in markers) if i >= 0]
        return self.line_of(min(hits)) if hits else 1

    def line(self, no: int) -> str:
        return self.lines[no - 1] if 0 < no <= len(self.lines) else ""

    def cite(self, no: int) -> str:
        s = " ".join(self.line(no).split())
        if len(s) > EXCERPT:
            s = s[:EXCERPT - 1] + "…"
        return f"line {no} of the paste: {s}"


class View:
    """Selected lines of a paste joined into one text (see ``Paste.select``)."""

    def __init__(self, text: str, starts: list[int], numbers: list[int]) -> None:
        self.text, self._starts, self._numbers = text, starts, numbers

    def line_of(self, offset: int) -> int:
        return self._numbers[bisect_right(self._starts, offset) - 1] if self._numbers else 1

    def start(self, i: int) -> int:
        """The offset in ``text`` where its ``i``-th line (0-based) starts."""
        return self._starts[i]

    @property
    def numbers(self) -> list[int]:
        """The paste's line numbers of this view's lines, in order."""
        return self._numbers


@dataclass
class Fact:
    subject: str
    key: str
    value: Any
    line: int


@dataclass
class Collector:
    """Where parsers put what they read. The first value of a (subject, key) wins; other values are
    kept as findings of their own only with ``again=True`` (several CUDA errors in one paste)."""

    paste: Paste
    findings: list[Finding] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    facts: dict[tuple[str, str], Fact] = field(default_factory=dict)
    bus_to_gpu: dict[str, int] = field(default_factory=dict)  # "0000:3b:00.0" -> GPU index
    structured: dict[str, Any] = field(default_factory=dict)  # per format, what import needs
    notes: list[str] = field(default_factory=list)
    seen: set = field(default_factory=set)  # (subject, key, value) already a finding
    #: the host's own link between two of its GPUs named by bus id ("0000:3b:00.0"), (GB/s one way, what it is), where
    #: the text is read beside a host (explain on a live host, --demo, --replay): a pasted tool's figures are judged
    #: against it where the paste does not say the link (tools.link_floor); None when the text is read alone
    host_links: Optional[Callable[[str, str], Optional[tuple[float, str]]]] = None

    def kind(self, name: str) -> None:
        if name not in self.kinds:
            self.kinds.append(name)

    def tool(self, name: str, line: int) -> None:
        """The paste holds this tool's output (text.tool; several tools give several findings)."""
        self.add("host", "text.tool", name, line, severity="info", again=True)

    def has(self, subject: str, key: str) -> bool:
        return (subject, key) in self.facts

    def get(self, subject: str, key: str, default: Any = None) -> Any:
        f = self.facts.get((subject, key))
        return f.value if f else default

    def add(self, subject: str, key: str, value: Any, line: int, summary: Optional[str] = None,
            severity: Optional[str] = None, again: bool = False, inferred: bool = False) -> bool:
        """One fact of the text, from ``line``. ``inferred``: the line does not say it, a rule reads it from
        the line's shape (a VM from its bus ids): cited "inferred from line N", it is no setup the text
        describes (the matcher offers no candidate on it alone)."""
        if value is None or value == "":
            return False
        if (subject, key) in self.facts and not again:
            return False
        mark = (subject, key, repr(value))
        if mark in self.seen:  # "again" adds another value, never the same one twice
            return False
        self.seen.add(mark)
        if (subject, key) not in self.facts:
            self.facts[(subject, key)] = Fact(subject, key, value, line)
        if severity is None:
            severity = "problem" if key.startswith(SYMPTOM_PREFIXES) and value not in (False, "ok", "OK") else "info"
        who = "" if subject == "host" else f"{subject}: "
        self.findings.append(Finding(
            id=f"text.{key}", subject=subject, severity=severity,
            summary=summary or f"{who}{key} = {value}",
            evidence=[("inferred from " if inferred else "") + self.paste.cite(line)], facts={key: value}))
        return True

    def withdraw(self, subject: str, key: str) -> None:
        """Take back a fact a later rule shows to be no fact (its value and its finding): the rules in read.derive."""
        self.facts.pop((subject, key), None)
        self.findings[:] = [f for f in self.findings if not (f.subject == subject and key in f.facts)]

    def gpu_of_bus(self, bus: Optional[str]) -> Optional[int]:
        return self.bus_to_gpu.get(norm_bus(bus)) if bus else None

    def bus_of_gpu(self, gpu: int) -> Optional[str]:
        """The bus id the paste gives GPU ``gpu`` (the first it noted), None where it gives none."""
        return next((b for b, g in self.bus_to_gpu.items() if g == gpu), None)

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
