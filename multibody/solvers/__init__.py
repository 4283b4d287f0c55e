"""Solvers: run a loaded model and produce Results."""
from __future__ import annotations

from ..values import Results
from .explicit import solve_explicit
from .generalized_alpha import solve_dynamic
from .redundancy import find_redundant
from .static import solve_static
from .tableaus import TABLEAUS


def run(loaded, progress=None, cancel=None):
    solve = loaded.document.solve
    if solve.type == "Dynamic" and solve.solverType in TABLEAUS:  # constraints refused or eliminated
        return solve_explicit(loaded, progress=progress, cancel=cancel)
    static = solve.type == "Static"
    t0 = loaded.settings["staticSolver"]["loadStepStart"] if static else loaded.settings["timeIntegration"]["startTime"]
    # Exudyn's ignoreSingularJacobian solves with redundant constraints (the implicit dynamic solver's dense LU)
    ignore_singular = not static and loaded.settings["linearSolver"]["ignoreSingularJacobian"]
    error = None if ignore_singular else find_redundant(loaded.system, float(t0))
    if error is not None:
        return Results(status="failed", warnings=list(loaded.warnings), error=error,
                       solver={"type": solve.type, "solverType": "Static" if static else solve.solverType, "steps": 0,
                               "newtonIterations": 0, "jacobians": 0, "solveSeconds": 0.0})
    if static:
        return solve_static(loaded, progress=progress, cancel=cancel)
    return solve_dynamic(loaded, progress=progress, cancel=cancel)
