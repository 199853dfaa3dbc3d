"""Evidence from text: what a pasted log, tool output or description says, as the facts the live host produces.

One face::

    from p2ptop.evidence import read_text
    ev = read_text(text)            # never raises on any text
    ev.findings                     # list[p2ptop.findings.Finding], ids "text.<fact key>"
    ev.facts_by_subject()           # {"host": {...}, "gpu:0": {...}, "pair:0-1": {...}}
    ev.kinds                        # formats recognised, e.g. ["nvidia-smi-topo", "nccl-log"]
    ev.gpu_related                  # False only when the text holds no trace of GPUs or P2P
    ev.to_dict()                    # JSON-ready

Each finding holds one fact (``finding.facts == {key: value}``), a subject ("host", "gpu:N" or
"pair:A-B" with A < B) and its evidence "line N of the paste: <excerpt>". The fact keys are those
of p2ptop.findings.FACT_KEYS; which parser gives which keys is said in each parser's docstring and
in ARCHITECTURE.md. A (subject, key) is set once, by the first parser that reads it, in this order:
nvidia-smi (table, -q text/XML, nvlink), topo matrices, lspci, kernel log, CUDA sample tools,
nccl-tests, NCCL log, errors, prose. So a value read from a structured output wins over the same
key guessed from prose.

Severity: facts of the symptom (``error.*``, ``symptom.*``, ``tool.*``, ``nccl.p2p_fallback``,
``bench.*``) are "problem" (an entry needs one of them); facts of context are "info", and P2P
status/transport facts are "ok" or "problem"/"warning" by their value.

GPU facts read from prose (a model named in a sentence, with no index) are on subject "host":
they hold for the GPUs of the paste as a whole. An NCCL log's ranks map to GPUs by bus id when a
topo/nvidia-smi output of the same paste says which bus id is which GPU, else by the device index
NCCL prints.

``is_p2p_fallback(transport, path, p2p_read)`` is the rule behind ``nccl.p2p_fallback`` and
``is_p2p_off_by_path(transport, path, settings)`` the one behind ``nccl.p2p_off_by_path`` and
``is_p2p_off_by_level(transport, path, level, disable)`` the one behind ``nccl.p2p_off_by_level``, for the matcher to apply with
the live host's pair facts when the paste itself says nothing about the pair.

Pure library: no UI, no NVML, no networkx. ``structured`` keeps what ``p2ptop import`` builds a
snapshot from (the topo matrices, nvidia-smi -q per GPU, the NCCL log).
"""

from .nccl import is_p2p_fallback, is_p2p_off_by_level, is_p2p_off_by_path
from .read import Evidence, read_text

__all__ = ["Evidence", "is_p2p_fallback", "is_p2p_off_by_level", "is_p2p_off_by_path", "read_text"]
