"""Exudyn's explicit Runge-Kutta solvers (CSolverExplicit): q̈ = M⁻¹ f(q, q̇, t) integrated as a
first-order system with a Butcher tableau; DOPRI5 and ODE23 with Exudyn's step size control.

Constraints, as Exudyn handles them (timeIntegration.explicit.eliminateConstraints):
  True (default): only a ConnectorCoordinate between a ground-node coordinate and a node coordinate
  is allowed; that coordinate is set to 0 (position, velocity, acceleration) after every step,
  whatever the offset. Joints, other coordinate constraints and Euler-parameter nodes (which carry
  the normalization constraint, and whose mass matrix is singular without it) abort Exudyn's
  solver; we refuse them when the model is checked.
  False: Exudyn ignores every constraint (warning); so do we. Euler-parameter nodes are still refused.
Sensor rows: the t0 row has zero accelerations and multipliers (Exudyn does not evaluate them);
later rows have end-of-step accelerations (computeEndOfStepAccelerations) or the last stage's.
What these solvers refuse is checked with the model (capabilities.explicit_solver_problems).
"""
from __future__ import annotations

import time as _time

import numpy as np
import scipy.linalg as sla

from ..solution import Recorder
from ..values import Results, SimulationCanceled
from .generalized_alpha import SolverFailure
from .tableaus import TABLEAUS


class _Explicit:
    def __init__(self, system, settings: dict, solver_type: str):
        self.s = system
        A, c, b, b_err, order = TABLEAUS[solver_type]
        self.A, self.c, self.b = np.array(A, float), np.array(c, float), np.array(b, float)
        self.b_err = None if b_err is None else np.array(b_err, float)
        self.order = order
        ti = settings["timeIntegration"]
        self.end_accelerations = ti["explicit"]["computeEndOfStepAccelerations"]
        # coordinates fixed at 0 by eliminated ConnectorCoordinates (the non-ground marker's column)
        fixed = []
        if ti["explicit"]["eliminateConstraints"]:
            for g in system.constraints:
                if g.OBJECT_TYPE == "ConnectorCoordinate":
                    fixed += [int(c) for c in g.cols.ravel() if c != system.dummy]
        self.fixed = np.array(fixed, dtype=int)
        M = np.zeros((system.n2 + 1, system.n2 + 1))
        kin = system.kinematics(0.0, system.q_init, system.v_init)
        for group, vals in ((system.bodies, system.bodies.mass_values(kin)),
                            (system.mass_points, system.mass_points.mass_values())):
            r, c = group.mass_pattern()
            np.add.at(M, (r, c), np.ravel(vals))
        try:  # point masses only (Euler-parameter nodes are refused): M is constant
            self.lu = sla.lu_factor(M[:-1, :-1], check_finite=True)
        except (ValueError, np.linalg.LinAlgError):
            self.lu = None
        if self.lu is None or not np.all(np.abs(np.diag(self.lu[0])) > 0):
            raise SolverFailure("singular_matrix", "the mass matrix is singular (a node without mass)", 0.0)

    def acceleration(self, t, q, v):
        return sla.lu_solve(self.lu, self.s.applied_forces(self.s.kinematics(t, q, v)), check_finite=False)

    def eliminate(self, *vectors):
        for x in vectors:
            x[self.fixed] = 0.0

    def step(self, t, h, q, v):
        """One step: (q, v) of the solution, the last stage's acceleration, and (q, v) of the embedded
        solution when the tableau has one. Sums are accumulated term by term in Exudyn's order (the
        step size control reads differences of nearly equal sums)."""
        kq, kv = [], []
        for i in range(len(self.c)):
            kv.append(self.acceleration(t + self.c[i] * h, _combine(q, h, self.A[i, :i], kq),
                                        vi := _combine(v, h, self.A[i, :i], kv)))
            kq.append(vi)
        qn, vn = _combine(q, h, self.b, kq), _combine(v, h, self.b, kv)
        self.eliminate(qn, vn)
        if self.b_err is None:
            return qn, vn, kv[-1], None
        qe, ve = _combine(q, h, self.b_err, kq), _combine(v, h, self.b_err, kv)
        self.eliminate(qe, ve)
        return qn, vn, kv[-1], (qe, ve)


def _combine(x, h, weights, stages):
    out = x.copy()
    for w, k in zip(weights, stages):
        if w:
            out += (w * h) * k
    return out


def solve_explicit(loaded, progress=None, cancel=None) -> Results:
    system, settings = loaded.system, loaded.settings
    ti = settings["timeIntegration"]
    solver_type = loaded.document.solve.solverType
    sensors = Recorder(system)
    warnings = list(loaded.warnings)
    t0, t_end = float(ti["startTime"]), float(ti["endTime"])
    steps = int(round(ti["numberOfSteps"]))
    h_max = (t_end - t0) / steps
    writer = sensors.schedule(t0)
    started = _time.perf_counter()
    q, v = system.q_init.copy(), system.v_init.copy()
    lam = np.zeros(system.nae)  # constraints are eliminated or ignored: no multipliers
    t, n_steps, rejected, error = t0, 0, 0, None
    if system.constraints and not ti["explicit"]["eliminateConstraints"]:
        warnings.append({"code": "ConstraintsIgnored", "item": None,
                         "message": f"{solver_type} ignores all constraints (eliminateConstraints = false), "
                                    "as Exudyn does"})
    last_poll = started
    try:
        integ = _Explicit(system, settings, solver_type)
        # an embedded tableau always controls the step (CSolverExplicit::Newton); automaticStepSize only
        # chooses the initial step (verified against Exudyn 1.13.6)
        control = integ.b_err is not None
        automatic = ti["automaticStepSize"] and control
        accumulate = ti["adaptiveStep"] or automatic
        h = (ti["initialStepSize"] or h_max) if automatic else h_max
        atol, rtol = ti["absoluteTolerance"], ti["relativeTolerance"]
        if writer.due(t):
            sensors.record(t, q, v, np.zeros(system.n2), lam)
        warned_min = False
        while t < t_end - 1e-10:
            if accumulate:
                h = t_end - t if t + h > t_end else h  # Exudyn cuts the last step to end at endTime
                t_new = t + h
            else:
                t_new = t0 + (n_steps + 1) * h
            qn, vn, a_last, embedded = integ.step(t, h, q, v)
            if control:
                # Hairer-Nørsett-Wanner I p. 168 with Exudyn's scaling (signed max, positions and velocities)
                qe, ve = embedded
                sq = atol + np.maximum(qe, q) * rtol
                sv = atol + np.maximum(ve, v) * rtol
                err = np.sqrt((np.sum(((qe - qn) / sq) ** 2) + np.sum(((ve - vn) / sv) ** 2)) / (2 * system.n2))
                err = err if err != 0.0 else 1e-12
                h_opt = h * (1.0 / err) ** (1.0 / integ.order)
                h_new = min(min(h_max, h * ti["stepSizeMaxIncrease"]),
                            max(ti["minimumStepSize"], ti["stepSizeSafety"] * h_opt))
                reject = False
                if h_new == ti["minimumStepSize"] and not warned_min:
                    warned_min = True
                    warnings.append({"code": "MinimumStepSize", "item": None,
                                     "message": f"t = {t:.6g}: the step size control reached minimumStepSize; "
                                                "the error may exceed the tolerances"})
                elif h_opt < h:
                    reject = True
                h = h_new
                if reject:
                    if not accumulate:
                        raise SolverFailure("step_size", f"{solver_type} rejected the step at t = {t:.6g} and "
                                            "adaptiveStep = false forbids reducing it", t)
                    rejected += 1
                    continue
            q, v, t = qn, vn, t_new
            n_steps += 1
            if not np.all(np.isfinite(q)):
                raise SolverFailure("not_finite", f"the solution became NaN or infinite at t = {t:.6g}", t)
            if writer.due(t) or t >= t_end - 1e-10:
                a = integ.acceleration(t, q, v) if integ.end_accelerations else a_last
                integ.eliminate(a)
                sensors.record(t, q, v, a, lam)
            now = _time.perf_counter()
            if now - last_poll > 0.2:
                last_poll = now
                if cancel is not None and cancel():
                    raise SimulationCanceled()
                if progress is not None:
                    progress(min(1.0, (t - t0) / (t_end - t0)) if t_end > t0 else 1.0)
    except SolverFailure as exc:
        error = {"code": exc.code, "message": str(exc), "detail": {"time": exc.t, "items": exc.items}}
    solver = {"type": "Dynamic", "solverType": solver_type, "steps": n_steps, "rejectedSteps": rejected,
              "newtonIterations": 0, "jacobians": 0, "solveSeconds": _time.perf_counter() - started}
    return Results(status="failed" if error else "succeeded", warnings=warnings, solver=solver,
                   sensors=sensors.series(), solution=sensors.solution(), error=error)
