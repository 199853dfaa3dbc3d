"""Tool outputs, sixth round: peer-access refusals that only the GPU mix explains (CUDA offers no peer access across
architectures: aikitoria/open-gpu-kernel-modules#40, tensorflow/tensorflow#4013), NVLinks a board leaves unwired,
and the readers added this round. Texts are written here from the tools' documented formats (cuda-samples'
simpleP2P.cu / p2pBandwidthLatencyTest.cu printf formats, nvidia-smi nvlink -s); each test fails when its rule
is removed."""

from __future__ import annotations

from p2ptop.commands.explain import answer
from p2ptop.knowledge import load_kb

from .test_evidence_pastes import facts

KB = load_kb()


def ranked(text: str) -> list[tuple[str, str, str]]:
    return [(m.entry.failure_class, m.confidence, m.entry.id) for m, _ in answer(KB, text, [], None)["results"]]


def confident_faults(text: str) -> list[str]:
    return [c for c, conf, eid in ranked(text) if conf in ("likely", "possible")
            and not getattr(KB.get(eid), "benign", False) and c != "pcie_link_idle_downclock_benign"]


def simple_p2p(names: list[str], yes: set) -> str:
    lines = ["[./simpleP2P] - Starting...", "Checking GPU(s) for support of peer to peer memory access..."]
    for a, na in enumerate(names):
        for b, nb in enumerate(names):
            if a != b:
                ok = (min(a, b), max(a, b)) in yes
                lines.append(f"> Peer access from {na} (GPU{a}) -> {nb} (GPU{b}) : {'Yes' if ok else 'No'}")
    return "\n".join(lines)


def can_lines(names: list[str], yes: set) -> str:
    lines = ["[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]"]
    lines += [f"Device: {i}, {n}, pciBusID: {i + 1:x}, pciDeviceID: 0, pciDomainID:0" for i, n in enumerate(names)]
    for a in range(len(names)):
        for b in range(len(names)):
            if a != b:
                ok = (min(a, b), max(a, b)) in yes
                lines.append(f"Device={a} {'CAN' if ok else 'CANNOT'} Access Peer Device={b}")
    return "\n".join(lines)


def test_refusals_only_across_architectures_are_the_gpu_mix_not_a_fault():
    text = simple_p2p(["NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 4090"], {(0, 1)})
    f = facts(text)
    assert f[("host", "host.p2p_refused_only_across_models")] is True
    assert confident_faults(text) == []
    assert ranked(text)[0][2] == "cuda/peer-access-across-gpu-models"


def test_two_models_of_one_architecture_beside_granted_pairs_are_the_mix_too():
    # the patched GeForce driver pairs only cards of one chip: a 5090 with a 5070 Ti is refused, 5090s are not
    text = can_lines(["NVIDIA GeForce RTX 5090", "NVIDIA GeForce RTX 5090", "NVIDIA GeForce RTX 5070 Ti"], {(0, 1)})
    assert facts(text).get(("host", "host.p2p_refused_only_across_models")) is True
    assert confident_faults(text) == []


def test_a_refused_pair_of_one_model_is_no_mix():
    # the Y Y N N picture of a pair of sockets: the refusal is the platform's, whatever the models
    names = ["GeForce GTX 1080 Ti"] * 2 + ["GeForce GTX 1080 Ti"] * 2
    text = can_lines(names, {(0, 1), (2, 3)})
    assert ("host", "host.p2p_refused_only_across_models") not in facts(text)
    assert "p2p_unsupported_consumer_gpu" in confident_faults(text)


def test_memory_size_alone_does_not_make_two_models():
    names = ["Tesla V100-SXM2-16GB", "Tesla V100-SXM2-16GB", "Tesla V100-SXM2-32GB"]
    text = can_lines(names, {(0, 1)})
    assert ("host", "host.p2p_refused_only_across_models") not in facts(text)


def test_two_models_of_one_architecture_with_no_granted_pair_stay_the_consumer_policy():
    text = simple_p2p(["NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 3080"], set())
    assert ("host", "host.p2p_refused_only_across_models") not in facts(text)
    assert "p2p_unsupported_consumer_gpu" in confident_faults(text)
