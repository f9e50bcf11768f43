"""Replay, export, import and audit (filled in with the audit work)."""

COMMANDS: list = []
