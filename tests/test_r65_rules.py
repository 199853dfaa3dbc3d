"""Rules of the twenty-sixth session: NCCL's library missing at run time (the loaders' own words), and frameworks' own
words for a build without NCCL (PyTorch's THD package, pycaffe, DGL, Caffe's message retyped)."""

import pytest

from p2ptop.commands.explain import answer, explain
from p2ptop.knowledge import load_kb


@pytest.fixture(scope="module")
def kb():
    return load_kb()


def first(kb, text):
    got = explain(kb, text, [], 3)
    return got[0][0] if got else None


@pytest.mark.parametrize("text", [
    # glibc's dlopen, as TensorFlow 1.x's NCCL ops, CuPy and MXNet report it
    "INFO:tensorflow:Error reported to Coordinator: libnccl.so.2: cannot open shared object file: No such file or directory",
    "OSError: libnccl.so.2: cannot open shared object file: No such file or directory",
    # ld.so at start-up of a program linked against NCCL
    "./build/app: error while loading shared libraries: libnccl.so.1: cannot open shared object file: No such file or directory",
    # Paddle's dynamic_loader.cc before 2.0 and since
    "EnforceNotMet: Failed to find dynamic library: libnccl.so ( libnccl.so: cannot open shared object file: No such file "
    "or directory ) Please specify its path correctly using following ways:",
    "RuntimeError: (PreconditionNotMet) The third-party dynamic library (libnccl.so) that Paddle depends on is not configured "
    "correctly. (error code is libnccl.so: cannot open shared object file: No such file or directory)",
    # vLLM's NCCL finder
    "RuntimeError: Failed to import NCCL library: Cannot find libnccl.so.2 in the system.",
])
def test_nccl_library_not_found(kb, text):
    m = first(kb, text)
    assert m is not None and m.entry.id == "platform/nccl-library-not-found"
    assert m.confidence in ("likely", "possible")


def test_an_absent_nccl_plugin_is_no_missing_nccl(kb):
    # NCCL's own INFO when no network plugin is installed (a healthy log)
    text = ("host:1:1 [0] NCCL INFO NET/Plugin: Plugin load returned 2 : libnccl-net.so: cannot open shared object file: "
            "No such file or directory : when loading libnccl-net.so\n"
            "host:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM\n")
    assert all(m.entry.id != "platform/nccl-library-not-found" for m, _ in explain(kb, text, [], 5))


def test_the_library_file_alone_is_a_trace_of_gpu_communication(kb):
    got = answer(kb, "Failed to find dynamic library: libnccl.so ( libnccl.so: cannot open shared object file )", [], 3)
    assert got["kind"] == "matches"


@pytest.mark.parametrize("text", [
    # PyTorch's THD package (torch.distributed before c10d) built without NCCL 2
    "RuntimeError: the distributed NCCL backend is not available; try to recompile the THD package with CUDA and NCCL 2+ "
    "support at /pytorch/torch/lib/THD/process_group/General.cpp:17",
    # pycaffe: python/caffe/_caffe.cpp binds NCCL.new_uid and bcast only #ifdef USE_NCCL
    "    uid = caffe.NCCL.new_uid()\nAttributeError: type object 'NCCL' has no attribute 'new_uid'",
    # DGL: the C functions its Python wrapper calls exist only in a library built with NCCL
    "    self._handle = _CAPI_DGLNCCLGetUniqueId()\nNameError: name '_CAPI_DGLNCCLGetUniqueId' is not defined",
    # Caffe's LOG(FATAL) as a reporter retyped it (tools/caffe.cpp: "Multi-GPU execution not available - rebuild with USE_NCCL")
    "when i train with gpus 4,5 it said Multi-GPU execution not avilable -rebuild with USE_NCCL. can't use two gpus?",
])
def test_a_framework_built_without_nccl_in_its_own_words(kb, text):
    m = first(kb, text)
    assert m is not None and m.entry.id == "platform/no-nccl-in-windows-builds"
    assert m.confidence in ("likely", "possible")


def test_an_nccl_class_with_its_methods_is_no_build_without_nccl(kb):
    text = "caffe.NCCL.new_uid() returned; then all_reduce hangs on 4 GPUs with NCCL 2.4.8"
    assert all(m.entry.id != "platform/no-nccl-in-windows-builds" or m.confidence == "unsure"
               for m, _ in explain(kb, text, [], 5))


@pytest.mark.parametrize("text", [
    "ImportError: /opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister",
    "torch/lib/libtorch_cuda.so: undefined symbol: ncclMemFree",
    './build/all_reduce_perf: symbol lookup error: ./build/all_reduce_perf: undefined symbol: "ncclCommWindowRegister"',
])
def test_an_nccl_function_missing_from_the_loaded_library(kb, text):
    m = first(kb, text)
    assert m is not None and m.entry.id == "nccl/undefined-symbol-older-libnccl"
    assert m.confidence in ("likely", "possible")


def test_another_librarys_missing_symbol_is_not_ncclS(kb):
    text = "ImportError: libtorch_cuda.so: undefined symbol: cudaGetDriverEntryPointByVersion, version libcudart.so.12 (8 GPUs)"
    # (retrieval may still list it, unsure, for the words it shares)
    assert all(m.entry.id != "nccl/undefined-symbol-older-libnccl" or m.confidence == "unsure"
               for m, _ in explain(kb, text, [], 5))
