"""Rules of the eighteenth session, each from what the program or the library does, not from one paste. Those that came
after opening fresh42 say so: a fact misread or an error with no entry there, not a case fitted."""

import pytest

from p2ptop.evidence import read_text


def _facts(text):
    return {k: v for f in read_text(text).findings for k, v in f.facts.items()}


def _top(text, n=3):
    from p2ptop.commands.explain import explain
    from p2ptop.knowledge import load_kb
    return [(m.entry.id, m.confidence) for m, _ in explain(load_kb(), text, [], n)]


@pytest.mark.parametrize("text", [
    "tensor.to(device) not copying data correctly between two GPUs",
    "cudaMemcpyPeer is not copying the data correctly from GPU 0 to GPU 1",
    "the buffer gets copied incorrectly when I move it to the second card",
    "# Moving between two GPUs, tensor becomes [0, 0, 0] instead of [1, 2, 3] on device='cuda:1'",
    "after the peer copy y is tensor([0., 0., 0.]) instead of the input",
])
def test_a_copy_said_wrong_or_data_shown_as_zeros_is_wrong_results(text):
    """After opening fresh42: a GPU-to-GPU copy said not to copy the data correctly, and data shown turned into zeros
    where other values were expected, are wrong results (what a peer copy through a broken IOMMU mapping looks like)."""
    assert _facts(text).get("symptom.wrong_results") is True


@pytest.mark.parametrize("text", [
    "the script copies the data correctly to the second GPU",
    "the weights are copied to every GPU before training",
    "x = torch.zeros(3)  # [0, 0, 0] is the start value",
])
def test_a_correct_copy_or_a_start_value_is_no_wrong_result(text):
    assert "symptom.wrong_results" not in _facts(text)


@pytest.mark.parametrize("text", [
    "pynvml.NVMLError_InvalidArgument: Invalid Argument",
    '  File "/usr/local/lib/python3.10/dist-packages/vllm/third_party/pynvml.py", line 2609, in nvmlDeviceGetHandleByIndex\n'
    "    _nvmlCheckReturn(ret)\nvllm.third_party.pynvml.NVMLError_InvalidArgument: Invalid Argument",
])
def test_nvml_invalid_argument_is_an_index_past_the_visible_gpus(text):
    """After opening fresh42, from NVML's reference (nvmlDeviceGetHandleByIndex: NVML_ERROR_INVALID_ARGUMENT if the
    index is invalid) and the programs that turn a CUDA device into an NVML index (vLLM through CUDA_VISIBLE_DEVICES,
    GPU-affinity helpers through the local rank): the NVML face of an invalid device ordinal."""
    top = _top(text)
    assert top[0][0] == "nvml/handle-by-index-invalid-argument"
    assert top[0][1] in ("likely", "possible")


def test_another_nvml_error_is_not_that_entry():
    assert "nvml/handle-by-index-invalid-argument" not in [e for e, _ in _top("pynvml.NVMLError_NotSupported: Not Supported")]
