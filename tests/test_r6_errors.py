"""Rules of the sixth round for errors and logs: ranking among the entries one error line offers. Each test fails when
its rule is taken out."""

from p2ptop.knowledge import load_kb, match

KB = load_kb()


def classes(text):
    return [(m.entry.failure_class, m.confidence) for m in match(KB, text)]


# TensorFlow's gpu_device.cc wraps every cuCtxEnablePeerAccess status in one warning; the CUDA error it names is the
# cause (https://github.com/tensorflow/tensorflow/issues/14759, 10 GPUs: CUDA enables at most 8 peers per device)
TF_TOO_MANY_PEERS = (
    "2017-12-01 09:17:42.115092: W tensorflow/core/common_runtime/gpu/gpu_device.cc:918] Unable to enable peer access "
    "between device ordinals 9 and 8, status: Internal: failed to enable peer access from 0x8270570 to 0x7ba7860: "
    "CUDA_ERROR_TOO_MANY_PEERS\n")


def test_the_cuda_error_a_wrapper_line_names_ranks_over_the_wrapper():
    got = classes(TF_TOO_MANY_PEERS)
    assert got[0] == ("too_many_peers", "possible")
    ms = match(KB, TF_TOO_MANY_PEERS)
    wrapper = next(m for m in ms if m.entry.id == "tensorflow/gpu-peer-access-error")
    assert any("names a CUDA error it does not explain" in r for r in wrapper.reasons)


def test_the_wrapper_line_alone_keeps_its_entry():
    # the same warning without a CUDA error named: nothing more specific, the wrapper's entry stays offered
    line = ("W tensorflow/core/common_runtime/gpu/gpu_device.cc:918] Unable to enable peer access between device "
            "ordinals 0 and 1\n")
    ms = match(KB, line)
    assert ms and ms[0].entry.id == "tensorflow/gpu-peer-access-error"
    assert not any("names a CUDA error" in r for m in ms for r in m.reasons)


def test_candidates_of_one_shared_line_are_told_apart_by_words_that_clearly_favour_one():
    # CUDA's 217 line offers the umbrella entry (no conditions: a higher score before the cap) and the setups' entries;
    # TensorRT-LLM's words are the consumer entry's (its custom all-reduce needs P2P that GeForce cards lack)
    # (https://github.com/NVIDIA/TensorRT-LLM/issues/1625, 2 x RTX 4090D)
    trt = ("[TensorRT-LLM][ERROR] [TensorRT-LLM][ERROR] CUDA runtime error in error: peer access is not supported "
           "between these two devices\n")
    ms = match(KB, trt)
    assert ms[0].entry.id == "cuda/peer-access-unsupported-consumer-gpu" and ms[0].words_lead
    assert all(m.confidence == "unsure" for m in ms)
    # words that favour none clearly: the umbrella stays first (test_kb_matcher: PyCUDA's and vLLM's lines)
    bare = "CUDA error 217 at ggml-cuda.cu:6292: peer access is not supported between these two devices\n"
    ms = match(KB, bare)
    assert ms[0].entry.id == "cuda/peer-access-unsupported-by-hardware" and not any(m.words_lead for m in ms)


# NCCL's topoGetAlgoInfo WARN (src/enqueue.cc) when no algorithm/protocol is left for a collective
# (https://github.com/NVIDIA/TensorRT-LLM/issues/953; NCCL_ALGO=Tree on a Broadcast: https://github.com/NVIDIA/nccl/issues/317)
NO_ALGO = "dc:255756:255756 [3] enqueue.cc:1182 NCCL WARN Error : no algorithm/protocol available\n"


def test_no_algorithm_protocol_available_is_a_forced_setting():
    assert classes(NO_ALGO)[0] == ("nccl_env_misconfig", "possible")
    forced = "dc:255756:255756 [3] NCCL INFO NCCL_ALGO set by environment to Tree\n" + NO_ALGO
    assert classes(forced)[0] == ("nccl_env_misconfig", "likely")
    # the setting alone, with the run healthy, offers nothing
    healthy = "dc:255756:255756 [3] NCCL INFO NCCL_ALGO set by environment to Tree\n"
    assert not [c for c in classes(healthy) if c[1] in ("likely", "possible")]


# PyTorch's wrapper line first, NCCL's own last error under "Last error:" (https://github.com/NVIDIA/nccl/issues/1709)
LAST_ERROR = (
    "238: [rank238]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
    "ProcessGroupNCCL.cpp:3353, internal error - please report this issue to the NCCL developers, NCCL version 2.26.2\n"
    "238: [rank238]: ncclInternalError: Internal check failed.\n"
    "238: [rank238]: Last error:\n"
    "238: [rank238]: Error : no algorithm/protocol available for function AllGather with datatype ncclInt8.\n")


def test_nccls_last_error_ranks_over_the_wrapper_line_above_it():
    # no release named (the 2.18 entry's condition unknown): both entries offered, the last error's first
    text = LAST_ERROR.replace(", NCCL version 2.26.2", "")
    ms = [m for m in match(KB, text) if m.confidence in ("likely", "possible")]
    assert len(ms) >= 2
    assert ms[0].entry.id == "nccl/no-algorithm-protocol-available"
    assert ms[0].first_failure


def test_a_code_inside_the_entrys_own_match_is_its_own():
    # CuPy's error names the CUDA error inside the entry's own pattern: no wrapper demotion
    # (https://github.com/togethercomputer/OpenChatKit/issues/52)
    text = "Cupy error while training (`CUDARuntimeError: cudaErrorInvalidDevice: invalid device ordinal`)\n"
    cupy = next(m for m in match(KB, text) if m.entry.id == "cupy/invalid-device-ordinal")
    assert not any("names a CUDA error" in r for r in cupy.reasons)


def test_a_condition_on_one_nccl_release_is_false_where_the_text_names_another():
    # the NCCL 2.18 entry (internal errors misreported) on a 2.26.2 text: its release condition fails
    ms = {m.entry.id: m for m in match(KB, LAST_ERROR)}
    old = ms["nccl/internal-error-misreported-2-18"]
    assert old.confidence == "unsure" and old.facts_against
    same = {m.entry.id: m for m in match(KB, LAST_ERROR.replace("2.26.2", "2.18.3"))}
    assert same["nccl/internal-error-misreported-2-18"].confidence in ("likely", "possible")
    # no version named: unknown, not false
    bare = {m.entry.id: m for m in match(KB, "\n".join(LAST_ERROR.splitlines()[1:]) + "\n")}
    assert not bare.get("nccl/internal-error-misreported-2-18") or not bare["nccl/internal-error-misreported-2-18"].facts_against
