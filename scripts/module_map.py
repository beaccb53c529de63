"""Print the module table of docs/architecture.md ("Every module") from the code.

Each module's row is the first sentence of its docstring, so the table says what the code
says of itself; ``tests/test_architecture.py`` checks that the table names every module
and no other. Run ``python scripts/module_map.py`` after adding or removing a module and
paste its output over the table.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "bridge_rules"


def modules() -> list[tuple[str, str]]:
    """(dotted name, first sentence of its docstring) for every module of the package."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts).removesuffix(".__init__")
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        first = " ".join(doc.split("\n\n")[0].split())
        out.append((name, first))
    return out


def main() -> int:
    sys.stdout.write("| module | what it holds |\n|---|---|\n")
    for name, first in modules():
        said = first.replace("|", "\\|")
        sys.stdout.write(f"| `{name}` | {said} |\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
