"""``bridge-rules lint``: check rule sets against pinned Claude Code schemas.

:mod:`bridge_rules.lint.registry` holds the check API (``@check``,
``LintContext``); :mod:`bridge_rules.lint.runner` loads a rule set, runs every
registered check and applies the files' ``suppress:`` entries.
"""
