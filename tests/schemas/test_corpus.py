"""The corpus of real tool schemas: named sources, and every one converts for every target."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.schemas.checker import problems

from bridge_rules.schemas import TARGETS, convert, profile

CORPUS = json.loads((Path(__file__).parent / "corpus.json").read_text(encoding="utf-8"))["schemas"]


def test_the_corpus_is_real_and_sourced() -> None:
    assert len(CORPUS) >= 40
    for entry in CORPUS:
        assert "@" in entry["source"]
        assert entry["tool"]
        assert isinstance(entry["schema"], dict)
    assert len({e["source"].split(" (")[0] for e in CORPUS}) >= 5


@pytest.mark.parametrize("target", TARGETS)
def test_every_schema_passes_the_targets_checker_once_converted(target: str) -> None:
    failed = {
        e["tool"]: problems(target, convert(e["schema"], profile(target)).schema) for e in CORPUS
    }
    assert {tool: found for tool, found in failed.items() if found} == {}


@pytest.mark.parametrize("target", ["openai-strict", "gemini"])
def test_the_checker_rejects_the_raw_corpus_for_strict_targets(target: str) -> None:
    """The checker is not vacuous: most real schemas break these targets' rules unconverted."""
    rejected = [e["tool"] for e in CORPUS if problems(target, e["schema"])]
    assert len(rejected) > len(CORPUS) // 2
