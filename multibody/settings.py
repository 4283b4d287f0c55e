"""simulationSettings: Exudyn's nested names and defaults (1.13.6).

The table of keys and defaults is Exudyn's own `SimulationSettings().GetDictionary()`, kept in
data/exudyn_simulation_settings.json, so every key an Exudyn user can set is accepted (unknown
keys are an error) and every default is Exudyn's. The SPEC's older names of a few keys are
accepted as aliases (ALIASES). Settings that only concern Exudyn's files,
console or threads are accepted and have no effect here.
"""
from __future__ import annotations

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

# SPEC section 4's names for settings that Exudyn 1.13.6 keeps under solution.file (same values)
ALIASES = {"solution.writeSolutionToFile": "solution.file.write",
           "solution.solutionWritePeriod": "solution.file.writePeriod",
           "solution.writeInitialValues": "solution.file.writeInitialValues"}


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


def _lookup(tree: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        tree = tree.get(part) if isinstance(tree, dict) else None
    return tree


def explicit(user: Any, key: str) -> Any:
    """The value the user's settings give for `key` (dotted) under its name or an alias; None if none."""
    names = [key] + [alias for alias, target in ALIASES.items() if target == key]
    return next((v for v in (_lookup(user, n) for n in names) if v is not None), None)


def _canonical(user: Any, path: str, problems: list[tuple[str, str]]) -> Any:
    """A copy of the user's settings with each alias moved to its key, its value checked at the
    alias's path; an alias given together with its key is a problem."""
    if not isinstance(user, dict):
        return user
    out = copy_tree(user)
    for alias, key in ALIASES.items():
        parent_name, leaf = alias.rsplit(".", 1)
        parent = _lookup(out, parent_name)
        if not isinstance(parent, dict) or leaf not in parent:
            continue
        value = _check_value(f"{path}.{alias}", parent.pop(leaf), _lookup(defaults(), key), problems)
        target_name, target_leaf = key.rsplit(".", 1)
        target = out
        for part in target_name.split("."):
            target = target.setdefault(part, {}) if isinstance(target, dict) else None
        if not isinstance(target, dict):
            continue  # not an object where the key goes: _merge reports it
        if target_leaf in target:
            problems.append((f"{path}.{alias}", f"{alias} is another name of {key}; give one of them"))
        else:
            target[target_leaf] = value
    return out


def drop_overridden(user: Any, overrides: Any) -> None:
    """Remove from the user's settings each aliased setting that `overrides` sets under either name."""
    for names in ALIASES.items():
        if any(_lookup(overrides, n) is not None for n in names):
            for name in names:
                parent_name, leaf = name.rsplit(".", 1)
                parent = _lookup(user, parent_name)
                if isinstance(parent, dict):
                    parent.pop(leaf, None)


def copy_tree(value: Any) -> Any:
    """A copy of a JSON tree's dicts and lists (its leaves are immutable): copy.deepcopy's memo
    and dispatch cost more than the rest of resolving the settings."""
    if isinstance(value, dict):
        return {k: copy_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_tree(v) for v in value]
    return value


def _merge(user: Any, default: dict, path: str, problems: list[tuple[str, str]]) -> dict:
    if not isinstance(user, dict):
        problems.append((path, f"expected an object, got {type(user).__name__}"))
        return copy_tree(default)
    # the defaults' order; the subtrees the user sets are merged below, not copied first
    out = {key: None if key in user else copy_tree(value) for key, value in default.items()}
    for key, value in user.items():
        sub = f"{path}.{key}"
        if key not in default:
            problems.append((sub, f"unknown setting {key!r}{did_you_mean(key, default)}"))
        elif isinstance(default[key], dict):
            out[key] = _merge(value, default[key], sub, problems)
        else:
            out[key] = _check_value(sub, value, default[key], problems)
    return out


def resolve(user: Any, path: str = "simulationSettings") -> tuple[dict, list[tuple]]:
    """Exudyn's defaults overlaid with the user's settings, and the problems found: (path,
    message), or (path, message, limit) for a count over one of the core's bounds."""
    problems: list[tuple] = []
    user = _canonical({} if user is None else user, path, problems)
    merged = _merge(user, defaults(), path, problems)
    ti = merged["timeIntegration"]
    if ti["endTime"] < ti["startTime"]:
        problems.append((f"{path}.timeIntegration.endTime", "endTime is before startTime"))
    steps = ti["numberOfSteps"]
    if steps < 1 or abs(steps - round(steps)) > 1e-10 * max(1.0, steps):
        problems.append((f"{path}.timeIntegration.numberOfSteps", f"must be a positive whole number, got {steps!r}"))
    elif steps > MAX_STEPS:
        problems.append((f"{path}.timeIntegration.numberOfSteps", f"{steps:g} steps; the limit is {MAX_STEPS}",
                         "multibody.settings.MAX_STEPS"))
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
                         f"{ss['numberOfLoadSteps']:g} load steps; the limit is {MAX_LOAD_STEPS}",
                         "multibody.settings.MAX_LOAD_STEPS"))
    if ss["loadStepDuration"] <= 0:
        problems.append((f"{path}.staticSolver.loadStepDuration", "must be positive"))
    return merged, problems


def enum_name(value: str) -> str:
    return value.split(".", 1)[1] if "." in value else value
