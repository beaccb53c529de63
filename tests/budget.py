"""Hypothesis example budgets, one knob for the whole suite.

Each property states the examples it runs in CI: ``max_examples=examples(150)``. The
profile scales that by its own ``max_examples`` against Hypothesis's 100:

* ``dev`` (the default): 25%, at least 10 each, so ``pytest -m "not e2e"`` is a quick loop;
* ``ci``: every example as written. The README's test command and ``.ci/run`` pass
  ``--hypothesis-profile=ci``;
* ``deep``: ten times CI's, a longer search to run before a release (or after a change to
  what a property covers).

The profiles are registered in ``tests/conftest.py``. A property without its own budget
gets the profile's ``max_examples`` directly, which is the same scale.
"""

from __future__ import annotations

from hypothesis import settings

BASE = 100  # Hypothesis's own default max_examples: a budget of 100 runs the profile's number


def examples(ci: int) -> int:
    """The examples to run for a property that runs ``ci`` of them in CI."""
    return max(10, ci * settings.default.max_examples // BASE)
