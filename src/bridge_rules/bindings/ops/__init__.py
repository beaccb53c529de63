"""Argument operations, one class each, grouped by family; :mod:`.registry` lists them.

``fields`` moves fields (rename, wrap, unwrap), ``lists`` merges and splits prefixed
lists, ``presence`` decides which fields exist (prefer, coalesce, keep, drop, default,
copy), ``values`` changes values in place (coerce, scale, values) and ``computed`` runs
expressions and nested operations (jmespath, each). ``docs/bindings.md`` says how to add one.
"""

from bridge_rules.bindings.ops.base import Compiled, OpError, deep_copy
from bridge_rules.bindings.ops.registry import compile_op, loses
from bridge_rules.bindings.ops.values import exact_number

__all__ = ["Compiled", "OpError", "compile_op", "deep_copy", "exact_number", "loses"]
