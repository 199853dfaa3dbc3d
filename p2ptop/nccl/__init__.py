"""NCCL's view of the GPUs.

- ``log.py``: the one reader of NCCL's debug log (``read_nccl_log``), shared by the text evidence,
  ``p2ptop nccl --log`` and the dashboard's NCCL view;
- ``table.py``: a log's channels as a per-GPU-pair transport table;
- ``runner.py`` / ``worker.py``: NCCL run on the host's GPUs, one rank process per GPU (the worker is the
  only NCCL user, in its own process);
- ``busbw.py``: nccl-tests' bus-bandwidth formulas; ``findings.py``: transport against the fabric.
"""

from .log import NcclChannel, NcclDecision, NcclEnv, NcclLog, NcclMessage, NcclRank, read_nccl_log

__all__ = ["NcclChannel", "NcclDecision", "NcclEnv", "NcclLog", "NcclMessage", "NcclRank", "read_nccl_log"]
