"""Exudyn's implicit second-order solver: generalized-α (Arnold–Brüls, solving for
displacements) for index-3 constraints, and Newmark / TrapezoidalIndex2 with index-2
constraints. See shared/reference/exudyn-formulation.md §6 and §8.

State carried between steps: q, v = q̇, the true acceleration a = q̈, λ and the algorithmic
acceleration ā. Newton unknowns are Δq and the scaled multipliers λ̃ = βh²λ.
"""
from __future__ import annotations

import time as _time
from dataclasses import dataclass

import numpy as np

from ..values import Results
from ..programs import EvaluationError
from ..solution import Recorder
from ..settings import enum_name
from .alpha_kernel import DONE, NEWTON_FAILED, NOT_FINITE, UNDEFINED_LAW
from .compiled_loop import CompiledLoop
from .linear import dependent_columns
from .redundancy import find_redundant


class SolverFailure(Exception):
    def __init__(self, code: str, message: str, t: float, items: list[str] | None = None):
        self.code, self.t, self.items = code, t, items or []
        super().__init__(message)


@dataclass
class Method:
    beta: float
    gamma: float
    alpha_m: float
    alpha_f: float
    index2: bool
    newmark: bool

    @classmethod
    def from_settings(cls, ti: dict, solver_type: str) -> "Method":
        ga = ti["generalizedAlpha"]
        index2 = ga["useIndex2Constraints"] or solver_type == "TrapezoidalIndex2"
        newmark = ga["useNewmark"] or solver_type == "TrapezoidalIndex2"
        if newmark:
            return cls(ga["newmarkBeta"], ga["newmarkGamma"], 0.5, 0.5, index2, True)
        rho = ga["spectralRadius"]
        am, af = (2 * rho - 1) / (rho + 1), rho / (rho + 1)
        gamma = 0.5 + af - am
        return cls(0.25 * (gamma + 0.5) ** 2, gamma, am, af, index2, False)


def newton_failure(system, t, h, q, v) -> SolverFailure:
    return SolverFailure("newton_not_converged", f"Newton did not converge at t = {t + h:.6g} (step size {h:.3g})",
                         t + h, system.newton_culprits(q, v))


def not_finite(t) -> SolverFailure:
    return SolverFailure("not_finite", f"the solution became NaN or infinite at t = {t:.6g}", t)


def singular_failure(system, t, q, matrix) -> SolverFailure:
    """A singular Newton matrix at time t, state q: redundant constraints if C_q says so, else the
    unknowns whose columns depend on others (`matrix` dense, or None when too large to search)."""
    redundant = find_redundant(system, t, q=q)
    if redundant is not None:
        return SolverFailure(redundant["code"], redundant["message"], t, redundant["detail"]["items"])
    return SolverFailure("singular_matrix", "singular system matrix (redundant or conflicting constraints, "
                         "or a body without mass)", t, system.describe_unknowns(dependent_columns(matrix)))


def failure(code: int, loop: CompiledLoop, system, method: Method, q, v) -> SolverFailure:
    """The error of a run that ended with `code` (alpha_kernel) at the start (q, v) of a failed step;
    EvaluationError for a motion's law undefined at the step's last Newton iterate."""
    t, h = loop.t, loop.failed_step
    if code == NEWTON_FAILED:
        return newton_failure(system, t, h, q, v)
    if code == NOT_FINITE:
        return not_finite(t)
    qn, vn, an = loop.iterate()
    if code == UNDEFINED_LAW:
        kin = system.kinematics(t + h, qn, vn)
        kin.a = an
        system.motions.evaluate(kin, method.index2)  # raises: the kernel that found it, on the same state
    # SINGULAR; the search for dependent columns is dense, as the matrix is (the sparse LU's: up to 3000 unknowns)
    return singular_failure(system, t + h, qn, loop.matrix() if system.n < 3000 else None)


def solve_dynamic(loaded, progress=None, cancel=None) -> Results:
    """The time loop: compiled_loop.CompiledLoop runs the steps in compiled calls; here the start
    (consistent motions, initial accelerations) and the error documents."""
    system = loaded.system
    settings = loaded.settings
    ti = settings["timeIntegration"]
    solver_type = loaded.document.solve.solverType
    method = Method.from_settings(ti, solver_type)
    loop = CompiledLoop(system, method, ti, cancel=cancel, progress=progress,
                        ignore_singular=settings["linearSolver"]["ignoreSingularJacobian"])
    sensors = Recorder(system)
    warnings = list(loaded.warnings)
    t0 = float(ti["startTime"])
    writer = sensors.schedule(t0)
    started = _time.perf_counter()
    q, v = system.q_init.copy(), system.v_init.copy()
    error = None
    lam = np.zeros(system.nae)
    a = np.zeros(system.n2)
    try:
        q, v, corrections = system.motions.make_consistent(q, v, t0)
        warnings += corrections
        ga = ti["generalizedAlpha"]
        if ga["computeInitialAccelerations"]:
            init = loop.initial_accelerations(q, v)
            if init is None:
                warnings.append({"code": "SingularInitialAccelerations", "item": None,
                                 "message": "the initial-acceleration system is singular; starting from zero "
                                            "accelerations and multipliers (as Exudyn does)"})
            else:
                a, lam = init
                if not ga["storeInitialAlgebraicCoordinates"]:
                    lam = np.zeros(system.nae)
        abar = a.copy()
        if sensors.write_initial and writer.due(t0):
            sensors.record(t0, q, v, a, lam)
        code = loop.solve(writer, q, v, a, abar, lam, sensors)
        if code != DONE:
            raise failure(code, loop, system, method, q, v)
    except SolverFailure as exc:
        error = {"code": exc.code, "message": str(exc), "detail": {"time": exc.t, "items": exc.items}}
    except EvaluationError as exc:
        error = {"code": "motion_evaluation",
                 "message": f"a motion could not be evaluated near t = {loop.t:.6g}: {exc}",
                 "detail": {"time": loop.t, "items": []}}
    seconds = _time.perf_counter() - started
    solver = {"type": "Dynamic", "solverType": enum_name(solver_type), "steps": loop.steps,
              "newtonIterations": loop.iterations, "jacobians": loop.jacobians, "solveSeconds": seconds}
    return Results(status="failed" if error else "succeeded", warnings=warnings, solver=solver,
                   sensors=sensors.series(), solution=sensors.solution(), error=error)
