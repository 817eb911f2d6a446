"""State behind one interface: Redis for real deployments, memory for the embedded default."""

from .base import ClaimResult, Job, PendingRecord, Store

__all__ = ["ClaimResult", "Job", "PendingRecord", "Store"]
