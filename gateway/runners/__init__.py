"""The agent runners: the contract, the in-process LangGraph runner and the LangGraph server runner."""
