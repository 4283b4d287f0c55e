"""Exudyn's static solver: load steps over a pseudo-time, full Newton on [q; λ] per step.

Exudyn solves f(q) + C_qᵀλ = 0, so static multipliers have the opposite sign of dynamic ones;
we solve the dynamic form -f + C_qᵀλ = 0 and report -λ. Velocities stay at their initial values.
"""
from __future__ import annotations

import time as _time

import numpy as np

from ..solution import Recorder
from ..values import Results, SimulationCanceled
from .generalized_alpha import SolverFailure
from .linear import Factorization, SingularMatrix


def _load_factors(ss: dict):
    """The target load factors, one at a time (there may be up to settings.MAX_LOAD_STEPS)."""
    start, duration, n = ss["loadStepStart"], ss["loadStepDuration"], int(round(ss["numberOfLoadSteps"]))
    if ss["loadStepGeometric"] and n > 1:
        rng = ss["loadStepGeometricRange"]
        for k in range(1, n + 1):
            yield start + duration * rng ** (k / n - 1.0)
        return
    t = start
    for k in range(1, n + 1):
        t += duration / n
        yield start + duration if k == n and abs(t - start - duration) < 1e-12 else t


class _NotConverged(Exception):
    pass


def _numerical_stiffness(system, t: float, q: np.ndarray, v: np.ndarray, lf: float, lam: np.ndarray):
    """∂(-Q_loads + C_qᵀλ)/∂q as (rows, cols, values), by forward differences per coordinate as
    Exudyn does in statics (computeLoadsJacobian; jacobianConnectorDerivative): body-fixed and
    off-center loads, and the turning of constraint forces, give stiffness that a static
    equilibrium needs (a pendulum's restoring moment, for one)."""
    def part(qq):
        kin = system.kinematics(t, qq, v)
        return -system.loads.generalized(kin, lf) + system.constraint_forces(system.constraint_values(kin, False), lam)
    base = part(q)
    rows, cols, vals = [], [], []
    for j in range(system.n2):
        eps = 1e-7 * max(0.01, abs(q[j]))
        dq = q.copy()
        dq[j] += eps
        d = (part(dq) - base) / eps
        nz = np.flatnonzero(d)
        rows.append(nz)
        cols.append(np.full(len(nz), j))
        vals.append(d[nz])
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)


def _newton(system, newton: dict, t: float, lf: float, q: np.ndarray, v: np.ndarray, counts: dict,
            load_jacobian: bool):
    """Full Newton on [q; λ] at load factor lf, from q with λ = 0; returns (q, λ)."""
    q = q.copy()
    lam = np.zeros(system.nae)
    for it in range(int(newton["maxIterations"]) + 1):
        kin = system.kinematics(t, q, v)
        ev = system.constraint_values(kin, False)
        rq = -system.loads.generalized(kin, lf) - system.bodies.quadratic_velocity(kin) \
            - sum((g.generalized(kin) for g in system.forces), np.zeros(system.n2)) \
            + system.constraint_forces(ev, lam)
        if system.generic_ode2.size:  # K q + D q̇ - f; f not scaled by the load factor (Exudyn: no load)
            rq -= system.generic_ode2.generalized(kin)
        rg = system.constraint_residual(ev, lam)
        rn = float(np.sqrt(rq @ rq + rg @ rg))
        if not np.isfinite(rn):
            raise _NotConverged()
        if it == 0:
            r0 = max(rn, 2 * newton["absoluteTolerance"])
        elif rn / r0 <= newton["relativeTolerance"] or rn <= newton["absoluteTolerance"]:
            return q, lam
        if it == int(newton["maxIterations"]):
            raise _NotConverged()
        vals = system.newton_matrix_values(kin, ev, 0.0, 1.0, 0.0, lambda g: 1.0)
        try:
            fact = Factorization(system, vals, _numerical_stiffness(system, t, q, v, lf, lam) if load_jacobian else None)
        except SingularMatrix as exc:
            raise SolverFailure("singular_matrix", "singular static system matrix (a coordinate without "
                                "stiffness or constraint, or redundant constraints)", t,
                                system.describe_unknowns(exc.columns)) from None
        counts["jacobians"] += 1
        dx = fact.solve(np.concatenate([rq, rg]))
        q -= dx[:system.n2]
        lam -= dx[system.n2:]
        counts["iterations"] += 1
    raise _NotConverged()


def solve_static(loaded, progress=None, cancel=None) -> Results:
    """Load steps to each target load factor; a step whose Newton fails is retried with the
    increment times adaptiveStepDecrease, which grows again by adaptiveStepIncrease after
    adaptiveStepRecoverySteps good steps (Exudyn's adaptive static steps)."""
    system = loaded.system
    ss = loaded.settings["staticSolver"]
    sensors = Recorder(system, "static")
    started = _time.perf_counter()
    start, duration = ss["loadStepStart"], ss["loadStepDuration"]
    q, v = system.q_init.copy(), system.v_init.copy()
    zero_a = np.zeros(system.n2)
    writer = sensors.schedule(start)
    if sensors.write_initial:
        sensors.record(start, q, v, zero_a, np.zeros(system.nae), lam_sign=-1.0)
        writer.due(start)
    counts = {"iterations": 0, "jacobians": 0}
    steps, error, t = 0, None, start
    last = int(round(ss["numberOfLoadSteps"])) - 1
    try:
        for k, target in enumerate(_load_factors(ss)):
            nominal = target - t
            h, good = nominal, 0
            while t < target:
                if cancel is not None and cancel():  # also between the retries of a step
                    raise SimulationCanceled()
                t_next = target if t + h >= target - 1e-14 * max(1.0, abs(target)) else t + h
                lf = (t_next - start) / duration if ss["useLoadFactor"] else 1.0
                try:
                    q, lam = _newton(system, ss["newton"], t_next, lf, q, v, counts, ss["computeLoadsJacobian"])
                except _NotConverged:
                    h *= ss["adaptiveStepDecrease"]
                    if not ss["adaptiveStep"] or h < ss["minimumStepSize"]:
                        raise SolverFailure("newton_not_converged", f"static Newton did not converge at load "
                                            f"factor {lf:.6g}", t_next, system.newton_culprits(q, v)) from None
                    good = 0
                    continue
                t = t_next
                steps += 1
                good += 1
                if good >= ss["adaptiveStepRecoverySteps"]:
                    h, good = min(nominal, h * ss["adaptiveStepIncrease"]), 0
                if writer.due(t) or (k == last and t >= target):
                    sensors.record(t, q, v, zero_a, lam, lam_sign=-1.0)
                if progress is not None:
                    progress((t - start) / duration)
    except SolverFailure as exc:
        error = {"code": exc.code, "message": str(exc), "detail": {"time": exc.t, "items": exc.items}}
    solver = {"type": "Static", "solverType": "Static", "steps": steps, "newtonIterations": counts["iterations"],
              "jacobians": counts["jacobians"], "solveSeconds": _time.perf_counter() - started}
    return Results(status="failed" if error else "succeeded", warnings=list(loaded.warnings), solver=solver,
                   sensors=sensors.series(), solution=sensors.solution(), error=error)
