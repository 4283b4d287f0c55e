"""Exudyn's static solver: load steps over a pseudo-time, full Newton on [q; λ] per step.

Exudyn solves f(q) + C_qᵀλ = 0, so static multipliers have the opposite sign of dynamic ones;
we solve the dynamic form -f + C_qᵀλ = 0 and report -λ. Velocities stay at their initial values.
"""
from __future__ import annotations

import time as _time

import numpy as np

from ..api import Results, SimulationCanceled
from ..outputs import SensorSet, WriteSchedule
from .generalized_alpha import SolverFailure
from .linear import Factorization, SingularMatrix


def _load_factors(ss: dict) -> list[float]:
    start, duration, n = ss["loadStepStart"], ss["loadStepDuration"], int(round(ss["numberOfLoadSteps"]))
    if ss["loadStepGeometric"] and n > 1:
        rng = ss["loadStepGeometricRange"]
        return [start + duration * rng ** (k / n - 1.0) for k in range(1, n + 1)]
    times, t = [], start
    for _ in range(n):
        t += duration / n
        times.append(t)
    times[-1] = start + duration if abs(times[-1] - start - duration) < 1e-12 else times[-1]
    return times


def solve_static(loaded, progress=None, cancel=None) -> Results:
    system = loaded.system
    ss = loaded.settings["staticSolver"]
    newton = ss["newton"]
    sensors = SensorSet(system)
    started = _time.perf_counter()
    start, duration = ss["loadStepStart"], ss["loadStepDuration"]
    q, v = system.q_init.copy(), system.v_init.copy()
    lam = np.zeros(system.nae)
    zero_a = np.zeros(system.n2)
    writer = WriteSchedule(start, loaded.settings["solution"]["sensors"]["writePeriod"])
    kin = system.kinematics(start, q, v)
    kin.load_factor = 0.0
    sensors.record(start, kin, zero_a, lam, lam_sign=-1.0)
    writer.due(start)
    iterations = jacobians = steps = 0
    error = None
    use_factor = ss["useLoadFactor"]
    targets = _load_factors(ss)
    t_prev = start
    try:
        for k, t_target in enumerate(targets):
            t = t_target
            lf = (t - start) / duration if use_factor else 1.0
            lam = np.zeros(system.nae)
            for it in range(int(newton["maxIterations"]) + 1):
                kin = system.kinematics(t, q, v)
                ev = system.constraint_values(kin, False)
                rq = -system.loads.generalized(kin, lf) - system.bodies.quadratic_velocity(kin) \
                    - sum((g.generalized(kin) for g in system.forces), np.zeros(system.n2)) \
                    + system.constraint_forces(ev, lam)
                rg = system.constraint_residual(ev, lam)
                rn = float(np.sqrt(rq @ rq + rg @ rg))
                if it == 0:
                    r0 = max(rn, 2 * newton["absoluteTolerance"])
                elif rn / r0 <= newton["relativeTolerance"] or rn <= newton["absoluteTolerance"]:
                    break
                if it == int(newton["maxIterations"]) or not np.isfinite(rn):
                    raise SolverFailure("newton_not_converged",
                                        f"static Newton did not converge at load factor {lf:.6g}", t,
                                        system.newton_culprits(q, v))
                vals = system.newton_matrix_values(kin, ev, 0.0, 1.0, 0.0, lambda g: 1.0)
                try:
                    fact = Factorization(system, vals)
                except SingularMatrix as exc:
                    raise SolverFailure("singular_matrix", "singular static system matrix (a coordinate without "
                                        "stiffness or constraint, or redundant constraints)", t,
                                        system.describe_unknowns(exc.columns)) from None
                jacobians += 1
                dx = fact.solve(np.concatenate([rq, rg]))
                q -= dx[:system.n2]
                lam -= dx[system.n2:]
                iterations += 1
            steps += 1
            kin.load_factor = lf
            if writer.due(t) or k == len(targets) - 1:
                sensors.record(t, kin, zero_a, lam, lam_sign=-1.0)
            t_prev = t
            if cancel is not None and cancel():
                raise SimulationCanceled()
            if progress is not None:
                progress((t_prev - start) / duration)
    except SolverFailure as exc:
        error = {"code": exc.code, "message": str(exc), "detail": {"time": exc.t, "items": exc.items}}
    solver = {"type": "Static", "solverType": "Static", "steps": steps, "newtonIterations": iterations,
              "jacobians": jacobians, "solveSeconds": _time.perf_counter() - started}
    return Results(status="failed" if error else "succeeded", warnings=list(loaded.warnings), solver=solver,
                   sensors=sensors.series(), error=error)
