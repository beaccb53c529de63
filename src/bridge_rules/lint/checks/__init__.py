"""One module per lint check. Every module here is imported by
:func:`bridge_rules.lint.catalogue.load_checks`, so adding a check is adding a file."""
