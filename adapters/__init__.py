"""Platform adapters: one package per chat platform (receive, render, send)."""
