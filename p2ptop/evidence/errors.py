"""Errors as PyTorch, TensorFlow, JAX, CuPy, vLLM/SGLang, NCCL and CUDA programs print them.

Facts: error.cuda (the canonical runtime name) with error.cuda_code, error.nccl, error.text (the
line as written, short), text.framework, and symptom.hang / symptom.crash where the error itself
says so (NCCL watchdog timeouts, segfaults).

Patterns come from CUDA's own table (p2ptop.knowledge.codes.CUDA_ERRORS: runtime names, driver
names, numbers, cudaGetErrorString's messages) and NCCL's result names and strings; they tolerate
prefixes ("RuntimeError: CUDA error: ", "CUDARuntimeError: ", "XlaRuntimeError: INTERNAL: "),
truncation (a message's first words suffice when it is long), and line wraps inside a message.
A number counts only beside "CUDA error"/"cuda failure"/"error code" on a line that says CUDA.
Generic messages ("out of memory", "invalid argument") count only when the line says CUDA.
"""

from __future__ import annotations

import re
from typing import Optional

from ..knowledge.codes import CUDA_BY_NAME, CUDA_BY_NUMBER, CUDA_ERRORS, GENERIC_CUDA_MESSAGES
from ..nccl.log import NCCL_RESULT_TEXTS
from .paste import Collector

_NAMES = re.compile(r"\b(cudaError[A-Z][A-Za-z]+|CUDA_ERROR_[A-Z_]+)\b")
_NCCL_NAMES = re.compile(r"\bnccl(UnhandledCudaError|SystemError|InternalError|InvalidArgument|InvalidUsage|RemoteError)\b")
_NUMBER = re.compile(r"(?:cuda(?:\s+runtime)?\s+error|cuda\s+failure|cudaerror|error\s+code|error|err|code)\s*[:=#]?\s*\(?\s*(\d{1,3})\b", re.I)


def _message_pattern(msg: str) -> str:
    words = msg.lower().split()
    # a long message may be cut off or wrapped: its first five words name it
    words = words[:5] if len(words) > 5 else words
    return r"\s+".join(re.escape(w) for w in words)


_SPECIFIC = [(n, m) for n, _r, _d, m in CUDA_ERRORS if m.lower() not in GENERIC_CUDA_MESSAGES]
_MESSAGES = re.compile("|".join(f"(?P<m{n}>{_message_pattern(m)})" for n, m in _SPECIFIC))
_GENERIC = re.compile(r"(?:cuda\s*(?:runtime\s*)?(?:error|failure)[^:'\n]{0,40}[:']\s*'?|cudaerror\w*:\s*|cuda_error_\w+:\s*)("
                      + "|".join(re.escape(m) for m in sorted(GENERIC_CUDA_MESSAGES, key=len, reverse=True)) + ")")
_FRAMEWORKS = (
    ("vllm", re.compile(r"\bvllm\b", re.I)),
    ("sglang", re.compile(r"\bsglang\b", re.I)),
    ("deepspeed", re.compile(r"\bdeepspeed\b", re.I)),
    ("megatron", re.compile(r"\bmegatron\b", re.I)),
    ("ray", re.compile(r"\bray(?:\.|_|::| worker|\s+actor)|\(pid=\d+\)|\(\w+ pid=\d+\)", re.I)),
    ("cupy", re.compile(r"\bcupy(?:_backends)?\b", re.I)),
    ("jax", re.compile(r"\bjax(?:lib)?\b|XlaRuntimeError", re.I)),
    ("tensorflow", re.compile(r"\btensorflow\b|\btf\.(?:distribute|config)", re.I)),
    ("pytorch", re.compile(r"\btorch\b|ProcessGroupNCCL|torchrun|\bpytorch\b", re.I)),
)
_HANG = re.compile(r"Watchdog caught collective operation timeout|timed out after \d+|Timeout at NCCL work|"
                   r"NCCL (?:communicator|watchdog).*(?:timeout|timed out)|heartbeat monitor", re.I)
_CRASH = re.compile(r"Segmentation fault|SIGSEGV|SIGABRT|signal 11|core dumped|Fatal Python error|"
                    r"exitcode\s*:\s*-(?:6|9|11)\b|fell off the bus|fallen off the bus", re.I)


def _add_cuda(c: Collector, number: int, line: int, found: list[int]) -> None:
    name = CUDA_BY_NUMBER[number][0]
    again = number not in found
    if not again:
        return
    found.append(number)
    c.add("host", "error.cuda", name, line, again=True, summary=f"CUDA error {name} ({number})")
    c.add("host", "error.cuda_code", number, line, again=True)
    c.add("host", "error.text", " ".join(c.paste.line(line).split())[:200], line)


def parse(c: Collector) -> bool:
    text = c.paste.text
    low = c.paste.lower
    found_cuda: list[int] = []
    found = False
    # names: cudaErrorX, CUDA_ERROR_X
    if "cudaerror" in low or "cuda_error" in low:
        for m in _NAMES.finditer(text):
            n = CUDA_BY_NAME.get(m.group(1))
            if n is not None:
                _add_cuda(c, n, c.paste.line_of(m.start()), found_cuda)
                found = True
    # messages, tolerant of wraps (\s+ between words)
    for m in _MESSAGES.finditer(low):
        n = int(m.lastgroup[1:])
        _add_cuda(c, n, c.paste.line_of(m.start()), found_cuda)
        found = True
    if "cuda" in low:
        for m in _GENERIC.finditer(low):
            n = next(n for n, _r, _d, msg in CUDA_ERRORS if msg == m.group(1))
            _add_cuda(c, n, c.paste.line_of(m.start()), found_cuda)
            found = True
        # numbers beside "CUDA error" (e.g. "CUDA error 217 at ggml-cuda.cu", "cuda failure 101")
        for m in re.finditer(r"cuda[^\n]{0,40}?(?:error|failure)[^\n]{0,12}?\b(\d{2,3})\b", low):
            n = int(m.group(1))
            if n in CUDA_BY_NUMBER and n not in found_cuda:
                _add_cuda(c, n, c.paste.line_of(m.start()), found_cuda)
                found = True
    # NCCL results by name, and ncclGetErrorString's texts in framework errors
    if "nccl" in low:
        for m in _NCCL_NAMES.finditer(text):
            name = "nccl" + m.group(1)
            ln = c.paste.line_of(m.start())
            if not (c.has("host", "error.nccl") and c.get("host", "error.nccl") == name):
                c.add("host", "error.nccl", name, ln, again=True)
            c.add("host", "error.text", " ".join(c.paste.line(ln).split())[:200], ln)
            found = True
        for words, name in NCCL_RESULT_TEXTS:
            i = low.find(words)
            while i >= 0:
                ln = c.paste.line_of(i)
                if "nccl" in c.paste.line(ln).lower():
                    c.add("host", "error.nccl", name, ln, again=c.get("host", "error.nccl") != name)
                    found = True
                    break
                i = low.find(words, i + 1)
    m = _HANG.search(text)
    if m:
        c.add("host", "symptom.hang", True, c.paste.line_of(m.start()))
        found = True
    m = _CRASH.search(text)
    if m:
        c.add("host", "symptom.crash", True, c.paste.line_of(m.start()))
        found = True
    if "traceback" in low or "error" in low or "exception" in low:
        for fw, rx in _FRAMEWORKS:
            m = rx.search(text)
            if m:
                c.add("host", "text.framework", fw, c.paste.line_of(m.start()), severity="info")
                break
    if found:
        c.kind("error")
    if not c.has("host", "error.text") and ("Traceback" in text or "Error:" in text):
        first = _first_error_line(c)
        if first:
            c.add("host", "error.text", " ".join(c.paste.line(first).split())[:200], first)
    return found


def _first_error_line(c: Collector) -> Optional[int]:
    for no, line in enumerate(c.paste.lines, 1):
        s = line.strip()
        if re.match(r"^[\w.]*(Error|Exception)\b.*:", s) and not s.startswith("Traceback"):
            return no
    return None
