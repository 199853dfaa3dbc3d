"""NCCL: the one reader of NCCL's debug log (``read_nccl_log``), shared by the text evidence,
``p2ptop nccl --log`` and the dashboard's NCCL view."""

from .log import NcclChannel, NcclDecision, NcclEnv, NcclLog, NcclMessage, NcclRank, read_nccl_log

__all__ = ["NcclChannel", "NcclDecision", "NcclEnv", "NcclLog", "NcclMessage", "NcclRank", "read_nccl_log"]
