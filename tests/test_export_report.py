"""report.md: its sections, its size limit, and untrusted text kept as text."""

from types import SimpleNamespace

import pytest

from p2ptop.bench.catalog import TESTS
from p2ptop.bench.judge import judge
from p2ptop.bench.simulate import simulate_pair
from p2ptop.demos import DEMOS, load_demo
from p2ptop.export import markdown as md
from p2ptop.export.report import CUT_NOTE, GITHUB_LIMIT, Part, assemble, build_report
from p2ptop.fabric import Fabric
from p2ptop.model import BenchResult, Source


def no_kb(findings, kb_dirs):
    return [], None


@pytest.mark.parametrize("name", list(DEMOS))
def test_every_demo_report_fits_github_and_has_its_sections(name):
    text = build_report(load_demo(name))
    assert len(text) <= GITHUB_LIMIT
    for heading in ("# p2ptop report:", "## Findings", "## Copy tests", "## Knowledge base", "## GPUs", "## Host"):
        assert heading in text
    assert text.count("<details>") == text.count("</details>")
    assert "Simulated data" in text.split("## Findings")[0]
    assert "\x1b" not in text


def test_the_72_gpu_report_is_cut_with_a_note_and_stays_under_the_limit():
    text = build_report(load_demo("nvl72"))
    assert len(text) <= GITHUB_LIMIT and CUT_NOTE in text
    assert "## Path and P2P matrices" in text and text.rstrip().endswith("`p2ptop topo --replay snapshot.json`._")
    # the matrices are cut, not the findings: every section is there, code fences balanced
    fences = [l for l in text.splitlines() if l.startswith("```")]
    assert len(fences) % 2 == 0


def test_assemble_cuts_the_highest_rank_first_and_never_exceeds():
    parts = [Part("# head\n", rank=0), Part("big\n", [f"line {i}\n" for i in range(1000)], "end\n", rank=6),
             Part("## small\n", ["a\n", "b\n"], "", rank=1)]
    out = assemble(parts, 500)
    assert len(out) <= 500 and "## small\na\nb\n" in out and "big\nline 0\n" in out and CUT_NOTE in out
    assert out.index("big") < out.index("## small")  # document order kept
    assert len(assemble(parts, 30)) <= 30


def test_failing_demo_report_reads_right():
    text = build_report(load_demo("nvlink-degraded"), kb_matcher=no_kb)
    head = text.split("## Copy tests")[0]
    assert "**problem** `gpu:3`: GPU3: 2 of 12 NVLinks down (links 4, 5)" in head
    assert "GPU5: PCIe Gen4 x8 of Gen4 x16 (97% busy)" in head
    assert "crc\\_flit=1287" in head  # NVML counter names escaped for Markdown
    assert "| GPU3 | NVIDIA A100-SXM4-80GB | DEMO-A100-3 | 00000000:2B:00.0 | Gen4 x16 of Gen4 x16 | 10/12 |" in text
    assert "GPU3\tNV10\tNV10\tNV10\t X \tNV10" in text  # the path matrix, as nvidia-smi prints it


def test_pair_findings_with_the_same_evidence_are_grouped():
    text = build_report(load_demo("pcie-4gpu-iommu"), kb_matcher=no_kb)
    assert text.count("P2P not available (chipset not supported)") == 1
    assert "(also pairs 0-3, 1-2, 1-3, 2-0, 2-1, 3-0, 3-1)" in text and "GPU2->GPU0" not in text


def test_copy_tests_with_verdicts():
    snap = load_demo("pcie-4gpu-iommu")
    fabric = Fabric(snap)
    snap.bench = [judge(simulate_pair(snap, fabric, 0, 1, set(TESTS)), fabric),
                  judge(simulate_pair(snap, fabric, 0, 2, set(TESTS)), fabric)]
    text = build_report(snap, kb_matcher=no_kb)
    section = text.split("## Copy tests")[1].split("## Knowledge base")[0]
    rows = [l for l in section.splitlines() if l.startswith("| GPU0 → GPU")]
    assert len(rows) == 2
    assert snap.bench[0].verdict in rows[0] and snap.bench[1].verdict in rows[1]
    assert "cudaErrorPeerAccessUnsupported" in rows[1]
    assert "(simulated)" in rows[0] and "Copy tests:** 1 " in text


def test_real_result_is_not_called_simulated():
    snap = load_demo("h200x2-vm")
    snap.source = Source(kind="nvml", hostname="node1", taken_at="2026-11-23T10:00:00+00:00")
    snap.bench = [BenchResult(0, 1, status="failed", verdict="failing", errors=["cudaErrorPeerAccessUnsupported (217)"])]
    text = build_report(snap, kb_matcher=no_kb)
    assert "Simulated" not in text and "simulated)" not in text.split("## Copy tests")[1].split("##")[0]
    assert "| GPU0 → GPU1 | failed | failing |" in text


def test_knowledge_entries_with_workarounds_and_sources():
    entry = SimpleNamespace(
        id="iommu/acs-redirect", failure_class="iommu_acs_p2p_broken", signature="peer <b>hangs</b>",
        root_cause="ACS redirect sends peer TLPs to the root complex", verification_tier="documented",
        workarounds=[{"action": "Disable ACS on the switch ports", "how": "setpci -s 3c:00.0 ECAP_ACS+6.w=0",
                      "success_rate": 0.8, "condition": "bare metal", "sources": ["https://example.org/acs"],
                      "command": "sudo setpci -s 3c:00.0 ECAP_ACS+6.w=0"}],
        dead_ends=[{"action": "Reboot", "why_fails": "ACS comes back on at boot", "fail_rate": 0.9, "sources": []}],
        sources=["https://docs.nvidia.com/deploy/pdf/NVIDIA_GPUDirect_RDMA.pdf", "forum thread [x](javascript:y)"],
    )
    match = SimpleNamespace(entry=entry, score=0.87, confidence="likely", reasons=["IOMMU on", "ACS redirect on"],
                            deciding_facts=[])
    text = build_report(load_demo("pcie-4gpu-iommu"), kb_matcher=lambda f, d: ([match], None))
    kb = text.split("## Knowledge base")[1].split("## GPUs")[0]
    assert "### iommu/acs-redirect (score 0.87, likely; class iommu\\_acs\\_p2p\\_broken; verification: documented)" in kb
    assert "- IOMMU on" in kb and "**Root cause.** ACS redirect" in kb
    assert "success 80%" in kb and "when bare metal" in kb and "<https://example.org/acs>" in kb
    assert "```sh\n  sudo setpci -s 3c:00.0 ECAP_ACS+6.w=0\n  ```" in kb
    assert "fails 90%" in kb and "ACS comes back on at boot" in kb
    assert "<https://docs.nvidia.com/deploy/pdf/NVIDIA_GPUDirect_RDMA.pdf>" in kb
    assert "[x](javascript" not in kb and "\\[x\\]" in kb  # a source that is not a plain URL is text
    assert "Signature: `peer <b>hangs</b>`" in kb  # in a code span: shown as typed


def test_knowledge_base_missing_or_broken_is_a_note():
    text = build_report(load_demo("h200x2-vm"), kb_matcher=lambda f, d: ([], "The knowledge base is not part of this build"))
    assert "_The knowledge base is not part of this build_" in text


def test_real_knowledge_base_does_not_break_the_report():
    text = build_report(load_demo("pcie-4gpu-iommu"))  # whatever kb/ holds now
    assert "## Knowledge base" in text and len(text) <= GITHUB_LIMIT


def test_untrusted_text_stays_text():
    snap = load_demo("rtx4090-2gpu")
    snap.gpus[0].name = "\x1b[31mRTX\x1b[0m <img src=x onerror=alert(1)> *bold* [link](http://x) | pipe \u202eevil"
    snap.notes.append("```\n# not a heading\n</details><details open>")
    text = build_report(snap, kb_matcher=no_kb)
    assert "\x1b" not in text and "\u202e" not in text
    assert "<img" not in text and "&lt;img src=x onerror=alert(1)> \\*bold\\* \\[link\\](http://x) \\| pipe" in text
    assert "</details><details open>" not in text
    assert text.count("<details>") == text.count("</details>")


def test_markdown_helpers():
    assert md.clean("a\x1b[1;31mb\x1b]0;title\x07c\x07d\x9be\u2066f\r\ng") == "abcdef\ng"
    assert md.code("a `b` c") == "``a `b` c``" and md.code("`x`") == "`` `x` ``"
    assert md.fence_for("```\nx") == "````"
    assert md.cell("") == "N/A" and md.cell("a|b\nc") == "a\\|b c"
