"""The core's public interface: validate a model document, simulate it, get a results document.

    v = validate_document(doc)            # never raises for bad input
    res = simulate(doc, progress=cb, cancel=should_stop)   # Results; raises ModelInvalid
    res.to_document()                     # the SPEC section 4 JSON document
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a model document: where (JSON path), which item, what."""
    path: str
    message: str
    item: str | None = None

    def to_dict(self) -> dict:
        return {"path": self.path, "message": self.message, "item": self.item}

    def __str__(self) -> str:
        who = f" ({self.item})" if self.item else ""
        return f"{self.path}{who}: {self.message}"


class ModelInvalid(Exception):
    """The document is not a valid model; `problems` lists every problem found."""

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        super().__init__("; ".join(str(p) for p in self.problems[:5])
                         + (f" (and {len(self.problems) - 5} more)" if len(self.problems) > 5 else ""))


class SimulationCanceled(Exception):
    """The cancel callback asked the solver to stop."""


@dataclass
class Validation:
    ok: bool
    problems: list[Problem]
    warnings: list[dict]
    summary: dict
    expanded: dict | None = None  # the document after convenience items were expanded


@dataclass
class SensorSeries:
    sensorType: str
    item: str | None
    outputVariableType: str
    columns: list[str]
    data: np.ndarray  # rows x len(columns), first column time

    def to_dict(self) -> dict:
        return {"sensorType": self.sensorType, "item": self.item,
                "outputVariableType": self.outputVariableType,
                "columns": list(self.columns), "data": self.data.tolist()}


@dataclass
class Results:
    status: str  # "succeeded" | "failed"
    warnings: list[dict]
    solver: dict
    sensors: dict[str, SensorSeries] = field(default_factory=dict)
    error: dict | None = None  # {"code", "message", "detail"} when failed

    def to_document(self) -> dict:
        doc: dict[str, Any] = {"status": self.status, "warnings": list(self.warnings),
                               "solver": dict(self.solver)}
        if self.error is not None:
            doc["error"] = self.error
        doc["sensors"] = {name: s.to_dict() for name, s in self.sensors.items()}
        return doc


def merge_settings(doc: dict, overrides: dict | None) -> dict:
    """A copy of `doc` whose simulationSettings are deep-merged with `overrides`."""
    out = copy.deepcopy(doc)
    if not overrides:
        return out

    def merge(dst: dict, src: dict) -> None:
        for k, v in src.items():
            if isinstance(v, dict) and isinstance(dst.get(k), dict):
                merge(dst[k], v)
            else:
                dst[k] = copy.deepcopy(v)

    settings = out.get("simulationSettings")
    if not isinstance(settings, dict):
        settings = out["simulationSettings"] = {}
    merge(settings, overrides)
    return out


def validate_document(doc: Any) -> Validation:
    """Check a model document; all problems at once, each with its JSON path."""
    from .model import load_model
    try:
        loaded = load_model(doc)
    except ModelInvalid as exc:
        return Validation(ok=False, problems=exc.problems, warnings=[], summary={})
    return Validation(ok=True, problems=[], warnings=loaded.warnings, summary=loaded.summary(),
                      expanded=loaded.expanded_document)


def simulate(doc: Any, *, progress: Callable[[float], None] | None = None,
             cancel: Callable[[], bool] | None = None) -> Results:
    """Validate and run a model. Raises ModelInvalid for a bad document and SimulationCanceled
    when `cancel()` turns true; a simulation that fails numerically gives status "failed".

    progress(fraction) is called at most every ~0.2 s of wall time with simulated/end time.
    """
    from .model import load_model
    from .solvers import run
    loaded = load_model(doc)
    return run(loaded, progress=progress, cancel=cancel)


WARM_UP_MODEL = {  # one body on a slider with a spring: touches every compiled kernel of the common path
    "nodes": [{"nodeType": "RigidBodyEP", "referenceCoordinates": [0, 0, 0, 1, 0, 0, 0],
               "initialCoordinates": [0.1, 0, 0, 0, 0, 0, 0]}],
    "objects": [{"objectType": "Ground"},
                {"objectType": "RigidBody", "nodeNumber": 0, "mass": 1.0, "inertia": [1e-3, 1e-3, 1e-3, 0, 0, 0]},
                {"objectType": "JointPrismaticX", "markerNumbers": [0, 1]},
                {"objectType": "ConnectorSpringDamper", "markerNumbers": [2, 3], "stiffness": 100.0, "damping": 1.0}],
    "markers": [{"markerType": "BodyRigid", "bodyNumber": 0}, {"markerType": "BodyRigid", "bodyNumber": 1},
                {"markerType": "BodyPosition", "bodyNumber": 0}, {"markerType": "BodyPosition", "bodyNumber": 1}],
    "loads": [{"loadType": "ForceVector", "markerNumber": 1, "loadVector": [1.0, 0, 0]}],
    "sensors": [{"sensorType": "Node", "nodeNumber": 0, "outputVariableType": "Position"}],
    "simulationSettings": {"timeIntegration": {"endTime": 0.01, "numberOfSteps": 2}},
}


def warm_up() -> None:
    """Load (or compile) the core's compiled kernels now, so a process's first job does not pay it."""
    from .model import load_model
    from .solvers.generalized_alpha import solve_dynamic
    simulate(WARM_UP_MODEL)  # small models: the compiled step loop
    solve_dynamic(load_model(WARM_UP_MODEL), compiled=False)  # large ones: the Python loop's kernels


def run_document(doc: Any, **kwargs) -> dict:
    """simulate(...).to_document()."""
    return simulate(doc, **kwargs).to_document()
