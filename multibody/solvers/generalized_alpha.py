"""Exudyn's implicit second-order solver: generalized-α (Arnold–Brüls, solving for
displacements) for index-3 constraints, and Newmark / TrapezoidalIndex2 with index-2
constraints. See shared/reference/exudyn-formulation.md §6 and §8.

State carried between steps: q, v = q̇, the true acceleration a = q̈, λ and the algorithmic
acceleration ā. Newton unknowns are Δq and the scaled multipliers λ̃ = βh²λ.
"""
from __future__ import annotations

import math
import time as _time
from dataclasses import dataclass

import numpy as np

from ..values import Results, SimulationCanceled
from ..programs import EvaluationError
from ..kernels import (CONVERGED, GIVE_UP, RESTART, newton_parameters, newton_rules,
                       newton_update, predictor)
from ..solution import Recorder
from ..settings import enum_name
from .alpha_kernel import NEWTON_FAILED, NOT_FINITE
from .compiled_loop import CompiledLoop
from .linear import Factorization, SingularMatrix
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

    @property
    def c(self) -> float:
        return (1.0 - self.alpha_f) / (1.0 - self.alpha_m)

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


class Integrator:
    """One model, one method: residuals, Newton, steps."""

    def __init__(self, system, method: Method, newton: dict, cancel=None, progress=None):
        self.s = system
        self.m = method
        self.newton = newton
        self.cancel, self.progress = cancel, progress
        self.fact: Factorization | None = None
        self.jacobian_requested = True  # Exudyn's conv.jacobianUpdateRequested: kept across steps
        self.newton_parameters = newton_parameters(newton)
        self.iterations = 0
        self.jacobians = 0
        self._last_poll = -np.inf  # the first step polls: a job canceled while queued stops at once
        # reused by every residual: each one's kinematics and values are consumed (Newton, Jacobian,
        # sensors) before the next
        self.kin, self.residual_out = None, system.residual_out()

    # ------------------------------------------------------------------------ residual
    def residual(self, t, q, v, a, lam):
        s = self.s
        kin = self.kin = s.kinematics(t, q, v, self.kin)
        kin.a = a
        return (kin, *s.residual(kin, a, lam, self.m.index2, self.residual_out))

    def level_factors(self, h):
        m = self.m
        per_level = np.array([1.0, m.gamma / (m.beta * h), 1.0 / (m.c * m.beta * h * h)])

        def factors(group):  # index 2: position-level rows are solved at velocity level
            return per_level[np.where(group.row_levels == 0, int(m.index2), group.row_levels)]
        return factors

    def factorize(self, kin, ev, h) -> None:
        m, s = self.m, self.s
        bh2 = m.beta * h * h
        vals = s.newton_matrix_values(kin, ev, 1.0 / m.c, bh2, m.gamma * h, self.level_factors(h))
        try:
            self.fact = Factorization(s, vals)
        except SingularMatrix as exc:
            redundant = find_redundant(s, kin.t, q=kin.q[:-1])
            if redundant is not None:
                raise SolverFailure(redundant["code"], redundant["message"], kin.t,
                                    redundant["detail"]["items"]) from None
            raise SolverFailure("singular_matrix", "singular system matrix (redundant or conflicting constraints, "
                                "or a body without mass)", kin.t, s.describe_unknowns(exc.columns)) from None
        self.jacobians += 1

    # ------------------------------------------------------------------------ one step
    def step(self, t, h, q, v, a, abar, lam0_shape):
        """Newton for the step t -> t+h; returns (q, v, a, abar, lam, iterations) or None if Newton
        failed (the caller halves the step). Exudyn's CSolverBase::Newton (kernels.newton_rules):
        r0 is the predictor's residual; the Jacobian is kept across steps, also when h changes,
        until a rule asks for a new one."""
        m, nt = self.m, self.newton
        bh2 = m.beta * h * h
        t1 = t + h
        lie = (self.s.model.lie_cols, self.s.model.lie_ref)
        qs, vs, ahat = predictor(q, v, a, abar, h, m.beta, m.gamma, m.alpha_m, m.alpha_f, m.newmark, *lie)
        rhs = np.empty(self.s.n)  # [h²β r_q; r_g], filled per iteration
        rhs_q, rhs_g = rhs[:len(q)], rhs[len(q):]
        qn, vn, an, lam = qs.copy(), vs.copy(), np.zeros_like(a), np.zeros(lam0_shape)
        kin, ev, rq, rg = self.residual(t1, qn, vn, an, lam)
        r0 = math.sqrt(rq @ rq + rg @ rg)
        if not math.isfinite(r0):
            return None
        if r0 <= nt["absoluteTolerance"]:
            r0 = 2 * nt["absoluteTolerance"]
        r_prev, full, restarted, extra = r0, not nt["useModifiedNewton"], False, False
        for it in range(1, nt["maxIterations"] + 1):
            if full or self.jacobian_requested:
                self.factorize(kin, ev, h)
                self.jacobian_requested = False
            np.multiply(rq, bh2, out=rhs_q)
            rhs_g[:] = rg
            dx = self.fact.solve(rhs)
            newton_update(qn, vn, an, lam, dx, m.gamma / (m.beta * h), m.c * bh2, bh2, *lie)
            self.iterations += 1
            kin, ev, rq, rg = self.residual(t1, qn, vn, an, lam)
            rn = math.sqrt(rq @ rq + rg @ rg)
            action, r0, r_prev, full, restarted, extra, new_jacobian = newton_rules(
                it, rn, r0, r_prev, full, restarted, extra, self.newton_parameters)
            self.jacobian_requested |= new_jacobian
            if action == CONVERGED:
                abar_n = an.copy() if m.newmark else ahat + m.c * an
                return qn, vn, an, abar_n, lam, it
            if action == GIVE_UP:
                return None
            if action == RESTART:
                qn, vn, an, lam = qs.copy(), vs.copy(), np.zeros_like(a), np.zeros(lam0_shape)
                kin, ev, rq, rg = self.residual(t1, qn, vn, an, lam)
        return None

    # ------------------------------------------------------------------------ start
    def initial_accelerations(self, t, q, v):
        """[[M, C_qᵀ], [C_q, 0]] [a; λ] = [f; -d/dt(φ) with a = 0], φ the velocity forms of the constraints
        (velocity-level constraints: 0, as in Exudyn)."""
        s = self.s
        kin = s.kinematics(t, q, v)
        ev = s.constraint_values(kin, True)
        vals = s.newton_matrix_values(kin, ev, 1.0, 0.0, 0.0, lambda g: 1.0)
        try:
            fact = Factorization(s, vals)
        except SingularMatrix:
            return None
        f = s.applied_forces(kin)
        rhs_g = np.zeros(s.nae)
        eps = 1e-5 / max(1.0, float(np.abs(v).max(initial=0.0)))
        phi_p = self._phi(t + eps, q + eps * v, v)
        phi_m = self._phi(t - eps, q - eps * v, v)
        for (g, gp, _), (_, gm, _), (_, g0, _) in zip(phi_p, phi_m, [e for e in ev if e[0] is not s.motions]):
            # acceleration-level rows evaluated with a = 0 are (their a-free part) - prescribed;
            # velocity-level rows keep ∂g/∂q̇ q̈ only (Exudyn leaves out their ∂g/∂q q̇ and ∂g/∂t)
            levels = np.broadcast_to(g.row_levels, g.ae.shape)
            rate = np.where(levels == 2, g0, np.where(levels == 1, 0.0, (gp - gm) / (2 * eps)))
            rhs_g[g.ae] = -np.where(g.active[:, None], rate, 0.0)
        rhs_g[s.motions.ae] = -s.motions.rate_residual(kin)  # the laws' time derivatives exactly
        x = fact.solve(np.concatenate([f, rhs_g]))
        return x[:s.n2], x[s.n2:]

    def _phi(self, t, q, v):
        """The velocity-level rows of every group but the motions, at (t, q, v)."""
        kin = self.s.kinematics(t, q, v)
        return [(g, *g.evaluate(kin, True)) for g in self.s.constraints if g is not self.s.motions]

    def poll(self, t, t0, t_end) -> None:
        now = _time.perf_counter()
        if now - self._last_poll < 0.2:
            return
        self._last_poll = now
        if self.cancel is not None and self.cancel():
            raise SimulationCanceled()
        if self.progress is not None:
            self.progress(min(1.0, (t - t0) / (t_end - t0)) if t_end > t0 else 1.0)


@dataclass
class LoopState:
    """Where the step loop stands; the compiled loop and the Python loop hand it to each other."""
    t: float
    h: float
    step_index: int = 0
    n_steps: int = 0
    good_steps: int = 0


def newton_failure(system, t, h, q, v) -> SolverFailure:
    return SolverFailure("newton_not_converged", f"Newton did not converge at t = {t + h:.6g} (step size {h:.3g})",
                         t + h, system.newton_culprits(q, v))


def not_finite(t) -> SolverFailure:
    return SolverFailure("not_finite", f"the solution became NaN or infinite at t = {t:.6g}", t)


def solve_dynamic(loaded, progress=None, cancel=None, compiled=True) -> Results:
    """The time loop. `compiled`: compiled_loop.CompiledLoop runs the steps in one compiled call
    (the same arithmetic; False keeps the Python loop, for tests that compare the two)."""
    system = loaded.system
    settings = loaded.settings
    ti = settings["timeIntegration"]
    solver_type = loaded.document.solve.solverType
    method = Method.from_settings(ti, solver_type)
    integ = Integrator(system, method, ti["newton"], cancel=cancel, progress=progress)
    loop = CompiledLoop(system, method, ti) if compiled else None
    sensors = Recorder(system)
    warnings = list(loaded.warnings)
    t0, t_end = float(ti["startTime"]), float(ti["endTime"])
    steps = int(round(ti["numberOfSteps"]))
    h_nominal = (t_end - t0) / steps
    writer = sensors.schedule(t0)
    started = _time.perf_counter()
    q, v = system.q_init.copy(), system.v_init.copy()
    state = LoopState(t0, h_nominal)
    error = None
    lam = np.zeros(system.nae)
    a = np.zeros(system.n2)
    try:
        q, v, corrections = system.motions.make_consistent(q, v, t0)
        warnings += corrections
        ga = ti["generalizedAlpha"]
        if ga["computeInitialAccelerations"]:
            init = (loop.initial_accelerations(t0, q, v, integ) if loop is not None
                    else integ.initial_accelerations(t0, q, v))
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
        if loop is not None:
            code, failed_h = loop.solve(state, writer, q, v, a, abar, lam, sensors, integ)
            if code == NEWTON_FAILED:
                raise newton_failure(system, state.t, failed_h, q, v)
            if code == NOT_FINITE:
                raise not_finite(state.t)
            # DONE ends the loop below at once; HAND_BACK lets it redo the step with its diagnostics
        adaptive = ti["adaptiveStep"]
        min_step = ti["minimumStepSize"]
        end_tol = 1e-10 * max(1.0, abs(t_end))
        while t_end - state.t > end_tol if adaptive else state.step_index < steps:
            t, h = state.t, state.h
            hh = h if not adaptive else min(h, t_end - t) if t + h > t_end else h
            out = integ.step(t, hh, q, v, a, abar, system.nae)
            if out is None:
                if not adaptive or hh * ti["adaptiveStepDecrease"] < min_step:
                    raise newton_failure(system, t, hh, q, v)
                state.h = hh * ti["adaptiveStepDecrease"]
                state.good_steps = 0
                continue
            q, v, a, abar, lam, its = out
            t = state.t = t + hh if adaptive else t0 + (state.step_index + 1) * h_nominal
            state.step_index += 1
            state.n_steps += 1
            if adaptive and state.h < h_nominal:
                state.good_steps = state.good_steps + 1 if its <= ti["adaptiveStepRecoveryIterations"] else 0
                if state.good_steps >= ti["adaptiveStepRecoverySteps"]:
                    state.h = min(h_nominal, state.h * ti["adaptiveStepIncrease"])
                    state.good_steps = 0
            last = (t_end - t <= end_tol) if adaptive else state.step_index == steps
            if writer.due(t) or last:
                sensors.record(t, q, v, a, lam)
            if not np.isfinite(q).all():
                raise not_finite(t)
            integ.poll(t, t0, t_end)
    except SolverFailure as exc:
        error = {"code": exc.code, "message": str(exc), "detail": {"time": exc.t, "items": exc.items}}
    except EvaluationError as exc:
        error = {"code": "motion_evaluation",
                 "message": f"a motion could not be evaluated near t = {state.t:.6g}: {exc}",
                 "detail": {"time": state.t, "items": []}}
    seconds = _time.perf_counter() - started
    solver = {"type": "Dynamic", "solverType": enum_name(solver_type), "steps": state.n_steps,
              "newtonIterations": integ.iterations, "jacobians": integ.jacobians, "solveSeconds": seconds}
    return Results(status="failed" if error else "succeeded", warnings=warnings, solver=solver,
                   sensors=sensors.series(), solution=sensors.solution(), error=error)
