"""simulationSettings: Exudyn's nested names and defaults (1.13.6).

The table of keys and defaults is Exudyn's own `SimulationSettings().GetDictionary()`, kept in
data/exudyn_simulation_settings.json, so every key an Exudyn user can set is accepted (unknown
keys are an error) and every default is Exudyn's. Settings that only concern Exudyn's files,
console or threads are accepted and have no effect here.
"""
from __future__ import annotations

import copy
import json
import math
from functools import lru_cache
from importlib import resources
from typing import Any

from .values import did_you_mean

ENUMS = {
    "DynamicSolverType": ["GeneralizedAlpha", "TrapezoidalIndex2", "ExplicitEuler", "ExplicitMidpoint",
                          "RK33", "RK44", "RK67", "ODE23", "DOPRI5", "DVERK6", "VelocityVerlet"],
    "LinearSolverType": ["_None", "EXUdense", "EigenSparse", "EigenSparseSymmetric", "EigenDense"],
}


# the core's own bounds (the service sets tighter, configurable ones: MBSERVE_MAX_STEPS, ...):
# a step count is work and, for the static solver, memory the solve would commit to up front
MAX_STEPS = 100_000_000
MAX_LOAD_STEPS = 1_000_000


@lru_cache(maxsize=1)
def defaults() -> dict:
    text = resources.files("multibody").joinpath("data/exudyn_simulation_settings.json").read_text()
    return json.loads(text)


def _enum_of(default: Any) -> str | None:
    if isinstance(default, str) and "." in default and default.split(".")[0] in ENUMS:
        return default.split(".")[0]
    return None


def _check_value(path: str, value: Any, default: Any, problems: list[tuple[str, str]]) -> Any:
    enum = _enum_of(default)
    if enum:
        name = value.split(".", 1)[1] if isinstance(value, str) and value.startswith(enum + ".") else value
        if name not in ENUMS[enum]:
            hint = did_you_mean(name, ENUMS[enum]) or f"; one of {', '.join(ENUMS[enum])}"
            problems.append((path, f"{value!r} is not a {enum}{hint}"))
            return default
        return f"{enum}.{name}"
    # a wrong value is reported and replaced by the default, so later checks see valid types
    if isinstance(default, bool):
        if not isinstance(value, bool):
            problems.append((path, f"expected true or false, got {value!r}"))
            return default
        return value
    if isinstance(default, (int, float)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            problems.append((path, f"expected a number, got {value!r}"))
            return default
        if not math.isfinite(value):
            problems.append((path, f"expected a finite number, got {value!r}"))
            return default
        return value
    if isinstance(default, str):
        if not isinstance(value, str):
            problems.append((path, f"expected a string, got {value!r}"))
            return default
        return value
    if isinstance(default, list):
        if not isinstance(value, list) or len(value) != len(default):
            problems.append((path, f"expected a list of {len(default)} values, got {value!r}"))
            return default
        return value
    return value


def _merge(user: Any, default: dict, path: str, problems: list[tuple[str, str]]) -> dict:
    out = copy.deepcopy(default)
    if not isinstance(user, dict):
        problems.append((path, f"expected an object, got {type(user).__name__}"))
        return out
    for key, value in user.items():
        sub = f"{path}.{key}"
        if key not in default:
            problems.append((sub, f"unknown setting {key!r}{did_you_mean(key, default)}"))
        elif isinstance(default[key], dict):
            out[key] = _merge(value, default[key], sub, problems)
        else:
            out[key] = _check_value(sub, value, default[key], problems)
    return out


def resolve(user: Any, path: str = "simulationSettings") -> tuple[dict, list[tuple[str, str]]]:
    """Exudyn's defaults overlaid with the user's settings, and the problems found."""
    problems: list[tuple[str, str]] = []
    merged = _merge({} if user is None else user, defaults(), path, problems)
    ti = merged["timeIntegration"]
    if ti["endTime"] < ti["startTime"]:
        problems.append((f"{path}.timeIntegration.endTime", "endTime is before startTime"))
    steps = ti["numberOfSteps"]
    if steps < 1 or abs(steps - round(steps)) > 1e-10 * max(1.0, steps):
        problems.append((f"{path}.timeIntegration.numberOfSteps", f"must be a positive whole number, got {steps!r}"))
    elif steps > MAX_STEPS:
        problems.append((f"{path}.timeIntegration.numberOfSteps", f"{steps:g} steps; the limit is {MAX_STEPS}"))
    if merged["solution"]["sensors"]["writePeriod"] <= 0:
        problems.append((f"{path}.solution.sensors.writePeriod", "must be positive"))
    ga = ti["generalizedAlpha"]
    if not 0.0 <= ga["spectralRadius"] <= 1.0:
        problems.append((f"{path}.timeIntegration.generalizedAlpha.spectralRadius", "must be in [0, 1]"))
    for section in ("timeIntegration", "staticSolver"):
        newton = merged[section]["newton"]
        if newton["maxIterations"] < 1:
            problems.append((f"{path}.{section}.newton.maxIterations", "must be at least 1"))
        for tol in ("relativeTolerance", "absoluteTolerance"):
            if newton[tol] < 0:
                problems.append((f"{path}.{section}.newton.{tol}", "must not be negative"))
    ss = merged["staticSolver"]
    if ss["numberOfLoadSteps"] < 1:
        problems.append((f"{path}.staticSolver.numberOfLoadSteps", "must be at least 1"))
    elif ss["numberOfLoadSteps"] > MAX_LOAD_STEPS:
        problems.append((f"{path}.staticSolver.numberOfLoadSteps",
                         f"{ss['numberOfLoadSteps']:g} load steps; the limit is {MAX_LOAD_STEPS}"))
    if ss["loadStepDuration"] <= 0:
        problems.append((f"{path}.staticSolver.loadStepDuration", "must be positive"))
    return merged, problems


def enum_name(value: str) -> str:
    return value.split(".", 1)[1] if "." in value else value
