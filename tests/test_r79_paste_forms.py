"""Forms a paste takes on its way to a ticket, read as the program printed it (the fortieth session).

- An East Asian input method's fullwidth punctuation ("RuntimeError：CUDA error：invalid device ordinal", "（", "，"):
  Unicode's fullwidth forms (U+FF01-FF5E) are the ASCII characters 0xFEE0 below; a fullwidth colon or comma before a word
  holds its own space. Both readers (paste.tidy and the matcher's Log) read them back.
- vLLM's logger ("INFO 11-29 14:03:07 [worker.py:123] ", before 0.6 "INFO 05-08 21:28:45 llm_engine.py:72] "), whose
  NewLineFormatter repeats the prefix before every line of a message of several: taken off as a launcher's.
- A CRLF text written again in text mode on Windows ("\\r\\r\\n"): one line end, not a line and a blank one.
- A tool's table that someone put into a markdown table (GFM: a head row, a delimiter row "|---|---|", the rows): read as
  the tool's own; nvidia-smi's own boxed table is no markdown table and stays as it is.

Each form is made from a real paste (tests/fixtures/pastes, their sources in its index.json) and must give the facts and
the answer the plain paste gives."""

import os

import pytest

from .kbtools import classes, perturbation, text_facts

from p2ptop.evidence.paste import Paste, unpipe_tables
from p2ptop.knowledge.matcher import Log
from p2ptop.knowledge.regex_safety import read_fullwidth

PASTES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "pastes")
fullwidth = perturbation("fullwidth")  # an input method's punctuation for ASCII's (benchmarks/perturb_corpus.py)


def paste(name):
    with open(os.path.join(PASTES, name), encoding="utf-8") as f:
        return f.read()


def pair_facts(text):
    return {s: f for s, f in text_facts(text).items() if s.startswith("pair:")}


# --- fullwidth forms


def test_read_fullwidth_spaces_words_not_numbers():
    assert read_fullwidth("RuntimeError\uff1aCUDA error\uff1a invalid device ordinal") == \
        "RuntimeError: CUDA error: invalid device ordinal"
    assert read_fullwidth("\uff08GPU0\uff0cGPU1\uff09") == "(GPU0, GPU1)"
    assert read_fullwidth("\uff23\uff35\uff24\uff21") == "CUDA"
    # a bus id or a clock typed with the input method on: its digits stay together, hexadecimal ones too
    assert read_fullwidth("0000\uff1ac1\uff1a00.0 at 14\uff1a03") == "0000:c1:00.0 at 14:03"
    assert read_fullwidth("plain ascii: untouched") == "plain ascii: untouched"
    assert read_fullwidth("\u9519\u8bef\uff1a\u5361") == "\u9519\u8bef: \u5361"  # Chinese text around it keeps its words


@pytest.mark.parametrize("error,cls", [
    ("RuntimeError: CUDA error: invalid device ordinal\nCUDA kernel errors might be asynchronously reported at some other "
     "API call, so the stacktrace below might be incorrect.", "device_not_visible"),
    ("ImportError: libnccl.so.2: cannot open shared object file: No such file or directory", "nccl_unavailable_platform"),
    ("RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by "
     "downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx",
     "driver_too_old_for_cuda"),
])
def test_fullwidth_error_answered_as_the_ascii_one(error, cls):
    plain = classes(error)
    typed = classes(fullwidth(error).replace("\uff1a ", "\uff1a"))  # the IME types no space after its colon
    assert plain[0] == cls and typed == plain


def test_fullwidth_real_paste_same_answer():
    text = paste("error-trtllm-1625-peer-access.txt")
    assert classes(fullwidth(text)) == classes(text)


def test_both_readers_number_fullwidth_lines_alike():
    text = "\u8bad\u7ec3\u5361\u4f4f\n" + fullwidth(paste("error-trtllm-1625-peer-access.txt")).rstrip("\n")
    p, log = Paste(text), Log(text)
    assert len(p.lines) == len(log.lines)
    assert any("peer access is not supported between these two devices" in line for line in log.lines)
    assert "\uff1a" not in p.text and "\uff1a" not in log.text


# --- vLLM's logger prefix


@pytest.mark.parametrize("prefix", ["INFO 11-29 14:03:07 [worker.py:123] ", "INFO 05-08 21:28:45 llm_engine.py:72] ",
                                    "(VllmWorker rank=1 pid=4711) WARNING 11-29 14:03:07 [custom_all_reduce.py:137] "])
def test_vllm_prefix_on_every_line_of_a_topo_matrix(prefix):
    text = paste("topo-m-4090x8-tabs-nics.txt")
    prefixed = "\n".join(prefix + line for line in text.split("\n"))
    want = pair_facts(text)
    assert len(want) == 28
    assert pair_facts(prefixed) == want


def test_vllm_prefix_taken_off_for_the_matcher_too():
    text = "ERROR 11-29 14:03:07 [worker.py:123] Cuda failure 'peer access is not supported between these two devices'"
    log = Log(text)
    assert log.lines == ["Cuda failure 'peer access is not supported between these two devices'"]
    assert any("worker.py:123" in p for p in log.prefixes)  # kept aside: what the prefix says
    assert Paste(text).lines == log.lines


def test_a_vllm_like_line_in_prose_is_not_a_prefix():
    # a level word and a date in a sentence, no "file.py:N]" after them: the line stays whole
    text = "INFO 11-29 14:03:07 the job started and then hung"
    assert Paste(text).lines == [text]


# --- a node's container logs




def test_cri_log_lines_read_as_the_program_printed_them():
    # kubelet's log file of a container (/var/log/pods/...): RFC 3339 time, stream, F (a full line) or P (a part)
    text = paste("topo-m-4090x8-tabs-nics.txt")
    cri = "\n".join(f"2026-11-29T14:03:07.{n:09d}Z stdout F {line}" for n, line in enumerate(text.split("\n")))
    assert pair_facts(cri) == pair_facts(text)
    assert Log(cri).lines == Log(text).lines


def test_docker_json_file_records_read_back():
    import json

    text = paste("error-trtllm-1625-peer-access.txt").rstrip("\n")
    records = "\n".join(json.dumps({"log": "\x1b[31m" + line + "\x1b[0m\n", "stream": "stderr",
                                    "time": "2026-11-29T14:03:07.123456789Z"}, separators=(",", ":"))
                        for line in text.split("\n"))
    assert records.startswith('{"log":"')
    p, log = Paste(records), Log(records)
    assert p.lines == Paste(text).lines  # the colours, escaped in the JSON, gone too: text is data
    assert len(log.lines) == len(Log(text).lines)
    assert classes(records) == classes(text)
    # a record that is no valid JSON string stays as it was
    assert Paste('{"log":"bad \\x escape","stream":"stdout","time":"t"}').lines == ['{"log":"bad \\x escape","stream":"stdout","time":"t"}']


@pytest.mark.parametrize("prefix", ["2026-11-29T14:03:07.123456+00:00 node7 python3[41234]: ",  # -o short-iso-precise
                                    "2026-11-29T14:03:07+0000 node7 python3[41234]: "])  # journalctl -o short-iso
def test_journal_with_rfc3339_times(prefix):
    text = paste("topo-m-4090x8-tabs-nics.txt")
    assert pair_facts("\n".join(prefix + line for line in text.split("\n"))) == pair_facts(text)
    # the kernel's and the daemons' lines keep what names them
    kernel = "2026-11-29T14:03:07+0000 node7 kernel: NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus."
    assert Paste(kernel).lines == ["node7 kernel: NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus."]
    fm = "2026-11-29T14:03:07+0000 node7 nv-fabricmanager[4711]: request to query NVSwitch device information failed"
    assert Paste(fm).lines[0].startswith("node7 nv-fabricmanager[4711]:")


def test_html_line_breaks():
    text = paste("topo-m-4090x8-tabs-nics.txt")
    assert pair_facts(text.replace("\n", "<br>\n")) == pair_facts(text)
    assert pair_facts(text.replace("\n", "<br />")) == pair_facts(text)  # one line, its breaks tags only
    cell = "| GPU0 | line one<br>line two | ok |"  # a markdown table's cell holds one: the row stays one line
    assert Paste(cell).lines == [cell]
    text = text.rstrip("\n")
    joined = text.replace("\n", "<br>")
    assert len(Paste(joined).lines) == len(Log(joined).lines) == len(Paste(text).lines)  # one numbering for both readers


@pytest.mark.parametrize("prefix", [
    "I1129 14:03:07.123456 12345 gpu_device.cc:1234] ",  # glog (PyTorch's C++, Paddle, Caffe, MXNet)
    "2024-11-29 14:03:07.123456: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1045] ",  # TensorFlow's
    "2024-11-29 14:03:07.123 | INFO     | worker:run:42 - ",  # loguru's default
    "2024-11-29 14:03:07,123 - worker - INFO - ",  # the logging cookbook's
    "[2024-11-29 14:03:07 TP0] ",  # SGLang's
    "[2024-11-29 14:03:07,123] [INFO] [launch.py:123:main] ",  # DeepSpeed's
    "[rank0]:[W1129 14:03:07.123456789 ProcessGroupNCCL.cpp:1250] ",  # PyTorch's c10 (2.4+) after torchrun's rank
    "worker-1: ",  # pdsh's host (DeepSpeed's multi-node launcher)
    "10.0.0.12: [rank3]: ",
])
def test_loggers_record_prefix_on_each_line(prefix):
    # a script that logs each line of nvidia-smi topo -m, one record a line
    text = paste("topo-m-4090x8-tabs-nics.txt")
    assert pair_facts("\n".join(prefix + line for line in text.split("\n"))) == pair_facts(text)


def test_a_program_name_before_its_lines_is_no_pdsh_host():
    # qemu's own "program: " prefix says what the lines are (no hostname has an underscore); two lines are too few
    text = ("qemu-system-x86_64: warning: IOMMU_IOAS_MAP failed: Bad address, PCI BAR?\n"
            "qemu-system-x86_64: vfio_container_dma_map(0x5, 0xe0, 0x3000, 0x7f) = -14 (Bad address)\n"
            "qemu-system-x86_64: warning: IOMMU_IOAS_MAP failed: Bad address, PCI BAR?")
    assert Paste(text).lines == text.split("\n")
    two = "node7: RuntimeError: CUDA error: invalid device ordinal\nnode7: done"
    assert Paste(two).lines == two.split("\n")
    # a device's label says whose the line is
    per_gpu = "GPU0: 12.3 GB/s\nGPU1: 11.0 GB/s\nGPU2: 1.2 GB/s\nrank3: hung"
    assert Paste(per_gpu).lines == per_gpu.split("\n")


def test_c10_header_comes_off_and_what_it_names_is_kept():
    # PyTorch's c10 logging header was kept as a program's own line start before this round
    # (tests/test_paste_framing.py); it is a logger's record prefix: the message reads at the line's start, and the file
    # it names stays in Paste.prefixes, where the GPU trace and the entries' conditions on the text still read it
    text = ("[rank4]:[W1129 06:10:44.120937713 CUDASymmetricMemory.cu:247] Only a subset of ranks in the group has "
            "multicast support: [0, 1, 2, 3] (world_size=8). Skipping multicast initialization because this is unexpected.")
    p = Paste(text)
    assert p.lines[0].startswith("Only a subset of ranks")
    assert any("CUDASymmetricMemory.cu" in x for x in p.prefixes)
    assert classes(text)[:1] == ["nvls_multicast_failure"]


# TensorFlow 1.x's GPU setup, as gpu_device.cc logs it (each a record of its own): a pair the driver says cannot be peers,
# then the DMA matrix ("DMA: 0 1", rows whose diagonal is Y)
TF1 = """2017-09-05 16:04:26.350395: I tensorflow/core/common_runtime/gpu/gpu_device.cc:847] Peer access not supported between device ordinals 0 and 1
2017-09-05 16:04:26.350418: I tensorflow/core/common_runtime/gpu/gpu_device.cc:847] Peer access not supported between device ordinals 1 and 0
2017-09-05 16:04:26.350454: I tensorflow/core/common_runtime/gpu/gpu_device.cc:976] DMA: 0 1 2
2017-09-05 16:04:26.350468: I tensorflow/core/common_runtime/gpu/gpu_device.cc:986] 0:   Y N Y
2017-09-05 16:04:26.350475: I tensorflow/core/common_runtime/gpu/gpu_device.cc:986] 1:   N Y Y
2017-09-05 16:04:26.350481: I tensorflow/core/common_runtime/gpu/gpu_device.cc:986] 2:   Y Y Y"""


def test_tensorflow1_dma_matrix_gives_each_pair():
    got = pair_facts(TF1)
    assert got["pair:0-1"]["p2p.read"] == "NOT_SUPPORTED"
    assert got["pair:0-2"]["p2p.read"] == "OK" and got["pair:1-2"]["p2p.read"] == "OK"
    assert text_facts(TF1)["host"]["text.tool"] == "TensorFlow device interconnect"


def test_tensorflow_no_peer_lines_alone():
    lines = TF1.split("\n")[:2]
    got = pair_facts("\n".join(lines))
    assert list(got) == ["pair:0-1"] and got["pair:0-1"]["p2p.read"] == "NOT_SUPPORTED"
    assert text_facts("\n".join(lines))["host"]["text.tool"] == "TensorFlow peer access"


def test_bat_grid_and_line_numbers():
    text = paste("p2pBandwidthLatencyTest-nccl-814-p2p-slower.txt").rstrip("\n")
    bat = perturbation("bat")(text)  # a rule, "File: ...", a rule, each line numbered after the grid's bar, a rule
    assert pair_facts(bat) == pair_facts(text)
    assert Paste(bat).lines[3:-1] == Paste(text).lines  # the grid's lines blank, the numbering kept


# --- a string's escaped lines


def test_json_message_holding_a_topo_matrix_and_an_error():
    import json

    text = paste("topo-m-4090x8-tabs-nics.txt")
    wrapped = '{"job": "train-17", "status": "FAILED", "stderr": ' + json.dumps(text) + "}"
    assert "\n" not in wrapped.strip()
    assert pair_facts(wrapped) == pair_facts(text)
    p, log = Paste(wrapped), Log(wrapped)
    # (the record read as its other fields' line and its message's lines, the text's own line end the record's end:
    # test_r80_record_forms)
    assert len(p.lines) == len(log.lines) == len(Paste(text.rstrip("\n")).lines) + 1
    assert p.lines[0] == "job=train-17 status=FAILED"


def test_python_repr_of_a_log_and_json_escapes_read_back():
    import json

    err = paste("error-trtllm-1625-peer-access.txt").rstrip("\n")
    # Python's repr of the captured bytes, and JSON with its non-ASCII escaped (json.dumps' default)
    assert classes("stderr=" + repr(err.encode())) == classes(err)
    zh = "\u8bad\u7ec3\u62a5\u9519:\n" + err
    lines = Paste('{"msg": ' + json.dumps(zh) + "}").lines
    assert lines[0] == "\u8bad\u7ec3\u62a5\u9519:"  # read back as the characters (the record's other fields left out)
    assert "peer access is not supported between these two devices" in lines[-1]


def test_escapes_that_are_no_string_stay():
    # a Windows path's single backslashes, an escaped backslash, too few breaks with no program's lines after them
    for text in (r"copied to C:\nvidia\new\nccl\next and failed", r"printf a \\n b \\n c \\n", r"one\ntwo"):
        assert Paste(text).lines == [text]
    # a control character's escape stays as written in a string's escaped lines (text is data); a JSON record's message
    # is read as JSON reads it, its colours then gone (test_r80_record_forms)
    assert "\\u001b" in Paste(r'stderr="a\u001b[0m\nb\nc\nd"').text
    record = Paste(r'{"log": "a\u001b[0m\nb\nc\nd"}')
    assert "\x1b" not in record.text and record.lines == ["a", "b", "c", "d"]


# --- CRLF written twice


def test_cr_twice_is_one_line_end_for_both_readers():
    text = paste("topo-m-4090x8-tabs-nics.txt")
    doubled = text.replace("\n", "\r\r\n")
    assert pair_facts(doubled) == pair_facts(text)
    assert Paste(doubled).lines == Paste(text).lines
    assert len(Log(doubled).lines) == len(Log(text).lines)


def test_cr_twice_p2p_bandwidth_matrices_read():
    text = paste("p2pBandwidthLatencyTest-nccl-814-p2p-slower.txt")
    assert pair_facts(text.replace("\n", "\r\r\n")) == pair_facts(text)


# --- markdown tables


gfm = perturbation("gfm")  # each run of aligned rows as a markdown table, with its delimiter row


def test_p2p_bandwidth_matrices_as_markdown_tables():
    text = paste("p2pBandwidthLatencyTest-nccl-814-p2p-slower.txt")
    md = gfm(text)
    assert "|---|" in md
    want = pair_facts(text)
    assert want and pair_facts(md) == want
    assert classes(md) == classes(text)


def test_unpipe_tables_keeps_line_numbers_and_leaves_nvidia_smi_alone():
    md = "Matrix (GB/s)\n| D\\D | 0 | 1 |\n| :--- | ---: | --- |\n| 0 | 911.08 | 20.10 |\n| 1 | 20.39 | 920.20 |\n\nafter | text"
    got = unpipe_tables(md)
    assert got.split("\n") == ["Matrix (GB/s)", "D\\D  0  1", "", "0  911.08  20.10", "1  20.39  920.20", "", "after | text"]
    smi = ("+-----------------------------------------------------------------------------+\n"
           "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
           "|===============================+======================+======================|\n"
           "|   0  Tesla V100-SXM2...  On   | 00000000:00:1B.0 Off |                    0 |\n"
           "+-------------------------------+----------------------+----------------------+")
    assert unpipe_tables(smi) == smi
    # a delimiter row whose cells do not number the head's is no table's
    odd = "| a | b | c |\n|---|---|\n| 1 | 2 | 3 |"
    assert unpipe_tables(odd) == odd
