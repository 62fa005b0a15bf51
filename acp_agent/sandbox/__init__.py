"""Confining commands with the operating system: policies, backends (Landlock, bubblewrap), the
launcher. Imports nothing of the project above the standard library here, so the launcher starts
fast; the loader plugin (`acp_agent.sandbox.plugin`) is imported on its own."""
