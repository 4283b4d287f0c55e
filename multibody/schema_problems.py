"""pydantic's validation errors as problems in the user's words: a JSON path, the item, a message
without library prefixes, and "did you mean" for misspelled keys, item types and enum values.

A union (an index or a name; a 4x4 matrix or {rotation, translation}) fails once per member in
pydantic; here it is one problem at the union's path.
"""
from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ValidationError

from . import schema as S
from .convenience import CONVENIENCE_ITEMS
from .user_functions import expression_form, signature
from .values import Problem, did_you_mean

_SCALAR_LABELS = {"int", "str", "float", "bool", "none"}
_KINDS = {"float_type": "a number", "int_type": "an integer", "bool_type": "true or false",
          "string_type": "a string", "list_type": "a list", "dict_type": "an object",
          "model_type": "an object", "model_attributes_type": "an object", "int_from_float": "an integer",
          "finite_number": "a finite number", "none_required": "null"}
_JSON_NAMES = {bool: "a boolean", str: "a string", int: "a number", float: "a number", list: "a list",
               dict: "an object", type(None): "null"}


def _is_union_label(part: Any) -> bool:
    """pydantic's name of a union member in an error location ('int', 'list[...]', a class name)."""
    return isinstance(part, str) and (part in _SCALAR_LABELS or "[" in part or part[:1].isupper())


def _path(loc: tuple) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or "$"


def _show(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else f'"{value}"'
    text = text if len(text) <= 60 else text[:57] + "..."
    return f"{text} ({_JSON_NAMES.get(type(value), type(value).__name__)})"


def _item_class(doc: dict, kind: str, index: int) -> type[BaseModel] | None:
    try:
        tag = doc[kind][index].get(S.TYPE_KEY[kind])
    except (KeyError, IndexError, TypeError, AttributeError):
        return None
    return S.ITEM_TYPES[kind].get(tag) or (CONVENIENCE_ITEMS.get(tag) if kind == "objects" else None)


def _fields_at(doc: dict, loc: tuple) -> list[str]:
    """The keys allowed where an unknown key was found (item level or document level)."""
    if len(loc) == 1:
        return list(S.ModelDocument.model_fields)
    if loc[0] == "solve" and len(loc) == 2:
        return list(S.Solve.model_fields)
    if loc[0] in S.LIST_KINDS and len(loc) == 3 and isinstance(loc[1], int):
        cls = _item_class(doc, loc[0], loc[1])
        return list(cls.model_fields) if cls else []
    return []


def _type_choices(kind: str) -> list[str]:
    return list(S.ITEM_TYPES[kind]) + (list(CONVENIENCE_ITEMS) if kind == "objects" else [])


def _message(err: dict, loc: tuple, doc: dict) -> str:
    kind, value, ctx = err["type"], err.get("input"), err.get("ctx") or {}
    key = next((p for p in reversed(loc) if isinstance(p, str)), "")
    if kind == "missing":
        return f"missing {key!r}"
    if kind == "extra_forbidden":
        return f"unknown key {key!r}{did_you_mean(key, _fields_at(doc, loc))}"
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        lists = loc[0] if loc and loc[0] in S.LIST_KINDS else None
        tag_key = S.TYPE_KEY.get(lists, "type")
        choices = _type_choices(lists) if lists else []
        if kind == "union_tag_not_found":
            return f"missing {tag_key!r}: one of {', '.join(choices)}"
        tag = value.get(tag_key) if isinstance(value, dict) else value
        hint = did_you_mean(tag, choices)
        return f"unknown {tag_key} {tag!r}" + (hint or f"; one of {', '.join(choices)}")
    if kind == "literal_error":
        expected = ctx.get("expected", "")
        if key.endswith("UserFunction") or key.endswith("UserFunction_t"):
            if isinstance(value, (str, list)):
                return f"{_show(value)}: {key} does not take an expression (yet); 0 (none) only"
            return f"{_show(value)}: a Python user function cannot be sent in a document; 0 (none) only"
        return f"expected {expected}, got {_show(value)}" + did_you_mean(value, re.findall(r"'([^']*)'", expected))
    if kind in ("value_error", "assertion_error"):
        return str(ctx.get("error", err["msg"]))
    if kind in ("too_short", "too_long"):  # the schema's lists have a fixed length (vectors, matrices, pairs)
        want = ctx.get("min_length") if kind == "too_short" else ctx.get("max_length")
        got = len(value) if hasattr(value, "__len__") else ctx.get("actual_length")
        return f"expected {want} values, got {got}"
    if kind in _KINDS:
        return f"expected {_KINDS[kind]}, got {_show(value)}"
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        op = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<="}[kind]
        bound = next(iter(ctx.values()), "")
        return f"must be {op} {bound}, got {value!r}"
    return err["msg"]


def _union_message(errors: list[dict], labels: set[str], value: Any) -> str:
    if {"int", "str"} <= labels:
        return f"expected an index (integer) or a name (string), got {_show(value)}"
    if "RotationTranslation" in labels:
        return ("expected a 4x4 matrix (4 rows of 4 numbers) or {\"rotation\": 3x3, \"translation\": [x, y, z]}, "
                f"got {_show(value)}")
    kinds = sorted({_KINDS.get(e["type"], e["msg"]) for e in errors if e["type"] != "none_required"})
    return f"expected {' or '.join(kinds)}" + ("" if isinstance(value, (list, dict)) else f", got {_show(value)}")


def schema_problems(doc: dict, exc: ValidationError) -> list[Problem]:
    """Every error of `exc` (a ModelDocument validation of `doc`), one problem per place."""
    problems: list[Problem] = []
    unions: dict[tuple, list[tuple[dict, str]]] = {}
    order: list[tuple] = []
    for err in exc.errors(include_url=False):
        raw = tuple(err["loc"])
        # the discriminator pydantic puts after a list index is not part of the document's path
        loc = tuple(p for k, p in enumerate(raw) if not (k == 2 and raw[0] in S.LIST_KINDS and _is_union_label(p)))
        cut = next((k for k, p in enumerate(loc) if _is_union_label(p)), None)
        if cut is None:
            order.append(loc)
            unions[loc] = [(err, "")]
            continue
        head = loc[:cut]
        if head not in unions:
            order.append(head)
            unions[head] = []
        unions[head].append((err, loc[cut]))
    for loc in order:
        entries = unions[loc]
        item = _item_name(doc, loc)
        if len(entries) == 1 and not entries[0][1]:
            problems.append(Problem(_path(loc), _message(entries[0][0], loc, doc), item))
            continue
        value = _value_at(doc, loc)
        message = _user_function_message(doc, loc, value) or _union_message(
            [e for e, _ in entries], {label for _, label in entries}, value)
        problems.append(Problem(_path(loc), message, item))
    return problems


def _user_function_message(doc: dict, loc: tuple, value: Any) -> str | None:
    """What a user-function parameter takes, when it holds something else."""
    if len(loc) != 3 or loc[0] not in S.LIST_KINDS or not isinstance(loc[2], str):
        return None
    sig = signature(loc[0], _value_at(doc, loc[:2] + (S.TYPE_KEY[loc[0]],)), loc[2])
    return None if sig is None else f"{_show(value)}: {loc[2]} takes 0 (none) or {expression_form(sig)}"


def _value_at(doc: Any, loc: tuple) -> Any:
    for part in loc:
        try:
            doc = doc[part]
        except (KeyError, IndexError, TypeError):
            return None
    return doc


def _item_name(doc: dict, loc: tuple) -> str | None:
    if len(loc) < 2 or loc[0] not in S.LIST_KINDS or not isinstance(loc[1], int):
        return None
    name = _value_at(doc, loc[:2] + ("name",))
    return name if isinstance(name, str) and name else f"{S.LIST_KINDS[loc[0]]}{loc[1]}"


def invalid_items(exc: ValidationError) -> tuple[set[tuple[str, int]], set[str]]:
    """(list items with schema problems, top-level keys with schema problems)."""
    items, top = set(), set()
    for err in exc.errors(include_url=False):
        loc = tuple(err["loc"])
        if len(loc) >= 2 and loc[0] in S.LIST_KINDS and isinstance(loc[1], int):
            items.add((loc[0], loc[1]))
        elif loc:
            top.add(loc[0])
    return items, top
