"""``pin capture``: observe the tools an agent really sends, and turn them into a pin.

``endpoint`` is a local stand-in for the Messages API that records requests and
answers with a canned text reply; ``run`` starts it, runs the agent against it and
explains a run that yields no tools; ``document`` builds, merges and writes pin files.
"""
