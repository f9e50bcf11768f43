"""Tournaments."""

COMMANDS: list = []
