"""State behind one interface: Redis for real deployments, memory for the embedded default."""

from .base import Store
from .records import ClaimResult, DeliveryRecord, Job, PendingRecord


def open_store(redis_url: str | None, prefix: str) -> Store:
    """A ``RedisStore`` when a URL is given, else the embedded ``MemoryStore`` (one process only)."""
    if redis_url:
        from .redis import RedisStore

        return RedisStore(redis_url, prefix)
    from .memory import MemoryStore

    return MemoryStore(prefix)


__all__ = ["ClaimResult", "DeliveryRecord", "Job", "PendingRecord", "Store", "open_store"]
