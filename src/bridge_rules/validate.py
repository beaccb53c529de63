"""Plain data -> :class:`RuleFile`, with pydantic errors turned into located diagnostics.

Errors are translated by their pydantic ``type``, never by message text, and
every one is anchored through the document's source map.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ValidationError

from bridge_rules.diagnostics import Diagnostic, did_you_mean, error
from bridge_rules.loader import Document, describe
from bridge_rules.model import RuleFile

_TYPE_NAMES = {
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "list_type": "a list",
}
_UNION_MEMBER_NAMES = {"str": "a string", "list[str]": "a list of strings"}


def _walk(data: Any, loc: Iterable[str | int]) -> tuple[tuple[str | int, ...], list[str], Any]:
    """Follow ``loc`` through the data; union tags that are not in the data are collected."""
    path: list[str | int] = []
    tags: list[str] = []
    current = data
    for part in loc:
        in_map = isinstance(current, dict) and part in current
        in_list = isinstance(current, list) and isinstance(part, int) and part < len(current)
        if in_map or in_list:
            current = current[part]
            path.append(part)
        else:
            tags.append(str(part))
    return tuple(path), tags, current


def _unwrap(annotation: Any) -> list[Any]:
    """The alternatives of an annotation (Annotated and unions flattened)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [alt for arg in typing.get_args(annotation) for alt in _unwrap(arg)]
    return [annotation]


def _fields_of(model: type[BaseModel]) -> dict[str, Any]:
    return {(f.alias or name): f.annotation for name, f in model.model_fields.items()}


def _models_at(loc: tuple[str | int, ...]) -> list[type[BaseModel]]:
    """The model classes that can stand at ``loc`` (for "did you mean" suggestions)."""
    candidates: list[Any] = [RuleFile]
    for part in loc:
        nxt: list[Any] = []
        for cand in candidates:
            for alt in _unwrap(cand):
                origin = typing.get_origin(alt)
                if isinstance(alt, type) and issubclass(alt, BaseModel):
                    fields = _fields_of(alt)
                    if isinstance(part, str) and part in fields:
                        nxt.append(fields[part])
                    elif part == alt.__name__:
                        nxt.append(alt)
                    elif isinstance(part, str) and alt.model_fields.get("kind") is not None:
                        kind = typing.get_args(alt.model_fields["kind"].annotation)
                        if part in kind:
                            nxt.append(alt)
                elif origin is list and isinstance(part, int):
                    nxt.append(typing.get_args(alt)[0])
                elif origin is dict and isinstance(part, str):
                    nxt.append(typing.get_args(alt)[1])
        candidates = nxt
    out: list[type[BaseModel]] = []
    for cand in candidates:
        out.extend(a for a in _unwrap(cand) if isinstance(a, type) and issubclass(a, BaseModel))
    return out


def _translate(doc: Document, err: Any) -> Diagnostic | None:
    kind: str = err["type"]
    loc: tuple[str | int, ...] = tuple(err["loc"])
    smap = doc.source_map
    if kind == "missing":
        path, _tags, _ = _walk(doc.data, loc[:-1])
        field = loc[-1]
        where = "the top level" if not path else f"'{_dotted(path)}'"
        return error("BR101", f"missing required key '{field}' in {where}", smap.key_span(path))
    if kind == "union_tag_not_found":
        path, _tags, _ = _walk(doc.data, loc)
        return error(
            "BR101", f"missing required key 'kind' in '{_dotted(path)}'", smap.key_span(path)
        )
    path, tags, value = _walk(doc.data, loc)
    dotted = _dotted(path)
    if kind == "extra_forbidden":
        key = str(path[-1])
        options = {f for m in _models_at(_parent_loc(loc)) for f in _fields_of(m)}
        return error(
            "BR102",
            f"unknown key '{key}' in '{_dotted(path[:-1]) or 'top level'}'",
            smap.key_span(path),
            hint=did_you_mean(key, options),
        )
    if kind == "union_tag_invalid":
        tag = str(err.get("ctx", {}).get("tag", ""))[:40]
        expected = [
            t.strip(" '") for t in str(err.get("ctx", {}).get("expected_tags", "")).split(",")
        ]
        return error(
            "BR107",
            f"unknown stage kind '{tag}' in '{dotted}'",
            smap.value_span((*path, "kind")),
            hint=did_you_mean(tag, expected),
        )
    if kind == "literal_error":
        expected = err.get("ctx", {}).get("expected", "")
        if path == ("bridge-rules",):
            return error(
                "BR105",
                f"unsupported rule format version {_shown(value)}; this bridge-rules reads "
                f"{expected}",
                smap.value_span(path),
            )
        return error(
            "BR104", f"'{dotted}' must be {expected}, not {_shown(value)}", smap.value_span(path)
        )
    if kind == "value_error":
        cause = err.get("ctx", {}).get("error")
        text = str(cause) if cause is not None else err["msg"]
        return error("BR106", f"invalid '{dotted}': {text}", smap.key_span(path))
    if kind in _TYPE_NAMES or tags:
        want = _TYPE_NAMES.get(kind, "another type")
        if tags and tags[-1] in _UNION_MEMBER_NAMES and loc[-1] == tags[-1]:
            want = " or ".join(_UNION_MEMBER_NAMES.values())
        return error(
            "BR103", f"'{dotted}' must be {want}, not {describe(value)}", smap.value_span(path)
        )
    return error("BR106", f"invalid '{dotted}': {err['msg']}", smap.value_span(path))


def _shown(value: Any) -> str:
    """A value the user wrote, for a message: scalars only, short, control characters escaped.

    Mappings and lists are described rather than printed, so a file reached by
    mistake (a credentials file) does not end up in lint output.
    """
    if isinstance(value, (dict, list)):
        return describe(value)
    if isinstance(value, bool):
        return str(value).lower()
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _parent_loc(loc: tuple[str | int, ...]) -> tuple[str | int, ...]:
    return loc[:-1]


def _dotted(path: Iterable[str | int]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _pick_union_branch(doc: Document, errors: list[Any]) -> list[Any]:
    """Drop the errors of union alternatives whose basic shape the input does not have.

    For ``str | SuffixStrip`` given a mapping, "must be a string" is noise when
    the mapping branch has its own, more precise errors.
    """
    keep = []
    for err in errors:
        path, tags, value = _walk(doc.data, err["loc"])
        scalar_branch = bool(tags) and tags[-1] == "str"
        if scalar_branch and isinstance(value, (dict, list)):
            others = [
                e
                for e in errors
                if e is not err
                and tuple(e["loc"][: len(path)]) == path
                and _walk(doc.data, e["loc"])[1][-1:] != tags[-1:]
            ]
            if others:
                continue
        keep.append(err)
    return keep


def validate_document(doc: Document) -> tuple[RuleFile | None, list[Diagnostic]]:
    """Validate one loaded document against the strict model."""
    try:
        return RuleFile.model_validate(doc.data), []
    except ValidationError as exc:
        diags: dict[tuple[object, ...], Diagnostic] = {}
        for err in _pick_union_branch(doc, exc.errors(include_url=False)):
            diag = _translate(doc, err)
            if diag is not None:
                # Union alternatives report the same spot several times: keep one.
                diags.setdefault((diag.span, diag.code), diag)
        return None, list(diags.values())
