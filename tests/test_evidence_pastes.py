"""Tool outputs as people paste them, and symptoms in many words (issue 22, diag4).

Every text here is written for this test from the tools' own output formats (nvidia-smi, nvidia-smi -q,
nvidia-smi topo, nvidia-smi nvlink -s, lspci -vvv) or in general language; none is copied from the
evaluation corpus."""

from __future__ import annotations

import pytest

from p2ptop.evidence import read_text
from p2ptop.evidence.paste import tidy


def facts(text: str) -> dict:
    out: dict = {}
    for f in read_text(text).findings:
        for k, v in f.facts.items():
            out.setdefault((f.subject, k), v)
    return out


def keys(text: str) -> set:
    return {k for _, k in facts(text)}


TOPO = ("\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n"
        "GPU0\t X \tPHB\t0-15\t0\n"
        "GPU1\tPHB\t X \t0-15\t0\n")


@pytest.mark.parametrize("wrap", [
    lambda t: t,
    lambda t: "```\n$ nvidia-smi topo -m\n" + t + "```\n",  # code fence and prompt
    lambda t: "".join("> " + ln + "\n" for ln in t.splitlines()),  # markdown quote
    lambda t: "".join("> > " + ln + "\n" for ln in t.splitlines()),  # quote in a quote
    lambda t: "user@node01:~$ nvidia-smi topo -m\r\n" + t.replace("\n", "\r\n"),  # Windows line ends, prompt
    lambda t: "\x1b[1m" + t + "\x1b[0m",  # terminal codes
])
def test_topo_matrix_read_through_paste_wrappings(wrap):
    f = facts(wrap(TOPO))
    assert f[("pair:0-1", "pair.path")] == "PHB"
    assert f[("host", "host.gpu_count")] == 2


def test_tidy_keeps_nccl_tests_comment_rows_and_line_count():
    text = "#  Rank  0 Group  0 Pid 1 on host device  0 [0x1b] NVIDIA A100\n# nThread 1 nGpus 2\n$ ./all_reduce_perf -g 2\n"
    out = tidy(text)
    assert out.splitlines()[:2] == text.splitlines()[:2]
    assert out.splitlines()[2] == "./all_reduce_perf -g 2"
    assert len(out.splitlines()) == len(text.splitlines())


def test_nvlink_status_in_a_quote_gives_inactive_links():
    text = ("> nvidia-smi nvlink -s\n> GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-0000)\n>\t Link 0: 25 GB/s\n"
            ">\t Link 1: <inactive>\n>\t Link 2: 25 GB/s\n")
    assert facts(text)[("gpu:0", "gpu.nvlink_down")] == 1


def test_smi_q_cut_after_one_gpu_keeps_the_attached_count_and_passthrough():
    text = ("Driver Version                            : 550.54.15\nAttached GPUs                             : 2\n"
            "GPU 00000000:00:05.0\n    Product Name                          : NVIDIA A100-PCIE-40GB\n"
            "    Virtualization Mode                   : Pass-Through\n")
    f = facts(text)
    assert f[("host", "host.gpu_count")] == 2  # not 1: a pair is possible, the VM entry is not ruled out
    assert f[("host", "host.virtualized")] is True


@pytest.mark.parametrize("text,degraded", [
    ("GPU 00000000:3B:00.0\n    Product Name : NVIDIA RTX A6000\n        GPU Link Info\n            PCIe Generation\n"
     "                Max : 4\n                Current : 4\n            Link Width\n                Max : 16x\n"
     "                Current : 8x\n", True),
    ("GPU 00000000:3B:00.0\n    Product Name : NVIDIA RTX A6000\n        GPU Link Info\n            PCIe Generation\n"
     "                Max : 4\n                Current : 1\n            Link Width\n                Max : 16x\n"
     "                Current : 16x\n", False),  # only the generation is low: an idle GPU does that
    ("41:00.0 3D controller: NVIDIA Corporation GA100 [A100 PCIe 40GB] (rev a1)\n"
     "\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM not supported\n\tLnkSta:\tSpeed 16GT/s (ok), Width x4 (downgraded)\n", True),
])
def test_pcie_width_below_max_is_degraded(text, degraded):
    assert (("gpu:0", "gpu.pcie_degraded_under_load") in facts(text)) is degraded


@pytest.mark.parametrize("key,text", [
    ("symptom.hang", "The job stalls at the first allreduce on 8 GPUs."),
    ("symptom.hang", "We see a timeout in all_reduce on the GPUs."),
    ("symptom.hang", "The NCCL test is waiting forever on GPU0."),
    ("symptom.hang", "The allreduce on the GPUs does not finish."),
    ("symptom.hang", "vLLM with tp=2 just sits there at NCCL init on two GPUs."),
    ("symptom.hang", "NCCL init takes forever on 2 GPUs."),
    ("symptom.wrong_results", "The checksum of the GPU buffer differs after the p2p copy."),
    ("symptom.wrong_results", "The tensors received from GPU 0 contain wrong data."),
    ("symptom.wrong_results", "The values after the all-reduce on the GPUs are not correct."),
    ("symptom.wrong_results", "With P2P on, the loss on 2 GPUs diverges after a few steps."),
    ("symptom.slow", "cudaMemcpyPeer only achieves 5 GB/s on the GPUs."),
    ("symptom.slow", "We measure only 3.2 GB/s between the two GPUs."),
    ("symptom.slow", "P2P performance degrades on the GPUs."),
    ("symptom.slow", "The p2p bandwidth between the GPUs is terrible."),
    ("symptom.slow", "The allreduce takes much longer on the GPUs than expected."),
    ("symptom.slow", "The GPU copy bandwidth is far below the expected value."),
])
def test_symptoms_in_many_words(key, text):
    assert key in keys(text)


@pytest.mark.parametrize("text", [
    "The job no longer stalls after the driver update on our GPUs.",
    "NCCL all-reduce on 8 GPUs reaches 180 GB/s busbw, as expected.",
    "The checksum matches on both GPUs.",
])
def test_no_symptom_where_the_words_say_none(text):
    assert not {"symptom.hang", "symptom.slow", "symptom.wrong_results"} & keys(text)


@pytest.mark.parametrize("text", [
    "GPUDirect between the two cards gives an error.",
    "cudaMemcpyPeer between the cards fails with an error.",
])
def test_p2p_words_make_a_report(text):
    assert "symptom.reported" in keys(text)


# ---- tool outputs: what a healthy run says, what a bad one says ------------------------------------

BIDIR = ("Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n   D\\D     0      1\n     0 770.11  20.15\n     1  20.31 771.02\n"
         "Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)\n   D\\D     0      1\n     0 771.45   {on}\n     1   {on} 772.30\n")


def test_bidirectional_matrices_compare_p2p_on_and_off():
    slow = facts(BIDIR.format(on="4.11"))
    assert slow[("pair:0-1", "tool.p2p_slower_than_no_p2p")] is True
    assert slow[("host", "symptom.slow")] is True
    fast = facts(BIDIR.format(on="39.80"))
    assert ("pair:0-1", "tool.p2p_slower_than_no_p2p") not in fast


NCCL_TESTS = ("# nccl-tests version 2.13.9 nccl-headers=21903 nccl-library=21903\n"
              "# nThread 1 nGpus 2 minBytes 8 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1\n"
              "#\n#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
              "           8             2     float     sum      -1    10.21    0.00    0.00      0    10.02    0.00    0.00      0\n"
              "     1048576        262144     float     sum      -1    18.55   56.53   56.53      {wrong}    18.40   56.99   56.99      0\n")


def test_nccl_tests_table_without_wrong_elements_is_a_working_run():
    f = facts(NCCL_TESTS.format(wrong="0"))
    assert f[("host", "nccl.status")] == "ok"
    assert ("host", "text.topic") not in f  # its own comment rows are no sentence of a report
    bad = facts(NCCL_TESTS.format(wrong="12"))
    assert bad[("host", "symptom.wrong_results")] is True
    assert ("host", "nccl.status") not in bad


def _answer(text):
    from p2ptop.commands.explain import answer
    from p2ptop.knowledge import load_kb

    return answer(load_kb(), text, [], None)


def test_healthy_nccl_tests_table_gets_no_candidate():
    a = _answer(NCCL_TESTS.format(wrong="0"))
    assert a["kind"] == "healthy" and a["results"] == []


def test_topic_without_symptom_or_setup_gets_labelled_unsure_candidates():
    text = "Question: how does NCCL pick P2P between our two NVIDIA A100 GPUs?"
    a = _answer(text)
    assert a["results"], "a text naming GPUs and GPU communication is never answered with nothing"
    for m, _ in a["results"]:
        assert m.confidence == "unsure" and m.basis == "retrieval"
        assert any("names GPU communication" in r and "no symptom" in r for r in m.reasons)


def test_gpu_list_without_topic_stays_silent():
    a = _answer("GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-0000)\nGPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-1111)\n")
    assert a["results"] == []


# ---- retrieval vocabulary ------------------------------------------------------------------------

def test_retrieval_families_join_words_of_one_meaning():
    from p2ptop.knowledge.retrieval import tokens

    assert "_hang" in tokens("the collective stalls")
    assert "_wrong" in tokens("the checksum differs")
    assert "_virtual" in tokens("an Azure instance with vGPU")
    for words in ("GPUs on different NUMA nodes", "across the QPI link", "under a PHB host bridge"):
        assert "_topo" in tokens(words), words


def test_cuda_sample_peer_answer_is_the_pairs_p2p_status():
    text = ('Device 0: "Tesla V100-PCIE-16GB"\n'
            "> Peer access from Tesla V100-PCIE-16GB (GPU0) -> Tesla V100-PCIE-16GB (GPU1) : No\n"
            "> Peer access from Tesla V100-PCIE-16GB (GPU1) -> Tesla V100-PCIE-16GB (GPU0) : No\n")
    f = facts(text)
    assert f[("pair:0-1", "p2p.read")] == "NOT_SUPPORTED"
    assert f[("pair:0-1", "bench.peer_access")] == "cudaErrorPeerAccessUnsupported"
    both = facts(" \tGPU0\tGPU1\nGPU0\tX\tCNS\nGPU1\tCNS\tX\n\n" + text.replace("No", "Yes"))
    assert both[("pair:0-1", "p2p.read")] == "CHIPSET_NOT_SUPPORTED"  # the topo -p2p matrix read first keeps its status


@pytest.mark.parametrize("text,mig", [
    ("We run the benchmark on an A100 with MIG GPU instances.", True),
    ("GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-aaaa)\n  MIG 3g.20gb     Device  0: (UUID: MIG-0b8b0e6a-1a2b-5c3d-8e9f-0123456789ab)", True),
    ("The pods get MIG-enabled A100 slices from the GPU operator.", True),
    ("We migrated the cluster to new A100 nodes.", False),
])
def test_mig_in_words_and_in_nvidia_smi_l(text, mig):
    assert (("host", "gpu.mig") in facts(text)) is mig


def test_a_shared_nccl_result_alone_makes_no_entry_possible():
    """ncclSystemError is listed by entries of several classes (WSL, /dev/shm, NCCL releases): an entry whose own
    text (here: WSL/Windows) is absent is not 'possible' on the result name, even where a condition of it restates
    that name."""
    text = ("# nThread 1 nGpus 2 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n"
            "node01: Test NCCL failure common.cu:1005 'unhandled system error (run with NCCL_DEBUG=INFO for details)'\n")
    a = _answer(text)
    for m, _ in a["results"]:
        if m.entry.id == "wsl/nccl-wsl2-no-p2p":
            assert m.confidence == "unsure"


def test_nvidia_smi_list_gives_names_count_and_mig():
    text = ("$ nvidia-smi -L\nGPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-5a1b2c3d-0000-1111-2222-333344445555)\n"
            "  MIG 3g.20gb     Device  0: (UUID: MIG-0b8b0e6a-1a2b-5c3d-8e9f-0123456789ab)\n"
            "GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-6a1b2c3d-0000-1111-2222-333344445555)\n")
    f = facts(text)
    assert f[("host", "host.gpu_count")] == 2
    assert f[("gpu:1", "gpu.name")] == "NVIDIA A100-SXM4-40GB"
    assert f[("gpu:0", "gpu.mig")] is True and ("gpu:1", "gpu.mig") not in f


def test_grepped_smi_q_section_gives_its_value_but_no_gpu_count():
    text = ("$ nvidia-smi -q | grep -A3 -i bar1\n    BAR1 Memory Usage\n        Total                             : 256 MiB\n"
            "        Used                              : 2 MiB\n")
    f = facts(text)
    assert f[("gpu:0", "gpu.bar1_mb")] == 256
    assert ("host", "host.gpu_count") not in f  # one section shown is not one GPU on the host


def test_vgpu_profile_name_in_the_table_is_a_vm():
    text = ("| NVIDIA-SMI 535.161.08             Driver Version: 535.161.08   CUDA Version: 12.2     |\n"
            "|   0  GRID A100-20C                  On  | 00000000:02:00.0 Off |                    0 |\n"
            "|   1  GRID A100-20C                  On  | 00000000:03:00.0 Off |                    0 |\n")
    f = facts(text)
    assert f[("gpu:0", "gpu.virtualization")] == "VGPU" and f[("host", "host.virtualized")] is True
    plain = facts(text.replace("GRID A100-20C", "NVIDIA A100-PCIE-40GB"))
    assert ("host", "host.virtualized") not in plain


@pytest.mark.parametrize("line,active,pt", [
    ("BOOT_IMAGE=/boot/vmlinuz-6.5.0-35-generic root=UUID=1234 ro quiet intel_iommu=on", True, False),
    ("BOOT_IMAGE=/boot/vmlinuz-6.5.0-35-generic root=UUID=1234 ro intel_iommu=on iommu=pt", False, True),
    ("BOOT_IMAGE=/boot/vmlinuz-6.5.0-35-generic root=UUID=1234 ro quiet", False, False),
])
def test_proc_cmdline_says_whether_the_iommu_translates(line, active, pt):
    f = facts("$ cat /proc/cmdline\n" + line + "\n")
    assert f.get(("host", "host.iommu_active"), False) is active
    assert f.get(("host", "host.iommu_passthrough"), False) is pt
    assert ("host", "host.kernel_iommu_args") in f


def test_the_setup_the_text_names_decides_between_causes_of_one_error():
    err = "RuntimeError: CUDA error: peer access is not supported between these two devices\n"
    geforce = {m.entry.id: m for m, _ in _answer("Two GeForce RTX 4090 cards on one board.\n" + err)["results"]}
    assert geforce["cuda/peer-access-unsupported-consumer-gpu"].confidence in ("likely", "possible")
    if "vm/peer-access-unsupported-in-vm" in geforce:  # a VM is not said: the GeForce explains the error
        vm = geforce["vm/peer-access-unsupported-in-vm"]
        assert vm.confidence == "unsure" and any("is not said, another is" in r for r in vm.reasons)
    guest = {m.entry.id: m for m, _ in _answer("Two A100 passed through to a KVM guest.\n" + err)["results"]}
    assert guest["vm/peer-access-unsupported-in-vm"].confidence in ("likely", "possible")


NVB = ("\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tNV12\t0-63\t0\nGPU1\tNV12\t X \t0-63\t0\n\n"
       "nvbandwidth Version: v0.5\nRunning device_to_device_memcpy_write_ce.\n"
       "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)\n           0         1\n 0       N/A     {v}\n 1     {v}       N/A\n")


@pytest.mark.parametrize("v,verdict", [("21.40", "slow"), ("230.10", "healthy"), ("100.00", None)])
def test_copy_bandwidth_judged_against_the_pasted_nvlink(v, verdict):
    f = facts(NVB.format(v=v))
    assert f.get(("pair:0-1", "bench.verdict")) == verdict
    assert (("host", "symptom.slow") in f) is (verdict == "slow")


def test_copy_bandwidth_without_a_pasted_link_is_not_judged():
    f = facts(NVB.format(v="21.40").split("\n\n", 1)[1])
    assert ("pair:0-1", "bench.verdict") not in f and ("host", "symptom.slow") not in f


def test_p2p_matrix_judged_against_the_pasted_pcie_links():
    gpu = ("GPU 00000000:0{i}:00.0\n    Product Name : NVIDIA RTX A6000\n        GPU Link Info\n            PCIe Generation\n"
           "                Max : 4\n            Link Width\n                Max : 16x\n")
    mat = ("Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n   D\\D     0      1\n"
           "     0 672.10   {v}\n     1   {v} 671.90\n")
    slow = facts(gpu.format(i=1) + gpu.format(i=2) + mat.format(v="2.61"))
    assert slow[("pair:0-1", "bench.verdict")] == "slow"  # Gen4 x16 gives 31.5 GB/s at the least
    ok = facts(gpu.format(i=1) + gpu.format(i=2) + mat.format(v="24.80"))
    assert ok[("pair:0-1", "bench.verdict")] == "healthy"


def test_h200_capture_nvbandwidth_is_healthy_on_its_nv18():
    import os

    d = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "captures", "h200x2-nvswitch-vm")
    if not os.path.isdir(d):
        pytest.skip("../shared/captures not present")
    text = open(os.path.join(d, "nvidia-smi-topo-m.txt")).read() + open(os.path.join(d, "nvbandwidth.txt")).read()
    f = facts(text)
    assert f[("pair:0-1", "bench.verdict")] == "healthy" and ("host", "symptom.slow") not in f


@pytest.mark.parametrize("key,text", [
    ("symptom.hang", "两张 4090 跑 NCCL all_reduce 没反应"),
    ("symptom.hang", "多卡训练停在第一个 step 不动了"),
    ("symptom.wrong_results", "P2P 拷贝后数值异常"),
    ("symptom.slow", "两张卡之间的带宽远低于预期"),
])
def test_chinese_symptom_words(key, text):
    assert key in keys(text)


def test_html_escapes_of_a_web_copy_are_read_back():
    text = NVB.format(v="21.40").replace("<-", "&lt;-")
    assert "&lt;-" in text
    assert facts(text)[("pair:0-1", "bench.verdict")] == "slow"


@pytest.mark.parametrize("text,what", [
    ("Actual fix: update the GPU driver to the latest.", "driver"),
    ("The hang was fixed after upgrading the NVIDIA driver to 570.", "driver"),
    ("Downgrading NCCL to 2.18.3 solved the issue.", "nccl"),
    ("问题通过升级驱动解决", "driver"),
    ("Upgrading the driver doesn't work.", None),
    ("Updating the driver did not help.", None),
    ("It works with driver 570.", None),  # a version named, no change said
])
def test_a_resolution_by_a_version_change_in_words(text, what):
    assert facts(text).get(("host", "text.fixed_by")) == what


def test_explain_text_says_a_topic_only_answer_is_on_words():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "p2ptop", "explain", "--text-only", "-"], capture_output=True, text=True,
                         input="Question: how does NCCL pick P2P between our two NVIDIA A100 GPUs?\n", timeout=120).stdout
    assert "names GPU communication but no setup of theirs" in out
    assert "no symptom" in out
