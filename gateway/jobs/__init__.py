"""The job pool: workers claiming jobs from the store's stream; upkeep keeping storage bounded."""
