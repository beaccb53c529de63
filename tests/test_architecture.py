"""docs/architecture.md names every module of the package, and only those (issue 25: the
architecture page matches the code, module by module)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "bridge_rules"
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


def test_modules_stay_small_and_only_declared_data_tables_are_large() -> None:
    """docs/architecture.md#module-size: at most 5 % of modules over 300 lines, none over
    400 but the data tables that section declares."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Module size", 1)[1].split("\n## ", 1)[0]
    declared = section.split("The declared data tables are", 1)[1].split("(", 1)[0]
    tables = {f"{name}.py" for name in re.findall(r"`([a-z_./]+)`", declared)}
    sizes = {
        str(path.relative_to(SRC)): len(path.read_text(encoding="utf-8").splitlines())
        for path in SRC.rglob("*.py")
    }
    over_300 = sorted(name for name, lines in sizes.items() if lines > 300)
    over_400 = sorted(name for name, lines in sizes.items() if lines > 400 and name not in tables)
    assert over_400 == [], over_400
    assert len(over_300) <= 0.05 * len(sizes), (len(over_300), len(sizes), over_300)
