"""The processes the server started, and the guarantee that none outlives it (see README.md).

The public surface lives in `acp_agent.processes.registry`; this package imports nothing, so the
watchdog process (`python -m acp_agent.processes.watchdog`) starts with the standard library only.
"""
