"""Keywords a target refuses, said in words the model can follow.

When a target cannot carry a constraint (``minLength`` for OpenAI strict,
``format`` for Gemini), the conversion removes the keyword and appends a phrase
to the description instead, so the model still sees the rule it must keep.
"""

from __future__ import annotations

import json
from typing import Any

_PHRASES: dict[str, str] = {
    "minLength": "at least {} characters",
    "maxLength": "at most {} characters",
    "pattern": "must match the regular expression {}",
    "format": "in {} format",
    "minimum": "at least {}",
    "maximum": "at most {}",
    "exclusiveMinimum": "greater than {}",
    "exclusiveMaximum": "less than {}",
    "multipleOf": "a multiple of {}",
    "minItems": "at least {} items",
    "maxItems": "at most {} items",
    "uniqueItems": "items must be distinct",
    "minProperties": "at least {} keys",
    "maxProperties": "at most {} keys",
    "default": "default {}",
    "examples": "for example {}",
    "const": "must be {}",
    "propertyNames": "keys must match {}",
    "patternProperties": "keys by pattern: {}",
    "contains": "must contain an item matching {}",
    "minContains": "at least {} matching items",
    "maxContains": "at most {} matching items",
    "unevaluatedProperties": "other keys: {}",
    "unevaluatedItems": "other items: {}",
    "dependentRequired": "fields required together: {}",
    "dependentSchemas": "dependent fields: {}",
    "if": "conditionally {}",
    "not": "must not match {}",
}

SILENT = frozenset({"$schema", "$id", "$comment", "title", "$anchor", "deprecated", "readOnly"})
"""Keywords with no instruction for the model in them: dropped without a phrase."""


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(", ", ": "))
    except (RecursionError, TypeError, ValueError):
        return "(a schema too deep to quote)"


def phrase(key: str, value: Any) -> str | None:
    """The instruction a refused keyword becomes; None for keywords that carry none."""
    if key in SILENT:
        return None
    if key == "additionalProperties":
        if value is False:
            return "no keys other than those listed"
        return None if value is True else f"other keys: {_text(value)}"
    if key == "uniqueItems":
        return _PHRASES[key] if value is True else None
    template = _PHRASES.get(key, key + " {}")
    return template.format(_text(value))


def describe(schema: dict[str, Any], phrases: list[str]) -> None:
    """Append ``phrases`` to the description of ``schema`` (in place, on a copy)."""
    if not phrases:
        return
    note = "; ".join(phrases)
    current = schema.get("description")
    if isinstance(current, str) and current.strip():
        schema["description"] = f"{current.rstrip()} ({note})"
    else:
        schema["description"] = note[0].upper() + note[1:] + "."


def branch_words(branch: dict[str, Any]) -> str:
    """A union branch that only constrains its node (``{required: [a]}``, ``{format: date}``)
    as the words a model reads: "with a", "in date format"."""
    said = []
    for key, value in branch.items():
        if key == "required" and isinstance(value, list):
            said.append("with " + " and ".join(_text(r) for r in value))
        elif key != "description":
            said.append(phrase(key, value) or "")
    if isinstance(branch.get("description"), str):
        said.append(branch["description"])
    return ", ".join(w for w in said if w) or "anything"
