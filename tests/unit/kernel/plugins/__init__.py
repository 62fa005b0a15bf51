"""Small real plugin modules that the loader tests refer to by dotted path."""

from __future__ import annotations
