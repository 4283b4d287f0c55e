"""Solvers: run a loaded model and produce Results."""
from __future__ import annotations

SUPPORTED_DYNAMIC = ("GeneralizedAlpha", "TrapezoidalIndex2", "ExplicitEuler", "ExplicitMidpoint", "RK33", "RK44",
                     "ODE23", "DOPRI5")


def run(loaded, progress=None, cancel=None):
    from ..api import Results
    from .explicit import TABLEAUS, solve_explicit
    from .generalized_alpha import solve_dynamic
    from .redundancy import find_redundant
    from .static import solve_static
    solve = loaded.document.solve
    if solve.type == "Dynamic" and solve.solverType in TABLEAUS:  # constraints refused or eliminated
        return solve_explicit(loaded, progress=progress, cancel=cancel)
    static = solve.type == "Static"
    t0 = loaded.settings["staticSolver"]["loadStepStart"] if static else loaded.settings["timeIntegration"]["startTime"]
    error = find_redundant(loaded.system, float(t0))
    if error is not None:
        return Results(status="failed", warnings=list(loaded.warnings), error=error,
                       solver={"type": solve.type, "solverType": "Static" if static else solve.solverType, "steps": 0,
                               "newtonIterations": 0, "jacobians": 0, "solveSeconds": 0.0})
    if static:
        return solve_static(loaded, progress=progress, cancel=cancel)
    return solve_dynamic(loaded, progress=progress, cancel=cancel)
