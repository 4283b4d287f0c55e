"""Bounds on a document's shape that hold before any item is read: nesting depth and numbers.

Python's json module reads NaN/Infinity and arbitrarily deep nesting; neither is JSON we can
store and serve back, and deep nesting makes recursive code (copy.deepcopy, pydantic's
serializer) fail far from the input. So both are refused first, with the JSON path.
"""
from __future__ import annotations

import math
import sys
from typing import Any, NamedTuple

from .values import Problem

MAX_NESTING_DEPTH = 64  # the service's MBSERVE_MAX_NESTING_DEPTH may be lower, never higher
FLOAT_MAX = sys.float_info.max
MAX_REPORTED = 20  # bad numbers listed; one more problem counts the rest


def _not_a_number(value) -> str:
    if isinstance(value, float):
        return f"{value!r} is not a JSON number; use a finite value"
    return f"a number of {len(str(abs(value)))} digits is beyond the range of a float64 (about 1.8e308)"


def _path(parts: tuple) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "$"


class Shape(NamedTuple):
    too_deep: Problem | None  # the first place found nested deeper than the limit
    numbers: list[Problem]  # NaN, Infinity, integers beyond a float64
    huge_int: bool  # among them an integer that float() would refuse


def json_shape(doc: Any, max_depth: int = MAX_NESTING_DEPTH, prefix: tuple = ()) -> Shape:
    """Nesting deeper than max_depth (the first place found) and numbers that are not finite float64
    values (NaN, Infinity, integers beyond 1.8e308) anywhere, visualization (V*) keys included.
    Iterative, so any depth is safe; what lies past the depth limit is not looked into."""
    problems: list[Problem] = []
    nonfinite = 0
    too_deep = None
    huge_int = False
    isfinite = math.isfinite
    if isinstance(doc, (int, float)) and not isinstance(doc, bool) and not -FLOAT_MAX <= doc <= FLOAT_MAX:
        return Shape(None, [Problem(_path(prefix), _not_a_number(doc))], isinstance(doc, int))
    stack = [(doc, prefix)] if isinstance(doc, (dict, list)) else []
    while stack:
        value, parts = stack.pop()
        if len(parts) - len(prefix) >= max_depth:
            too_deep = too_deep or Problem(_path(parts), f"nested deeper than {max_depth} levels (the limit)")
            continue
        for key, child in value.items() if isinstance(value, dict) else enumerate(value):
            if isinstance(child, (dict, list)):
                stack.append((child, parts + (key,)))
            elif (child.__class__ is float and not isfinite(child)) or \
                    (child.__class__ is int and not -FLOAT_MAX <= child <= FLOAT_MAX):
                huge_int = huge_int or child.__class__ is int
                nonfinite += 1
                if nonfinite <= MAX_REPORTED:
                    problems.append(Problem(_path(parts + (key,)), _not_a_number(child)))
    if nonfinite > MAX_REPORTED:
        problems.append(Problem(_path(prefix), f"{nonfinite - MAX_REPORTED} more numbers that are not finite"))
    return Shape(too_deep, problems, huge_int)
