"""Sweep documents (SPEC section 3, Sweeps) without a database: the request's shape, the design's
rows, the variation documents, and the outputs as reductions of sensor columns.

A parameter's `path` addresses the model document as it is posted: keys separated by dots, list
items by index or by `name` in brackets (`objects[spring].stiffness`, `loads[push].loadVector[0]`,
`parameters.k`). The last key may be absent (an item's default, a new named parameter); everything
before it must exist.

Designs (rows in this order, which is the table's order):
- grid: every combination, the first parameter varying slowest (itertools.product);
- zip: the parameters' value lists side by side (all of one length);
- random: `samples` points uniform in each parameter's range [start, stop];
- latinHypercube: `samples` points of a Latin hypercube (scipy.stats.qmc) scaled to the ranges.
random and latinHypercube draw from `seed` (one is chosen and reported when it is not given).
"""
from __future__ import annotations

import copy
import itertools
import json
import math
import re
import secrets
from typing import Any, Iterator, Literal

import numpy as np
import orjson
from pydantic import BaseModel, ConfigDict, Field, model_validator

REDUCTIONS = ("last", "first", "min", "max", "mean", "rms", "absMax")
FIXED_COLUMNS = ("index", "jobId", "status")
_SEGMENT = re.compile(r"([^.\[\]]+)|\[([^\[\]]+)\]|(\.)")


class SweepInvalid(Exception):
    """The sweep cannot be run; `problems` lists [{"path", "message", ("variation")}]."""

    def __init__(self, message: str, problems: list[dict]):
        super().__init__(message)
        self.message, self.problems = message, problems


class Range(BaseModel):
    model_config = ConfigDict(extra="forbid")

    start: float
    stop: float
    num: int | None = Field(None, ge=1, description="points from start to stop inclusive (grid and zip)")


class Parameter(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(min_length=1, max_length=500,
                      description="JSON path into the model document, e.g. objects[spring].stiffness")
    values: list[Any] | None = Field(None, min_length=1, description="the values, in order (grid and zip)")
    range: Range | None = None

    @model_validator(mode="after")
    def _one_source(self):
        if (self.values is None) == (self.range is None):
            raise ValueError("give exactly one of values and range")
        return self


class At(BaseModel):
    model_config = ConfigDict(extra="forbid")

    at: float = Field(description="the column's value at this time, linear between the stored rows")


class Output(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=100)
    sensor: str = Field(min_length=1, description="a sensor's name (or sensor<i> for an unnamed one)")
    column: str = Field(min_length=1, description="one of the sensor's columns, e.g. PositionX")
    reduce: Literal["last", "first", "min", "max", "mean", "rms", "absMax"] | At = "last"


class SweepSpec(BaseModel):
    """The sweep without its model (the request adds `modelId` or `model`)."""
    model_config = ConfigDict(extra="forbid")

    parameters: list[Parameter] = Field(min_length=1, max_length=32)
    design: Literal["grid", "zip", "random", "latinHypercube"] = "grid"
    samples: int | None = Field(None, ge=1, description="points of a random or latinHypercube design")
    seed: int | None = Field(None, ge=0, lt=2**63, description="random and latinHypercube; chosen when absent")
    outputs: list[Output] = Field([], max_length=64)


def parse_path(path: str) -> list[str | int]:
    """'loads[push].loadVector[0]' -> ['loads', 'push', 'loadVector', 0]; ValueError if malformed."""
    parts: list[str | int] = []
    pos, expect_key = 0, True
    for m in _SEGMENT.finditer(path):
        if m.start() != pos:
            break
        pos = m.end()
        key, bracket, dot = m.groups()
        if dot:
            if expect_key:
                raise ValueError("an empty key")
            expect_key = True
        elif key is not None:
            if not expect_key:
                raise ValueError(f"'.' missing before {key!r}")
            parts.append(key.strip())
            expect_key = False
        else:
            if not parts:
                raise ValueError("a path starts with a key")
            item = bracket.strip()
            parts.append(int(item) if re.fullmatch(r"-?\d+", item) else item)
    if pos != len(path) or expect_key:
        raise ValueError(f"not a path of keys and [index or name] items at character {pos + 1}")
    return parts


def _locate(doc: Any, parts: list[str | int]) -> tuple[Any, str | int, str]:
    """(container, key, canonical path) of the last part; KeyError naming what is missing."""
    node, where = doc, ""
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(node, list):
            if isinstance(part, int):
                if not -len(node) <= part < len(node):
                    raise KeyError(f"{where or '$'} has {len(node)} items; there is no item {part}")
                index = part % len(node)
            else:
                named = [k for k, item in enumerate(node) if isinstance(item, dict) and item.get("name") == part]
                if len(named) != 1:
                    raise KeyError(f"{where or '$'} has {'no' if not named else len(named)} items named {part!r}")
                index = named[0]
            key, where = index, f"{where}[{index}]"
        elif isinstance(node, dict):
            if isinstance(part, int):
                raise KeyError(f"{where or '$'} is an object, not a list: use .key, not [{part}]")
            if part not in node and not last:
                raise KeyError(f"{where or '$'} has no {part!r}")
            key, where = part, f"{where}.{part}" if where else part
        else:
            raise KeyError(f"{where} is a {type(node).__name__}, not an object or a list")
        if last:
            return node, key, where
        node = node[key]
    raise KeyError("an empty path")


def axis_values(p: Parameter) -> list:
    if p.values is not None:
        return list(p.values)
    return [float(v) for v in np.linspace(p.range.start, p.range.stop, p.range.num)]


def count(spec: SweepSpec) -> int:
    """The number of variations, without making them (the limits are checked on it first)."""
    if spec.design in ("random", "latinHypercube"):
        return spec.samples or 0
    sizes = [len(p.values) if p.values is not None else (p.range.num or 0) for p in spec.parameters]
    return math.prod(sizes) if spec.design == "grid" else (sizes[0] if len(set(sizes)) == 1 else 0)


def check(spec: SweepSpec, doc: dict) -> list[str]:
    """The canonical path of each parameter (list items by index), or SweepInvalid with every
    problem of the sweep itself: paths, value lists, design, output names and sensors."""
    problems, canonical = [], []
    for i, p in enumerate(spec.parameters):
        try:
            canonical.append(_locate(doc, parse_path(p.path))[2])
        except (ValueError, KeyError) as exc:
            problems.append({"path": f"parameters[{i}].path", "message": f"{p.path!r}: {exc.args[0]}"})
        random = spec.design in ("random", "latinHypercube")
        if random and p.range is None:
            problems.append({"path": f"parameters[{i}]", "message": f"a {spec.design} design needs a range"})
        if not random and p.range is not None and p.range.num is None:
            problems.append({"path": f"parameters[{i}].range.num", "message": f"a {spec.design} design needs num"})
    if len(set(canonical)) < len(canonical):
        problems.append({"path": "parameters", "message": "two parameters address the same place"})
    if spec.design in ("random", "latinHypercube") and spec.samples is None:
        problems.append({"path": "samples", "message": f"a {spec.design} design needs samples"})
    if spec.design == "zip" and not problems and count(spec) == 0:
        problems.append({"path": "parameters", "message": "a zip design needs value lists of one length"})
    sensors = doc.get("sensors") if isinstance(doc.get("sensors"), list) else []
    names = {s.get("name") if isinstance(s, dict) and s.get("name") else f"sensor{k}" for k, s in enumerate(sensors)}
    taken = {p.path for p in spec.parameters} | set(FIXED_COLUMNS)
    for k, out in enumerate(spec.outputs):
        if out.sensor not in names:
            problems.append({"path": f"outputs[{k}].sensor", "message": f"the model has no sensor {out.sensor!r}"})
        if out.name in taken:
            problems.append({"path": f"outputs[{k}].name", "message": f"{out.name!r} is already a column of the table"})
        taken.add(out.name)
    if problems:
        raise SweepInvalid(f"the sweep has {len(problems)} problem(s)", problems)
    return canonical


def rows(spec: SweepSpec, seed: int) -> list[tuple]:
    """The design's parameter values, one tuple per variation, in design order."""
    if spec.design == "grid":
        return list(itertools.product(*(axis_values(p) for p in spec.parameters)))
    if spec.design == "zip":
        return list(zip(*(axis_values(p) for p in spec.parameters)))
    low = np.array([p.range.start for p in spec.parameters])
    high = np.array([p.range.stop for p in spec.parameters])
    rng = np.random.default_rng(seed)
    if spec.design == "random":
        unit = rng.random((spec.samples, len(spec.parameters)))
    else:
        from scipy.stats import qmc
        unit = qmc.LatinHypercube(d=len(spec.parameters), rng=rng).random(spec.samples)
    return [tuple(float(v) for v in row) for row in low + unit * (high - low)]


def new_seed() -> int:
    return secrets.randbits(63)


def _copies(doc: dict):
    """A function giving a fresh copy of a JSON document: parsed from its text by orjson (many
    times faster than copy.deepcopy) when that gives the document back exactly (not for NaN or
    integers beyond 64 bits), else by json."""
    text = json.dumps(doc)
    try:
        if orjson.loads(text) == doc:
            return lambda: orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    return lambda: json.loads(text)


def variations(doc: dict, paths: list[str], rows: list[tuple]) -> Iterator[dict]:
    """A copy of the model document per row, with each (canonical) path set to its value."""
    fresh = _copies(doc)
    places = [parse_path(p) for p in paths]
    for values in rows:
        out = fresh()
        for parts, value in zip(places, values):
            node = out
            for part in parts[:-1]:
                node = node[part]
            node[parts[-1]] = copy.deepcopy(value)
        yield out


def variation(doc: dict, paths: list[str], values: tuple) -> dict:
    return next(variations(doc, paths, [values]))


def _at(t: np.ndarray, x: np.ndarray, at: float) -> float | None:
    if not len(t) or not t[0] <= at <= t[-1]:
        return None
    return float(np.interp(at, t, x))


def reduce_column(data: np.ndarray, column: int, how: str | At) -> float | None:
    """One output: a reduction of a sensor column over the stored rows (None: no rows, or `at`
    outside the stored times)."""
    x = data[:, column]
    if isinstance(how, At):
        return _at(data[:, 0], x, how.at)
    if not len(x):
        return None
    value = {"last": lambda: x[-1], "first": lambda: x[0], "min": x.min, "max": x.max, "mean": x.mean,
             "rms": lambda: np.sqrt(np.mean(x * x)), "absMax": lambda: np.abs(x).max()}[how]()
    return float(value)


def outputs(spec_outputs: list[Output], sensors: dict) -> dict:
    """{"values": {name: number | None}, "errors": {name: message}} of a run's sensors
    ({name: SensorSeries}); a column the sensor does not have is an error of that output."""
    values, errors = {}, {}
    for out in spec_outputs:
        series = sensors.get(out.sensor)
        if series is None or out.column not in series.columns:
            values[out.name] = None
            errors[out.name] = (f"sensor {out.sensor!r} has no column {out.column!r} (it has "
                                f"{', '.join(series.columns)})" if series is not None else
                                f"the results have no sensor {out.sensor!r}")
            continue
        values[out.name] = reduce_column(np.asarray(series.data, float).reshape(-1, len(series.columns)),
                                         series.columns.index(out.column), out.reduce)
    return {"values": values, "errors": errors}
