"""A text that names no GPU, read beside a host's facts, and a driver's parameter list (the forty-seventh round).

From the healthy one-GPU H200's own outputs pasted to ``p2ptop explain`` on the device (benchmarks/results/
h200x1-2026-12-02h): ``nvidia-smi -q -d RESET_STATUS``, which that driver's nvidia-smi refuses ("Failed to parse
--display/-d flags"), got a lead on the live host that it does not get alone (its bare "Failed" beside the host's one
GPU); ``/proc/driver/nvidia/params`` got a lead on its words alone ("NvLinkDisable: 1" read as a sentence naming NVLink).

- A text with no trace of GPUs, CUDA, NCCL or P2P says nothing about GPUs: beside a host's facts only what a GPU pair can
  cause in a job that does not name its GPUs joins them (a hang, slowness, wrong results), never its failures or errors.
- The host's count of GPUs fits every text read on that host, as its absences do: it makes no lead on its own.
- nv-procfs.c's nv_procfs_read_params prints one parameter a line ("%s: %u", 'RmMsg: "%s"'): a listing, no sentence.
"""

from __future__ import annotations

import json
import os

from p2ptop import cli
from p2ptop.findings import Finding
from p2ptop.knowledge import load_kb, match

from .conftest import FIXTURES
from .kbtools import explained, flat_facts

KB = load_kb()
H100 = os.path.join(FIXTURES, "captures", "h100x1-vm", "p2ptop-snapshot.json")
H200 = os.path.join(FIXTURES, "captures", "h200x1-vm")


def explain_json(path, capsys, *extra):
    assert cli.main(["explain", str(path), *extra, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def explain_text(path, capsys, *extra):
    assert cli.main(["explain", str(path), *extra]) == 0
    return capsys.readouterr().out


def one_gpu():
    return [Finding("host.facts", "host", "ok", "host", [], {"host.gpu_count": 1})]


def test_a_failure_that_names_no_gpu_gets_no_lead_from_a_one_gpu_host(capsys):
    path = os.path.join(H200, "nvidia-smi-q-d-reset-status.txt")
    for extra in (("--replay", H100), ("--text-only",)):
        doc = explain_json(path, capsys, *extra)
        assert doc["answer"] == "no_gpu_trace" and doc["matches"] == [] and doc["symptoms"] == [], (extra, doc["answer"])
        assert doc["gpu_related"] is False  # of the text, as the answer says, whatever the host holds
    out = explain_text(path, capsys, "--replay", H100)
    assert "Nothing to explain: the text holds no trace of GPUs or P2P" in out
    assert "The host's findings show no sign of P2P trouble." in out


def test_words_of_failure_that_name_no_gpu_stay_out_of_the_hosts_facts(tmp_path, capsys):
    for text in ("the job failed with an error", "Killed", "ERROR: something went wrong", "The build is broken, it crashed."):
        p = tmp_path / "t.txt"
        p.write_text(text + "\n")
        doc = explain_json(p, capsys, "--replay", H100)
        assert doc["answer"] == "no_gpu_trace" and doc["matches"] == [] and doc["symptoms"] == [], (text, doc["matches"])


def test_a_hang_that_names_no_gpu_still_meets_the_hosts_facts(tmp_path, capsys):
    # "training hangs" run on a host whose pairs cross an IOMMU with ACS on: the host's pairs can hang a job whose log
    # does not name its GPUs, so the hang joins the host's facts, and the hang's own entry comes first among them
    p = tmp_path / "t.txt"
    p.write_text("training hangs\n")
    doc = explain_json(p, capsys, "--demo", "pcie-4gpu-iommu")
    ids = [m["entry_id"] if "entry_id" in m else m["id"] for m in doc["matches"]]
    assert "iommu/p2p-hang-or-corruption" in ids, ids
    assert any(s.startswith("symptom.hang = True") for s in doc["symptoms"]), doc["symptoms"]
    # a failure in words on the same host: the host's own findings are answered, the text's "failed" is not a symptom
    p.write_text("the job failed with an error\n")
    doc = explain_json(p, capsys, "--demo", "pcie-4gpu-iommu")
    assert doc["matches"] and not any(s.startswith(("symptom.fails", "symptom.reported")) for s in doc["symptoms"])


def test_the_hosts_count_of_gpus_alone_makes_no_lead():
    # a hang on a one-GPU host is no sign of a peer hidden from the process: that entry's sign is an error of its own
    for text in ("The NCCL job hangs.", "training hangs", "NCCL all_reduce is very slow"):
        got = [(m.entry.id, m.basis) for m in match(KB, text, one_gpu())]
        assert ("cuda/peer-access-unsupported-one-gpu", "lead") not in got, (text, got)
    # its own error still offers it on that host
    got = match(KB, "RuntimeError: CUDA error: peer access is not supported between these two devices", one_gpu())
    assert got[0].entry.id == "cuda/peer-access-unsupported-one-gpu" and got[0].confidence == "likely"


def test_the_driver_parameter_list_is_no_sentence_about_nvlink():
    with open(os.path.join(H200, "proc-driver-nvidia-version-params.txt"), encoding="utf-8") as f:
        text = f.read()
    assert "NvLinkDisable: 1" in text
    assert "text.topic" not in flat_facts(text)
    assert explained(text) == []
    # a writer's sentence about NVLink still is one, and its trouble is read
    said = "NvLinkDisable: 1\nThe NVLink between GPU0 and GPU1 is down since the upgrade.\n"
    assert flat_facts(said).get("text.topic") == "gpu communication"
    assert explained(said)
    # so is a record's quoted message with spaces (a health event's YAML), though its key has the parameters' shape
    event = 'checkName: GpuNvlinkWatch\nmessage: "GPU 3\'s NvLink link 16 is currently down"\n'
    assert flat_facts(event).get("text.topic") == "gpu communication"


# ---- pastes that lost or moved their line breaks ------------------------------------------------------------------

TRACEBACK_CUT = '''Traceback (most recent call last):
  File "/opt/conda/lib/python3.10/runpy.py", line 196, in _run_module_as_main
    return _run_code(code, main_globals, None,
  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/run.py", line 806, in main
    run(args)
  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/launcher/api.py", line 135, in __call__
    return launch_agent(self._config, self._entrypoint, list(args))'''


def reflow(text: str, width: int = 44) -> str:
    import textwrap

    return "\n".join(x for line in text.split("\n")
                     for x in (textwrap.wrap(line, width, break_long_words=False, break_on_hyphens=False)
                               if len(line) > width else [line]))


def test_a_traceback_cut_before_its_exception_stays_cut_when_reflowed_or_joined():
    from p2ptop.evidence.errors import _cut_traceback

    assert _cut_traceback(TRACEBACK_CUT.split("\n")) == 1
    # a mail client's reflow moves the file's name, "line N, in NAME" and the code's last words to the line's start
    moved = reflow(TRACEBACK_CUT)
    assert {'"/opt/conda/lib/python3.10/site-packages/torch/distributed/run.py",', "None,"} <= set(moved.split("\n")), moved
    assert _cut_traceback(moved.split("\n")) == 1
    for text in (moved, TRACEBACK_CUT.replace("\n", " ")):  # and a paste that lost its breaks gets its frames back
        assert flat_facts("NCCL all_reduce on 2 GPUs\n" + text).get("symptom.fails") is True, text[:80]
    # the exception line still ends it, at the line's start whatever came before, its name alone or with a message
    for end in ("RuntimeError: boom", "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError", "KeyError: 'x'"):
        assert _cut_traceback((TRACEBACK_CUT + "\n" + end).split("\n")) is None
        assert _cut_traceback((moved + "\n" + end).split("\n")) is None


SMI_ROWS = ("peer access between the two GPUs fails in our VM\n"
            "|   0  NVIDIA A10G                    On  | 00000000:00:1B.0 Off |                    0 |\n"
            "|   1  NVIDIA A10G                    On  | 00000000:00:1C.0 Off |                    0 |\n")


def test_nvidia_smis_gpu_rows_get_their_lines_back():
    from p2ptop.evidence.paste import reline

    joined = SMI_ROWS.replace("\n", " ")
    again = reline(joined).split("\n")
    assert [x.split()[1] for x in again[1:3]] == ["0", "1"], again
    assert flat_facts(joined).get("host.gpu_count") == flat_facts(SMI_ROWS).get("host.gpu_count") == 2


LATENCY = """P2P=Disabled Latency Matrix (us)
   GPU     0      1      2      3
     0   1.78  17.52  16.41  16.43
     1  17.10   1.80  16.90  16.70
     2  16.40  16.80   1.79  17.20
     3  16.50  16.60  17.30   1.77
P2P=Enabled Latency (P2P Writes) Matrix (us)
   GPU     0      1      2      3
     0   1.76   1.62  16.61  16.80
     1   1.63   1.81  16.70  16.90
     2  16.50  16.70   1.78   1.61
     3  16.60  16.40   1.62   1.76
"""


def test_the_latency_matrices_of_p2pbandwidthlatencytest_get_their_rows_back():
    from p2ptop.evidence.paste import reline

    joined = LATENCY.replace("\n", " ")
    rows = reline(joined).split("\n")
    assert "GPU 0 1 2 3" in rows and "3 16.60 16.40 1.62 1.76" in rows, rows
    # the pairs across the two halves were staged (P2P=Enabled at the P2P=Disabled figure while 0-1 and 2-3 gain)
    from p2ptop.evidence import read_text

    def refused(text):
        return sorted(f.subject for f in read_text(text).findings if f.facts.get("p2p.read") == "NOT_SUPPORTED")

    assert refused(joined) == refused(LATENCY) == ["pair:0-2", "pair:0-3", "pair:1-2", "pair:1-3"]


# ---- an excerpt of nvidia-smi -q without its GPU header -------------------------------------------------------------

def _grep_after(text: str, label: str, after: int) -> str:
    """``grep -A AFTER LABEL`` over a text."""
    lines = text.split("\n")
    out: list[str] = []
    for i, line in enumerate(lines):
        if label in line:
            out.extend(lines[i:i + after + 1])
    return "\n".join(out)


def test_an_excerpt_of_nvidia_smi_q_reads_no_slowness_from_its_labels():
    from p2ptop.evidence.smi import q_excerpt

    with open(os.path.join(H200, "nvidia-smi-q.txt"), encoding="utf-8") as f:
        q = f.read()
    for label, after in (("Temperature", 8), ("Clocks Event Reasons", 10), ("HW Slowdown", 2)):
        part = _grep_after(q, label, after)
        assert q_excerpt(part.split("\n")), label
        facts = flat_facts(part)
        assert not any(k.startswith("symptom.") for k in facts), (label, facts)
        # nor does the matcher's never-silent gate read their labels as words of trouble (it reads the text as the
        # evidence readers do, alignment kept): no candidates on the excerpt's words
        assert explained(part) == [], label
    # nvidia-smi -q | grep -i slowdown: the labels alone
    grep = "\n".join(line for line in q.split("\n") if "slowdown" in line.lower())
    assert "symptom.slow" not in flat_facts(grep), grep
    assert explained(grep) == []


def test_a_writers_aligned_list_is_no_excerpt_of_nvidia_smi_q():
    from p2ptop.evidence.smi import q_excerpt

    said = ("OS                      : Ubuntu 22.04\n"
            "GPU                     : 2x RTX 4090\n"
            "Problem                 : NCCL all_reduce hangs after the first step\n")
    assert not q_excerpt(said.split("\n"))
    assert flat_facts(said).get("symptom.hang") is True
    # the gate reads a writer's aligned words of trouble too ("is broken": no symptom fact of its own)
    from p2ptop.evidence.read import trouble_said

    broken = said.replace("NCCL all_reduce hangs after the first step", "the NCCL all_reduce is broken")
    assert trouble_said(broken) and explained(broken)


LOG4J = ("The server in the GPU container finds no GPU; from `ts_log.log`:\n"
         "model-server@a8819511cfaa:~/logs$ more ts_log.log\n"
         "2020-04-16 01:53:17,099 [INFO ] main org.pytorch.serve.ModelServer -\n"
         "Temp directory: /home/model-server/tmp\n"
         "Number of GPUs: 0\n"
         "Number of CPUs: 8\n"
         "2020-04-16 01:53:17,232 [INFO ] main org.pytorch.serve.ModelServer - Loading initial models\n")


def test_a_log_records_date_ends_the_command_typed_before_it_in_a_paste_that_lost_its_breaks():
    from p2ptop.evidence.paste import reline

    joined = LOG4J.replace("\n", " ")
    rows = reline(joined).split("\n")
    assert any(r.startswith("2020-04-16 01:53:17,099 [INFO ]") for r in rows), rows
    assert not any(r.startswith("GPUs: 0") for r in rows), rows  # "Number of GPUs: 0" is no dcgmi head
    assert flat_facts(joined).get("symptom.no_cuda_device") is True
    assert flat_facts(LOG4J).get("symptom.no_cuda_device") is True
    # dcgmi nvlink --link-status' head still starts a line ("GPUs:" before its "gpuId 0:")
    dcgmi = "x" * 160 + " GPUs:     gpuId 0:         U U U U     gpuId 1:         U U U U NvSwitches: No NvSwitches found."
    assert any(r.startswith("GPUs:") for r in reline(dcgmi).split("\n"))
