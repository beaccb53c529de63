"""Schema bindings: a local tool's arguments translated to and from a wire tool's, as data.

Operations are compiled once into closures (:mod:`.ops`); an :class:`Adapter`
applies them wire -> local for the model's calls and local -> wire for history
replay; :mod:`.schema` builds the schema the model is shown.
"""

from bridge_rules.bindings.adapter import Adapter, compile_binding

__all__ = ["Adapter", "compile_binding"]
