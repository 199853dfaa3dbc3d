"""Rules of the twenty-eighth session, each from the words or the behaviour of the program that prints them.

- ldd's "<lib> => not found" for libnccl, CuPy's NCCL stub ("module 'cupy.cuda.nccl' has no attribute ...", its module
  keeps only ``available = False`` when the backend import fails) and CuPy's preload warning: NCCL's library is not there.
- PyTorch's getDeviceProperties assert (CUDAContext.cpp "device >= 0 && device < num_gpus") and Paddle's "Device id must be
  less than GPU count" check: an index beyond what the process sees (a count of 0: no GPU at all).
- p2pBandwidthLatencyTest enables peer access only where cudaDeviceCanAccessPeer says yes; a pair whose "P2P=Enabled"
  figures stay at its "P2P=Disabled" ones while other pairs gain was copied through the host.
- NCCL's "Check P2P Type isAllDirectP2p 0 ... isAllCudaP2p 1" (transport.cc) with a pair via SHM and no NCCL_P2P_* setting:
  the pair's path is beyond NCCL's default P2P level; NCCL's messages are also read with their prefix cut off.
- Prose: "Number of GPUs: 0", and "the install is not finding GPU devices" in the progressive."""

import pytest

from p2ptop.commands.explain import explain
from p2ptop.evidence import read_text
from p2ptop.knowledge import load_kb


@pytest.fixture(scope="module")
def kb():
    return load_kb()


def first(kb, text):
    got = explain(kb, text, [], 3)
    return (got[0][0].entry.id, got[0][0].confidence) if got else (None, None)


def facts(text, key):
    return [(f.subject, f.facts[key]) for f in read_text(text).findings if key in f.facts]


# --- NCCL's library not there, in ldd's and CuPy's words ---------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "$ ldd _C.cpython-37m-x86_64-linux-gnu.so\n\tlibcudart.so.9.0 => /usr/local/cuda/lib64/libcudart.so.9.0 (0x00007f5)\n"
    "\tlibnccl.so.1 => not found\n",
    ">>> from cupy.cuda import nccl\n>>> nccl.get_unique_id()\nAttributeError: module 'cupy.cuda.nccl' has no attribute 'get_unique_id'\n",
    "AttributeError: module 'cupy.cuda.nccl' has no attribute 'NcclCommunicator'",
    "UserWarning: \nnccl library could not be loaded.\n\nReason: ImportError (libnccl.so.2: cannot open shared object file)\n",
])
def test_nccl_library_missing_in_ldd_and_cupy_words(kb, text):
    assert first(kb, text) == ("platform/nccl-library-not-found", "likely")


@pytest.mark.parametrize("text", [
    "\tlibnccl.so.2 => /usr/lib/x86_64-linux-gnu/libnccl.so.2 (0x00007f3a1c000000)\n",  # found: nothing wrong
    "AttributeError: module 'cupy.cuda' has no attribute 'nccl'",  # CuPy v9+: the submodule must be imported by name
])
def test_nccl_library_found_or_not_imported_is_not_missing(kb, text):
    assert first(kb, text)[0] != "platform/nccl-library-not-found" or first(kb, text)[1] == "unsure"


# --- a device index beyond what the process sees -----------------------------------------------------------------------

@pytest.mark.parametrize("text,entry", [
    ('RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED at "/pytorch/aten/src/ATen/cuda/CUDAContext.cpp":52, '
     "please report a bug to PyTorch. device=1, num_gpus=1", "cuda/invalid-device-ordinal-hidden-gpu"),
    ("Device id must be less than GPU count, but received id is: 3. GPU count is: 1", "cuda/invalid-device-ordinal-hidden-gpu"),
    ("InvalidArgumentError: Device id must be less than GPU count, but received id is: 0. GPU count is: 0.",
     "cuda/no-device-visible"),
])
def test_device_index_beyond_the_visible_count_in_frameworks_words(kb, text, entry):
    got = first(kb, text)
    assert got[0] == entry and got[1] in ("likely", "possible")


# --- p2pBandwidthLatencyTest: pairs the sample copied through the host ---------------------------------------------------

DGX1_ROW0 = """Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)
   D\\D     0      1      2      3      4      5      6      7
     0 783.95   9.56  14.43  14.46  14.47  14.24  14.51  14.43

Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)
   D\\D     0      1      2      3      4      5      6      7
     0 784.87  48.49  48.49  96.85  96.90  14.25  14.54  14.49

P2P=Disabled Latency Matrix (us)
   GPU     0      1      2      3      4      5      6      7
     0   1.78  17.52  16.41  16.43  17.35  16.88  17.34  16.85

P2P=Enabled Latency (P2P Writes) Matrix (us)
   GPU     0      1      2      3      4      5      6      7
     0   1.76   1.62   1.61   2.01   2.02  18.44  19.15  19.34
"""


def test_pairs_whose_enabled_figures_stay_staged_had_no_peer_access(kb):
    got = dict(facts(DGX1_ROW0, "p2p.read"))
    assert {s for s, v in got.items() if v == "NOT_SUPPORTED"} == {"pair:0-5", "pair:0-6", "pair:0-7"}
    ids = [m.entry.failure_class for m, _ in explain(kb, DGX1_ROW0, [], 3)]
    assert "p2p_unsupported_topology" in ids


def test_no_pair_is_called_staged_where_every_pair_gains_or_none_does():
    healthy_pcie = """Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)
   D\\D     0      1
     0 380.2  10.9
     1  10.8 381.0
Unidirectional P2P=Enabled Bandwidth Matrix (GB/s)
   D\\D     0      1
     0 381.1  12.1
     1  12.2 380.7
P2P=Disabled Latency Matrix (us)
   GPU     0      1
     0   1.5  14.2
     1  14.0   1.5
P2P=Enabled Latency (P2P Writes) Matrix (us)
   GPU     0      1
     0   1.5   1.9
     1   1.9   1.5
"""
    assert not [v for _, v in facts(healthy_pcie, "p2p.read") if v == "NOT_SUPPORTED"]
    # nothing gains anywhere: the text cannot tell a pair apart (no pair is singled out)
    flat = healthy_pcie.replace("12.1", "10.9").replace("12.2", "10.8").replace("1.9   1.5", "14.1   1.5").replace("1.5   1.9", "1.5  14.1")
    assert not [v for _, v in facts(flat, "p2p.read") if v == "NOT_SUPPORTED"]


# --- NCCL's P2P type check, and its messages without their prefix --------------------------------------------------------

CHECK = "Check P2P Type isAllDirectP2p 0 directMode 0 isAllCudaP2p 1\nChannel 00 : 0[0] -> 1[1] via SHM/direct/direct\n"


def test_nccl_check_p2p_type_with_shm_and_no_setting_is_p2p_off_by_path(kb):
    assert facts(CHECK, "nccl.p2p_off_by_path") == [("pair:0-1", True)]
    assert ("pair:0-1", "SHM") in facts(CHECK, "nccl.transport")
    prefixed = "".join(f"node1:1:2 [0] NCCL INFO {line}\n" for line in CHECK.splitlines())
    assert facts(prefixed, "nccl.p2p_off_by_path") == [("pair:0-1", True)]


@pytest.mark.parametrize("text", [
    CHECK.replace("isAllDirectP2p 0", "isAllDirectP2p 1"),  # every pair within NCCL's level
    "NCCL_P2P_LEVEL set by environment to LOC\n" + CHECK,  # a setting of the text explains it
    "Check P2P Type isAllDirectP2p 0 directMode 0 isAllCudaP2p 1\nChannel 00 : 0[0] -> 1[1] via P2P/CUMEM\n",
])
def test_nccl_check_p2p_type_near_misses(text):
    assert facts(text, "nccl.p2p_off_by_path") == []


def test_prose_lines_that_only_look_like_nccl_channels_are_not_read():
    assert facts("The channel is: 0[0] -> 1[1] via email, see Channel 00 notes.", "nccl.transport") == []


# --- prose: no GPU found, in two more forms ------------------------------------------------------------------------------

@pytest.mark.parametrize("text,said", [
    ("TS Home: /usr/local/lib\nNumber of GPUs: 0\nNumber of CPUs: 8\n", True),
    ("On a p3.2xlarge, the GPU Docker install is not finding GPU devices.", True),
    ("The container isn't detecting any GPUs after the upgrade.", True),
    ("Number of GPUs: 4\nNumber of CPUs: 8\n", False),
    ("Number of GPUs: 0.5 per trial", False),
])
def test_no_gpu_found_in_a_count_of_zero_and_in_the_progressive(text, said):
    assert bool(facts(text, "symptom.no_cuda_device")) == said


# --- peer access granted to some pairs of one model and refused to others: the placement decides --------------------------

TF_MATRIX = """I have four NVIDIA GTX 1080 graphic cards and when I'm initializing a session I see following console output:

Adding visible gpu devices: 0, 1, 2, 3
 Device interconnect StreamExecutor with strength 1 edge matrix:
      0 1 2 3
 0:   N Y N N
 1:   Y N N N
 2:   N N N Y
 3:   N N Y N
"""


def test_peer_access_granted_to_some_pairs_of_one_model_is_placement(kb):
    assert facts(TF_MATRIX, "host.p2p_refused_by_placement") == [("host", True)]
    got = [m.entry.failure_class for m, _ in explain(kb, TF_MATRIX, [], 3)]
    assert got[0] == "p2p_unsupported_topology", got


def test_placement_is_not_said_where_models_differ_or_a_granted_pair_is_nvlink():
    two_models = TF_MATRIX.replace("four NVIDIA GTX 1080 graphic cards", "a GTX 1080 and a Tesla V100") \
        .replace("Adding visible gpu devices: 0, 1, 2, 3", "Device 0: NVIDIA GeForce GTX 1080\nDevice 1: Tesla V100-PCIE-16GB\n"
                 "Device 2: NVIDIA GeForce GTX 1080\nDevice 3: Tesla V100-PCIE-16GB")
    assert facts(two_models, "host.p2p_refused_by_placement") == []
    # every pair refused: nothing to tell pairs apart
    assert facts(TF_MATRIX.replace("Y", "N"), "host.p2p_refused_by_placement") == []


def test_an_unsure_candidate_in_doubt_ranks_under_one_nothing_speaks_against(kb):
    # the VM entry is unsure (no VM said) and in doubt (peer access granted between some GPUs of one model)
    ranked = [m.entry.id for m, _ in explain(kb, TF_MATRIX, [], 5)]
    assert ranked.index("cuda/peer-access-unsupported-by-hardware") < ranked.index("vm/peer-access-unsupported-in-vm")


# --- NGC's driver check; the reporter's statement that NCCL was never installed --------------------------------------------

def test_ngc_container_driver_check(kb):
    text = ("ERROR: This container was built for NVIDIA Driver Release 535.86 or later, but\n"
            "       version 510.85.02 was detected and compatibility mode is UNAVAILABLE.\n")
    assert first(kb, text) == ("cuda/insufficient-driver", "likely")


@pytest.mark.parametrize("text,said", [
    ("我只需要单卡训练模型，所以就没有安装nccl库。训练模型就会报错", True),
    ("I did not install NCCL. Multi-GPU training fails with an error on 2 GPUs.", True),
    ("We never installed libnccl2 on these nodes and the 4-GPU run crashes.", True),
    # a guess or a question is no statement
    ("您知道是为什么吗，我猜想是不是NCCL没有安装的问题，训练报错", False),
    ("Maybe NCCL is not installed? The 2-GPU job fails.", False),
])
def test_a_reporters_statement_that_nccl_was_never_installed(kb, text, said):
    assert (first(kb, text)[0] == "platform/nccl-library-not-found") == said


# --- QEMU's iommufd backend cannot map a passed-through device's PCI BAR for peer DMA --------------------------------------

def test_qemu_iommufd_pci_bar_warning_is_no_p2p_in_the_vm(kb):
    text = ("qemu-system-x86_64: warning: IOMMU_IOAS_MAP failed: Bad address, PCI BAR?\n"
            "qemu-system-x86_64: vfio_container_dma_map(0x560cb6cb1620, 0xe000000021000, 0x3000, 0x7f32ed55c000) = -14 (Bad address)\n")
    assert read_text(text).gpu_related
    assert first(kb, text) == ("vm/peer-access-unsupported-in-vm", "likely")
    # QEMU's other IOAS errors are not this one ("IOMMU_IOAS_MAP failed: Invalid argument" without "PCI BAR?")
    assert not read_text("qemu-system-x86_64: IOMMU_IOAS_MAP failed: Invalid argument\n").gpu_related


# --- the same texts as a reply quotes them, or as a word processor turns "--" into a dash ---------------------------------

def test_the_sessions_texts_survive_a_quote_and_a_dash(kb):
    ldd = "> \tlibnccl.so.1 => not found\n"
    assert first(kb, ldd) == ("platform/nccl-library-not-found", "likely")
    ngc = ("> ERROR: This container was built for NVIDIA Driver Release 535.86 or later, but\n"
           ">        version 510.85.02 was detected and compatibility mode is UNAVAILABLE.\n")
    assert first(kb, ngc) == ("cuda/insufficient-driver", "likely")
    # no driver at all ("version  was detected"): not a driver too old
    assert first(kb, ngc.replace("510.85.02", ""))[1] != "likely"
    assert facts("I say \u2014gpus-per-task=1 to launch 8 processes with 1 GPU each.", "host.one_gpu_per_process")


def test_p2p_through_the_cpu_as_slow_as_staging_is_not_called_refused():
    # GPUs 0 and 1 on NVLink gain, 0 and 2 go through the CPU's root complex with peer access: their bandwidth is the
    # staged one, their latency a peer write's (a few us): peer access was granted there
    text = """Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)
   D\\D     0      1      2
     0 770.0  11.2  11.3
     1  11.2 771.0  11.1
     2  11.3  11.1 772.0
Unidirectional P2P=Enabled Bandwidth Matrix (GB/s)
   D\\D     0      1      2
     0 770.5  48.3  11.6
     1  48.4 771.2  11.5
     2  11.6  11.5 772.3
P2P=Disabled Latency Matrix (us)
   GPU     0      1      2
     0   1.8  15.9  16.2
     1  15.8   1.8  16.0
     2  16.1  16.0   1.8
P2P=Enabled Latency (P2P Writes) Matrix (us)
   GPU     0      1      2
     0   1.8   1.6   3.1
     1   1.6   1.8   3.0
     2   3.1   3.0   1.8
"""
    assert not [v for _, v in facts(text, "p2p.read") if v == "NOT_SUPPORTED"]
