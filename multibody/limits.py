"""Bounds on a document's shape that hold before any item is read: nesting depth and values.

Python's json module reads NaN/Infinity, integers of any size, lone surrogates (from \\u
escapes) and arbitrarily deep nesting; none of them is JSON we can store and serve back, and deep
nesting makes recursive code (copy.deepcopy, pydantic's serializer) fail far from the input. So
they are refused first, with the JSON path.
"""
from __future__ import annotations

import math
import sys
from typing import Any, NamedTuple

from .values import Problem

MAX_NESTING_DEPTH = 64  # the service's MBSERVE_MAX_NESTING_DEPTH may be lower, never higher
FLOAT_MAX = sys.float_info.max
MAX_REPORTED = 20  # bad values listed; one more problem counts the rest
_NOT_UNICODE = "a string with a lone surrogate (\\ud800-\\udfff) is not Unicode text; it cannot be stored"


def _unicode(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _not_a_number(value) -> str:
    if isinstance(value, float):
        return f"{value!r} is not a JSON number; use a finite value"
    return f"a number of {len(str(abs(value)))} digits is beyond the range of a float64 (about 1.8e308)"


def _path(parts: tuple) -> str:
    """The JSON path, lone surrogates of keys written as \\udxxx so that the path itself is text."""
    out = ""
    for part in parts:
        if isinstance(part, str) and not _unicode(part):
            part = part.encode("utf-8", "backslashreplace").decode()
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "$"


class Shape(NamedTuple):
    too_deep: Problem | None  # the first place found nested deeper than the limit
    values: list[Problem]  # NaN, Infinity, integers beyond a float64, strings with lone surrogates
    early: bool  # among them one that later code cannot take (float() of a huge integer, a lone surrogate)


def json_shape(doc: Any, max_depth: int = MAX_NESTING_DEPTH, prefix: tuple = ()) -> Shape:
    """Nesting deeper than max_depth (the first place found), numbers that are not finite float64
    values (NaN, Infinity, integers beyond 1.8e308) and strings that are not Unicode (lone
    surrogates, which JSON's \\u escapes can carry) anywhere, visualization (V*) keys included.
    Iterative, so any depth is safe; what lies past the depth limit is not looked into."""
    problems: list[Problem] = []
    bad = 0
    too_deep = None
    early = False
    isfinite = math.isfinite
    if isinstance(doc, str) and not _unicode(doc):
        return Shape(None, [Problem(_path(prefix), _NOT_UNICODE)], True)
    if isinstance(doc, (int, float)) and not isinstance(doc, bool) and not -FLOAT_MAX <= doc <= FLOAT_MAX:
        return Shape(None, [Problem(_path(prefix), _not_a_number(doc))], isinstance(doc, int))
    stack = [(doc, prefix)] if isinstance(doc, (dict, list)) else []
    while stack:
        value, parts = stack.pop()
        if len(parts) - len(prefix) >= max_depth:
            too_deep = too_deep or Problem(_path(parts), f"nested deeper than {max_depth} levels (the limit)")
            continue
        if value.__class__ is dict:
            for key in value:
                if not _unicode(key):
                    bad, early = bad + 1, True
                    if bad <= MAX_REPORTED:
                        problems.append(Problem(_path(parts + (key,)), _NOT_UNICODE))
        for key, child in value.items() if isinstance(value, dict) else enumerate(value):
            if child.__class__ is str:
                if not _unicode(child):
                    bad, early = bad + 1, True
                    if bad <= MAX_REPORTED:
                        problems.append(Problem(_path(parts + (key,)), _NOT_UNICODE))
            elif isinstance(child, (dict, list)):
                stack.append((child, parts + (key,)))
            elif (child.__class__ is float and not isfinite(child)) or \
                    (child.__class__ is int and not -FLOAT_MAX <= child <= FLOAT_MAX):
                early = early or child.__class__ is int
                bad += 1
                if bad <= MAX_REPORTED:
                    problems.append(Problem(_path(parts + (key,)), _not_a_number(child)))
    if bad > MAX_REPORTED:
        problems.append(Problem(_path(prefix), f"{bad - MAX_REPORTED} more values of these kinds"))
    return Shape(too_deep, problems, early)
