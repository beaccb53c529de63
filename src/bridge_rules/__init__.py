"""bridge-rules: declarative YAML rules that translate agent tool names and arguments
to and from Claude Code's canonical tools.

>>> import bridge_rules
>>> eng = bridge_rules.load()          # the packaged default rules
>>> eng.outbound_name("read")
'Read'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bridge_rules.version import __version__

__all__ = ["Diagnostic", "Engine", "RulesError", "Severity", "__version__", "load"]

if TYPE_CHECKING:
    from bridge_rules.diagnostics import Diagnostic, RulesError, Severity
    from bridge_rules.engine import Engine, load

_LAZY = {
    "load": "bridge_rules.engine",
    "Engine": "bridge_rules.engine",
    "RulesError": "bridge_rules.diagnostics",
    "Diagnostic": "bridge_rules.diagnostics",
    "Severity": "bridge_rules.diagnostics",
}


def __getattr__(name: str) -> Any:
    # Imported lazily so `bridge-rules --help` and `import bridge_rules` stay cheap.
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'bridge_rules' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
