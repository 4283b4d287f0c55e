"""Exudyn's explicit solvers (CSolverExplicit): q̈ = M⁻¹ f(q, q̇, t) integrated as a first-order system
with a Butcher tableau, DOPRI5 and ODE23 with Exudyn's step size control; and VelocityVerlet, Exudyn's
velocity Verlet: v½ = v + h/2 a, q' = q + h v½ (Lie group nodes: ν' = ν ∘ exp(h ω½)), a' = M⁻¹ f(q', v½, t + h),
v' = v½ + h/2 a', the acceleration a kept from step to step and computed once at the start (Exudyn's
PostInitializeSolverSpecific: the t0 sensor row shows it, without the eliminated coordinates set to 0).

Constraints, as Exudyn handles them (timeIntegration.explicit.eliminateConstraints):
  True (default): only a ConnectorCoordinate between a ground-node coordinate and a node coordinate
  is allowed; that coordinate is set to 0 (position, velocity, acceleration) after every step,
  whatever the offset. Joints, other coordinate constraints and Euler-parameter nodes (which carry
  the normalization constraint, and whose mass matrix is singular without it) abort Exudyn's
  solver; we refuse them when the model is checked.
  False: Exudyn ignores every constraint (warning); so do we. Euler-parameter nodes are still refused.
Sensor rows: the t0 row has zero accelerations (but VelocityVerlet's) and multipliers (Exudyn does not
evaluate them); later rows have end-of-step accelerations (computeEndOfStepAccelerations) or the last
stage's; VelocityVerlet's are always its a' (at v½, as Exudyn's).
What these solvers refuse is checked with the model (capabilities.explicit_solver_problems).

Numba's on-disk cache does not notice changes of the kernels run_explicit calls (kernels.py,
another file): after changing those, delete the cached `explicit.*` files (or touch this file).
"""
from __future__ import annotations

import math
import time as _time

import numpy as np

from ..items import EXPLICIT_RULES
from ..kernels import (applied_forces, borrowed, compose_rotation_vectors, jit, jit_inline, kinematics,
                       texp_inverse_times, work)
from ..outputs import written_rows
from ..solution import Recorder
from ..values import Results, SimulationCanceled
from .generalized_alpha import SolverFailure
from .repeated_call import RepeatedCall, first_call_steps
from .tableaus import TABLEAUS

# return codes of run_explicit
DONE, PAUSED, REJECTED, NOT_FINITE = range(4)
# layout of the float and int state arrays shared with the caller
T, H, WRITE_NEXT, MIN_STEP_AT = range(4)
N_STEPS, N_REJECTED, ROWS = range(3)


@jit_inline
def _accelerations(t, model, kin, w, q, v, mass, out):
    """q̈ = M⁻¹ f(q, v, t), M constant (Euler-parameter nodes are refused): mass = (diagonal, coupled,
    inverse), the diagonal on most coordinates and the inverse of M's block on the coupled ones (those of
    generic ODE2 objects' mass matrices). Inlined: a call passes every array of the model's tuples, which
    costs more than a small model's forces."""
    diagonal, coupled, inverse = mass
    kinematics(q, v, model, kin)
    applied_forces(t, model, kin, w, 1.0)
    for i in range(out.shape[0]):
        out[i] = w.f[i] / diagonal[i]
    for i in range(coupled.shape[0]):
        s = 0.0
        for j in range(coupled.shape[0]):
            s += inverse[i, j] * w.f[coupled[j]]
        out[coupled[i]] = s


@jit
def initial_accelerations(t, model, kin, w, q, v, mass, out):
    """VelocityVerlet's first acceleration, out = M⁻¹ f(q, v, t) (Exudyn computes it when its solver starts)."""
    _accelerations(t, model, kin, w, q, v, mass, out)


@jit
def _combine(x, h, weights, count, stages, out):
    """out = x + Σ_{j < count, w_j ≠ 0} (w_j h) stages[j], term by term in Exudyn's order."""
    out[:] = x
    for j in range(count):
        if weights[j] != 0.0:
            wh = weights[j] * h
            for i in range(out.shape[0]):
                out[i] += wh * stages[j, i]


@jit_inline
def _step_state(q, v, h, weights, stages, kq, kv, lie, lie_cols, lie_ref, fixed, qn, vn):
    """(qn, vn) from the stages' rates with the tableau's weights (b, or b_err for the embedded solution)."""
    _combine(q, h, weights, stages, kq, qn)
    if lie:
        _lie_combine(q, h, weights, stages, kq, lie_cols, lie_ref, qn)
    _combine(v, h, weights, stages, kv, vn)
    for k in fixed:
        qn[k], vn[k] = 0.0, 0.0


@jit_inline
def _weighted_columns(h, weights, count, stages, c0, c1, c2):
    """Σ_{j < count, w_j ≠ 0} (w_j h) stages[j] on the columns c0, c1, c2, term by term as _combine."""
    s0, s1, s2 = 0.0, 0.0, 0.0
    for j in range(count):
        if weights[j] != 0.0:
            wh = weights[j] * h
            s0 += wh * stages[j, c0]
            s1 += wh * stages[j, c1]
            s2 += wh * stages[j, c2]
    return s0, s1, s2


@jit
def _lie_combine(x, h, weights, count, stages, lie_cols, lie_ref, out):
    """The rotation columns of out := x ∘ exp(Σ_{j < count, w_j ≠ 0} (w_j h) stages[j]) per Lie group node
    (CSolverExplicitTimeInt's composition update; the stages hold the Lie algebra increments' rates)."""
    for k in range(lie_cols.shape[0]):
        c0, c1, c2 = lie_cols[k, 0], lie_cols[k, 1], lie_cols[k, 2]
        s0, s1, s2 = _weighted_columns(h, weights, count, stages, c0, c1, c2)
        r0, r1, r2 = lie_ref[k, 0], lie_ref[k, 1], lie_ref[k, 2]
        n0, n1, n2 = compose_rotation_vectors(x[c0] + r0, x[c1] + r1, x[c2] + r2, s0, s1, s2)
        out[c0], out[c1], out[c2] = n0 - r0, n1 - r1, n2 - r2


@jit
def _lie_stage_rates(h, weights, count, kq, lie_cols, out):
    """The Lie group nodes' stage derivative T⁻¹(Σ_j (w_j h) kq[j]) ω̄ of a stage whose velocity is out's rotation
    columns (Exudyn's LieGroupComputeKstage; T the tangent operator of exp on SO(3))."""
    for k in range(lie_cols.shape[0]):
        c0, c1, c2 = lie_cols[k, 0], lie_cols[k, 1], lie_cols[k, 2]
        s0, s1, s2 = _weighted_columns(h, weights, count, kq, c0, c1, c2)
        out[c0], out[c1], out[c2] = texp_inverse_times(s0, s1, s2, out[c0], out[c1], out[c2])


@jit
def _block_sum(a, lo, n):
    """numpy's sum of a[lo:lo+n] for n <= 128: eight interleaved partial sums."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3, r4, r5, r6, r7 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3], a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    while i < n - (n % 8):
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@jit
def _pairwise_sum(a, lo, n):
    """numpy's sum of a[lo:lo+n] (its pairwise summation, so the step size control sees the same
    bits): above 128 terms the sum of two halves, the first a multiple of 8 long. Without recursion
    (numba's cache mishandles recursive functions): a stack of (start, length, phase) and one of sums."""
    if n <= 128:
        return _block_sum(a, lo, n)
    starts, lengths, phases, sums = np.empty(128, np.int64), np.empty(128, np.int64), np.empty(128, np.int64), \
        np.empty(128)
    top, vals = 0, 0
    starts[0], lengths[0], phases[0] = lo, n, 0
    while top >= 0:
        start, length = starts[top], lengths[top]
        half = length // 2
        half -= half % 8
        if length <= 128:
            sums[vals] = _block_sum(a, start, length)
            vals += 1
            top -= 1
        elif phases[top] < 2:  # push the first half, then the second
            phases[top] += 1
            first = phases[top] == 1
            top += 1
            starts[top], lengths[top], phases[top] = (start, half, 0) if first else (start + half, length - half, 0)
        else:
            vals -= 1
            sums[vals - 1] = sums[vals - 1] + sums[vals]
            top -= 1
    return sums[0]


@jit
def run_explicit(model, kin, w, scratch, A, c, b, b_err, mass, fixed, lie_cols, lie_ref, settings, q, v, fstate, istate,
                 rows, max_steps):
    """Steps from (q, v, fstate, istate) until endTime (DONE), `max_steps` steps or a full `rows`
    buffer (PAUSED), a rejected step without adaptiveStep (REJECTED) or a non-finite state. An
    embedded tableau (b_err not empty) controls the step size: Hairer-Nørsett-Wanner I p. 168 with
    Exudyn's scaling (signed max, positions and velocities); fstate[MIN_STEP_AT] is the time the
    control first reached minimumStepSize (NaN: never). Written rows: [t, q, v, q̈, λ = 0]. kin, w
    (kernels.work) and scratch (explicit_scratch) are the caller's, so every array here is borrowed
    (kernels.borrowed: no reference counting in the loop). Lie group nodes (lie_cols, lie_ref: their rotation
    columns and reference rotation vectors; empty without useLieGroupIntegration) step their rotation vectors by
    composition, as Exudyn's Munthe-Kaas form of the tableau: stage rotations ν_n ∘ exp(h Σ a_ij K_j), stage
    derivatives K_i = T⁻¹(h Σ a_ij K_j) ω̄_i, the step ν_n ∘ exp(h Σ b_i K_i). settings[-1] (verlet) steps
    VelocityVerlet instead (module docstring), from the acceleration in scratch's q̈ (initial_accelerations)."""
    model, kin, w, scratch = borrowed(model), borrowed(kin), borrowed(w), borrowed(scratch)
    A, c, b, b_err, mass, fixed, q, v, fstate, istate, rows = borrowed((A, c, b, b_err, mass, fixed, q, v, fstate,
                                                                         istate, rows))
    lie_cols, lie_ref = borrowed((lie_cols, lie_ref))
    lie = lie_cols.shape[0] > 0
    t0, t_end, h_max, accumulate, atol, rtol, max_increase, min_step, safety, order, end_accelerations, period, \
        verlet = settings
    n2, stages = q.shape[0], c.shape[0]
    kq, kv, xq, qn, vn, qe, ve, a, err2 = scratch
    control = b_err.shape[0] > 0
    done_here = 0
    while fstate[T] < t_end - 1e-10:
        if done_here >= max_steps or istate[ROWS] >= rows.shape[0]:
            return PAUSED
        t, h = fstate[T], fstate[H]
        if accumulate:
            if t + h > t_end:  # Exudyn cuts the last step to end at endTime
                h = t_end - t
            t_new = t + h
        else:
            t_new = t0 + (istate[N_STEPS] + 1) * h
        if verlet:  # Exudyn's order of operations, so its bits: v½ in kq[0], q' (b = [1]: q + h v½), a', v'
            half = 0.5 * h
            for i in range(n2):
                kq[0, i] = v[i] + half * a[i]
            _combine(q, h, b, 1, kq, qn)
            if lie:
                _lie_combine(q, h, b, 1, kq, lie_cols, lie_ref, qn)
            for k in fixed:
                qn[k], kq[0, k] = 0.0, 0.0
            _accelerations(t_new, model, kin, w, qn, kq[0], mass, a)
            for k in fixed:
                a[k] = 0.0
            for i in range(n2):
                vn[i] = kq[0, i] + half * a[i]
        else:
            for i in range(stages):
                _combine(q, h, A[i], i, kq, xq)
                if lie and i > 0:
                    _lie_combine(q, h, A[i], i, kq, lie_cols, lie_ref, xq)
                _combine(v, h, A[i], i, kv, kq[i])  # the stage's velocity is the next stages' q̇
                _accelerations(t + c[i] * h, model, kin, w, xq, kq[i], mass, kv[i])
                if lie and i > 0:
                    _lie_stage_rates(h, A[i], i, kq, lie_cols, kq[i])
            _step_state(q, v, h, b, stages, kq, kv, lie, lie_cols, lie_ref, fixed, qn, vn)
        if control:
            _step_state(q, v, h, b_err, stages, kq, kv, lie, lie_cols, lie_ref, fixed, qe, ve)
            for i in range(n2):
                x = (qe[i] - qn[i]) / (atol + max(qe[i], q[i]) * rtol)
                err2[i] = x * x
                y = (ve[i] - vn[i]) / (atol + max(ve[i], v[i]) * rtol)
                err2[n2 + i] = y * y
            err = math.sqrt((_pairwise_sum(err2, 0, n2) + _pairwise_sum(err2, n2, n2)) / (2 * n2))
            err = err if err != 0.0 else 1e-12
            h_opt = h * (1.0 / err) ** (1.0 / order)
            h_new = min(min(h_max, h * max_increase), max(min_step, safety * h_opt))
            reject = False
            if h_new == min_step and math.isnan(fstate[MIN_STEP_AT]):
                fstate[MIN_STEP_AT] = t
            elif h_opt < h:
                reject = True
            fstate[H] = h_new
            if reject:
                if not accumulate:
                    return REJECTED
                istate[N_REJECTED] += 1
                continue
        else:
            fstate[H] = h
        q[:] = qn
        v[:] = vn
        t = fstate[T] = t_new
        istate[N_STEPS] += 1
        done_here += 1
        for i in range(n2):
            if not math.isfinite(q[i]):
                return NOT_FINITE
        due = t >= fstate[WRITE_NEXT] - 1e-10
        if due:
            fstate[WRITE_NEXT] = max(fstate[WRITE_NEXT] + period, t)
        if due or t >= t_end - 1e-10:
            if not verlet:
                if end_accelerations:
                    _accelerations(t, model, kin, w, q, v, mass, a)
                else:
                    a[:] = kv[stages - 1]
                for k in fixed:
                    a[k] = 0.0
            row = rows[istate[ROWS]]
            row[0] = t
            row[1:1 + n2] = q
            row[1 + n2:1 + 2 * n2] = v
            row[1 + 2 * n2:1 + 3 * n2] = a
            row[1 + 3 * n2:] = 0.0
            istate[ROWS] += 1
    return DONE


def explicit_scratch(n2: int, stages: int) -> tuple:
    """run_explicit's stage derivatives (kq, kv), the stage state, the new and the embedded
    solution (q, v each), q̈ (VelocityVerlet: the acceleration it keeps) and the squared scaled errors."""
    e = np.empty
    return (e((stages, n2)), e((stages, n2)), e(n2), e(n2), e(n2), e(n2), e(n2), e(n2), e(2 * n2))


def _fixed_coordinates(system, ti: dict) -> np.ndarray:
    """Coordinates fixed at 0 by eliminated ConnectorCoordinates (the non-ground marker's column)."""
    fixed = []
    if ti["explicit"]["eliminateConstraints"]:
        for g in system.constraints:
            if EXPLICIT_RULES.get(getattr(g, "OBJECT_TYPE", None)) == "eliminate":
                fixed += [int(c) for c in g.cols.ravel() if c != system.dummy]
    return np.array(fixed, dtype=np.int64)


def _masses(system) -> tuple:
    """M for _accelerations: point masses, planar rigid bodies, rigid bodies on rotation-vector nodes with the
    center of mass at the node and a diagonal inertia tensor (M = diag(m, m, m, J)), generic ODE2 objects and
    beams only (the others are refused), so M is constant. The coordinates of the constant mass triplets
    (System.constant_mass) are solved with the inverse of their block of M, once (Exudyn factorizes its
    constant M once)."""
    mass = np.zeros(system.n2 + 1)
    np.add.at(mass, system.mass_points.cols.ravel(), system.mass_points.mass.ravel())
    b = system.bodies
    for k in range(b.size):
        mass[b.cols[k, :3]] += b.mass[k]
        mass[b.cols[k, 3:6]] += np.diag(b.inertia[k])
    rows, cols, values = system.constant_mass
    coupled = np.unique(np.concatenate([rows, cols]))
    block = np.zeros((len(coupled), len(coupled)))
    np.add.at(block, (np.searchsorted(coupled, rows), np.searchsorted(coupled, cols)), values)
    block[np.diag_indices(len(coupled))] += mass[coupled]
    mass[coupled] = 1.0  # replaced by the block's solution
    if not np.all(mass[:-1] != 0.0):
        raise SolverFailure("singular_matrix", "the mass matrix is singular (a node without mass)", 0.0)
    try:
        inverse = np.linalg.inv(block)
    except np.linalg.LinAlgError:
        raise SolverFailure("singular_matrix", "the constant mass matrix of the generic ODE2 objects and beams is singular", 0.0) \
            from None
    return mass[:-1], coupled.astype(np.int64), np.ascontiguousarray(inverse)


def solve_explicit(loaded, progress=None, cancel=None, seconds_per_call: float = 0.1) -> Results:
    """The step loop is run_explicit; this orchestrates it: sensor rows, warnings, and between
    calls of about seconds_per_call, cancellation and progress."""
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
    error = None
    if system.constraints and not ti["explicit"]["eliminateConstraints"]:
        warnings.append({"code": "ConstraintsIgnored", "item": None,
                         "message": f"{solver_type} ignores all constraints (eliminateConstraints = false), "
                                    "as Exudyn does"})
    A, c, b, b_err, order = TABLEAUS[solver_type]
    # an embedded tableau always controls the step (CSolverExplicit::Newton); automaticStepSize only
    # chooses the initial step (verified against Exudyn 1.13.6)
    automatic = ti["automaticStepSize"] and b_err is not None
    accumulate = ti["adaptiveStep"] or automatic
    fstate = np.array([t0, (ti["initialStepSize"] or h_max) if automatic else h_max, 0.0, np.nan])
    istate = np.zeros(3, np.int64)
    verlet = solver_type == "VelocityVerlet"
    try:
        mass = _masses(system)
        kin, w = work(system.model, system.n2, 0)
        scratch = explicit_scratch(system.n2, len(c))
        acceleration = scratch[7]
        acceleration[:] = 0.0
        if verlet:
            initial_accelerations(t0, system.model, kin, w, q, v, mass, acceleration)
        if sensors.write_initial and writer.due(t0):
            sensors.record(t0, q, v, acceleration, np.zeros(system.nae))
        fstate[WRITE_NEXT] = writer.next
        config = np.array([t0, t_end, h_max, accumulate, ti["absoluteTolerance"], ti["relativeTolerance"],
                           ti["stepSizeMaxIncrease"], ti["minimumStepSize"], ti["stepSizeSafety"], order,
                           ti["explicit"]["computeEndOfStepAccelerations"], writer.period, verlet])
        tableau = (np.array(A, float), np.array(c, float), np.array(b, float), np.array(b_err or [], float))
        rows = written_rows(system)
        fixed = _fixed_coordinates(system, ti)
        lie = (system.model.lie_cols, system.model.lie_ref) if ti["explicit"]["useLieGroupIntegration"] else \
            (np.zeros((0, 3), np.int64), np.zeros((0, 3)))
        max_steps = first_call_steps(system.n2)  # then as many as take about seconds_per_call
        run = RepeatedCall(run_explicit)  # the same arrays at every call
        while True:
            call_started, steps_before = _time.perf_counter(), istate[N_STEPS]
            istate[ROWS] = 0
            code = run(system.model, kin, w, scratch, *tableau, mass, fixed, *lie, config, q, v, fstate, istate, rows,
                       max_steps)
            sensors.record_rows(rows[:istate[ROWS]])
            if code == REJECTED:
                raise SolverFailure("step_size", f"{solver_type} rejected the step at t = {fstate[T]:.6g} and "
                                    "adaptiveStep = false forbids reducing it", float(fstate[T]))
            if code == NOT_FINITE:
                raise SolverFailure("not_finite", f"the solution became NaN or infinite at t = {fstate[T]:.6g}",
                                    float(fstate[T]))
            if code == DONE:
                break
            if cancel is not None and cancel():
                raise SimulationCanceled()
            if progress is not None:
                progress(min(1.0, (fstate[T] - t0) / (t_end - t0)) if t_end > t0 else 1.0)
            per_step = (_time.perf_counter() - call_started) / max(1, istate[N_STEPS] - steps_before)
            max_steps = max(1, int(seconds_per_call / max(per_step, 1e-9)))
    except SolverFailure as exc:
        error = {"code": exc.code, "message": str(exc), "detail": {"time": exc.t, "items": exc.items}}
    if not np.isnan(fstate[MIN_STEP_AT]):
        warnings.append({"code": "MinimumStepSize", "item": None,
                         "message": f"t = {fstate[MIN_STEP_AT]:.6g}: the step size control reached minimumStepSize; "
                                    "the error may exceed the tolerances"})
    solver = {"type": "Dynamic", "solverType": solver_type, "steps": int(istate[N_STEPS]),
              "rejectedSteps": int(istate[N_REJECTED]), "newtonIterations": 0, "jacobians": 0,
              "solveSeconds": _time.perf_counter() - started}
    return Results(status="failed" if error else "succeeded", warnings=warnings, solver=solver,
                   sensors=sensors.series(), solution=sensors.solution(), error=error)
