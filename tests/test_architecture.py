"""docs/architecture.md names every module of the package, and only those (issue 25: the
architecture page matches the code, module by module)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from module_map import modules  # noqa: E402


def listed() -> list[str]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Every module", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `(bridge_rules[\w.]*)` \|", section, flags=re.M)


def test_every_module_is_listed_once_and_no_other() -> None:
    names = listed()
    assert len(names) == len(set(names))
    in_code = {name for name, _ in modules()}
    assert set(names) - in_code == set(), "listed, but no such module"
    assert in_code - set(names) == set(), "modules missing from docs/architecture.md"


def test_every_module_says_what_it_holds() -> None:
    assert [name for name, first in modules() if not first] == []
