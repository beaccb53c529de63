"""``bridge-rules lsp``: a language server over ``lint``'s and ``explain``'s own analysis.

Importing this package imports nothing of pygls; :mod:`bridge_rules.lsp.server` does, and
only ``bridge-rules lsp`` imports it (the ``lsp`` extra installs pygls and lsprotocol).
"""
