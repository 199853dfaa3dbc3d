"""Forms a paste takes in a log system or a service, read as the program printed it (the forty-first session).

- Structured records: a line that is a JSON object (JSON-lines logs: Go's slog and zap, klog --logging-format=json,
  python-json-logger, Docker's json-file, Google Cloud Logging's export) or an object printed over several lines (jq, an
  API's answer): its other fields on one logfmt line, then what its message fields hold ("msg", "message", "log",
  "textPayload", "jsonPayload" {"message"}, a notebook's "traceback" ...); a JSON line without such a field
  (nvbandwidth's) as written; a logfmt line (logrus, slog's text handler) as printed, as the knowledge base reads it.
- A blank line after every line (a web page that made each line a paragraph): taken away where the lines are a
  program's; a reporter's paragraphs of one line each keep their gaps.
- A log read newest first (Grafana's Loki, journalctl -r, Kibana's Discover): where the times at the lines' starts go
  back, the records in the order the program wrote them; a log in its own order stays so.
- An exception after a logger's or a service's label ("message: OSError: [Errno 28] ..."): the error's line.

Each form is made from a real paste (tests/fixtures/pastes, their sources in its index.json) with the change
benchmarks/perturb_corpus.py measures, and must give the facts and the answer the plain paste gives."""

import json

import pytest

from .kbtools import FORM_PASTES, classes, pasted as paste, perturbation, text_facts

from p2ptop.evidence.paste import Paste, oldest_first, read_records, undouble
from p2ptop.knowledge.matcher import Log



REAL = FORM_PASTES[:6]


# --- structured records


@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("form", ["jsonl", "jsonstr", "jq", "dockerjson"])
def test_records_give_the_plain_paste_facts(name, form):
    text = paste(name)
    assert text_facts(perturbation(form)(text)) == text_facts(text)


@pytest.mark.parametrize("form", ["jsonl", "jq", "jsonstr"])
def test_records_give_the_plain_answer(form):
    text = paste("error-trtllm-1625-peer-access.txt")
    assert classes(perturbation(form)(text)) == classes(text)


def test_record_message_fields_of_each_format():
    assert read_records('{"time":"2026-11-29T14:03:07Z","level":"ERROR","msg":"NCCL WARN Cuda failure 217"}') == \
        "NCCL WARN Cuda failure 217"
    # Google Cloud Logging's export: the payload's message, one level down
    gcp = {"insertId": "x1", "jsonPayload": {"message": "RuntimeError: CUDA error: invalid device ordinal", "rank": 3},
           "severity": "ERROR"}
    assert read_records(json.dumps(gcp)) == "RuntimeError: CUDA error: invalid device ordinal"
    # a notebook's error output: its traceback's lines (with their colours) and a stream's text (lines with their ends)
    nb = {"output_type": "error", "ename": "RuntimeError", "evalue": "CUDA error: peer access is not supported",
          "traceback": ["\u001b[0;31mRuntimeError\u001b[0m Traceback (most recent call last)", "RuntimeError: x"]}
    assert read_records(json.dumps(nb)) == \
        "ename=RuntimeError\nCUDA error: peer access is not supported\nRuntimeError Traceback (most recent call last)\n" \
        "RuntimeError: x"
    assert read_records(json.dumps({"name": "stdout", "text": ["GPU0 X\n", "GPU1 NV4\n"]})) == "name=stdout\nGPU0 X\nGPU1 NV4"


def test_record_other_fields_stay_data():
    # gpud's health record (leptonai/gpud, components/accelerator/nvidia/nvlink): its component and reason are what it
    # says; its time is the record's own; a value with a space quoted as logfmt quotes it
    record = ('{"time":"2026-11-29T03:02:10Z","component":"accelerator-nvidia-nvlink","health":"Unhealthy",'
              '"reason":"GPU lost","error":"GPU lost","suggested_actions":{"repair_actions":["REBOOT_SYSTEM"]}}')
    assert read_records(record) == ('component=accelerator-nvidia-nvlink health=Unhealthy reason="GPU lost" '
                                    'suggested_actions.repair_actions=REBOOT_SYSTEM\nGPU lost')
    assert classes(record)[:1] == ["gpu_fallen_off_bus"]


def test_records_are_no_lost_line_breaks():
    # a record read as several lines is no paste that lost its breaks: explain's note about restored breaks stays away
    text = perturbation("jsonstr")(paste("error-trtllm-1625-peer-access.txt"))
    assert Paste(text).relined == 0


def test_logfmt_lines_stay_as_printed():
    # logrus's and slog's text lines are lines of their own already, and the knowledge base reads them as printed: ollama's
    # "NVIDIA driver too old" with its fields, dockerd's CDI warning that its own line says was ignored
    ollama = ('time=2026-08-22T18:55:40.402Z level=WARN source=cuda_compat.go:70 msg="NVIDIA driver too old" '
              'device="Tesla P40" compute=6.1 driver=550 required_driver="570 or newer"')
    assert read_records(ollama) == ollama
    assert classes(ollama)[:1] == ["driver_too_old_for_cuda"]
    line = ('time="2024-05-01T10:00:00Z" level=error msg="error running hook: exit status 1, stdout: , stderr: '
            'nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown"')
    assert read_records(line) == line


def test_record_without_message_field_stays():
    # nvbandwidth's JSON on one line, a config: no message field, read by their own readers as written
    line = '{"nvbandwidth": {"version": "v0.7", "testcases": [{"name": "device_to_device_memcpy_read_ce"}]}}'
    assert read_records(line) == line
    text = "{\n  \"version\": \"v0.7\",\n  \"gpus\": 2\n}"
    assert read_records(text) == text
    assert read_records("not json {\"msg\": \"x\"} here") == "not json {\"msg\": \"x\"} here"
    assert read_records('{"msg": "cut') == '{"msg": "cut'


def test_record_control_characters_are_data():
    # a terminal's colours go; another control character in a message is a space, never a terminal code
    text = read_records('{"log":"\\u001b[31mNCCL WARN\\u001b[0m x\\u0007y\\n","stream":"stderr","time":"t"}')
    assert text == "NCCL WARN x y"
    assert "\x1b" not in Paste('{"msg":"a\\u001b]0;title\\u0007b"}').text


def test_pretty_answer_message_field_alone():
    # a service's answer printed over several lines but cut (no closing brace): its message field still read
    text = '{\n  "status": "FAILED",\n  "message": "RuntimeError: CUDA error: peer access is not supported between these two devices\\nx"'
    out = read_records(text)
    assert "RuntimeError: CUDA error: peer access is not supported between these two devices\nx" in out


def test_both_readers_number_records_alike():
    text = perturbation("jq")(paste("error-trtllm-1625-peer-access.txt"))
    p, log = Paste(text), Log(text)
    assert len(p.lines) == len(log.lines)
    assert not any('"status"' in line for line in log.lines)


# --- a blank line after every line


@pytest.mark.parametrize("name", REAL)
def test_doubled_lines_give_the_plain_paste_facts(name):
    text = paste(name)
    assert text_facts(perturbation("blankdouble")(text)) == text_facts(text)


def test_undouble_keeps_a_paragraph_of_its_own():
    assert undouble("GPU0 X NV4\n\nGPU1 NV4 X\n\n\n\nLegend:\n\nX = Self") == "GPU0 X NV4\nGPU1 NV4 X\n\nLegend:\nX = Self"


def test_undouble_leaves_prose_paragraphs_and_plain_text():
    prose = ("with cuda 11 i get this error on the second card\n\nwill try with the other card later but i think it "
             "fails the same way\n\nthis is with the last release")
    assert undouble(prose) == prose
    text = paste("topo-m-4090x8-tabs-nics.txt")
    assert undouble(text) == text
    assert undouble("a\n\nb") == "a\n\nb"  # two lines: no evidence of a form


# --- newest first


@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("form", ["newest", "journalr", "kibana"])
def test_newest_first_gives_the_plain_paste_facts(name, form):
    text = paste(name)
    assert text_facts(perturbation(form)(text)) == text_facts(text)


def test_newest_first_answer():
    text = paste("dmesg-cuda-samples-48-amd-vi.txt")
    assert classes(perturbation("newest")(text)) == classes(text)


def test_oldest_first_records_keep_their_lines():
    log = ("$ journalctl -r -u train\n"
           "2026-11-29T14:03:09Z RuntimeError: CUDA error: invalid device ordinal\n"
           "2026-11-29T14:03:08Z Traceback (most recent call last):\n"
           "  File \"train.py\", line 3, in <module>\n"
           "2026-11-29T14:03:07Z starting")
    assert oldest_first(log).split("\n") == [
        "$ journalctl -r -u train", "2026-11-29T14:03:07Z starting", "2026-11-29T14:03:08Z Traceback (most recent call last):",
        "  File \"train.py\", line 3, in <module>", "2026-11-29T14:03:09Z RuntimeError: CUDA error: invalid device ordinal"]


def test_oldest_first_leaves_a_log_in_its_order():
    text = paste("dmesg-cuda-samples-48-amd-vi.txt")
    assert oldest_first(text) == text
    # two ranks' lines interleaved go back now and then, forward mostly: as written
    mixed = "\n".join(f"2026-11-29T14:03:{s:02}Z line" for s in (1, 3, 2, 4, 6, 5, 7, 8, 9, 10))
    assert oldest_first(mixed) == mixed
    assert oldest_first("Dec 01 11:38:41 a\nDec 01 11:38:40 b") == "Dec 01 11:38:41 a\nDec 01 11:38:40 b"  # one step back
    # dmesg -r-like and syslog across days
    assert oldest_first("[ 12.5] c\n[ 3.25] b\n[ 1.0] a") == "[ 1.0] a\n[ 3.25] b\n[ 12.5] c"
    assert oldest_first("Dec 02 00:00:01 c\nDec 01 23:59:59 b\nDec 01 23:00:00 a").startswith("Dec 01 23:00:00 a")


# --- an exception after a label


@pytest.mark.parametrize("line", [
    "message: OSError: [Errno 28] No space left on device",
    "ERROR: RuntimeError: CUDA error: an illegal memory access was encountered",
    "ERROR: LoadError: CUDA 10.0 is not supported by your driver",
])
def test_labelled_exception_is_the_error_line(line):
    assert text_facts("job failed\n" + line)["host"]["error.text"] == line


def test_label_without_exception_is_no_error_line():
    assert "error.text" not in text_facts("Note: ValueError is raised later\nstatus: done").get("host", {})
