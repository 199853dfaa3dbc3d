"""A Python console's answers about the GPUs: the frameworks' own queries typed at a prompt and the value printed after them.

People paste what they typed and what came back: the standard REPL (``>>> torch.cuda.is_available()`` then ``False``),
IPython (``In [2]: ...`` then ``Out[2]: False``), a shell's ``python -c "...print(...)"`` then its output, or a script's
``print(...)`` line then the value. The call is read with its arguments, the answer from the next line that is not
another prompt:

* ``torch.cuda.is_available()`` / ``torch.cuda.device_count()`` / ``cupy.cuda.runtime.getDeviceCount()`` /
  ``tf.test.is_gpu_available()`` / ``tf.config.list_physical_devices('GPU')`` answering False, 0 or ``[]``: the framework
  sees no GPU (``symptom.no_cuda_device``); ``jax.devices()`` listing only CPU devices likewise (JAX falls back to the CPU
  when no GPU backend starts);
* ``torch.cuda.can_device_access_peer(a, b)`` / ``cupy.cuda.runtime.deviceCanAccessPeer(a, b)`` answering False / 0 or
  True / 1: CUDA's peer-access query for the pair (cudaDeviceCanAccessPeer), ``p2p.read`` NOT_SUPPORTED or OK.

A call whose line holds more than one query, or whose answer is not a plain value, is not read.
"""

from __future__ import annotations

import re
from typing import Optional

from .paste import Collector, pair_subject

#: one query of the GPUs, as the frameworks name it (lower case), with its arguments
_CALL = re.compile(
    r"(?P<q>torch\.cuda\.is_available|torch\.cuda\.device_count|cuda\.runtime\.getdevicecount|tf\.test\.is_gpu_available|"
    r"(?:tf\.config\.(?:experimental\.)?)list_physical_devices|jax\.devices|"
    r"torch\.cuda\.can_device_access_peer|cuda\.runtime\.devicecanaccesspeer)\s*\((?P<args>[^()]*)\)")
_WORDS = ("is_available", "device_count", "getdevicecount", "is_gpu_available", "list_physical_devices", "jax.devices",
          "can_device_access_peer", "devicecanaccesspeer")
#: a prompt or a continuation: the line is input, not an answer
_PROMPT = re.compile(r"^\s*(?:>>>|\.\.\.|in \[\d+\]:|\$|#|\(\w[\w.-]*\)\s*\$)")
_OUT = re.compile(r"^\s*out\[\d+\]:\s*")
_PAIR_ARGS = re.compile(r"^\s*(\d{1,2})\s*,\s*(\d{1,2})\s*$")


def _answer(lines: list[str], i: int) -> Optional[tuple[str, int]]:
    """The value printed after the call on line ``i`` (0-based): the next non-empty line that is not a prompt (IPython's
    ``Out[N]:`` stripped), with its 0-based index; None where the next line is another input."""
    for j in range(i + 1, min(i + 3, len(lines))):
        line = lines[j]
        if not line.strip():
            continue
        if _OUT.match(line):
            return _OUT.sub("", line).strip(), j
        if _PROMPT.match(line):
            return None
        return line.strip(), j
    return None


def parse(c: Collector) -> bool:
    view = c.paste.select(_WORDS, context=2)
    if not view.text:
        return False
    lines = view.text.split("\n")
    starts = [0]  # each view line's offset in view.text, for view.line_of
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    found = False
    for i, line in enumerate(lines):
        calls = list(_CALL.finditer(line))
        if len(calls) != 1:
            continue
        got = _answer(lines, i)
        if got is None:
            continue
        value, j = got
        q, args = calls[0].group("q"), calls[0].group("args")
        no = view.line_of(starts[j])
        if q.endswith(("can_device_access_peer", "devicecanaccesspeer")):
            pair = _PAIR_ARGS.match(args)
            if pair is None or value not in ("true", "false", "1", "0") or pair.group(1) == pair.group(2):
                continue
            a, b = sorted((int(pair.group(1)), int(pair.group(2))))
            ok = value in ("true", "1")
            found = c.add(pair_subject(a, b), "p2p.read", "OK" if ok else "NOT_SUPPORTED", no,
                          severity="ok" if ok else "problem",
                          summary=f"the console: CUDA's peer-access query for GPU{a} and GPU{b} answers {'yes' if ok else 'no'}") or found
            continue
        if q.endswith("list_physical_devices") and "gpu" not in args:
            continue
        none = (value in ("false", "0", "[]") if not q.endswith("jax.devices")
                else value.startswith("[") and "cpu" in value and "cuda" not in value and "gpu" not in value)
        if none:
            found = c.add("host", "symptom.no_cuda_device", True, no, severity="problem",
                          summary=f"the console: {q.split('.')[-1]}() answers {value[:40]}: the framework sees no GPU") or found
        elif q.endswith("is_available") and value == "true":
            found = c.add("host", "host.cuda_available", True, no, severity="info",
                          summary="the console: torch.cuda.is_available() answers True") or found
    return found
