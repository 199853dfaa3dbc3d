"""Rules of the thirtieth session.

A cause that lives in a setup of its own (NVLS multicast, Fabric Manager, an NVLink link or its peer memory: NVLink or
NVSwitch hardware; nccl_env_misconfig: an NCCL variable forcing a transport) is an unsure candidate on a generic symptom
(a hang), its context or its words. Where neither the text nor the host says that setup, it ranks under the candidates
whose setup may be there (matcher.SETUP_UNSAID_FACTOR), and says why; where the text names it, nothing changes."""

import pytest
from .kbtools import bundled_kb

from p2ptop.commands.explain import explain
from p2ptop.knowledge import matcher

NVLINK_REASON = "neither the text nor the host names NVLink or NVSwitch hardware"
ENV_REASON = "neither the text nor the host names an NCCL variable"


@pytest.fixture(scope="module")
def kb():
    return bundled_kb()


def ranked(kb, text, n=8):
    return [m for m, _ in explain(kb, text, [], n)]


def test_a_hang_on_unnamed_hardware_puts_nvlink_and_variable_causes_last(kb):
    got = ranked(kb, "NCCL all_reduce hangs on our server with 4 GPUs.")
    assert got and all(m.confidence == "unsure" for m in got)
    demoted = [m for m in got if any(r.startswith((NVLINK_REASON, ENV_REASON)) for r in m.reasons)]
    assert {m.entry.failure_class for m in demoted} & (matcher.NVLINK_CLASSES | {"nccl_env_misconfig"})
    first = got[0]
    assert first.entry.failure_class not in matcher.NVLINK_CLASSES | {"nccl_env_misconfig"}
    # the first three name causes whose setup may be there
    assert not any(m in demoted for m in got[:3])


@pytest.mark.parametrize("text", [
    "NCCL all_reduce hangs on our HGX H100 server with 8 GPUs.",
    "NCCL all_reduce hangs on our server with 8 GPUs connected by NVSwitch.",
    "NCCL all_reduce hangs on our server; nvidia-smi topo -m shows NV18 between every pair.",
    "NCCL all_reduce hangs on a DGX with 8 GPUs.",
])
def test_nvlink_hardware_named_keeps_its_causes_where_they_were(kb, text):
    for m in ranked(kb, text):
        assert not any(r.startswith(NVLINK_REASON) for r in m.reasons), (m.entry.id, text)


def test_an_nccl_variable_named_keeps_the_variable_causes(kb):
    for m in ranked(kb, "NCCL all_reduce hangs on our server with 4 GPUs. We set NCCL_P2P_LEVEL=SYS."):
        assert not any(r.startswith(ENV_REASON) for r in m.reasons), m.entry.id


def test_an_entry_on_its_own_line_is_not_demoted(kb):
    # NVLS's own WARN names its setup in its words; the code's own NVLink words need no other mention
    text = "NCCL WARN Cuda failure 'operation not supported' : cuMulticastCreate failed"
    for m in ranked(kb, text):
        if m.hits:
            assert not any(r.startswith(NVLINK_REASON) for r in m.reasons), m.entry.id


def test_a_data_centre_gpu_of_an_nvlink_generation_counts_as_named_hardware(kb):
    text = "Training hangs at the first all_reduce with 8 A100 GPUs."
    for m in ranked(kb, text):
        assert not any(r.startswith(NVLINK_REASON) for r in m.reasons), m.entry.id


def test_a_gpu_without_nvlink_parts_does_not(kb):
    # L40S (Ada) has no NVLink: an NVLink-class candidate there is demoted, if one is offered at all
    text = "Training hangs at the first all_reduce with 4 L40S GPUs."
    for m in ranked(kb, text):
        if m.entry.failure_class in matcher.NVLINK_CLASSES and m.confidence == "unsure" and not m.hits:
            assert any(r.startswith(NVLINK_REASON) for r in m.reasons), m.entry.id


def test_an_absence_said_is_no_setup_said(kb):
    facts = matcher.Facts([], matcher.prepare("a hang"), "host")
    facts.values["host.no_nvlink_hardware"] = [True]
    facts.values["host.nvswitch_present"] = [False]
    assert not matcher._setup_said(matcher._NVLINK_SETUP, facts, matcher.prepare("a hang"))
    facts.values["host.nvswitch_present"] = [True]
    assert matcher._setup_said(matcher._NVLINK_SETUP, facts, matcher.prepare("a hang"))
