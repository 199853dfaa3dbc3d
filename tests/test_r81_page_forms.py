"""Forms a paste takes on a page, in a viewer or in an automation tool, read as the program printed it (the forty-second
session).

- An editor's markdown escapes (CommonMark's backslash escapes, as turndown writes them behind "copy as markdown" tools
  and web clippers: "NCCL\\_P2P\\_LEVEL", "\\[rank0\\]:", "\\# nvidia-smi topo -m"): read back where the text holds an
  escape that only markdown writes; a Windows path, a string's escapes, a regex and a fenced block stay as written.
- A pager's or an editor's line numbers (less -N: right-aligned in 7 columns, then a space; vim's 'number': in 3): taken
  off where every line carries one, from 1 up, one more each line, at one column; a program's rows labelled 0, 1, 2
  stay.
- A command's lines in an Ansible task's result (the debug module's "result.stdout_lines", the default callback's
  "fatal: [host]: FAILED! => {...}" with "stdout" and "stdout_lines" both): the lines once, the callback's status and
  host left out as a launcher's prefix is. (The YAML callback's "stdout: |-" block needs no reader of its own: its
  indented lines give the plain facts as they are.)
- A line that is a list of strings (Python's repr of out.splitlines(), JSON): its strings as lines, where one holds a
  space.
- The journal as journalctl -o json prints it: the line in "MESSAGE" (a message key in any case), journald's own
  fields ("__CURSOR", "_PID", "PRIORITY" ...) left out, and a fields line the record before had too not repeated.

Each form is made from a real paste (tests/fixtures/pastes, their sources in its index.json) with the change
benchmarks/perturb_corpus.py measures, and must give the facts and the answer the plain paste gives."""

import json

import pytest

from .kbtools import FORM_PASTES, classes, pasted as paste, perturbation, text_facts

from p2ptop.evidence.paste import Paste, read_records, unescape_markdown, unprefix
from p2ptop.knowledge.matcher import Log



REAL = FORM_PASTES
FORMS = ["mdescape", "lessn", "vimnu", "ansible", "ansiblefail", "pylist", "yamlcb", "journaljson"]


@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("form", FORMS)
def test_forms_give_the_plain_paste_facts(name, form):
    text = paste(name)
    assert text_facts(perturbation(form)(text)) == text_facts(text)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", ["error-trtllm-1625-peer-access.txt", "p2pBandwidthLatencyTest-nccl-814-p2p-slower.txt",
                                  "dmesg-cuda-samples-48-amd-vi.txt"])
def test_forms_give_the_plain_answer(form, name):
    text = paste(name)
    assert classes(perturbation(form)(text)) == classes(text)


@pytest.mark.parametrize("form", FORMS)
def test_both_readers_number_the_same_lines(form):
    # the evidence readers and the matcher read one text: "line 14 of the paste" means the same line to both
    text = perturbation(form)(paste("error-trtllm-1625-peer-access.txt"))
    assert Paste(text).text.count("\n") == len(Log(text).lines) - 1


# --- markdown escapes


def test_markdown_escapes_read_back():
    assert unescape_markdown(r"export NCCL\_P2P\_LEVEL=NVL; \[rank0\]: RuntimeError: x") == \
        "export NCCL_P2P_LEVEL=NVL; [rank0]: RuntimeError: x"
    assert unescape_markdown("8 \\* H100\n\\# nvidia-smi topo -m\n1\\. first") == "8 * H100\n# nvidia-smi topo -m\n1. first"
    # an escaped backslash is one backslash (turndown escapes a path's)
    assert unescape_markdown(r"C:\\Users\\me\\x.py and NCCL\_DEBUG") == r"C:\Users\me\x.py and NCCL_DEBUG"


@pytest.mark.parametrize("text", [
    r'  File "C:\actions-runner\_work\_temp\env\lib\site-packages\torch\cuda\__init__.py", line 180',  # a Windows path
    r'{"msg": "File \"train.py\", line 3", "stage": "x"}',  # a JSON string's escapes
    r"grep -E '\[rank[0-9]+\]' log.txt",  # a regex without a word of markdown's
    r" |           \-09.0  NVIDIA Corporation GA100 [A100 NVSwitch]",  # lspci -tv's tree
    "no backslash at all: NCCL_P2P_DISABLE=1",
])
def test_text_without_markdown_escapes_stays(text):
    assert unescape_markdown(text) == text


def test_a_fenced_block_keeps_its_backslashes():
    # no editor escapes inside a code block: what it holds is the program's own
    text = "set NCCL\\_DEBUG=INFO and got\n```\nNCCL\\_X is literal here\n```\nthen NCCL\\_P2P\\_DISABLE=1 helped"
    assert unescape_markdown(text) == "set NCCL_DEBUG=INFO and got\n```\nNCCL\\_X is literal here\n```\nthen NCCL_P2P_DISABLE=1 helped"


def test_an_escaped_variable_is_read():
    # a reporter's sentence from a page turned into markdown: the variable it names is a fact
    plain = "The job hangs at init on 8 GPUs; NCCL_P2P_DISABLE=1 makes it run."
    escaped = perturbation("mdescape")(plain)
    assert "\\_" in escaped
    assert text_facts(escaped) == text_facts(plain)
    assert text_facts(plain)["host"].get("env.NCCL_P2P_DISABLE") == "1"


# --- a viewer's line numbers


def test_viewer_numbers_taken_off():
    text = "RuntimeError: CUDA error: peer access is not supported between these two devices\n\nmore"
    for width in (7, 3):
        numbered = "\n".join(f"{n:>{width}} {line}" for n, line in enumerate(text.split("\n"), 1))
        assert unprefix(numbered) == text
    # an excerpt from a file's middle: its numbers start where it starts, and grow a digit at one column
    excerpt = "\n".join(f"{n:>7} line {n} of the log" for n in range(998, 1003))
    assert unprefix(excerpt) == "\n".join(f"line {n} of the log" for n in range(998, 1003))


@pytest.mark.parametrize("text", [
    # a bandwidth matrix's rows (labels from 0) and a part of one without its header (numbers after the labels)
    "   D\\D     0      1      2\n     0 353.51   9.48   9.66\n     1   9.59 152.05   9.73\n     2   9.70   9.73 354.79",
    "     1   9.59 152.05   9.73\n     2   9.70   9.73 354.79\n     3   9.63   9.62 353.1",
    # nccl-tests' rows: sizes, not consecutive numbers
    "           8             2     float     sum      -1    37.40    0.00    0.00      0\n"
    "          16             4     float     sum      -1    36.90    0.00    0.00      0\n"
    "          32             8     float     sum      -1    36.77    0.00    0.00      0",
    # numbers out of step or at no one column: a list the writer typed
    "1 GPU fails\n3 GPUs work\n4 GPUs hang",
    "1 GPU fails\n  2 GPUs work\n3 GPUs hang",
    # two lines whose numbers are no file's start
    "  4 GPUs hang at init\n  5 GPUs too",
])
def test_rows_that_are_no_viewer_numbers_stay(text):
    assert unprefix(text) == text


def test_viewer_numbered_nccl_log_keeps_its_transports():
    text = paste("nccl-tests-4090x8-devices.txt")
    assert text_facts(perturbation("lessn")(text)) == text_facts(text)


# --- Ansible's results


def test_ansible_debug_of_stdout_lines():
    lines = ["GPU0\tGPU1\tCPU Affinity", "GPU0\t X \tSYS\t0-15", "GPU1\tSYS\t X \t0-15"]
    text = 'ok: [gpu01] => {\n    "out.stdout_lines": [\n' + ",\n".join("        " + json.dumps(l) for l in lines) + \
        "\n    ]\n}"
    assert read_records(text) == "\n".join(lines)


def test_ansible_failure_reads_the_lines_once():
    out = "Traceback (most recent call last):\nRuntimeError: CUDA error: invalid device ordinal"
    result = {"changed": True, "cmd": "python3 check.py", "rc": 1, "stderr": out, "stderr_lines": out.split("\n"),
              "stdout": "", "stdout_lines": []}
    read = read_records("fatal: [gpu01]: FAILED! => " + json.dumps(result, sort_keys=True))
    assert read == 'cmd="python3 check.py" rc=1\n' + out  # stderr once, the empty stdout left out, no status line
    # the minimal callback's (ad hoc), printed over lines; a loop's item
    assert read_records('gpu01 | FAILED! => {\n    "changed": false,\n    "msg": "nvidia-smi: command not found"\n}') == \
        "nvidia-smi: command not found"
    assert read_records('failed: [gpu01] => (item=1) => {"msg": "peer access is not supported", "item": 1}') == \
        "item=1\npeer access is not supported"


def test_ansible_line_without_json_stays():
    for line in ("ok: [gpu01]", "TASK [check p2p] ****", "gpu01 | CHANGED | rc=0 >>", "fatal: [gpu01]: FAILED! => not json"):
        assert read_records(line) == line


def test_a_record_of_an_empty_line_is_an_empty_line():
    # an empty message beside others is left out (Ansible's "stderr": ""); alone it is the empty line a program printed
    assert read_records('{"ts": 1, "msg": "a"}\n{"ts": 2, "msg": ""}\n{"ts": 3, "msg": "b"}') == "a\n\nb"


# --- lists of lines


def test_a_list_of_lines_is_its_lines():
    lines = ["Traceback (most recent call last):", '  File "train.py", line 3, in <module>',
             "RuntimeError: CUDA error: peer access is not supported between these two devices"]
    assert read_records(repr(lines)) == "\n".join(lines)
    assert read_records(json.dumps(lines)) == "\n".join(lines)
    # readlines()' strings keep their line ends: one line each; a list of one line is that line
    assert read_records(repr([l + "\n" for l in lines])) == "\n".join(lines)
    assert read_records(repr([lines[2]])) == lines[2]


@pytest.mark.parametrize("line", ["['0', '1']", "['0']", '["--nproc_per_node", "8"]', "[1, 2, 3]", "['a b', 3]",
                                  "x = ['a b', 'c d']", "['unclosed', 'a b'"])
def test_a_list_that_is_no_lines_stays(line):
    assert read_records(line) == line


# --- the journal's JSON


def test_journal_json_entries():
    entries = [{"__CURSOR": "s=1;i=1", "__REALTIME_TIMESTAMP": "1764756187000000", "_BOOT_ID": "9f2d", "PRIORITY": "4",
                "_TRANSPORT": "kernel", "SYSLOG_IDENTIFIER": "kernel", "_HOSTNAME": "node7",
                "MESSAGE": "NVRM: Xid (PCI:0000:3b:00): 79, pid=4711, name=python3, GPU has fallen off the bus."},
               {"__CURSOR": "s=1;i=2", "__REALTIME_TIMESTAMP": "1764756187000100", "_BOOT_ID": "9f2d", "PRIORITY": "3",
                "_TRANSPORT": "kernel", "SYSLOG_IDENTIFIER": "kernel", "_HOSTNAME": "node7",
                "MESSAGE": "NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus."}]
    text = "\n".join(json.dumps(e) for e in entries)
    assert read_records(text) == ("SYSLOG_IDENTIFIER=kernel\nNVRM: Xid (PCI:0000:3b:00): 79, pid=4711, name=python3, GPU has "
                                  "fallen off the bus.\nNVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.")
    # journalctl -o json-pretty: the same entries over several lines each
    pretty = "\n".join(json.dumps(e, indent=8).replace("\n}", "\n}") for e in entries)
    assert read_records(pretty) == read_records(text)
    assert text_facts(text) == text_facts("\n".join(e["MESSAGE"] for e in entries))


def test_a_fields_line_that_changes_is_printed_again():
    text = '{"unit": "a", "msg": "one"}\n{"unit": "a", "msg": "two"}\n{"unit": "b", "msg": "three"}'
    assert read_records(text) == "unit=a\none\ntwo\nunit=b\nthree"
