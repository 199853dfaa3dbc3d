"""Rules of the thirty-fourth session, each written from the printing program's source and checked with near misses:

- NCCL's failed driver call with CUDA_ERROR_ILLEGAL_STATE: CUCHECK (src/include/cudawrap.h) prints
  "Cuda failure %d '%s'" for a CUDA *driver* call, and NCCL's driver calls are the multicast ones of NVLS
  (cuMulticastCreate/AddDevice/BindMem, transport/nvls.cc) and the cuMem* ones; 401 ("the operation cannot be performed
  in the present state") is what the multicast team's setup returns where the fabric cannot take it (NVIDIA/nccl#1788,
  nvls.cc:254 cuMulticastAddDevice). The NVLS entry reads that NCCL line as one of its further regexes: offered as
  possible, not likely, on the line alone; NCCL_NVLS_ENABLE=0 in the environment rules it out as before. The runtime
  calls' format (CUDACHECK: "Cuda failure 'the operation ...'", no number) and a framework's own 401 are not read."""

import pytest

from .kbtools import alarms, explained


NVLS = "nvls_multicast_failure"


@pytest.mark.parametrize("text", [
    # PyTorch's wrapper of NCCL's last error (ProcessGroupNCCL), as a 3+ GPU job prints it
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
    "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
    "ncclUnhandledCudaError: Call to CUDA function failed.\n"
    "Last error:\nCuda failure 401 'the operation cannot be performed in the present state'",
    # NCCL's WARN line itself, with a host:pid:tid prefix and the location NCCL 2.30 prints
    "node7:1234:1290 [3] transport/alloc.cc:88 NCCL WARN Cuda failure 401 'the operation cannot be performed in the "
    "present state'\nnode7:1234:1290 [3] NCCL INFO init.cc:1200 -> 1",
])
def test_nccl_driver_call_illegal_state_offers_nvls(text):
    got = explained(text)
    assert got and got[0] == (NVLS, "possible")


@pytest.mark.parametrize("text", [
    # a runtime call (CUDACHECK prints no number): any cudaErrorIllegalState, e.g. a stream capture
    "NCCL WARN Cuda failure 'the operation cannot be performed in the present state'",
    # the framework's own CUDA error, not NCCL's driver call
    "RuntimeError: CUDA error: the operation cannot be performed in the present state\n"
    "CUDA kernel errors might be asynchronously reported at some other API call",
    # another code in the same format
    "NCCL WARN Cuda failure 4010 'unknown error'",
    "NCCL WARN Cuda failure 2 'out of memory'",
])
def test_near_misses_do_not_offer_nvls(text):
    assert all(c != NVLS for c, _conf, _b, _id in alarms(text))


def test_nvls_disabled_rules_it_out():
    text = ("NCCL INFO NCCL_NVLS_ENABLE set by environment to 0.\n"
            "NCCL WARN Cuda failure 401 'the operation cannot be performed in the present state'")
    assert all(c != NVLS for c, _conf, _b, _id in alarms(text))


# --- HTML's escapes, read back by both readers -----------------------------------------------------------------------
# A paste copied from a page's source, a mail archive or an API carries HTML's escapes ("&#39;", "&quot;", "&gt;"). The
# evidence readers read them back since an early session (paste.tidy); the matcher's lines did not, so an entry's own
# pattern with a quote or an arrow in it ("Cuda failure 401 'the operation ...'") missed the escaped line: perturb_corpus's
# "html" change lost 27 of 1,195 right answers. One function (regex_safety.unescape_html) now serves both.

import html  # noqa: E402

from p2ptop.knowledge.matcher import clean_lines  # noqa: E402
from p2ptop.knowledge.regex_safety import unescape_html  # noqa: E402

from .kbtools import flat_facts  # noqa: E402

NVLS_LINE = ("node7:1234:1290 [3] transport/nvls.cc:254 NCCL WARN Cuda failure 401 'the operation cannot be performed in "
             "the present state'\nnode7:1234:1290 [3] NCCL INFO transport/nvls.cc:409 -> 1")


def test_escaped_paste_answers_as_the_plain_one():
    escaped = html.escape(NVLS_LINE, quote=True)
    assert "&#x27;" in escaped
    assert explained(escaped)[:3] == explained(NVLS_LINE)[:3]
    assert explained(escaped)[0][0] == NVLS


def test_escaped_facts_keep_their_lines():
    text = 'line one\nRuntimeError: CUDA error: peer access is not supported between these two devices\n'
    plain, escaped = flat_facts(text), flat_facts(html.escape(text, quote=True))
    assert plain == escaped


@pytest.mark.parametrize("raw, want", [
    ("GPU0 &lt;-&gt; GPU1", "GPU0 <-> GPU1"),
    ("Cuda failure &#39;out of memory&#39;", "Cuda failure 'out of memory'"),
    ("a &quot;quoted&quot; word &amp; more", 'a "quoted" word & more'),
    ("one&#10;two&#x0A;three&NewLine;four", "one two three four"),  # an escaped line break stays inside its line
    ("R&D and AT&T, no escape here", "R&D and AT&T, no escape here"),  # no known escape: the text itself
])
def test_unescape_html(raw, want):
    assert unescape_html(raw) == want


def test_matcher_lines_keep_the_paste_numbering():
    text = "first &lt;a&gt;\nsecond&#10;still second\nthird"
    assert clean_lines(text) == ["first <a>", "second still second", "third"]


# --- the journal's prefix ----------------------------------------------------------------------------------------------
# A job run by systemd and read with `journalctl -u` (or a syslog file) has "Dec 01 11:38:40 node7 python3[41234]: "
# before every line it printed: tables (topo -m, p2pBandwidthLatencyTest) were not read under it (perturb_corpus's
# "journal" change lost 36 of 1,195 right answers). It is a launcher's prefix now, for a process with a pid; the kernel's
# lines and those of the daemons whose name says what the line is keep theirs.

from p2ptop.evidence.paste import unprefix  # noqa: E402

J = "Dec 01 11:38:40 node7 python3[41234]: "


@pytest.mark.parametrize("line, want", [
    (J + "GPU0\tX \tNV18", "GPU0\tX \tNV18"),
    ("Dec  1 01:02:03.123 gpu-3 torchrun[77]: [rank0]: RuntimeError: x", "RuntimeError: x"),  # and the launcher's after it
    ("Dec 01 11:38:40 node7 kernel: NVRM: Xid (PCI:0000:17:00): 79", None),  # the kernel's line keeps its prefix
    ("Aug 11 06:47:54 sprocket nv-fabricmanager[186868]: request to query NVSwitch device information", None),
    ("Feb 24 09:28:18 ip-172-31-92-157 systemd[1]: nvidia-fabricmanager.service: Failed", None),
    ("Dec 01 11:38:40 is when it hung[1]: no host", None),  # not the journal's shape
])
def test_journal_prefix(line, want):
    assert unprefix(line) == (line if want is None else want)


def test_topology_read_under_the_journal_prefix():
    topo = ("\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n"
            "GPU0\t X \tSYS\t0-31\t0\n"
            "GPU1\tSYS\t X \t32-63\t1\n")
    plain = flat_facts(topo)
    journal = flat_facts("\n".join(J + line for line in topo.split("\n")))
    assert plain and journal == plain


# --- a reflowed paragraph ----------------------------------------------------------------------------------------------
# A mail client, a mailing list's archive or a fixed-width page reflows a paragraph at 72-100 columns: a phrase the
# sentence readers look for ("peer access is not supported", "Operation not permitted") is cut in two. The readers of
# sentences now read each soft break (the next line's first word would not have fitted: the rule every reflow follows) as
# a space, offsets and line numbers kept; a writer's own breaks (short lines, indented code, records, list items, table
# rows, lines longer than any reflow's width) stay.

from p2ptop.evidence.paste import Paste, soft_breaks  # noqa: E402

PARA = ["We run two RTX 3090 cards in one box and every all_reduce in NCCL hangs",
        "forever; the GPUs sit at 100 % and nothing moves. Setting",
        "NCCL_P2P_DISABLE=1 makes it work again."]


def test_soft_breaks_of_a_reflowed_paragraph():
    assert soft_breaks(PARA) == [0, 1]


@pytest.mark.parametrize("lines", [
    ["Environment:", "CUDA 12.1", "Driver 535"],                                    # a writer's short lines
    ["Traceback (most recent call last):", '  File "train.py", line 3, in <module>'],  # a record, an indent
    ["The steps I took to reproduce the problem on the machine were these:", "- install the driver 535"],  # a list item
    ["x" * 150, "a continuation that is not a reflow's"],                               # written as one long line
    ["GPU0 and GPU1 are both on the same PCIe switch under the same root port", "GPU1\tX\tPIX"],  # a table row
    ["NCCL DIAG [INFO] p2p: only 52/56 GPU-to-GPU peer accesses passed verification",  # a program's records
     "NCCL DIAG NCCL diagnostics completed in 245.3 ms across 8 ranks"],
])
def test_writers_breaks_stay(lines):
    assert soft_breaks(lines) == []


def test_sentence_readers_read_the_flowed_paragraph_with_its_lines():
    text = "\n".join(PARA)
    paste = Paste(text)
    view, flowed = paste.sample(1_000_000, 256_000), paste.flowed(1_000_000, 256_000)
    assert len(flowed) == len(view.text) and "\n" not in flowed.rstrip("\n")  # (tidy joined it: its last lines empty)
    assert view.line_of(flowed.index("nccl_p2p_disable")) == 1  # the paragraph whole on its first line (unreflow)
    facts = flat_facts(text)
    assert facts.get("symptom.hang") is True and facts.get("gpu.consumer") is True


def test_reflowed_message_read_as_written():
    # MXNet's kvstore message (src/kvstore/comm.h), as a mail archive reflows it at 72 columns: "enabled" / "direct access"
    line = ("src/kvstore/././comm.h:290: only 0 out of 12 GPU pairs are enabled direct access. It may affect the "
            "performance. You can set MXNET_ENABLE_GPU_P2P=0 to turn it off")
    import textwrap
    reflowed = "\n".join(textwrap.wrap(line, 72, break_long_words=False, break_on_hyphens=False))
    assert "enabled\ndirect" in reflowed
    assert flat_facts(line).get("p2p.read") == "NOT_SUPPORTED"
    assert flat_facts(reflowed).get("p2p.read") == "NOT_SUPPORTED"


# --- grep's and cat's prefixes -----------------------------------------------------------------------------------------
# A log excerpt is often pasted as grep or cat printed it: "logs/rank0.log:" (grep -H, grep -r), "1234:" or "1234-"
# (grep -n, a match or a context line), "  1234<TAB>" (cat -n). Tables and tracebacks were not read under them
# (perturb_corpus lost 37, 45 and 39 of 1,195 right answers). Each is a prefix now where four in five lines carry it, the
# line numbers only where they rise as a file's do.

@pytest.mark.parametrize("text, want", [
    ("101:GPU0\tX\tNV18\n102:GPU1\tNV18\tX\n103-context line", "GPU0\tX\tNV18\nGPU1\tNV18\tX\ncontext line"),
    ("logs/r0.log:[rank0]: RuntimeError: x\nlogs/r0.log:y\nlogs/r0.log-z", "RuntimeError: x\ny\nz"),
    ("out.txt:12:a\nout.txt:13:b\nout.txt:14:c", "a\nb\nc"),  # grep -Hn
    ("     1\ta\n     2\tb\n     3\tc", "a\nb\nc"),  # cat -n
])
def test_grep_and_cat_prefixes(text, want):
    assert unprefix(text) == want


@pytest.mark.parametrize("text", [
    "1: lo: <LOOPBACK,UP>\n    inet 127.0.0.1/8\n2: eth0: <UP>\n    inet 10.0.0.1/24",  # ip a: numbered records, not lines
    "3:warn\n3:warn again\n1:other",                        # numbers that do not rise (no srun label: no space)
    "see train.log: it hangs\nnothing else here\nor here",  # a file named once in a sentence
])
def test_not_grep_prefixes(text):
    assert unprefix(text) == text


def test_topology_read_under_grep_n():
    topo = ("\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n"
            "GPU0\t X \tSYS\t0-31\t0\n"
            "GPU1\tSYS\t X \t32-63\t1")
    numbered = "\n".join(f"{n}:{line}" for n, line in enumerate(topo.split("\n"), 40))
    assert flat_facts(numbered) == flat_facts(topo) and flat_facts(topo)
