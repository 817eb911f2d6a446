"""The command line: ``clarigate chat|serve|doctor|admin``."""
