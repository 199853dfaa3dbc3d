"""Rules of the nineteenth session, each from what a program, a product line or a library says, not from one paste. Those
that came after opening a sealed part say so: a fact misread there, not a case fitted."""

import pytest

from p2ptop.evidence import read_text


def _facts(text):
    return {k: v for f in read_text(text).findings for k, v in f.facts.items()}


@pytest.mark.parametrize("text,arch", [
    ("vllm serve hangs on 8x B300 during multi-GPU init", "Blackwell"),
    ("every rank freezes on our 8× B300 node", "Blackwell"),
    ("two B200 GPUs in the node", "Blackwell"),
    ("the GB300 tray hangs", "Blackwell"),
])
def test_blackwell_ultra_models_are_read_in_prose(text, arch):
    """After opening fresh46: B300 (Blackwell Ultra, HGX B300) is in the model table but the prose reader only knew B100
    and B200, so a report on B300s named no GPU and a consumer-card entry stayed among the candidates."""
    f = _facts(text)
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
    assert _facts(text).get("symptom.slow") is True


@pytest.mark.parametrize("text", [
    "the output is the same as 1x H100 gives",
    "the speed setting is the same as before",
    "we bought the same card as one of our colleagues",
])
def test_the_same_result_or_setting_is_not_slow(text):
    assert "symptom.slow" not in _facts(text)
