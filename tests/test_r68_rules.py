"""Rules of the twenty-ninth session, each from the program that prints the words (written after fresh75 was judged).

- Triton's driver (third_party/nvidia/backend/driver.c, load_binary) loads the cubin its bundled ptxas built for the GPU with
  cuModuleLoadData and raises "Triton Error [CUDA]: " + cuGetErrorString: CUDA_ERROR_INVALID_IMAGE ("device kernel image is
  invalid") there is a cubin newer than the driver reads (cuda/insufficient-driver); the bare message has other causes.
- CUDA's "no CUDA-capable device is detected" with the noun dropped, as people retype it.
- AMI Aptio's POST code D4, "PCI resource allocation error. Out of Resources", when a GPU is added: no room for the BARs.
- An entry's own pattern on a line makes the text a GPU text, though it names no GPU (a misspelt "GUP" around PyTorch's
  "AssertionError: Invalid device id"): the answer is not emptied as "no trace of GPUs"."""

import pytest
from .kbtools import bundled_kb, first_entry

from p2ptop.commands.explain import answer, explain


@pytest.fixture(scope="module")
def kb():
    return bundled_kb()


@pytest.mark.parametrize("text", [
    "BackendCompilerFailed: backend='inductor' raised: RuntimeError: Triton Error [CUDA]: device kernel image is invalid",
    '  File "/usr/local/lib/python3.10/dist-packages/triton/compiler/compiler.py", line 230, in _init_handles\n'
    "    mod, func, n_regs, n_spills = cuda_utils.load_binary(self.metadata[\"name\"], self.asm[\"cubin\"], self.shared, device)\n"
    "RuntimeError: Triton Error [CUDA]: device kernel image is invalid\n",
])
def test_triton_cubin_the_driver_cannot_load_is_an_old_driver(kb, text):
    assert first_entry(text) == ("cuda/insufficient-driver", "likely")


def test_invalid_image_without_tritons_prefix_is_not_claimed_for_the_driver(kb):
    # a cubin built for another architecture gives the same CUDA message outside Triton: not this entry's regex
    got = [m.entry.id for m, _ in explain(kb, "CUDA error: device kernel image is invalid", [], 3)
           if any(h.kind == "regex" for h in m.hits)]
    assert "cuda/insufficient-driver" not in got


def test_triton_ptxas_workaround_is_offered(kb):
    entry = next(e for e in kb.entries if e.id == "cuda/insufficient-driver")
    assert any("TRITON_PTXAS_PATH" in (w.get("command") or "") for w in entry.workarounds)


@pytest.mark.parametrize("text", ["no CUDA-capable is detected", "RuntimeError: no CUDA-capable devices is detected"])
def test_no_device_message_with_its_noun_dropped(kb, text):
    assert first_entry(text)[0] == "cuda/no-device-visible"


@pytest.mark.parametrize("text", [
    "when i add gpu 4 the code d4 appears. and does not let the system start.",
    "Board stuck on Q-Code D4 with the third RTX 3090 installed",
])
def test_post_code_d4_is_pci_resources_exhausted(kb, text):
    assert first_entry(text) == ("pcie/bar1-cannot-assign-no-space", "possible")


@pytest.mark.parametrize("text", [
    "the code d45 appears when I add gpu 4",  # another code
    "mov eax, 0xd4 ; the gpu driver code",  # a hex byte
])
def test_other_codes_are_not_d4(kb, text):
    assert first_entry(text)[0] != "pcie/bar1-cannot-assign-no-space"


def test_an_entrys_pattern_makes_the_text_a_gpu_text(kb):
    text = "在run train_demo.py时，出现‘AssertionError: Invalid device id’这样的错误，这个错误是由于我的GUP设置不对吗？"
    got = answer(kb, text, [], 3, "text")
    assert got["gpu_related"] and got["kind"] == "matches"
    assert got["results"][0][0].entry.id == "cuda/invalid-device-ordinal-hidden-gpu"


def test_a_text_without_gpus_or_entry_patterns_stays_empty(kb):
    got = answer(kb, "the build is stuck at 99 % and never finishes", [], 3, "text")
    assert got["kind"] == "no_gpu_trace" and not got["results"]


# --- NCCL's library named missing in the reporter's words (after fresh76 was judged) -----------------------------------

@pytest.mark.parametrize("text", [
    "Installing pre-build binaries gives an error when testing caffe2 due to missing `libnccl.so.2`.",
    "the wheel imports fine but libnccl.so.2 is not found at run time",
    "运行时找不到 libnccl.so.2",
])
def test_libnccl_named_missing(kb, text):
    assert first_entry(text)[0] == "platform/nccl-library-not-found"


def test_libnccl_found_is_not_missing(kb):
    assert first_entry("ldconfig -p | grep nccl\n\tlibnccl.so.2 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnccl.so.2")[0] \
        != "platform/nccl-library-not-found"


# --- a shared error code: an entry whose required words are absent ranks under those that need none --------------------

SYSTEM_ERROR = ("RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:825, unhandled system error, "
                "NCCL version 2.7.8\nncclSystemError: System call (socket, malloc, munmap, etc) failed.\n")


def test_shared_code_without_the_setup_words_ranks_under_the_others(kb):
    got = [(m.entry.id, m.score) for m, _ in explain(kb, SYSTEM_ERROR, [], 5)]
    ids = [i for i, _ in got]
    assert ids.index("nccl/shm-dev-shm-full") < ids.index("wsl/nccl-wsl2-no-p2p")
    wsl = next(m for m, _ in explain(kb, SYSTEM_ERROR, [], 5) if m.entry.id == "wsl/nccl-wsl2-no-p2p")
    assert any("words it requires of the text are absent" in r for r in wsl.reasons)


def test_shared_code_with_the_setup_words_is_not_lowered(kb):
    text = "Running under WSL2 on Windows 11 with two RTX 4090s:\n" + SYSTEM_ERROR
    got = [m for m, _ in explain(kb, text, [], 5)]
    assert got[0].entry.id == "wsl/nccl-wsl2-no-p2p"
    assert not any("words it requires of the text are absent" in r for r in got[0].reasons)


# --- CUDA IPC refused because the peer GPU is hidden from the process (device_not_visible) ------------------------------

OMPI_IPC = ("If I launch a job with `srun -n 2 --gpus-per-task=1` (which uses Slurm GPU binding), then I get the following:\n"
            "The call to cuIpcOpenMemHandle failed. This is an unrecoverable error\nand will cause the program to abort.\n"
            "  Hostname:                         node7\n  cuIpcOpenMemHandle return value:  1\n"
            "  address:                          0x7fd865200000\n")
GTL_IPC = "(GTL DEBUG: 0) cuIpcOpenMemHandle: invalid argument, CUDA_ERROR_INVALID_VALUE, line no 360\n"


SANITIZER_IPC = ('========= Program hit cudaErrorPeerAccessUnsupported (error 217) due to "peer access is not supported between '
                 'these two devices" on CUDA API call to cudaIpcOpenMemHandle.\n')


def test_mpi_stacks_name_the_ipc_call():
    from p2ptop.evidence import read_text
    for text, call in ((OMPI_IPC, "cuIpcOpenMemHandle"), (GTL_IPC, "cuIpcOpenMemHandle"), (SANITIZER_IPC, "cudaIpcOpenMemHandle")):
        calls = [f.facts["error.cuda_call"] for f in read_text(text).findings if "error.cuda_call" in f.facts]
        assert calls == [call], text


def test_ipc_open_failure_with_one_gpu_per_task_is_the_hidden_peer(kb):
    got = explain(kb, OMPI_IPC, [], 3)
    assert (got[0][0].entry.id, got[0][0].confidence) == ("nccl/ipc-peer-gpu-not-visible", "likely")
    assert got[0][0].entry.failure_class == "device_not_visible"
    cont = [m for m, _ in got if m.entry.id == "cuda-ipc/open-handle-across-containers"]
    assert cont and cont[0].confidence == "unsure"  # in doubt: each task sees only its own GPU


def test_ipc_open_failure_across_containers_stays_the_container_entry(kb):
    text = ("Two containers on one node, each started with --gpus all, exchange tensors:\n"
            "RuntimeError: CUDA error: invalid argument\n  File \"torch/multiprocessing/reductions.py\", line 121, in rebuild_cuda_tensor\n")
    assert first_entry("docker run --gpus all ... (two containers)\n" + GTL_IPC)[0] != "nccl/ipc-peer-gpu-not-visible"
    assert first_entry(text)[0] != "nccl/ipc-peer-gpu-not-visible"


def test_a_doubt_its_own_setup_answers_does_not_hold(kb):
    # one GPU per container AND the job split across containers: the IPC boundary (the container entry's own setup) is said
    text = ("Two docker containers on one node, each container with a single GPU: NCCL falls back to NET/Socket "
            "and P2P does not work between them.")
    got = [m for m, _ in explain(kb, text, [], 3)]
    cont = next(m for m in got if m.entry.id == "cuda-ipc/open-handle-across-containers")
    assert not any(r.startswith("in doubt") for r in cont.reasons)
    assert got[0].entry.id == "cuda-ipc/open-handle-across-containers"


def test_unless_is_validated_like_any_condition():
    from p2ptop.knowledge.schema import validate
    import json, os
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "kb", "cuda-ipc__open-handle-across-containers.json"), encoding="utf-8") as f:
        data = json.load(f)
    assert validate(data) == []
    data["match"]["doubt"][-1]["unless"][0]["fact"] = "host.no_such_fact"
    assert any(field.endswith("unless[0].fact") for field, _ in validate(data))
    data["match"]["doubt"][-1]["unless"][0] = {"fact": "log", "regex": "(unclosed"}
    assert any("unless[0].regex" in field for field, _ in validate(data))


def test_nccls_ipc_open_217_after_choosing_p2p_is_the_hidden_peer(kb):
    # NCCL asks NVML where the peer's CUDA device is not visible (p2p.cc p2pCanConnect), picks P2P/IPC, then cannot open it
    text = ("z-pc:909608:910337 [0] NCCL INFO Channel 00 : 0[2d000] -> 1[2e000] via P2P/IPC\n"
            "z-pc:909608:910337 [0] transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle : 217 peer access is not "
            "supported between these two devices\n")
    assert first_entry(text)[0] == "nccl/ipc-peer-gpu-not-visible"  # first, unsure: the 217 line is shared by several classes
    said = "Ray gives each worker 1 GPU through CUDA_VISIBLE_DEVICES.\n" + text
    assert first_entry(said) == ("nccl/ipc-peer-gpu-not-visible", "likely")


def test_a_bare_ipc_open_217_is_not_the_hidden_peer(kb):
    text = "mem_heap.cpp:1275: non-zero status: 217 cudaIpcOpenMemHandle failed with error 217\n"
    got = [(m.entry.id, m.confidence) for m, _ in explain(kb, text, [], 5)]
    assert ("nccl/ipc-peer-gpu-not-visible", "possible") not in got and ("nccl/ipc-peer-gpu-not-visible", "likely") not in got
