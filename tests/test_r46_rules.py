"""Rules of the nineteenth session, each from what a program, a product line or a library says, not from one paste. Those
that came after opening a sealed part say so: a fact misread there, not a case fitted."""

import pytest

from .kbtools import flat_facts


@pytest.mark.parametrize("text,arch", [
    ("vllm serve hangs on 8x B300 during multi-GPU init", "Blackwell"),
    ("every rank freezes on our 8× B300 node", "Blackwell"),
    ("two B200 GPUs in the node", "Blackwell"),
    ("the GB300 tray hangs", "Blackwell"),
])
def test_blackwell_ultra_models_are_read_in_prose(text, arch):
    """After opening fresh46: B300 (Blackwell Ultra, HGX B300) is in the model table but the prose reader only knew B100
    and B200, so a report on B300s named no GPU and a consumer-card entry stayed among the candidates."""
    f = flat_facts(text)
    assert f.get("gpu.architecture") == arch
    assert f.get("gpu.product_class") == "data-centre"


@pytest.mark.parametrize("text", [
    "Training on 2x H100 and speed is same as 1x H100",
    "the throughput is about the same as a single 4090",
    "time stays the same as with one GPU",
    "it/s is the same as one card",
])
def test_no_gain_over_one_gpu_is_slow(text):
    """After opening fresh46: no gain from a second GPU, said against one GPU named by its count or model, is the
    data-parallel report's "slow" (the gradients' all-reduce across the link eats the second GPU's work)."""
    assert flat_facts(text).get("symptom.slow") is True


@pytest.mark.parametrize("text", [
    "the output is the same as 1x H100 gives",
    "the speed setting is the same as before",
    "we bought the same card as one of our colleagues",
])
def test_the_same_result_or_setting_is_not_slow(text):
    assert "symptom.slow" not in flat_facts(text)


@pytest.mark.parametrize("text", [
    "NCCL all_reduce hangs on our DGX-1 with 8 V100",
    "the DGX Station freezes during DDP",
    "a watchdog timeout on DGX Spark",
    "HGX H100 4-GPU board, training hangs",
    "DGX OS 6 on the workstation, the job hangs",
])
def test_dgx_and_hgx_machines_without_nvswitch_are_not_read_as_nvswitch_hosts(text):
    """DGX-1/HGX-1 (hybrid cube-mesh), DGX Station, DGX Spark and the 4-GPU HGX boards carry no NVSwitch (NVIDIA's system
    guides): naming them says nothing of an NVSwitch fabric, nor of NVLink between every pair."""
    f = flat_facts(text)
    assert f.get("host.nvswitch_present") is not True
    assert "host.all_pairs_nvlink" not in f


@pytest.mark.parametrize("text", [
    "NCCL all_reduce hangs on a DGX A100",
    "8x B300 node, every rank freezes during init",
    "HGX H100 8-GPU server: training hangs after 200 steps",
    "dgx-2 machine hangs in all_gather",
])
def test_an_nvswitch_host_joins_every_pair_by_nvlink(text):
    """On an NVSwitch fabric every GPU pair is joined by NVLink, so no peer traffic crosses PCIe: the ACS-redirect and
    IOMMU-translation entries (which act on PCIe peer traffic) are ruled out for its hangs."""
    from p2ptop.commands.explain import explain
    from p2ptop.knowledge import load_kb
    f = flat_facts(text)
    assert f.get("host.nvswitch_present") is True
    assert f.get("host.all_pairs_nvlink") is True
    ids = [m.entry.id for m, _ in explain(load_kb(), text, [], 10)]
    assert "pcie/acs-redirect-blocks-p2p" not in ids
    assert "iommu/nccl-hang-iommu-translation" not in ids


def test_a_matrix_decides_over_the_nvswitch_words():
    """A topology matrix in the text gives each pair's path: an NVSwitch host whose matrix shows a pair over PCIe (a GPU's
    NVLinks down) is not said to join every pair by NVLink."""
    text = ("DGX A100, NCCL hangs\n"
            "        GPU0    GPU1    CPU Affinity\n"
            "GPU0     X      SYS     0-63\n"
            "GPU1    SYS      X      0-63\n")
    assert "host.all_pairs_nvlink" not in flat_facts(text)


@pytest.mark.parametrize("text", [
    "vllm serve hangs on 8x B300 during multi-GPU init: every rank freezes at NCCL INFO NVLS tuning: nChannels 24",
    "the job is stuck forever after NCCL INFO Connected all rings",
])
def test_a_sentence_quoting_an_nccl_info_line_keeps_its_words(text):
    """A writer quoting NCCL's INFO line inside a sentence: the sentence is read (its hang, its GPUs), the quoted INFO
    line stays the NCCL reader's; before, the whole line was blanked for the readers of sentences."""
    assert flat_facts(text).get("symptom.hang") is True


@pytest.mark.parametrize("line", [
    "gpu-node-3:1234:1234 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via P2P/CUMEM stuck hang",
    "(RayWorker pid=4751) h100-hang-box:1:2 [0] NCCL INFO Bootstrap : Using eth0",
    "[rank0]: worker:77:77 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to LOC",
])
def test_nccls_own_info_lines_stay_blank_for_the_sentence_readers(line):
    """NCCL's own INFO lines (its prefix, a launcher's) are not sentences: their words (a host named after a hang, a
    message's own words) give no prose fact."""
    from p2ptop.evidence.paste import Paste
    assert Paste(line).plain.strip() == ""


def test_srun_labels_come_off_before_a_launchers_prefix():
    """Slurm's --label stands before whatever the task prints, a launcher's own prefix included: both come off, so the
    error reads as printed ("0: (EngineCore_DP1 pid=...) RuntimeError: pidfd_getfd(...) failed ..."); before, the
    launcher's prefix stayed and the error line was not read (found by perturb_corpus.py's srun change)."""
    from p2ptop.evidence.paste import Paste
    text = ("0: (EngineCore_DP1 pid=2944727) RuntimeError: pidfd_getfd(pidfd=164, fd=183) failed with errno 1: Operation not permitted.\n"
            "0: (EngineCore_DP0 pid=2944726) RuntimeError: pidfd_getfd(pidfd=185, fd=163) failed with errno 1: Operation not permitted.\n")
    p = Paste(text)
    assert p.lines[0].startswith("RuntimeError: pidfd_getfd")
    assert "(EngineCore_DP1 pid=2944727)" in p.prefixes


@pytest.mark.parametrize("prefix", ["[1,0]<stdout>:", "(RayWorkerWrapper pid=4711, ip=10.0.0.2) ", "2026-11-29T14:03:07.123456789Z ",
                                    "0: ", "[rank1]: "])
def test_entry_patterns_for_a_line_start_read_under_a_launchers_prefix(prefix):
    """The matcher's lines lose the launchers' prefixes as the evidence readers' do (paste.unprefix, one way for both): an
    entry's pattern written for a program's line start ("^Cuda failure 'invalid argument'" after PyTorch's "Last error:")
    reads the same line under Open MPI's tag, Ray's, a timestamp, srun's label or torchrun's rank (perturb_corpus.py lost
    two cases under each of the first four)."""
    from p2ptop.knowledge import load_kb
    from p2ptop.knowledge.matcher import match
    text = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1331, "
            "unhandled cuda error, NCCL version 2.18.3\nncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\n"
            "Cuda failure 'invalid argument'\n")
    plain = [m.entry.id for m in match(load_kb(), text)][:1]
    prefixed = [m.entry.id for m in match(load_kb(), "".join(prefix + line + "\n" for line in text.splitlines()))][:1]
    assert plain == prefixed == ["nccl/2-18-setup-memcpy-invalid-argument"]


def test_a_condition_on_the_text_reads_the_launchers_prefixes_too():
    """A rank prefix says a multi-rank job as much as a line would: the contained-error entry's condition ("[rankN]",
    NCCL, torch.distributed) holds on "[rank5]:" although the lines are read without it."""
    from p2ptop.knowledge import load_kb
    from p2ptop.knowledge.matcher import match
    text = ("[rank5]: RuntimeError: CUDA error: Invalid access of peer GPU memory over nvlink or a hardware error\n"
            "[rank5]: CUDA kernel errors might be asynchronously reported at some other API call\n")
    ids = [m.entry.id for m in match(load_kb(), text)]
    assert "nccl/contained-during-collective" in ids


def test_cuda_work_done_puts_fabric_manager_not_running_in_doubt():
    """CUDA does not initialise on an NVSwitch host whose fabric is down (802), so NCCL channels connected on its GPUs
    speak against Fabric Manager not running: the entry is a candidate in doubt, never likely, and says why."""
    from p2ptop.commands.explain import explain
    from p2ptop.knowledge import load_kb
    text = ("The nvidia-fabricmanager service is not running on the DGX H100 and training hangs\n"
            "node1:100:100 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM\n"
            "node1:100:100 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/CUMEM\n")
    assert flat_facts(text).get("host.cuda_ran") is True
    fm = [m for m, _ in explain(load_kb(), text, [], 5) if m.entry.id == "fabric-manager/not-running-system-not-initialized"]
    assert fm and fm[0].confidence == "unsure"
    assert any("in doubt" in r for r in fm[0].reasons)
    # without the channels, the words alone keep it likely
    alone = [m for m, _ in explain(load_kb(), text.splitlines()[0], [], 5)]
    assert alone[0].entry.id == "fabric-manager/not-running-system-not-initialized" and alone[0].confidence == "likely"


@pytest.mark.parametrize("text", [
    "DGX A100: NVLink link 3 of GPU 2 is inactive and NCCL hangs",
    "HGX H100 8-GPU server, but the NVLinks are not used at all and all-reduce is slow",
])
def test_an_nvswitch_host_with_links_said_down_or_idle_is_not_all_nvlink(text):
    """NVLinks said down or carrying nothing on an NVSwitch host: that GPU's peers may go over PCIe, so every pair is not
    said to be joined by NVLink (ACS and the IOMMU stay possible causes)."""
    assert "host.all_pairs_nvlink" not in flat_facts(text)


@pytest.mark.parametrize("text,said", [
    ("the NVLinks are not used at all during all-reduce", True),
    ("NVLink isn't being utilized during training", True),
    ("the NVLink bridge is not used by default, we set it up ourselves", None),
    ("NVLink is used for all transfers", None),
])
def test_nvlink_said_unused_in_the_passive(text, said):
    """NVLink said to carry nothing in the passive is `symptom.nvlink_unused` as the active form is; a bridge not used
    by default, or NVLink said used, is not."""
    assert flat_facts(text).get("symptom.nvlink_unused") is said
