"""How robust the text diagnosis is to the way a paste reaches us: every corpus case whose class p2ptop puts in the
top 3 is explained again after a change that does not alter what the text says (markdown quote marks, CRLF line ends, a web page's non-breaking spaces, typographic quotes and dashes,
a launcher's, log collector's or the journal's prefix before every line, grep's or cat's file name and line number, a hard wrap at 80 columns that cuts words, a mail client's reflow at 72 columns, indentation, a literal block after a sentence, HTML's escapes, a terminal's colour codes, line breaks lost, kubectl's
pod prefix, Jenkins' timestamp, Julia's log box, pytest's fail marker, a console that wraps and pads every line, runs of spaces collapsed, each
line's start trimmed, an input method's fullwidth punctuation, vLLM's logger and worker prefixes, a CRLF written twice, a node's
container logs (CRI, Docker's json-file), the journal with RFC 3339 times, HTML's <br>, loggers' record prefixes (glog,
TensorFlow, loguru, Python's logging cookbook, SGLang, DeepSpeed, PyTorch's c10) on each line, pdsh's host, bat's grid, the text as an escaped string (a repr, a JSON value), a tool's
table as a markdown table, Jira's {noformat}, zero-width spaces, tabs for runs of spaces, a blank line after every line, the
lines newest first, with and without their times (Loki, journalctl -r, Kibana), JSON-lines and logfmt records, a service's answer
printed by jq, an editor's markdown escapes, less -N's and vim's line numbers, Ansible's results (JSON and YAML), the
lines as a Python list, a log search's table exported as CSV, GitLab's timestamped job log, a GitHub issue's or a Discourse
forum's collapsed section, a quoted forum post, the fields of an issue template), and
the script prints, per change, how many of those cases keep their class in the top 3, and which lose it.

    python benchmarks/perturb_corpus.py [--split all|dev|...] [--only quote,rank,...]

No GPU needed. Figures are in README ("Text evidence and imported pastes")."""

from __future__ import annotations

import argparse
import csv
import html
import io
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import eval_diagnosis as ev  # noqa: E402  (the one place that calls p2ptop's explain for the corpus)


def _each_line(prefix: str):
    return lambda text: "\n".join(prefix + line for line in text.split("\n"))


def _each_line_colored(text: str) -> str:
    """Each line's first word in a terminal's colour codes (a launcher's prefix or a log level coloured, as vLLM and Ray print them)."""
    out = []
    for line in text.split("\n"):
        head, sep, rest = line.partition(" ")
        out.append(f"\x1b[1;36m{head}\x1b[0m{sep}{rest}" if head else line)
    return "\n".join(out)


def _boxed(text: str) -> str:
    """The text as Julia's ConsoleLogger prints a record of several lines, in a box's left edge."""
    lines = text.split("\n")
    return "\n".join(("┌ " if i == 0 else "└ " if i == len(lines) - 1 else "│ ") + line for i, line in enumerate(lines))


def _reflow(width: int):
    """Each line longer than ``width`` reflowed between words as a mail client does (a word longer than the width stays whole)."""
    import textwrap

    def reflow(text: str) -> str:
        out = []
        for line in text.split("\n"):
            out.extend(textwrap.wrap(line, width, break_long_words=False, break_on_hyphens=False) or [line]
                       if len(line) > width else [line])
        return "\n".join(out)
    return reflow


def _wrap(width: int):
    def wrap(text: str) -> str:
        out = []
        for line in text.split("\n"):
            while len(line) > width:
                out.append(line[:width])
                line = line[width:]
            out.append(line)
        return "\n".join(out)
    return wrap


#: what an East Asian input method types for ASCII punctuation (Unicode's fullwidth forms)
_FULLWIDTH = str.maketrans({":": "\uff1a", ",": "\uff0c", "(": "\uff08", ")": "\uff09", ";": "\uff1b", "!": "\uff01",
                            "?": "\uff1f"})
_CELLS = re.compile(r"\s{2,}|\t")


def _gfm(text: str) -> str:
    """Each run of three or more aligned rows (three or more cells two spaces or a tab apart) as a markdown table (GFM),
    a delimiter row under its first row, as a converter or a person writing an issue makes a tool's table."""
    out, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        j = i
        while j < len(lines) and len(_CELLS.split(lines[j].strip())) >= 3 and "|" not in lines[j]:
            j += 1
        if j - i >= 3:
            head = _CELLS.split(lines[i].strip())
            out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            out += ["| " + " | ".join(_CELLS.split(row.strip())) + " |" for row in lines[i + 1:j]]
            i = j
        else:
            out.append(lines[i])
            i += 1
    return "\n".join(out)


def _docker_json(text: str) -> str:
    """Each line as Docker's json-file log driver records it."""
    return "\n".join(json.dumps({"log": line + "\n", "stream": "stderr", "time": "2026-11-29T14:03:07.123456789Z"},
                                separators=(",", ":")) for line in text.split("\n"))


def _bat(text: str) -> str:
    """The text as bat prints a file: a rule, "File: ...", a rule, each line after its number and the grid's bar, a rule."""
    rule = "\u2500" * 7 + "{}" + "\u2500" * 40
    lines = [f"{n:>6}   \u2502 {line}" for n, line in enumerate(text.split("\n"), 1)]
    return "\n".join([rule.format("\u252c"), "       \u2502 File: train.log", rule.format("\u253c"), *lines, rule.format("\u2534")])


def _newest_first(stamp):
    """Each line after the time it was written (``stamp(n)`` for the n-th line, one second apart), the lines newest first:
    a log viewer's order."""
    return lambda text: "\n".join(reversed([stamp(n) + line for n, line in enumerate(text.split("\n"))]))


def _turndown_escaped(text: str) -> str:
    """The text as turndown's escape() writes it (each line taken as a block's start)."""
    out = []
    for line in text.split("\n"):
        line = re.sub(r"([\\`*_\[\]])", r"\\\1", line)
        line = re.sub(r"^([-=>]|\+ |#{1,6} |~~~)", r"\\\1", line)
        out.append(re.sub(r"^(\d+)\. ", r"\1\\. ", line))
    return "\n".join(out)


def _journal_json(text: str) -> str:
    """The text as journalctl -o json prints a unit's entries: one JSON object a line, journald's address and trusted
    fields first ("__CURSOR", "__REALTIME_TIMESTAMP", "_BOOT_ID" ...), the line in "MESSAGE"."""
    return "\n".join(json.dumps({
        "__CURSOR": f"s=6b1c0e3f;i={n + 4096:x};b=9f2d;m={n:x};t=64a1;x=1c2d", "__REALTIME_TIMESTAMP": str(1764756187000000 + n),
        "__MONOTONIC_TIMESTAMP": str(81234567 + n), "_BOOT_ID": "9f2d7e4c1b3a4d5e8f6a7b8c9d0e1f2a", "PRIORITY": "6",
        "SYSLOG_FACILITY": "3", "_UID": "1000", "_GID": "1000", "_TRANSPORT": "stdout", "_HOSTNAME": "node7",
        "SYSLOG_IDENTIFIER": "python3", "_PID": "41234", "_COMM": "python3", "_SYSTEMD_UNIT": "train.service",
        "MESSAGE": line}) for n, line in enumerate(text.split("\n")))


def _yaml_callback(text: str) -> str:
    """A failed task's result as Ansible's YAML callback prints it: its fields, then the command's output as a literal
    block indented under "stdout: |-" (its list "<omitted>")."""
    block = "\n".join("    " + line if line.strip() else "" for line in text.split("\n"))
    return ("fatal: [gpu-node-07]: FAILED! => changed=true\n  cmd:\n  - bash\n  - run.sh\n  delta: '0:00:01.234567'\n"
            "  msg: non-zero return code\n  rc: 1\n  stderr: ''\n  stderr_lines: <omitted>\n  stdout: |-\n" + block
            + "\n  stdout_lines: <omitted>")


def _csv_export(text: str) -> str:
    """The lines as a log search's table exported as CSV, a record a row: its time, then the line (csv.writer quotes what
    needs it)."""
    out = io.StringIO()
    rows = csv.writer(out, lineterminator="\n")
    rows.writerow(["@timestamp", "@message"])
    rows.writerows([f"2026-11-29T14:03:{n % 60:02}.123Z", line] for n, line in enumerate(text.split("\n")))
    return out.getvalue()


CHANGES = {
    "quote": _each_line("> "),  # a GitHub reply quoting the report
    "crlf": lambda text: text.replace("\n", "\r\n"),  # a paste from Windows
    "nbsp": lambda text: text.replace(" ", "\u00a0"),  # a web page's non-breaking spaces, typographic quotes and dashes, copied with the text
    "quotes": lambda text: text.replace("'", "\u2019").replace('"', "\u201d"),  # typographic quotes (a word processor, a chat)
    "dashes": lambda text: text.replace("--", "\u2014"),  # "--" made an em dash (a word processor, a chat)
    "indent": _each_line("    "),  # a markdown code block by indentation
    # the paste as a literal block after a sentence (reStructuredText's "::", a Markdown reply): indented, but not the
    # sentence before it, so no common indentation to take away
    "block": lambda text: "As follows:\n\n" + "\n".join(("   " + line) if line.strip() else line for line in text.split("\n")),
    "rank": _each_line("[rank1]: "),  # torchrun with a rank prefix
    "default": _each_line("[default0]:"),  # torchrun --tee
    "mpi": _each_line("[1,0]<stdout>:"),  # Open MPI --tag-output
    "ray": _each_line("(RayWorkerWrapper pid=4711, ip=10.0.0.2) "),  # a Ray worker's output
    "compose": _each_line("vllm-1  | "),  # docker compose logs
    "srun": _each_line("0: "),  # Slurm srun --label
    "timestamp": _each_line("2026-11-29T14:03:07.123456789Z "),  # docker logs -t, kubectl logs --timestamps
    "journal": _each_line("Dec 01 11:38:40 node7 python3[41234]: "),  # a job run by systemd, read with journalctl -u
    "grepn": lambda text: "\n".join(f"{n}:{line}" for n, line in enumerate(text.split("\n"), 101)),  # grep -n over a log
    "grepfile": _each_line("logs/train_rank0.log:"),  # grep -H / grep -r: the file's name before every line
    "catn": lambda text: "\n".join(f"{n:6}\t{line}" for n, line in enumerate(text.split("\n"), 1)),  # cat -n
    "html": lambda text: html.escape(text, quote=True),  # copied from a page's source, a mail archive or an API: HTML's escapes
    "ansi": _each_line_colored,  # a coloured terminal copied with its escape codes
    "wrap80": _wrap(80),  # a terminal's hard wrap, cutting words
    "mail72": _reflow(72),  # a mail client's or a mailing list archive's reflow at 72 columns, between words
    "oneline": lambda text: text.replace("\n", " "),  # line breaks lost (a chat or a form field that folds the paste)
    "kubectl": _each_line("[pod/trainer-0/pytorch] "),  # kubectl logs --prefix
    "jenkins": _each_line("[2026-11-29T14:03:07.123Z] "),  # Jenkins' Timestamper in a pipeline's console text
    "julia": _boxed,  # Julia's ConsoleLogger printing a record of several lines: "┌ ", "│ ", "└ "
    "pytest": _each_line("E   "),  # pytest's fail marker before an exception's lines
    "conhost": lambda text: "\n".join(line.ljust(80) for line in _wrap(80)(text).split("\n")),  # a console that wraps and pads
    "squeeze": lambda text: re.sub(r"[ \t]+", " ", text),  # a web page that collapsed runs of spaces (text outside <pre>)
    "lstrip": lambda text: "\n".join(line.lstrip() for line in text.split("\n")),  # a viewer that trimmed each line's start
    # the fortieth session's: an input method's fullwidth punctuation, vLLM's logger (its NewLineFormatter repeats the
    # prefix before every line of a message) and its worker's prefix, a CRLF file written again in text mode, a node's
    # container logs (the CRI format's prefix, Docker's json-file records), the journal's lines with an RFC 3339 time,
    # HTML's "<br>" at each line's end, loggers' record prefixes on each line (a script logging each line of a tool's output
    # as a record: glog's, TensorFlow's, loguru's, the logging cookbook's, SGLang's, DeepSpeed's, PyTorch's c10), pdsh's
    # host, bat's grid and line numbers, the text as a string's escaped lines (a repr,
    # a JSON value: "\\n" for each break, JSON's "\\u" escapes), a tool's
    # table put into a markdown table, Jira's {noformat}, zero-width spaces a web page hides between words, runs of
    # spaces made tabs; and two not mended: a blank line after every line (a web page that made each line a paragraph),
    # the lines newest first (Kibana, Grafana's Loki, journalctl -r)
    "fullwidth": lambda text: text.translate(_FULLWIDTH),
    "vllm": _each_line("INFO 11-29 14:03:07 [worker.py:123] "),
    "vllmworker": _each_line("(VllmWorker rank=0 pid=467) INFO 11-29 14:03:07 [worker.py:123] "),
    "crcrlf": lambda text: text.replace("\n", "\r\r\n"),
    "isojournal": _each_line("2026-11-29T14:03:07.123456+00:00 node7 python3[41234]: "),  # journalctl -o short-iso-precise, rsyslog
    "br": lambda text: text.replace("\n", "<br>\n"),  # copied from a page's source or an HTML mail: "<br>" at each line's end
    "glog": _each_line("I1129 14:03:07.123456 12345 gpu_device.cc:1234] "),  # glog's record prefix (PyTorch's C++, Paddle, Caffe)
    "tflog": _each_line("2024-11-29 14:03:07.123456: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1045] "),  # TensorFlow's
    "loguru": _each_line("2024-11-29 14:03:07.123 | INFO     | worker:run:42 - "),  # loguru's default
    "pylog": _each_line("2024-11-29 14:03:07,123 - worker - INFO - "),  # the logging cookbook's format
    "sglang": _each_line("[2024-11-29 14:03:07 TP0] "),  # SGLang's logger
    "pdsh": _each_line("worker-1: "),  # pdsh's host before each line (DeepSpeed's multi-node launcher)
    "deepspeed": _each_line("[2024-11-29 14:03:07,123] [INFO] [launch.py:123:main] "),  # DeepSpeed's logger
    "c10": _each_line("[W1129 14:03:07.123456789 ProcessGroupNCCL.cpp:1250] "),  # PyTorch's c10 logging (2.4+)
    "bat": _bat,  # bat (a cat with a grid) printing the paste as a file: its rules, header and line numbers
    "cri": _each_line("2026-11-29T14:03:07.123456789Z stderr F "),  # a node's container log in the CRI format (/var/log/pods)
    "dockerjson": _docker_json,  # Docker's json-file log, read with cat on the node
    "gfm": _gfm,
    "escapednl": lambda text: text.replace("\n", "\\n"),  # the lines in a string, escaped (a repr, a JSON value), on one line
    "jsonstr": lambda text: '{"job": "train-17", "status": "FAILED", "message": ' + json.dumps(text) + "}",  # an API's answer
    "noformat": lambda text: "{noformat}\n" + text + "\n{noformat}",
    "zwsp": lambda text: text.replace(" ", " \u200b"),
    "tabs": lambda text: re.sub(r" {2,}", "\t", text),
    "blankdouble": lambda text: text.replace("\n", "\n\n"),
    "reverse": lambda text: "\n".join(reversed(text.split("\n"))),
    # the forty-first session's: structured logs (each line a JSON-lines record, Go's slog/zap or klog --logging-format=json;
    # a service's answer printed over several lines by jq), and logs read newest first in a viewer that shows each line's
    # time (Grafana's Loki with RFC 3339 times, journalctl -r, Kibana's Discover)
    "jsonl": lambda text: "\n".join(json.dumps({"ts": f"2026-11-29T14:03:{n % 60:02}.123Z", "level": "info", "msg": line})
                                    for n, line in enumerate(text.split("\n"))),
    "jq": lambda text: '{\n  "job": "train-17",\n  "status": "FAILED",\n  "message": ' + json.dumps(text) + "\n}",
    # logrus's and Go's slog text format (Docker's daemon, the NVIDIA container toolkit, Kubernetes' device plugins): each
    # line a record, its message quoted as Go's strconv.Quote does
    "logfmt": lambda text: "\n".join(f'time="2026-11-29T14:03:{n % 60:02}Z" level=info msg=' + json.dumps(line, ensure_ascii=False)
                                     for n, line in enumerate(text.split("\n"))),
    "newest": _newest_first(lambda n: f"2026-11-29T14:{n // 60 % 60:02}:{n % 60:02}.123456Z "),
    "journalr": _newest_first(lambda n: f"Dec 01 11:{n // 60 % 60:02}:{n % 60:02} node7 python3[41234]: "),
    "kibana": _newest_first(lambda n: f"Dec 1, 2026 @ 11:{n // 60 % 60:02}:{n % 60:02}.123\t"),
    # the forty-second session's: a page or a rich-text box turned into markdown (turndown's escapes: a backslash before
    # every "\\", "*", "_", "`", "[", "]", and before "-", "+ ", "=", "#", "~~~", ">", "1. " at a line's start), a file
    # read in a pager or an editor with its line numbers (less -N: right-aligned in 7 columns and a space; vim's
    # 'number': in 3), and a command's lines in an Ansible task's result (the debug module printing
    # "result.stdout_lines", indented by 4; the default callback's failure on one line, "stdout" and "stdout_lines" both)
    "mdescape": _turndown_escaped,
    "lessn": lambda text: "\n".join(f"{n:>7} {line}" for n, line in enumerate(text.split("\n"), 1)),
    "vimnu": lambda text: "\n".join(f"{n:>3} {line}" for n, line in enumerate(text.split("\n"), 1)),
    "ansible": lambda text: ('ok: [gpu-node-07] => {\n    "result.stdout_lines": [\n'
                             + ",\n".join("        " + json.dumps(line) for line in text.split("\n")) + "\n    ]\n}"),
    "ansiblefail": lambda text: "fatal: [gpu-node-07]: FAILED! => " + json.dumps(
        {"changed": True, "cmd": ["bash", "run.sh"], "rc": 1, "stderr": "", "stderr_lines": [], "stdout": text,
         "stdout_lines": text.split("\n")}, sort_keys=True),
    # and a script printing the lines as a list (Python's repr of out.splitlines()), and Ansible's YAML callback
    # (ansible-core's callback_result_format=yaml, community.general's yaml): the output a "stdout: |-" block under the result
    "pylist": lambda text: repr(text.split("\n")),
    # the journal read with journalctl -o json (each entry its fields, the line in "MESSAGE", journald's own in "_"/"__")
    "journaljson": _journal_json,
    "yamlcb": _yaml_callback,
    # the forty-third session's: a log search's result exported as CSV (CloudWatch Logs Insights' "@timestamp,@message",
    # RFC 4180: a field with a comma, a quote or a line break quoted, its quotes doubled)
    "csvexport": _csv_export,
    # and GitLab Runner's timestamped job log (FF_TIMESTAMPS, 17.0+): the time, the stream's two hex digits and "O"/"E"
    "gitlab": _each_line("2026-11-29T14:03:07.123456Z 00O "),
    # the forty-fourth session's: the paste in a collapsed section of a GitHub issue (GitHub Docs, "Organizing information
    # with collapsed sections"; vLLM's bug template asks for collect_env's output so: a summary naming the paste, a fence)
    "details": lambda text: "<details>\n<summary>Full log</summary>\n\n```text\n" + text + "\n```\n\n</details>",
    "detailscode": lambda text: ("<details>\n<summary>The output of <code>python collect_env.py</code></summary>\n\n```text\n"
                                 + text + "\n```\n</details>"),
    # and the paste in an issue template, as GitHub renders an issue form (GitHub Docs, "Syntax for issue forms": each field
    # a "### Label" heading, "_No response_" for a field left empty, a checkboxes field as "- [X]" items) and as a markdown
    # template leaves it (.github/ISSUE_TEMPLATE/bug_report.md's bold labels and placeholder sentences): a bare form;
    # Hugging Face transformers' bug form; vLLM's, its environment field left as the template fills it
    "issueform": lambda text: "### Describe the bug\n\n" + text + "\n\n### Additional context\n\n_No response_",
    "transformers": lambda text: ("### System Info\n\n_No response_\n\n### Who can help?\n\n_No response_\n\n### Information\n\n"
                                  "- [X] The official example scripts\n- [ ] My own modified scripts\n\n### Reproduction\n\n"
                                  + text + "\n\n### Expected behavior\n\nNo error."),
    "vllmform": lambda text: ("### Your current environment\n\n<details>\n<summary>The output of <code>python collect_env.py"
                              "</code></summary>\n\n```text\nYour output of `python collect_env.py` here\n```\n\n</details>\n\n"
                              "### \U0001f41b Describe the bug\n\n" + text + "\n\n### Before submitting a new issue...\n\n"
                              "- [X] Make sure you already searched for relevant issues, and asked the chatbot living at the "
                              "bottom right corner of the [documentation page](https://docs.vllm.ai/en/latest/), which can "
                              "answer lots of frequently asked questions."),
    # the same forms copied from the rendered page (a browser's copy: the labels without their markup, "No response",
    # the checkboxes' options without their boxes)
    "rendered": lambda text: "Describe the bug\n\n" + text + "\n\nAdditional context\n\nNo response",
    "renderedhf": lambda text: ("System Info\n\nNo response\n\nWho can help?\n\nNo response\n\nInformation\n\n The official "
                                "example scripts\n My own modified scripts\n\nReproduction\n\n" + text
                                + "\n\nExpected behavior\n\nNo error."),
    # and the same on a Discourse forum (NVIDIA's developer forums) in its raw BBCode: a collapsed section, a quoted post
    "discourse": lambda text: '[details="Full log"]\n' + text + "\n[/details]",
    "dquote": lambda text: '[quote="jdoe, post:3, topic:281234"]\n' + text + "\n[/quote]",
    "mdtemplate": lambda text: ("**Describe the bug**\n" + text + "\n\n**Expected behavior**\nA clear and concise description "
                                "of what you expected to happen.\n\n**Additional context**\nAdd any other context about the "
                                "problem here."),
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", default="all")
    ap.add_argument("--only", default="", help="comma-separated changes (default: all of them)")
    args = ap.parse_args(argv)
    names = [n for n in args.only.split(",") if n] or list(CHANGES)
    kb = ev.load_knowledge()
    parts = ev.PARTS if args.split == "all" else (args.split,)
    cases = [c for c in ev.load_cases(parts) if c["class"] not in ("none", "other")]
    right = [c for c in cases if c["class"] in [a["failure_class"] for a in ev.diagnose(kb, c["text"])[:3]]]
    print(f"{len(right)} of {len(cases)} fault cases have their class in the top 3 as written; after each change:")
    for name in names:
        lost = [c for c in right if c["class"] not in [a["failure_class"] for a in ev.diagnose(kb, CHANGES[name](c["text"]))[:3]]]
        print(f"  {name:10} {len(right) - len(lost)} of {len(right)} kept" + (": lost " + ", ".join(
            f"{c.get('part', '')}/{c['id']} ({c['kind']})" for c in lost) if lost else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
