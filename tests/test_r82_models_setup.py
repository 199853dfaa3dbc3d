"""GPU models NVIDIA names that the model table did not know, and a setup fact that its entry did not use (the forty-third
session).

- The model table against the PCI ID database (pci.ids, pciutils/pciids): each NVIDIA device there is named with its chip
  (GK Kepler, GM Maxwell, GP Pascal, GV Volta, TU Turing, GA Ampere, AD Ada, GH Hopper, GB Blackwell). Names nvidia-smi
  and people print that were unknown (Tesla K40m, K20Xm, V100S; GeForce GTX 600, GTX 1050, RTX 3050; Quadro K/M/P/RTX;
  RTX A2000; NVIDIA T1000) now give their class and architecture, and the GTX 750/750 Ti are Maxwell (GM107), not Kepler.
  Kepler GeForce cards keep the stock driver's PCIe P2P (gpus.GEFORCE_PCIE_P2P_ARCHITECTURES) like Maxwell and Pascal.
- native Windows (host.windows, read from the text) is a condition of the entry for NVIDIA's Linux-only NCCL, so on a
  report of a crash in a collective on Windows that entry's context holds (a lead ranked for it), as a GeForce's does for
  the consumer entry."""

import pytest

from .kbtools import FORM_PASTES, classes, flat_facts, pasted, perturbation, text_facts

from p2ptop.evidence.gpus import built_pcie, classify, geforce_with_pcie_p2p
from p2ptop.evidence.paste import Paste, read_records
from p2ptop.knowledge.matcher import Log

# (name as nvidia-smi or pci.ids writes it, product class, architecture of its chip in pci.ids)
NAMES = [
    ("Tesla K40m", "data-centre", "Kepler"), ("Tesla K40c", "data-centre", "Kepler"),
    ("Tesla K20Xm", "data-centre", "Kepler"), ("Tesla K20c", "data-centre", "Kepler"),
    ("Tesla V100S-PCIE-32GB", "data-centre", "Volta"), ("Tesla P40", "data-centre", "Pascal"),
    ("Tesla P6", "data-centre", "Pascal"), ("Tesla M4", "data-centre", "Maxwell"), ("Tesla T10", "data-centre", "Turing"),
    ("NVIDIA A100X", "data-centre", "Ampere"), ("NVIDIA A10M", "data-centre", "Ampere"),
    ("GeForce GTX 680", "consumer", "Kepler"), ("GeForce GTX 690", "consumer", "Kepler"),
    ("GeForce GTX 660 Ti", "consumer", "Kepler"), ("GeForce GTX 780 Ti", "consumer", "Kepler"),
    ("GeForce GTX 750 Ti", "consumer", "Maxwell"), ("GeForce GTX 750", "consumer", "Maxwell"),
    ("GeForce GTX 1050 Ti", "consumer", "Pascal"), ("GeForce GTX 1630", "consumer", "Turing"),
    ("NVIDIA GeForce RTX 3050", "consumer", "Ampere"), ("NVIDIA GeForce RTX 2050", "consumer", "Ampere"),
    ("NVIDIA GeForce RTX 5050", "consumer", "Blackwell"),
    ("Quadro K4200", "workstation", "Kepler"), ("Quadro K2200", "workstation", "Maxwell"),
    ("Quadro M5000", "workstation", "Maxwell"), ("Quadro P4000", "workstation", "Pascal"),
    ("Quadro GV100", "workstation", "Volta"), ("Quadro RTX 8000", "workstation", "Turing"),
    ("Quadro RTX 6000", "workstation", "Turing"), ("NVIDIA T1000 8GB", "workstation", "Turing"),
    ("NVIDIA RTX A2000 12GB", "workstation", "Ampere"), ("NVIDIA RTX A400", "workstation", "Ampere"),
    ("NVIDIA RTX 5880 Ada Generation", "workstation", "Ada"), ("NVIDIA RTX 4000 SFF Ada Generation", "workstation", "Ada"),
    ("NVIDIA RTX PRO 6000D", "workstation", "Blackwell"),
    # known before, unchanged
    ("NVIDIA GeForce RTX 4090", "consumer", "Ada"), ("NVIDIA H100 80GB HBM3", "data-centre", "Hopper"),
    ("Tesla K80", "data-centre", "Kepler"), ("NVIDIA RTX 6000 Ada Generation", "workstation", "Ada"),
]


@pytest.mark.parametrize("name,cls,arch", NAMES)
def test_model_class_and_architecture(name, cls, arch):
    assert classify(name) == (cls, arch)


@pytest.mark.parametrize("name", ["Apple M4", "k8s", "ThinkPad T400", "L2 cache", "port 3050", "p4d.24xlarge"])
def test_words_that_are_no_gpu_stay_unknown(name):
    assert classify(name) == (None, None)


def test_kepler_geforce_keeps_pcie_p2p_and_gen2_kepler_boards_give_no_floor():
    assert geforce_with_pcie_p2p("GeForce GTX 680") and geforce_with_pcie_p2p("GeForce GTX 750 Ti")
    assert not geforce_with_pcie_p2p("NVIDIA GeForce RTX 3050")
    assert built_pcie("Tesla K40m") == 3
    assert built_pcie("Tesla K20Xm") is None and built_pcie("Quadro K4000") is None  # PCIe Gen2 boards of a Gen3 family


@pytest.mark.parametrize("sentence,name,cls,arch", [
    ("We have two Tesla K40m cards in a Dell R720 and P2P hangs.", "Tesla K40m", "data-centre", "Kepler"),
    ("Server with 4 x Tesla P40, cudaMemcpyPeer is slow.", "Tesla P40", "data-centre", "Pascal"),
    ("My workstation has two Quadro P5000 and p2p fails.", "Quadro P5000", "workstation", "Pascal"),
    ("2x Quadro RTX 8000 with an NVLink bridge, NCCL hangs.", "Quadro RTX 8000", "workstation", "Turing"),
    ("Two GTX 680 cards, simpleP2P says peer access not supported.", "GTX 680", "consumer", "Kepler"),
    ("2x NVIDIA T1000 in a workstation, P2P fails", "NVIDIA T1000", "workstation", "Turing"),
])
def test_models_in_a_sentence(sentence, name, cls, arch):
    f = flat_facts(sentence)
    assert (f.get("gpu.name"), f.get("gpu.product_class"), f.get("gpu.architecture")) == (name, cls, arch)


def test_a_tesla_m4_needs_its_brand_in_a_sentence():
    assert flat_facts("It runs on my Apple M4 laptop, NCCL is not found").get("gpu.name") is None


WINDOWS = ("Serving a model with tensor parallel 2 on my workstation crashes in all_reduce with an access violation.\n"
           "OS: Windows 11 Pro\nGPU: 2x NVIDIA GeForce RTX 3090\nPyTorch 2.5.1+cu124\n")


def test_native_windows_is_the_context_of_the_no_nccl_entry():
    assert flat_facts(WINDOWS).get("host.windows") is True
    assert "nccl_unavailable_platform" in classes(WINDOWS)


def test_wsl_is_no_native_windows():
    wsl = WINDOWS.replace("OS: Windows 11 Pro", "OS: Ubuntu 22.04 under WSL 2 on Windows 11 Pro")
    assert flat_facts(wsl).get("host.windows") is None
    assert "nccl_unavailable_platform" not in classes(wsl)


# --- what a host lacks is no context bonus; an entry of one GPU family needs that family

def _facts(text, findings=()):
    from p2ptop.knowledge.matcher import Facts, prepare

    return Facts(list(findings), prepare(text), "live host")


def test_a_hosts_absence_earns_no_context_bonus_but_the_texts_own_does():
    from p2ptop.findings import Finding
    from p2ptop.knowledge.matcher import _context_held

    cond = {"support": [{"fact": "host.nvswitch_present", "equals": False}]}
    host = [Finding(id="host.nvswitch", subject="host", severity="info", summary="no NVSwitch", evidence=["live host"],
                    facts={"host.nvswitch_present": False})]
    assert _context_held(cond, _facts("NCCL hangs at init on our two GPUs.", host)) == 0
    said = _facts("NCCL hangs at init on our two GPUs; the server has no NVSwitch.")
    assert said.check(cond["support"][0]) and _context_held(cond, said) == 1


def test_a_replayed_one_gpu_host_does_not_put_fabric_manager_first_for_a_windows_report():
    from pathlib import Path

    from p2ptop.commands import explain as E

    from .kbtools import bundled_kb

    snap = E.open_snapshot(demo=None, replay=str(Path(__file__).parent / "fixtures/captures/h100x1-vm/p2ptop-snapshot.json"))
    findings = E.findings_for(snap) + E.pair_fact_findings(snap)
    got = E.answer(bundled_kb(), WINDOWS, findings, 3, E.host_origin(snap), links=E.host_links(snap))["results"]
    assert got[0][0].entry.id == "platform/no-nccl-in-windows-builds"
    # nor second, on the words it shares ("GeForce", "RTX") weighed with the host's lack of an NVSwitch
    assert "fabric-manager/nothing-to-do-no-nvswitch" not in [m.entry.id for m, _ in got[:2]]


@pytest.mark.parametrize("gpu,offered", [("2x RTX 5090", True), ("2x RTX PRO 6000 Blackwell", True),
                                         ("2x RTX 3090", False), ("8x B200", False)])
def test_nccl_2_25_shared_memory_entry_needs_an_sm120_part(gpu, offered):
    from p2ptop.knowledge.matcher import match

    from .kbtools import bundled_kb

    text = f"all_reduce fails right at the start on {gpu}, NCCL version 2.25.1+cuda12.8, every collective errors out."
    ids = [m.entry.id for m in match(bundled_kb(), text)]
    assert ("nccl/2-25-maxsharedmem-blackwell-geforce" in ids) is offered


@pytest.mark.parametrize("name,vendor,model", [
    ("Intel(R) Xeon(R) CPU E5-2690 v4 @ 2.60GHz", "Intel", "Xeon(R) CPU E5-2690 v4"),
    ("Intel(R) Core(TM) Ultra 9 285K", "Intel", "Core(TM) Ultra 9 285K"),
    ("Intel(R) Xeon(R) Platinum 8480+", "Intel", "Xeon(R) Platinum 8480"),
    ("AMD EPYC 9654 96-Core Processor", "AMD", "EPYC 9654"),
])
def test_cpu_names_as_lscpu_prints_them(name, vendor, model):
    f = flat_facts(f"Model name: {name}\nTwo RTX 4090s, NCCL hangs.")
    assert (f.get("host.cpu_vendor"), f.get("host.cpu_model")) == (vendor, model)


# --- a log search's CSV export (RFC 4180), read as the records it holds



REAL = FORM_PASTES


@pytest.mark.parametrize("name", REAL)
def test_a_csv_export_gives_the_plain_paste_facts(name):
    text = pasted(name)
    assert text_facts(perturbation("csvexport")(text)) == text_facts(text)


def test_a_csv_export_gives_the_plain_answer_and_both_readers_number_the_same_lines():
    text = pasted("error-trtllm-1625-peer-access.txt")
    exported = perturbation("csvexport")(text).rstrip("\n")  # (csv.writer ends its last row with a line end)
    assert classes(exported) == classes(text)
    assert Paste(exported).text.count("\n") == len(Log(exported).lines) - 1


def test_exports_of_other_log_services():
    # Splunk's export: its bookkeeping left out, "_raw" the event's text
    splunk = ('"_serial","_time",source,sourcetype,host,index,"splunk_server","_raw"\n'
              '0,"2026-11-29T14:03:00.000+0000","/var/log/kern.log",syslog,node7,main,"idx1",'
              '"Nov 29 14:03:00 node7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=4711, name=python3, GPU has fallen off the bus."\n')
    assert read_records(splunk) == ("source=/var/log/kern.log host=node7\nNov 29 14:03:00 node7 kernel: NVRM: Xid "
                                    "(PCI:0000:3b:00): 79, pid=4711, name=python3, GPU has fallen off the bus.\n")
    # Datadog's: quoted names, a traceback in one quoted field (its quotes doubled), and the reporter's words after it
    datadog = ('"Date","Host","Service","Message"\n"2026-11-29 14:03:00","node7","trainer","Traceback (most recent call last):\n'
               '  File ""train.py"", line 12, in <module>\nRuntimeError: CUDA error: invalid device ordinal"\nThat was all.')
    assert read_records(datadog) == ('Host=node7 Service=trainer\nTraceback (most recent call last):\n  File "train.py", '
                                     'line 12, in <module>\nRuntimeError: CUDA error: invalid device ordinal\nThat was all.')


@pytest.mark.parametrize("text", [
    "index, name, pci.bus_id, driver_version\n0, NVIDIA H200, 00000000:19:00.0, 570.86.15\n",  # nvidia-smi --query-gpu
    "name,memory.total [MiB]\nNVIDIA H200,143771 MiB\n",
    "Error,message\nI tried NCCL_P2P_DISABLE=1, it works\nthanks, bye\n",  # prose, no time column
    "time,message,level\nnot, enough\n",  # no row of the header's width
])
def test_text_that_is_no_log_export_stays(text):
    assert read_records(text) == text


# --- GitLab Runner's timestamped job log (FF_TIMESTAMPS): the time and the stream marker before every line

@pytest.mark.parametrize("name", REAL)
def test_a_gitlab_job_log_gives_the_plain_paste_facts(name):
    text = pasted(name)
    assert text_facts(perturbation("gitlab")(text)) == text_facts(text)


def test_gitlab_stream_markers_come_off():
    log = ("2024-05-30T14:30:00.123456Z 00O \x1b[0KRunning with gitlab-runner 17.0.0\n"
           "2024-05-30T14:30:01.000000Z 01E RuntimeError: CUDA error: invalid device ordinal\n"
           "2024-05-30T14:30:01.000001Z 01E+ (its line goes on)")
    assert Paste(log).text == ("Running with gitlab-runner 17.0.0\nRuntimeError: CUDA error: invalid device ordinal\n"
                               "(its line goes on)")
