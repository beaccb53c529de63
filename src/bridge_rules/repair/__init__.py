"""Argument repair as rules: pi-tool-guard's alias tables, parseFloat coercion, the edit
shorthand, JSON-string arrays and trailing-extractor stripping for shell commands.

Repair runs after a binding, on local-shaped arguments, keyed by local tool name.
"""

from bridge_rules.repair.rules import RepairSet, compile_repairs

__all__ = ["RepairSet", "compile_repairs"]
