"""Run a model document in Exudyn itself (for benchmarks and cross-checks; never at run time).

Exudyn's AddNode/AddObject/... accept the same item dictionaries a model document holds (a sparse
matrix's dictionary becomes a MatrixContainer).
Motions (not an Exudyn feature) are not supported here. A user-function expression is given to
Exudyn as the Python function it stands for: `functions` maps (list, index, parameter) to it.
"""
from __future__ import annotations

import time

import numpy as np


def _matrix(exu, sparse: dict):
    """A sparse matrix of the document ({numberOfRows, numberOfColumns, triplets}) as Exudyn's MatrixContainer
    (AddObject takes dense matrices only as lists)."""
    mc = exu.MatrixContainer()
    mc.SetWithSparseMatrixCSR(sparse["numberOfRows"], sparse["numberOfColumns"], sparse["triplets"],
                              useDenseMatrix=False)
    return mc


def build(doc: dict, functions: dict | None = None):
    import exudyn as exu
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    functions = functions or {}
    for key, add in (("nodes", mbs.AddNode), ("objects", mbs.AddObject), ("markers", mbs.AddMarker),
                     ("loads", mbs.AddLoad), ("sensors", mbs.AddSensor)):
        for i, item in enumerate(doc.get(key, [])):
            item = {k: functions.get((key, i, k), v) for k, v in item.items()
                    if not (k.startswith("V") and k[1:2].isalpha())}
            item = {k: _matrix(exu, v) if isinstance(v, dict) and "triplets" in v else v for k, v in item.items()}
            if key == "sensors":
                item = dict(item, storeInternal=True, writeToFile=False)
                if "outputVariableType" in item:
                    name = str(item["outputVariableType"]).removeprefix("OutputVariableType.")
                    item["outputVariableType"] = getattr(exu.OutputVariableType, name)
            add(item)
    mbs.Assemble()
    settings = exu.SimulationSettings()

    def apply(target, values):
        for k, v in values.items():
            if isinstance(v, dict):
                apply(getattr(target, k), v)
            else:
                setattr(target, k, v)
    apply(settings, doc.get("simulationSettings", {}))
    settings.timeIntegration.verboseMode = 0
    settings.staticSolver.verboseMode = 0
    settings.solutionSettings.writeSolutionToFile = False
    return exu, sc, mbs, settings


def solve(doc: dict, sparse: bool = False, functions: dict | None = None) -> tuple[float, object]:
    """(wall seconds of the solve call alone, mbs)."""
    exu, sc, mbs, settings = build(doc, functions)
    if sparse:
        settings.linearSolverType = exu.LinearSolverType.EigenSparse
    solve_spec = doc.get("solve", {})
    started = time.perf_counter()
    if solve_spec.get("type", "Dynamic") == "Static":
        mbs.SolveStatic(settings)
    else:
        solver_type = getattr(exu.DynamicSolverType, solve_spec.get("solverType", "GeneralizedAlpha"))
        mbs.SolveDynamic(settings, solverType=solver_type)
    return time.perf_counter() - started, mbs


def sensor_data(mbs, index: int) -> np.ndarray:
    return np.array(mbs.GetSensorStoredData(index))
