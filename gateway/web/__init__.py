"""The HTTP app: webhooks, probes and metrics on one Starlette application."""
