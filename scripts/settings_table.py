"""Write docs/proxy.md's settings table from the declaration (src/bridge_rules/proxy/settings.py).

python scripts/settings_table.py          # rewrite the table in place
python scripts/settings_table.py --check  # exit 1 when the docs differ
"""

from __future__ import annotations

import sys
from pathlib import Path

from bridge_rules.proxy.settings import TABLE_BEGIN, TABLE_END, markdown_table

DOC = Path(__file__).resolve().parent.parent / "docs" / "proxy.md"


def main() -> int:
    text = DOC.read_text(encoding="utf-8")
    start, end = text.index(TABLE_BEGIN), text.index(TABLE_END) + len(TABLE_END)
    new = text[:start] + markdown_table() + text[end:]
    if "--check" in sys.argv[1:]:
        if new != text:
            print(f"{DOC}: the settings table differs from proxy/settings.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
