"""The agent side: LangGraph harness and the clarification protocol.

Importing this package imports nothing heavy; ``clarigate.agent.protocol`` is a pure
pydantic leaf that adapters may import without pulling in LangChain.
"""
