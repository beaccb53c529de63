"""The engine the proxy's mechanics tests run: real rules whose effect anyone can see.

``data/marking.yaml`` opens the gate for Claude model ids only and sends ``read`` out as
``READ``, so a test tells which body went where from the tool name alone. The proxy gets
the same :class:`~bridge_rules.Engine` a library caller would; the packaged rules are
exercised by tests/e2e and test_proxy_hostile.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import bridge_rules
from bridge_rules.engine import Engine

MARKING = Path(__file__).parent / "data" / "marking.yaml"


def marking_engine(*, fail: bool = False) -> Engine:
    """A fresh engine over ``marking.yaml``; ``fail``: its rewrite raises, as a bug would."""
    engine = bridge_rules.load(str(MARKING))
    if fail:

        def explode(*_: Any, **__: Any) -> Any:
            raise RuntimeError("engine exploded")

        engine.turn = explode  # type: ignore[method-assign]
    return engine
