"""The gateway: the flow between chat platforms and the agent (store, dispatch, runners, server)."""
