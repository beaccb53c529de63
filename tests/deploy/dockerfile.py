"""Just enough of a Dockerfile parser to run its steps outside a container engine.

Stages by name, and per stage its instructions in order (continuations joined, comments
dropped), so a test runs the very commands the image build runs.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Stage:
    name: str
    base: str
    steps: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [arg for kw, arg in self.steps if kw == keyword]

    def one(self, keyword: str) -> str:
        (arg,) = self.all(keyword)
        return arg

    def env(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for arg in self.all("ENV"):
            for key, value in re.findall(r'(\w+)=("[^"]*"|\S+)', arg):
                found[key] = value.strip('"')
        return found

    def exec_form(self, keyword: str) -> list[str]:
        value = json.loads(self.one(keyword))
        assert isinstance(value, list)
        return [str(v) for v in value]


def parse(path: Path) -> dict[str, Stage]:
    lines: list[str] = []
    pending = ""
    for raw in path.read_text(encoding="utf-8").splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        lines.append(pending + stripped)
        pending = ""
    stages: dict[str, Stage] = {}
    current: Stage | None = None
    for line in lines:
        keyword, _, arg = line.partition(" ")
        keyword = keyword.upper()
        if keyword == "FROM":
            words = arg.split()
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else "<default>"
            current = stages[name] = Stage(name, words[0])
        elif current is not None:
            current.steps.append((keyword, " ".join(arg.split())))
    return stages
