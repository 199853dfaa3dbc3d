"""Errors as PyTorch, TensorFlow, JAX, CuPy, vLLM/SGLang, NCCL and CUDA programs print them.

Facts: error.cuda (the canonical runtime name) with error.cuda_code and error.cuda_call (the CUDA call that returned
it, where the paste names one: on the error's line, in the stack frames after it, or PyTorch's CUDA-IPC frames above
it), error.nccl, error.text (the line as written, short; also compute-sanitizer's memcheck reports, NVSHMEM's
"file:function:line:" errors, UCX's ERROR lines and its WARN and gdrcopy's gdrdrv lines that say something failed), text.framework, symptom.hang / symptom.crash where the error itself says so (NCCL
watchdog timeouts, segfaults), and p2p.read NOT_SUPPORTED where a program words CUDA's peer query answering no (CuPy's
"Peer access is unavailable", Open MPI smcuda's "ACCESS=0"), for the pair it names; error.fabric_handle_refused where a
fabric-handle (CU_MEM_HANDLE_TYPE_FABRIC) allocation, export or import is refused with CUDA_ERROR_NOT_PERMITTED.

Patterns come from CUDA's own table (p2ptop.knowledge.codes.CUDA_ERRORS: runtime names, driver
names, numbers, cudaGetErrorString's messages; the names also as bindings shorten them, "ERROR_X", "ErrorX", "XY",
on a line that says CUDA) and NCCL's result names and strings; they tolerate
prefixes ("RuntimeError: CUDA error: ", "CUDARuntimeError: ", "XlaRuntimeError: INTERNAL: "),
truncation (a message's first words suffice when it is long), and line wraps inside a message.
A number counts only beside "CUDA error"/"cuda failure"/"error code"/"res=" on a line that says CUDA, as a driver
call's "return value:" (Open MPI's help texts: "cuIpcOpenMemHandle return value:  217"), or after a CUDA call said to
fail with it ("cudaIpcOpenMemHandle failed with error 217", "cudaSetDevice returned 101"). vLLM's and SGLang's
"CUDART error: <message>" counts as CUDA's own words.
Generic messages ("out of memory", "invalid argument") count only when the line says CUDA.
"""

from __future__ import annotations

import re
from typing import Optional

from ..knowledge.codes import CUDA_BY_NAME, CUDA_BY_NUMBER, CUDA_ERRORS, GENERIC_CUDA_MESSAGES
from ..nccl.log import NCCL_RESULT_TEXTS
from .nccl import FAILED_WORDS
from .paste import EXCEPTION_NAME, Collector, pair_subject

_NAMES = re.compile(r"\b(cudaerror[a-z]+|cuda_error_[a-z_]+)\b")  # on lower-cased text
_NAME_BY_LOWER = {k.lower(): v for k, v in CUDA_BY_NAME.items()}
_NCCL_NAMES = re.compile(r"\bnccl(unhandledcudaerror|systemerror|internalerror|invalidargument|invalidusage|remoteerror)\b")
_NCCL_CANON = {n.lower(): n for n in ("UnhandledCudaError", "SystemError", "InternalError", "InvalidArgument",
                                      "InvalidUsage", "RemoteError")}
#: a number right after "CUDA error"/"cuda failure" ("CUDA error 217 at ggml-cuda.cu", "Cuda failure 101 'x'"), or
#: "code=802" / "error code 101" on a line naming CUDA; never a number after a file name ("file.cu:217").
_CUDA_NUMBER = re.compile(r"cuda(?:\s+runtime)?\s+(?:error|failure)\s*[:#(]?\s*(\d{1,3})\b(?![.:])|"
                          r"cuda[^\n]{0,80}?\b(?:code\s*=\s*|error\s+code\s*:?\s*|res\s*=\s*)(\d{1,3})\b")
#: a driver call's return value as Open MPI's CUDA help texts print it ("cuIpcOpenMemHandle return value:  217",
#: opal/mca/common/cuda/help-mpi-common-cuda.txt; the accelerator framework's "cuMemcpyAsync(%p, %p, %lu) returned value
#: %d", opal/mca/accelerator/cuda/help-accelerator-cuda.txt); on lower-cased text
_DRIVER_RETURN_VALUE = re.compile(r"\bcu[a-z]{3,40}(?:\([^)\n]{0,160}\))? return(?:ed)? value\s*:?\s*(\d{1,3})\b")
#: a CUDA API call said to fail with a number (NVSHMEM's "cudaIpcOpenMemHandle failed with error 217", "cuMemMap failed with
#: status 1", "cudaSetDevice returned 101", HAMi-core's "cuInit failed:100"): the call's CUDA error
_CALL_FAILED_NUMBER = re.compile(r"\bcu(?:da)?[a-z][a-z0-9_]{2,40}\s+(?:failed\s+with\s+(?:error|status|code|result)|returned(?:\s+error)?|failed(?=\s*:))"
                                 r"\s*[:=]?\s*(\d{1,3})\b(?![.:]\d)")


#: CUDA's message with its number right after it, as programs print cudaGetErrorString(err) << "(" << err << ")"
#: (ByteDance flux's CUDA_CHECK: "Got bad cuda status: operation not supported(801)"): the number names the error when
#: the words before it are that number's own message in CUDA's table (so a generic message counts here too)
_MESSAGE_THEN_NUMBER = re.compile(r"([a-z][a-z0-9 '/-]{2,120}?)\s?\((\d{1,3})\)")


def _head(msg: str) -> list[str]:
    words = msg.lower().split()
    # a long message may be cut off or wrapped: its first five words name it
    return words[:5] if len(words) > 5 else words


def _camel(driver_suffix: str) -> str:
    return "".join(w.capitalize() for w in driver_suffix.split("_"))


#: CUDA's error names as some bindings print them, without the "cuda"/"CUDA_" prefix or the "Error"/"ERROR_" word
#: (case-sensitive, on the line as written; each only on a line that says CUDA):
#: CUDA.jl's CuError prints the driver name less "CUDA_" ("CUDA error: peer access is already enabled (code 704,
#: ERROR_PEER_ACCESS_ALREADY_ENABLED)", lib/cudadrv/error.jl: cuGetErrorName(...)[6:end]); ManagedCuda's CUResult enum
#: names are "ErrorPeerAccessAlreadyEnabled"; Rust bindings print the enum variant ("CUDA error: PeerAccessAlreadyEnabled
#: (704)", a CudaError whose Display is "CUDA error: {:?} ({})"); and a driver name less "ERROR_"
#: ("CUDA_PEER_ACCESS_UNSUPPORTED") or a runtime name less "Error" ("cudaPeerAccessUnsupported").
_SHORT_NAMES: dict[str, int] = {}
for _n, _rt, _drv, _m in CUDA_ERRORS:
    _rt_tail = _rt[len("cudaError"):]
    _SHORT_NAMES["Error" + _rt_tail] = _n
    _SHORT_NAMES["cuda" + _rt_tail] = _n
    # bare, with no word of CUDA's around it: only a name of two words or more ("Unknown", "Timeout" are words) whose
    # message is CUDA's own ("NotSupported", "InvalidValue", "OutOfMemory" name many libraries' errors)
    _bare = sum(ch.isupper() for ch in _rt_tail) >= 2 and _m.lower() not in GENERIC_CUDA_MESSAGES \
        and _rt_tail not in ("OperatingSystem", "IllegalState")
    if _bare:
        _SHORT_NAMES[_rt_tail] = _n
    if _drv:
        _tail = _drv[len("CUDA_ERROR_"):]
        _SHORT_NAMES.setdefault("ERROR_" + _tail, _n)
        _SHORT_NAMES.setdefault("CUDA_" + _tail, _n)
        _SHORT_NAMES.setdefault("Error" + _camel(_tail), _n)
        if "_" in _tail and _bare:
            _SHORT_NAMES.setdefault(_camel(_tail), _n)
_SHORT = re.compile(r"(?<![\w.])(" + "|".join(sorted(map(re.escape, _SHORT_NAMES), key=len, reverse=True)) + r")\b")
#: a line that says CUDA (a binding's error type or its API)
_SAYS_CUDA = ("cuda", "cuerror", "curesult")


def _message_pattern(msg: str) -> str:
    return r"\s+".join(re.escape(w) for w in _head(msg))


_SPECIFIC = [(n, m) for n, _r, _d, m in CUDA_ERRORS if m.lower() not in GENERIC_CUDA_MESSAGES]
_MESSAGES = re.compile("|".join(f"(?P<m{n}>{_message_pattern(m)})" for n, m in _SPECIFIC))
#: the longest of a message's first words: a line can hold the message only if it holds this word
_MESSAGE_WORDS = tuple(sorted({max(_head(m), key=len) for _n, m in _SPECIFIC}))
#: in a paste of at most WRAP_TEXT characters (wrapped by hand or by a mail client), also the longer of a message's
#: first two words, so that a message wrapped before its longest word is read from the line where it starts (select
#: adds the line after each)
_WRAPPED_MESSAGE_WORDS = tuple(sorted(set(_MESSAGE_WORDS) | {max(_head(m)[:2], key=len) for _n, m in _SPECIFIC}))
WRAP_TEXT = 64_000
#: CUDA's own message where an NCCL line quotes it (NCCL's CUDACHECK "Cuda failure 1 'invalid argument'", a framework's
#: "CUDA error: invalid argument"): words there are CUDA's, never one of ncclGetErrorString's texts
_CUDA_WORDS_QUOTED = re.compile(r"cuda failure(?:\s+\d+)?\s*'[^'\n]*'?|cuda(?:\s+runtime)?\s+error\s*:[^,\n]*|cudaerror\w*:[^,\n]*")
#: (also a check macro's "CUDA error: <the call as written>: <message>", ggml-cuda's CUDA_CHECK of 2023: "CUDA error:
#: cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, stream): invalid argument"; and the CUDACHECK macros that put the
#: source file and line first, vLLM's custom_all_reduce.cuh "Cuda error " __FILE__ ":" __LINE__ " '" message "'", DeepEP's
#: "Failed: CUDA error deep_ep.cpp:226 'invalid resource handle'", nccl-tests' "Test CUDA failure common.cu:892 '...'")
_GENERIC = re.compile(r"(?:cuda(?:rt)?\s*(?:runtime\s*)?(?:error|failure)[^:'\n]{0,40}[:']\s*'?|cudaerror\w*:\s*|cuda_error_\w+:\s*|"
                      r"cuda(?:rt)?\s*error\s*:\s*[\w:.>-]{3,80}\([^\n]{0,400}\)\s*:\s*'?|"
                      r"cuda(?:rt)?\s*(?:error|failure)\s+\S{1,200}?\.(?:cuh?|cpp|cc|cxx|c|h|hpp):\d+\s*:?\s*')("
                      + "|".join(re.escape(m) for m in sorted(GENERIC_CUDA_MESSAGES, key=len, reverse=True)) + ")")
_FRAMEWORKS = (
    ("vllm", ("vllm",), re.compile(r"vllm")),  # also RayWorkerVllm
    ("sglang", ("sglang", "sgl_"), re.compile(r"sglang|\bsgl_(?:kernel|jax)")),
    ("deepspeed", ("deepspeed",), re.compile(r"\bdeepspeed\b")),
    ("megatron", ("megatron",), re.compile(r"\bmegatron\b")),
    ("ray", ("ray", "pid="), re.compile(r"\bray(?:\.|_|::| worker|\s+actor)|\(pid=\d+\)|\(\w+ pid=\d+\)")),
    ("cupy", ("cupy",), re.compile(r"\bcupy(?:_backends)?\b")),
    ("jax", ("jax", "xlaruntimeerror", "pjrt"), re.compile(r"\bjax(?:lib)?\b|xlaruntimeerror|\bpjrt")),
    ("tensorflow", ("tensorflow", "tf."), re.compile(r"\btensorflow\b|\btf\.(?:distribute|config)")),
    ("pytorch", ("torch", "processgroupnccl"), re.compile(r"\btorch\b|processgroupnccl|torchrun|\bpytorch\b")),
)
_SANITIZER = re.compile(r"^[ \t]*(?:=+[ \t]*)?(invalid __(?:global|shared|local)__ (?:read|write|atomic)\w*) of size \d+ bytes?", re.M)
_HANG_WORDS = ("watchdog", "timed out", "timeout", "heartbeat")
_HANG = re.compile(r"watchdog caught collective operation timeout|timed out after \d+|timeout at nccl work|"
                   r"nccl (?:communicator|watchdog).*(?:timeout|timed out)|heartbeat monitor")
_CRASH_WORDS = ("segmentation", "sigsegv", "sigabrt", "signal 11", "core dumped", "fatal python", "exitcode", "off the bus")
_CRASH = re.compile(r"segmentation fault|sigsegv|sigabrt|signal 11|core dumped|fatal python error|"
                    r"exitcode\s*:\s*-(?:6|9|11)\b|fell off the bus|fallen off the bus")


#: a CUDA API function as a check macro or a stack frame names it: the runtime's cudaX and the driver's cuX (with their
#: _v2/_ptsz suffixes), called ("name(" or Julia's "name(arg::Type"); not the error helpers around every failure
_CUDA_CALL = re.compile(r"(?<![\w.])(cuda[A-Z][A-Za-z0-9]+|cu[A-Z][A-Za-z0-9]+(?:_v\d|_ptsz|_ptds)*)\s*\(")
_NOT_A_CALL = re.compile(r"^(?:cudaGetErrorString|cudaGetErrorName|cudaGetLastError|cudaPeekAtLastError|cuGetErrorString|"
                         r"cuGetErrorName|cudaDeviceSynchronize|cudaStreamSynchronize|cuCtxSynchronize|cudaError\w*|cuError\w*|"
                         r"cudaCheck\w*|cudaSafeCall\w*|cuCheck\w*|"
                         r"cu(?:DNN|BLAS|FFT|SPARSE|RAND|SOLVER|TENSOR|DSS|PTI)\w*)$")  # the libraries' names, not driver calls
#: a framework's own words for CUDA's peer-access query answering 0 (cudaDeviceCanAccessPeer): CuPy's kernel launcher
#: (cupy/_core/_kernel.pyx, _check_peer_access) "The device where the array resides (1) is different from the current
#: device (0). Peer access is unavailable between these devices."
_PEER_UNAVAILABLE = re.compile(r"(?:array resides \((\d+)\) is different from the current device \((\d+)\)\.\s*)?"
                               r"Peer access is unavailable between these devices|"
                               # Open MPI's smcuda BTL (btl_smcuda_component.c, with btl_smcuda_cuda_ipc_verbose): the
                               # peer query for the two ranks' devices answered 0, so no CUDA IPC between them
                               r"mydev=(\d+), peerrank=\d+, peerdev=(\d+) --> ACCESS=0\b|Not sending GPU IPC ACK, no P2P support|"
                               # Mooncake's transfer engine (nvlink_transport.cpp, intranode_nvlink_transport.cpp):
                               # "NvlinkTransport: device 0 cannot p2p access device 1" after cudaDeviceCanAccessPeer
                               r"\bdevice (\d+) cannot p2p access device (\d+)|"
                               # the query's own name and answer printed as a pair ("(device 0) -> rank 1 (device 1):
                               # canAccessPeer=0", Mooncake's EP transport)
                               r"\(device (\d+)\) -> rank \d+ \(device (\d+)\): canAccessPeer\s*=\s*0\b|"
                               # mistral.rs (device_map/peer.rs): "CUDA peer access unavailable from cuda:0 to cuda:1"
                               r"\bcuda peer access (?:unavailable|unsupported) from cuda:(\d+) to cuda:(\d+)|"
                               # QUDA (comm_common.cpp): "Intra-node (non peer-to-peer) enabled for rank %3d (gpu=%d) with
                               # neighbor %3d (gpu=%d)", printed where cudaDeviceCanAccessPeer says no
                               r"\bintra-node \(non peer-to-peer\) enabled for rank +\d+ \(gpu=(\d+)\) with neighbor +\d+ \(gpu=(\d+)\)|"
                               # NVIDIA Warp (set_peer_access_enabled: "Device cuda:1 cannot access device cuda:0"), CUTLASS's
                               # distributed GEMM examples ("Device 0 can't access device 4"), multi-gpu-programming-models
                               # ("P2P access required from 0 to 1"), CCCL's CUDASTF ("[DEV 0] cannot enable peer access with
                               # device 1", "Cannot enable peer access between devices 2 and 0")
                               r"\bdevice (?:cuda:)?(\d+) (?:cannot|can't|can not) access device (?:cuda:)?(\d+)|"
                               r"\bp2p access required from (\d+) to (\d+)|"
                               r"\[dev (\d+)\] cannot enable peer access with device (\d+)|"
                               r"\bcannot enable peer access between devices (\d+) and (\d+)|"
                               # FlashInfer's Ulysses topology check (flashinfer/comm/ulysses_topology.py): "no P2P access
                               # from rank 0 (GPU-uuid) to rank 1 (GPU-uuid)" after torch.cuda.can_device_access_peer says
                               # no; ranks, not device numbers, so the pair is not named
                               r"\bno p2p access from rank \d+ \(GPU-[0-9a-f-]+\) to rank \d+\b|"
                               # Caffe's P2PSync (parallel.cpp: LOG(INFO) << "GPU " << self << " does not have p2p access to
                               # GPU " << peer, after cudaDeviceCanAccessPeer said no); FBGEMM's merge_pooled_embeddings
                               # ("Failed to init p2p access for node %d,%d", at::cuda::get_p2p_access false)
                               r"\bGPU (\d+) does not have p2p access to GPU (\d+)|"
                               # CUDA.jl's cuBLAS wrapper (cublasXt device selection: "cublasXt: CuDevice(1) cannot access
                               # memory on CuDevice(0); operations on device arrays may fail", after the peer query said no)
                               r"\bCuDevice\((\d+)\) cannot access memory on CuDevice\((\d+)\)|"
                               r"\bfailed to init p2p access for node (\d+),\s*(\d+)|"
                               # RM (src/kernel/gpu/bus/p2p_api.c p2papiConstruct_IMPL): "ERROR: P2P is Disabled, cannot
                               # create mappings" where the pair's P2P caps say neither read nor write
                               r"\bP2P is Disabled, cannot create mappings\b|"
                               # cutorch (lib/THC/THCGeneral.c THCState_setPeerToPeerAccess: THError("p2p access not supported
                               # for %d accessing %d") where cudaDeviceCanAccessPeer said no), cuda-convnet2 (convnet.cu:
                               # printf("No peer access GPU %d -->  GPU %d\n"))
                               r"\bp2p access not supported for (\d+) accessing (\d+)|\bno peer access GPU (\d+) -->\s+GPU (\d+)|"
                               # PaddlePaddle (framework/parallel_executor.cc: LOG(WARNING) "Cannot enable P2P access from %d to %d"
                               # where GpuDeviceCanAccessPeer said no; cuda_virtual_mem_allocator.cc: "device(%d) can not access
                               # peer to device(%d)")
                               r"\bcannot enable p2p access from (\d+) to (\d+)|\bdevice\((\d+)\) can not access peer to device\((\d+)\)", re.I)
#: a CUDA IPC call a library says failed without CUDA's code (Open MPI's smsc/accelerator: "error in cuIpcOpenMemHandle")
_IPC_CALL_ERROR = re.compile(r"\berror in (cu(?:da)?Ipc(?:Open|Get)(?:Mem|Event)Handle)\b", re.I)
#: a library's own words for a failed cudaIpcOpenMemHandle ("failed to open IPC handle for rank 0: invalid device context",
#: Mooncake's EP transport; "Failed to open CUDA IPC handle", "unable to open ipc mem handle"): the error is that call's
_IPC_OPEN_WORDS = re.compile(r"\b(?:fail(?:ed|s|ure)?|unable|could not|cannot|can't)\s+(?:to\s+)?open(?:ing)?\s+(?:the\s+|a\s+)?(?:cuda\s+)?ipc\s+(?:mem(?:ory)?\s+)?handle", re.I)
#: PyTorch's frames that open another process's CUDA memory: torch.multiprocessing's rebuild_cuda_tensor and
#: UntypedStorage._new_shared_cuda, which reach cudaIpcOpenMemHandle (CUDACachingAllocator getIpcDevPtr); a CUDA error
#: under them is that call's
_IPC_OPEN_FRAMES = re.compile(r"\b(?:rebuild_cuda_tensor|_new_shared_cuda)\b")
#: torch.cuda.Event.from_ipc_handle (torch/cuda/streams.py), which reaches cudaIpcOpenEventHandle (aten CUDAEvent's
#: constructor from an IPC handle): a CUDA error under it is that call's
_IPC_EVENT_FRAMES = re.compile(r"\bfrom_ipc_handle\b")
#: NVSHMEM's error macros (src/include/internal/common/error_codes_internal.h: fprintf "%s:%s:%d: " file, function, line,
#: then the message): "src/host/comm/putget.cpp:nvshmemi_prepare_and_post_rma:263: [0] rma not supported on transport to pe: 1"
_NVSHMEM_ERROR = re.compile(r"^[^\s:]*\.(?:cpp|cu|c|h):\w+:\d+: \S", re.M)
#: a stack trace's frames after the error line searched for the call (CUDA.jl: "[3] cuMemcpyDtoDAsync_v2(dst::CuPtr...")
CALL_FRAMES = 12
#: a fabric handle refused, in the formats of the libraries that use them (lower-cased text): a VMM call named with CUDA's
#: NOT_PERMITTED (TensorRT-LLM's checkDriver "CUDA driver error in cuMemImportFromShareableHandle(..., CU_MEM_HANDLE_TYPE_FABRIC):
#: CUDA_ERROR_NOT_PERMITTED", PyTorch's driver check, cuda-python), NVSHMEM's "non-zero status: 800 cuMemImportFromShareableHandle
#: failed" and "... failed for fabric handles", MSCCL++'s "sent only a Fabric (MNNVL) handle, but this rank could not import it",
#: PyTorch symmetric memory's "fabric_info: {...}) failed to import memory from rank N", and NCCL's CUCHECK ("Cuda failure 800")
#: on its cuMem export/import paths (P2P buffers, NVLS, symmetric windows, registration)
_FABRIC_REFUSED = re.compile(
    r"\bcumem(?:create|exporttoshareablehandle|importfromshareablehandle)\b[^\n]{0,200}?(?:cuda_error_not_permitted|operation not permitted)|"
    r"\bstatus:? 800\b[^\n]{0,20}\bcumem(?:create|exporttoshareablehandle|importfromshareablehandle)\b|"
    r"\bcumem(?:exporttoshareablehandle|importfromshareablehandle) failed for fabric handles\b|"
    r"\bsent only a fabric \(mnnvl\) handle, but this rank could not import it\b|"
    r"\bfabric_info: \{[^}\n]*\}\) failed to import memory from rank \d+|"
    r"\b(?:transport/p2p|transport/nvls|dev_runtime|register/\w+|include/alloc|allocator)\.(?:cc|h):\d+(?: \(\w+\))? nccl warn cuda failure 800\b")


#: a CUDA IPC call an MPI stack names as the subject of its error, without parentheses: Open MPI's help text
#: (help-mpi-common-cuda.txt: "The call to cuIpcOpenMemHandle failed. ..." and, lines later, "cuIpcOpenMemHandle return
#: value: %d") and Cray MPICH's GTL ("(GTL DEBUG: %d) cuIpcOpenMemHandle: invalid argument, CUDA_ERROR_INVALID_VALUE, line
#: no %d"); the error is that call's
#: and compute-sanitizer's report ("Program hit cudaErrorPeerAccessUnsupported (error 217) due to \"...\" on CUDA API call to
#: cudaIpcOpenMemHandle.")
_IPC_CALL_NAMED = re.compile(r"\b(cu(?:da)?Ipc(?:Open|Get)(?:Mem|Event)Handle)(?:\s+return value:|:\s|\s+failed\b)|"
                            r"\bon CUDA API call to (cu(?:da)?Ipc(?:Open|Get)(?:Mem|Event)Handle)\b")
#: lines above the error an MPI stack's message names the call on (Open MPI's help text: six)
IPC_CALL_ABOVE = 8


def _cuda_call(c: Collector, line: int) -> Optional[tuple[str, int]]:
    """The CUDA call the error on ``line`` came from: one named on that line before the message (a check macro's
    "CUDA error: cudaMemcpyAsync(...): invalid argument"), else the first one in the stack frames that follow."""
    p = c.paste
    for no in range(line, min(len(p.lines), line + CALL_FRAMES) + 1):
        for m in _CUDA_CALL.finditer(p.line(no)):
            if not _NOT_A_CALL.match(m.group(1)):
                return m.group(1), no
        if no > line and not p.line(no).strip():
            break  # a blank line ends the trace
    if _IPC_OPEN_WORDS.search(p.line(line)):
        return "cudaIpcOpenMemHandle", line
    for no in range(line, max(0, line - IPC_CALL_ABOVE), -1):
        m = _IPC_CALL_NAMED.search(p.line(no))
        if m:
            return m.group(1) or m.group(2), no
    # Python prints the frames BEFORE the error: the innermost ones just above it that open CUDA IPC memory
    for no in range(line - 1, max(0, line - CALL_FRAMES), -1):
        if _IPC_OPEN_FRAMES.search(p.line(no)):
            return "cudaIpcOpenMemHandle", no
        if _IPC_EVENT_FRAMES.search(p.line(no)):
            return "cudaIpcOpenEventHandle", no
    return None


def _add_cuda(c: Collector, number: int, line: int, found: list[int]) -> None:
    name = CUDA_BY_NUMBER[number][0]
    again = number not in found
    if not again:
        return
    found.append(number)
    c.add("host", "error.cuda", name, line, again=True, summary=f"CUDA error {name} ({number})")
    c.add("host", "error.cuda_code", number, line, again=True)
    c.add("host", "error.text", " ".join(c.paste.line(line).split())[:200], line)
    if len(found) == 1:  # the first error's call (a second error's would be a finding of its own, never a fact)
        call = _cuda_call(c, line)
        if call:
            c.add("host", "error.cuda_call", call[0], call[1])


def parse(c: Collector) -> bool:
    p = c.paste
    found_cuda: list[int] = []
    found = False
    # names: cudaErrorX, CUDA_ERROR_X
    v = p.select(("cudaerror", "cuda_error"), context=0)
    for m in _NAMES.finditer(v.text):
        n = _NAME_BY_LOWER.get(m.group(1))
        if n is not None:
            _add_cuda(c, n, v.line_of(m.start()), found_cuda)
            found = True
    # the same names without their prefix or "Error" word, as CUDA.jl, ManagedCuda and Rust bindings print them
    for no in p.select(_SAYS_CUDA, context=0).numbers:  # on each line as written (the names are case-sensitive)
        for m in _SHORT.finditer(p.line(no)):
            _add_cuda(c, _SHORT_NAMES[m.group(1)], no, found_cuda)
            found = True
    # messages, tolerant of a wrap onto the next line (\s+ between words)
    v = p.select(_WRAPPED_MESSAGE_WORDS if len(p.text) <= WRAP_TEXT else _MESSAGE_WORDS)
    for m in _MESSAGES.finditer(v.text):
        _add_cuda(c, int(m.lastgroup[1:]), v.line_of(m.start()), found_cuda)
        found = True
    v = p.select(("cuda",), context=0)
    for m in _GENERIC.finditer(v.text):
        n = next(n for n, _r, _d, msg in CUDA_ERRORS if msg == m.group(1))
        _add_cuda(c, n, v.line_of(m.start()), found_cuda)
        found = True
    for no in p.select(("(",), context=0).numbers if "cuda" in p.lower else ():
        line = p.line(no).lower()
        for m in _MESSAGE_THEN_NUMBER.finditer(line):
            n = int(m.group(2))
            own = CUDA_BY_NUMBER.get(n)
            if own and m.group(1).endswith(own[2].lower()) and n not in found_cuda:
                _add_cuda(c, n, no, found_cuda)
                found = True
    # numbers: beside CUDA's words, or as a driver call's return value
    for v, rx in ((v, _CUDA_NUMBER), (p.select((" return value", " returned value"), context=0), _DRIVER_RETURN_VALUE),
                  (p.select((" failed with ", " returned", " failed:"), context=0), _CALL_FAILED_NUMBER)):
        for m in rx.finditer(v.text):
            n = int(next(g for g in m.groups() if g))
            if n in CUDA_BY_NUMBER and n not in found_cuda:
                _add_cuda(c, n, v.line_of(m.start()), found_cuda)
                found = True
    # NCCL results by name, and ncclGetErrorString's texts in framework errors
    v = p.select(("nccl",), context=0)
    for m in _NCCL_NAMES.finditer(v.text):
        name = "nccl" + _NCCL_CANON[m.group(1)]
        ln = v.line_of(m.start())
        c.add("host", "error.nccl", name, ln, again=True)
        c.add("host", "error.text", " ".join(p.line(ln).split())[:200], ln)
        found = True
    for words, name in NCCL_RESULT_TEXTS:
        for m in re.finditer(re.escape(words), v.text):
            ln = v.line_of(m.start())
            if words not in _CUDA_WORDS_QUOTED.sub(" ", p.line(ln).lower()):
                continue  # CUDA's message quoted on an NCCL line ("Cuda failure 'invalid argument'"): no NCCL result text
            c.add("host", "error.nccl", name, ln, again=True)
            found = True
            break
    v = p.select(_HANG_WORDS, context=0)
    m = _HANG.search(v.text)
    if m:
        c.add("host", "symptom.hang", True, v.line_of(m.start()))
        found = True
    v = p.select(_CRASH_WORDS, context=0)
    m = _CRASH.search(v.text)
    if m:
        c.add("host", "symptom.crash", True, v.line_of(m.start()))
        found = True
        if "off the bus" in m.group(0):  # NVRM's words for a GPU the driver lost (Xid 79)
            c.add("host", "gpu.lost", True, v.line_of(m.start()), severity="problem")
    # compute-sanitizer's (and cuda-memcheck's) memcheck report: "========= Invalid __global__ write of size 16 bytes",
    # then "=========     Address 0x... is out of bounds" (the Compute Sanitizer documentation's memcheck error types;
    # a kernel touching another GPU's memory its context has no peer mapping for is reported so)
    v = p.select(("invalid __",), context=0)
    m = _SANITIZER.search(v.text)
    if m:
        ln = v.line_of(m.start())
        c.add("host", "error.text", " ".join(p.line(ln).split())[:200], ln,
              summary="compute-sanitizer: a kernel accessed memory it may not (" + m.group(1) + ")")
        c.tool("compute-sanitizer", ln)
        found = True
    v = p.select(("peer access is unavailable", "access=0", "no p2p support", "cannot p2p access", "canaccesspeer",
                  "cuda peer access un", "non peer-to-peer", "access device", "p2p access required",
                  "enable peer access", "no p2p access from", "p2p access to", "init p2p access", "cannot create mappings",
                  "p2p access not supported for", "no peer access gpu", "enable p2p access from", "access peer to device",
                  "cannot access memory on cudevice"), context=0)
    m = _PEER_UNAVAILABLE.search(v.text)
    if m:
        ln = v.line_of(m.start())
        pairs = [g for g in (m.group(k, k + 1) for k in range(1, _PEER_UNAVAILABLE.groups, 2)) if g[0]]
        a, b = pairs[0] if pairs else (None, None)
        subj = pair_subject(min(int(a), int(b)), max(int(a), int(b))) if a and b and a != b else "host"
        c.add(subj, "p2p.read", "NOT_SUPPORTED", ln, severity="problem",
              summary="the framework says CUDA's peer-access query answers no (peer access unavailable)")
        c.add("host", "error.text", " ".join(p.line(ln).split())[:200], ln)
        found = True
    # Open MPI's single-copy component (opal/mca/smsc/accelerator, the accelerator framework's CUDA module: "error in
    # cuIpcOpenMemHandle", "Error in cuIpcGetMemHandle dev_ptr %p"): a CUDA IPC call failed, its code not printed
    v = p.select(("error in cuipc", "error in cudaipc"), context=0)
    m = _IPC_CALL_ERROR.search(v.text)
    if m and not c.has("host", "error.cuda_call"):
        ln = v.line_of(m.start())
        call = (_IPC_CALL_ERROR.search(p.line(ln)) or m).group(1)  # the selection is lower-cased: the paste's own spelling
        c.add("host", "error.cuda_call", call, ln, summary=f"{call} failed (the library names the call, not CUDA's code)")
        c.add("host", "error.text", " ".join(p.line(ln).split())[:200], ln)
        found = True
    # a fabric handle refused: CUDA's cuMemCreate / cuMemExportToShareableHandle / cuMemImportFromShareableHandle return
    # CUDA_ERROR_NOT_PERMITTED (800) for CU_MEM_HANDLE_TYPE_FABRIC where the process has no access to the IMEX channel
    # (CUDA driver API, Virtual Memory Management); the libraries that use fabric handles print it their way
    v = p.select(("cumem", "fabric", "fabric_info", "cuda failure 800"), context=0)
    m = _FABRIC_REFUSED.search(v.text)
    if m:
        ln = v.line_of(m.start())
        c.add("host", "error.fabric_handle_refused", True, ln, severity="problem",
              summary="a fabric-handle allocation, export or import was refused (CUDA_ERROR_NOT_PERMITTED: no IMEX channel access)")
        if not c.has("host", "error.text"):
            c.add("host", "error.text", " ".join(p.line(ln).split())[:200], ln)
        found = True
    for fw, words, rx in _FRAMEWORKS:
        v = p.select(words, context=0, cap=50)
        m = rx.search(v.text)
        if m:
            c.add("host", "text.framework", fw, v.line_of(m.start()), severity="info")
            break
        if any(rx.search(x.lower()) for x in p.prefixes):  # the prefix a launcher put before every line names it
            c.add("host", "text.framework", fw, 1, severity="info")  # (Ray's actor RayWorkerVllm, a compose service)
            break
    if found:
        c.kind("error")
    if not c.has("host", "error.text") and ("UCX  " in p.text or "gdrdrv:" in p.text):
        # UCX's log (src/ucs/debug/log.c: "[time] [host:pid:thread] file.c:line UCX  ERROR message") and gdrcopy's kernel
        # module (gdrdrv.c: "gdrdrv:function:message"): an ERROR line, or a WARN / gdrdrv line that says something failed
        for no in p.select(("ucx  ", "gdrdrv:"), context=0).numbers:
            line = p.line(no)
            if "UCX  ERROR" in line or (("UCX  WARN" in line or "gdrdrv:" in line) and FAILED_WORDS.search(line)):
                c.add("host", "error.text", " ".join(line.split())[:200], no)
                found = True
                break
    if not c.has("host", "error.text") and "nvshmem" in p.text.lower():
        # NVSHMEM's NVSHMEMI_ERROR_* macros print "file.cpp:function:line: message" before they exit
        m = _NVSHMEM_ERROR.search(p.text)
        if m:
            ln = p.text.count("\n", 0, m.start()) + 1
            c.add("host", "error.text", " ".join(p.line(ln).split())[:200], ln)
            found = True
    if not c.has("host", "error.text") and ("Traceback" in p.text or "Error:" in p.text):
        first = _first_error_line(c)
        if first:
            c.add("host", "error.text", " ".join(p.line(first).split())[:200], first)
    if not c.has("host", "error.text") and not c.has("host", "symptom.fails"):
        # Python's header of a raised exception (CPython's traceback module: "Traceback (most recent call last):"), the
        # exception line itself cut off (a paste stopped at the stack's frames): the program failed, what with is unsaid
        ln = _cut_traceback(p.lines)
        if ln:
            c.add("host", "symptom.fails", True, ln, summary="a Python traceback whose exception line the paste does not show")
    return found


_TRACEBACK = re.compile(r"^\W{0,12}Traceback \(most recent call last\):")


def _cut_traceback(lines: list[str]) -> Optional[int]:
    """The line of a Python traceback header whose stack runs to the end of the paste: its frames ("  File ...", indented)
    and no exception line after them (CPython's traceback module prints the exception, unindented, after the last frame;
    "torch...RendezvousTimeoutError" with no message is one too). Only the last header can be so; None where it has its
    exception line."""
    no = next((n for n in range(len(lines), 0, -1) if _TRACEBACK.match(lines[n - 1])), None)
    if no is None:
        return None
    head = len(lines[no - 1]) - len(lines[no - 1].lstrip())
    rest = [x for x in lines[no:] if x.strip()]
    return no if rest and not any(len(x) - len(x.lstrip()) <= head and _EXCEPTION_LINE.match(x.strip()) for x in rest) \
        else None


#: the exception's line (CPython's traceback.format_exception_only: "{qualified name}: {message}", or the name alone), as
#: against what a reflow between words or a paste that lost its breaks moves to a line's start: pieces of a frame's line
#: ('"/path/file.py", line 12, in main', paste.reline's 'File "..."') and of the code under it ("None,", "list(args))")
_EXCEPTION_LINE = re.compile(r"(?!File\b)[A-Za-z_][\w.]*(?::\s|:$|$)")


_TAGGED_EXCEPTION = re.compile(r"^(?:\[[^\]\n]{1,30}\]:?\s*)?[\w.]*(Error|Exception)\b.*:")
_LABELLED_EXCEPTION = re.compile(r"^[A-Za-z_][\w .-]{0,30}:\s+" + EXCEPTION_NAME + r": \S")


def _first_error_line(c: Collector) -> Optional[int]:
    for no, line in enumerate(c.paste.lines, 1):
        s = line.strip()
        # an issue title's tag may come first ("[QUESTION] OSError: ...", "[Bug]: RuntimeError: ..."): GitHub's issue
        # templates put one before the title the reporter writes; or a label a logger or a service puts before the
        # exception it caught ("ERROR: RuntimeError: ...", "message: OSError: ..."), then in CPython's own form
        # (traceback.format_exception_only: "{qualified name}: {message}", the class's name CamelCase)
        if (_TAGGED_EXCEPTION.match(s) or _LABELLED_EXCEPTION.match(s)) and not s.startswith("Traceback"):
            return no
    return None
