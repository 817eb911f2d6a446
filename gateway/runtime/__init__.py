"""The runtime: configuration, building a bot, serving it (processes, preflight), logs and metrics."""
