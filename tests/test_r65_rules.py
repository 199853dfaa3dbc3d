"""Rules of the twenty-sixth session: NCCL's library missing at run time (the loaders' own words), frameworks' own words
for a build without NCCL (PyTorch's THD package, pycaffe, DGL, Caffe's message retyped), and an NCCL function missing
from the library the loader found (an older libnccl.so.2 than the program was built for)."""

import pytest

from p2ptop.commands.explain import answer, explain
from p2ptop.evidence import read_text
from p2ptop.knowledge import load_kb

NOT_FOUND, NO_NCCL, OLDER = ("platform/nccl-library-not-found", "platform/no-nccl-in-windows-builds",
                             "nccl/undefined-symbol-older-libnccl")


@pytest.fixture(scope="module")
def kb():
    return load_kb()


def first(kb, text):
    got = explain(kb, text, [], 3)
    return got[0][0] if got else None


OWN_WORDS = [
    # glibc's dlopen, as TensorFlow 1.x's NCCL ops, CuPy and MXNet report it
    (NOT_FOUND, "INFO:tensorflow:Error reported to Coordinator: libnccl.so.2: cannot open shared object file: "
                "No such file or directory"),
    (NOT_FOUND, "OSError: libnccl.so.2: cannot open shared object file: No such file or directory"),
    # ld.so at start-up of a program linked against NCCL
    (NOT_FOUND, "./build/app: error while loading shared libraries: libnccl.so.1: cannot open shared object file: "
                "No such file or directory"),
    # Paddle's dynamic_loader.cc before 2.0 and since
    (NOT_FOUND, "EnforceNotMet: Failed to find dynamic library: libnccl.so ( libnccl.so: cannot open shared object file: "
                "No such file or directory ) Please specify its path correctly using following ways:"),
    (NOT_FOUND, "RuntimeError: (PreconditionNotMet) The third-party dynamic library (libnccl.so) that Paddle depends on is "
                "not configured correctly. (error code is libnccl.so: cannot open shared object file: No such file or directory)"),
    # vLLM's NCCL finder
    (NOT_FOUND, "RuntimeError: Failed to import NCCL library: Cannot find libnccl.so.2 in the system."),
    # PyTorch's THD package (torch.distributed before c10d) built without NCCL 2
    (NO_NCCL, "RuntimeError: the distributed NCCL backend is not available; try to recompile the THD package with CUDA and "
              "NCCL 2+ support at /pytorch/torch/lib/THD/process_group/General.cpp:17"),
    # pycaffe: python/caffe/_caffe.cpp binds NCCL.new_uid and bcast only #ifdef USE_NCCL
    (NO_NCCL, "    uid = caffe.NCCL.new_uid()\nAttributeError: type object 'NCCL' has no attribute 'new_uid'"),
    # DGL: the C functions its Python wrapper calls exist only in a library built with NCCL
    (NO_NCCL, "    self._handle = _CAPI_DGLNCCLGetUniqueId()\nNameError: name '_CAPI_DGLNCCLGetUniqueId' is not defined"),
    # Caffe's LOG(FATAL) as a reporter retyped it (tools/caffe.cpp: "Multi-GPU execution not available - rebuild with USE_NCCL")
    (NO_NCCL, "when i train with gpus 4,5 it said Multi-GPU execution not avilable -rebuild with USE_NCCL. can't use two gpus?"),
    # the dynamic loader's message for a name of NCCL's API that the loaded libnccl.so.2 lacks
    (OLDER, "ImportError: /opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister"),
    (OLDER, "torch/lib/libtorch_cuda.so: undefined symbol: ncclMemFree"),
    (OLDER, './build/all_reduce_perf: symbol lookup error: ./build/all_reduce_perf: undefined symbol: "ncclCommWindowRegister"'),
]


@pytest.mark.parametrize("entry_id, text", OWN_WORDS)
def test_an_entry_leads_on_its_own_words(kb, entry_id, text):
    m = first(kb, text)
    assert m is not None and m.entry.id == entry_id
    assert m.confidence in ("likely", "possible")


@pytest.mark.parametrize("entry_id, text", [
    # NCCL's own INFO when no network plugin is installed (a healthy log)
    (NOT_FOUND, "host:1:1 [0] NCCL INFO NET/Plugin: Plugin load returned 2 : libnccl-net.so: cannot open shared object "
                "file: No such file or directory : when loading libnccl-net.so\n"
                "host:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM\n"),
    # pycaffe's NCCL class with its methods: a build with NCCL
    (NO_NCCL, "caffe.NCCL.new_uid() returned; then all_reduce hangs on 4 GPUs with NCCL 2.4.8"),
    # another library's missing symbol (retrieval may still list the entry, unsure, for the words it shares)
    (OLDER, "ImportError: libtorch_cuda.so: undefined symbol: cudaGetDriverEntryPointByVersion, version libcudart.so.12 (8 GPUs)"),
])
def test_not_offered_without_its_own_words(kb, entry_id, text):
    assert all(m.entry.id != entry_id or m.confidence == "unsure" for m, _ in explain(kb, text, [], 5))


def test_the_library_file_alone_is_a_trace_of_gpu_communication(kb):
    got = answer(kb, "Failed to find dynamic library: libnccl.so ( libnccl.so: cannot open shared object file )", [], 3)
    assert got["kind"] == "matches"


def test_nccl_inside_a_name_is_a_trace_of_gpu_communication(kb):
    text = "AttributeError: module 'paddle.base.libpaddle' has no attribute 'ProcessGroupNCCL'"
    assert answer(kb, text, [], 3)["kind"] == "matches"


# NCCL 2.1/2.2's format (no "NCCL" in the prefix), as two machines both named node1 print it (horovod/horovod#148)
_MERGED = """node1:18225:18239 [0] INFO NET : Using interface eth1:100.102.32.176<0>
node1:18225:18239 [0] INFO Using NCCL Low-latency algorithm for sizes below 16384
node1:18226:18240 [1] INFO NET : Using interface eth1:100.102.32.176<0>
node1:22671:22795 [1] INFO NET : Using interface eth1:100.102.32.175<0>
node1:22670:22794 [0] INFO [0] Ring 0 :    0   1   2   3
node1:22671:22795 [1] INFO 1 -> 0 via P2P/IPC
node1:18225:18239 [0] INFO 2 -> 1 via P2P/IPC
"""


def _merged_fact(text):
    return [f for f in read_text(text).findings if "nccl.hosts_merged" in f.facts]


def test_one_host_name_two_addresses_and_p2p_is_hosts_merged(kb):
    assert _merged_fact(_MERGED)
    m = first(kb, _MERGED)
    assert m is not None and m.entry.id == "nccl/same-hostname-two-machines" and m.confidence == "possible"


@pytest.mark.parametrize("text", [
    # NCCL 2.5.6 and later add the boot id to the host hash: two machines named alike are two hosts
    "node1:1:2 [0] NCCL INFO NCCL version 2.18.3+cuda12.2\n" + _MERGED,
    # one address: one machine
    _MERGED.replace("100.102.32.175", "100.102.32.176"),
    # two interfaces of one machine
    _MERGED.replace("eth1:100.102.32.175", "ib0:10.0.0.5"),
    # the ranks under that name meet only over the network
    _MERGED.replace("via P2P/IPC", "via NET/Socket/0"),
])
def test_no_hosts_merged_without_its_signs(text):
    assert not _merged_fact(text)
