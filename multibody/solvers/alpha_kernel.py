"""The generalized-α time loop as one compiled call (kernels.residual covers every item type,
motions included), with a dense LU for small Newton matrices and a sparse one for large ones.

On small models the Python step loop costs far more than the arithmetic (a numba call with the
model's ~50 arrays costs ~8 µs to dispatch, the residual itself ~1 µs), so here predictor,
residuals, Newton matrix, LU, Newton iterations, step-size control and the sensor write rule
run in one call over many steps (the first call of a solve computes the initial accelerations: one
call through numba's dispatcher, whose typing of the model's arrays costs more than a small model's
steps; the next go straight to the machine code, compiled_loop.RepeatedCall); this is the only
step loop. Every ending is a return code with the state left where it happened (the failing
step's size in fstate[FAIL_H], its last Newton iterate in the caller's scratch, the singular
matrix's entries in the LinearSystem, the undefined law's motion in w.mo_bad); the caller
builds the error documents from them (generalized_alpha.solve_dynamic).

Numba's on-disk cache does not notice changes of the kernels these call (kernels.py, another
file): after changing those, delete the cached `alpha_kernel.*` files (or touch this file). Any
change of this file recompiles all of them; the Python that drives them is in compiled_loop.py.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..kernels import (CONVERGED, GIVE_UP, LU_DONE, LU_REPIVOT, LU_SINGULAR, RESTART, Entries, add_entry, borrowed,
                       compiled_data_items, compiled_keep_data, compiled_matrix, compiled_post_newton,
                       compiled_write_data, eval_program, jit, jit_inline, jit_noalloc, kinematics, lie_group_prediction,
                       lu_solve_csc_into, motion_rows,
                       newton_rules, newton_update, residual, rigid_mass_matrices,
                       rigid_quadratic_velocity_jacobians, sparse_lu_refactor, spring_jacobians)

# return codes of run_steps (and of initial_accelerations, its first call's). SINGULAR: a singular Newton
# matrix, or a non-finite update from its LU; UNDEFINED_LAW: a motion's law undefined at the iterate
DONE, PAUSED, NEWTON_FAILED, NOT_FINITE, SINGULAR, LINEAR_SETUP, UNDEFINED_LAW = range(7)
LU_SETUP = 3  # _lu's answer when Python must first size the entries or analyze the sparse pattern
# layout of the float and int state arrays shared with the caller
T, H, WRITE_NEXT, FAIL_H, RECOMMENDED = range(5)
STEP_INDEX, N_STEPS, GOOD_STEPS, ITERATIONS, JACOBIANS, JACOBIAN_REQUESTED, ROWS, INITIAL = range(8)


@jit_inline
def _residual(t, q, v, a, lam, velocity_level, model, kin, w):
    """kinematics and residual at (t, q, v, a, λ); returns |r| (w.mo_bad >= 0: a motion's law is undefined)."""
    kinematics(q, v, model, kin)
    residual(t, a, lam, velocity_level, model, kin, w)
    rq, rg = w.rq, w.rg
    s = 0.0
    for i in range(rq.shape[0]):
        s += rq[i] * rq[i]
    s2 = 0.0
    for i in range(rg.shape[0]):
        s2 += rg[i] * rg[i]
    return math.sqrt(s + s2)


@jit
def _assemble(E, t, model, kin, w, mass_factor, k_factor, d_factor, level_factor, velocity_factor,
              acceleration_factor):
    """J̃ = mass_factor·M − k_factor·∂f/∂q − d_factor·∂f/∂v at time t, C_qᵀ, level_factor·C_q
    (velocity_factor·C_q for velocity-level rows, acceleration_factor·C_q for acceleration-level
    motions) and the (λ, λ) diagonal of inactive joints, summed in the order of
    System.newton_matrix_values; item types with kernels of their own last (kernels.compiled_matrix).
    User-function forces enter with their symbolic derivatives."""
    m = model
    mcols, b_frame, b_cols, b_mass, b_com, b_inertia = m.mcols, m.b_frame, m.b_cols, m.b_mass, m.b_com, m.b_inertia
    s_m0, s_m1, s_k, s_d, s_L0, s_fa, s_voff, s_active = m.s_m0, m.s_m1, m.s_k, m.s_d, m.s_L0, m.s_fa, m.s_voff, \
        m.s_active
    e_cols, e_ae, j_m0, j_nrows, j_cols, j_ae, j_active = m.e_cols, m.e_ae, m.j_m0, m.j_nrows, m.j_cols, m.j_ae, \
        m.j_active
    fA, fGbar, pos, vel, Jpos = kin.fA, kin.fGbar, kin.pos, kin.vel, kin.Jpos
    eC, jC = w.eC, w.jC
    n2 = kin.q.shape[0] - 1
    uf = (m.uf_code, m.uf_consts, m.uf_start, w.uf_x, w.uf_work)
    E.count[0] = 0
    nb = b_frame.shape[0]
    if nb:  # no allocations without rigid bodies
        M = rigid_mass_matrices(fA, fGbar, b_frame, b_mass, b_com, b_inertia)
        if k_factor != 0.0 or d_factor != 0.0:
            qv_q, qv_v = rigid_quadratic_velocity_jacobians(kin.theta, kin.theta_t, m.f_rotation, b_frame, b_cols,
                                                            b_mass, b_com, b_inertia, kin.q, kin.v, n2)
        else:
            qv_q, qv_v = np.zeros((nb, 7, 7)), np.zeros((nb, 7, 7))
        for k in range(nb):
            for i in range(7):
                r = b_cols[k, i]
                if r >= n2:
                    continue
                for j in range(7):
                    c = b_cols[k, j]
                    if c < n2:
                        add_entry(E, r, c, M[k, i, j] * mass_factor - (k_factor * qv_q[k, i, j] + d_factor * qv_v[k, i, j]))
    for k in range(m.p_mass.shape[0]):  # mass points m I, planar rigid bodies diag(m, m, J)
        for i in range(3):
            add_entry(E, m.p_cols[k, i], m.p_cols[k, i], m.p_mass[k, i] * mass_factor)
    for k in range(m.g_mr.shape[0]):  # generic ODE2 objects: constant M, K, D
        add_entry(E, m.g_mr[k], m.g_mc[k], m.g_mv[k] * mass_factor)
    for k in range(m.g_kr.shape[0]):
        add_entry(E, m.g_kr[k], m.g_kc[k], m.g_kv[k] * k_factor)
    for k in range(m.g_dr.shape[0]):
        add_entry(E, m.g_dr[k], m.g_dc[k], m.g_dv[k] * d_factor)
    if s_m0.shape[0]:
        dq, dv = spring_jacobians(t, pos, vel, Jpos, s_m0, s_m1, s_k, s_d, s_L0, s_fa, s_voff, s_active, m.s_uf, uf)
        for k in range(s_m0.shape[0]):
            for i in range(14):
                r = mcols[s_m0[k], i] if i < 7 else mcols[s_m1[k], i - 7]
                if r >= n2:
                    continue
                for j in range(14):
                    c = mcols[s_m0[k], j] if j < 7 else mcols[s_m1[k], j - 7]
                    if c < n2:
                        add_entry(E, r, c, -(k_factor * dq[k, i, j] + d_factor * dv[k, i, j]))
    KD = w.mats  # (2,3,3) scratch
    for k in range(m.c_m0.shape[0]):  # Cartesian spring-dampers: -Jdᵀ diag(k) Jd, Jd = [-J0, J1]
        if not m.c_active[k]:
            continue
        p_uf = m.c_uf[k]
        if p_uf >= 0:  # a user function: -Jdᵀ (∂F/∂Δp) Jd, -Jdᵀ (∂F/∂Δv) Jd
            for x in range(3):
                w.uf_x[1 + x] = pos[m.c_m1[k], x] - pos[m.c_m0[k], x]
                w.uf_x[4 + x] = vel[m.c_m1[k], x] - vel[m.c_m0[k], x]
            w.uf_x[0] = t
            for x in range(3):
                for y in range(3):
                    KD[0, x, y] = eval_program(m.uf_code, m.uf_consts, m.uf_start, p_uf + 3 + 3 * x + y, w.uf_x,
                                               w.uf_work)
                    KD[1, x, y] = eval_program(m.uf_code, m.uf_consts, m.uf_start, p_uf + 12 + 3 * x + y, w.uf_x,
                                               w.uf_work)
        for i in range(14):
            r = mcols[m.c_m0[k], i] if i < 7 else mcols[m.c_m1[k], i - 7]
            if r >= n2:
                continue
            for j in range(14):
                c = mcols[m.c_m0[k], j] if j < 7 else mcols[m.c_m1[k], j - 7]
                if c >= n2:
                    continue
                sq, sv = 0.0, 0.0
                for x in range(3):
                    ji = -Jpos[m.c_m0[k], x, i] if i < 7 else Jpos[m.c_m1[k], x, i - 7]
                    if p_uf >= 0:
                        for y in range(3):
                            jj = -Jpos[m.c_m0[k], y, j] if j < 7 else Jpos[m.c_m1[k], y, j - 7]
                            sq += ji * KD[0, x, y] * jj
                            sv += ji * KD[1, x, y] * jj
                        continue
                    jj = -Jpos[m.c_m0[k], x, j] if j < 7 else Jpos[m.c_m1[k], x, j - 7]
                    sq += ji * m.c_k[k, x] * jj
                    sv += ji * m.c_d[k, x] * jj
                add_entry(E, r, c, -(k_factor * -sq + d_factor * -sv))
    for k in range(m.cs_cols.shape[0]):  # coordinate spring-dampers: k·[[-1, 1], [1, -1]]
        act = 1.0 if m.cs_active[k] else 0.0
        ck, cd = m.cs_k[k], m.cs_d[k]
        if m.cs_uf[k] >= 0:  # a user function: k = ∂f/∂displacement, d = ∂f/∂velocity
            c0, c1 = m.cs_cols[k, 0], m.cs_cols[k, 1]
            w.uf_x[0], w.uf_x[1], w.uf_x[2] = t, kin.q[c1] - kin.q[c0], kin.v[c1] - kin.v[c0]
            ck = eval_program(m.uf_code, m.uf_consts, m.uf_start, m.cs_uf[k] + 1, w.uf_x, w.uf_work)
            cd = eval_program(m.uf_code, m.uf_consts, m.uf_start, m.cs_uf[k] + 2, w.uf_x, w.uf_work)
        for i in range(2):
            r = m.cs_cols[k, i]
            for j in range(2):
                c = m.cs_cols[k, j]
                if r < n2 and c < n2:
                    sign = -1.0 if i == j else 1.0
                    add_entry(E, r, c, -(k_factor * (ck * sign * act) + d_factor * (cd * sign * act)))
    for k in range(e_cols.shape[0]):  # Euler-parameter normalization: always active
        row = n2 + e_ae[k, 0]
        for j in range(7):
            c = e_cols[k, j]
            if c < n2:
                add_entry(E, c, row, eC[k, 0, j])
                add_entry(E, row, c, eC[k, 0, j] * level_factor)
    for k in range(j_m0.shape[0]):
        act = 1.0 if j_active[k] else 0.0
        for r in range(j_nrows[k]):
            row = n2 + j_ae[k, r]
            for j in range(14):
                c = j_cols[k, j]
                if c < n2:
                    C = jC[k, r, j] * act
                    add_entry(E, c, row, C)
                    add_entry(E, row, c, C * level_factor)
            add_entry(E, row, row, 1.0 - act)
    for k in range(m.cc_cols.shape[0]):
        act = 1.0 if m.cc_active[k] else 0.0
        row = n2 + m.cc_ae[k, 0]
        level = velocity_factor if m.cc_vlevel[k] else level_factor
        for j in range(2):
            c = m.cc_cols[k, j]
            if c < n2:
                C = w.ccC[k, 0, j] * act
                add_entry(E, c, row, C)
                add_entry(E, row, c, C * level)
        add_entry(E, row, row, 1.0 - act)
    for k in range(m.mo_m0.shape[0]):  # motions: always active
        row = n2 + m.mo_ae[k]
        level = m.mo_levels[k]
        factor = level_factor if level == 0 else (velocity_factor if level == 1 else acceleration_factor)
        for j in range(14):
            c = m.mo_cols[k, j]
            if c < n2:
                add_entry(E, c, row, w.mo_C[k, j])
                add_entry(E, row, c, w.mo_C[k, j] * factor)
    compiled_matrix(E, m.x_forces, m.x_constraints, kin, w.x_scratch, k_factor, d_factor, level_factor,
                    velocity_factor, acceleration_factor)


class LinearSystem(NamedTuple):
    """The Newton matrix of the compiled loops and its LU: dense (_lu_factor) for small systems, else
    sparse (kernels.sparse_lu_refactor) in the pivot order and on the factor patterns that
    linear.sparse_analysis found from the first assembled matrix. The arrays of the other kind are empty."""
    entries: Entries
    sparse: np.ndarray  # (3,) int64: the sparse LU is used; its analysis is current; the dense LU ignores singular
    # pivots (Exudyn's linearSolver.ignoreSingularJacobian)
    A: np.ndarray  # (n,n) the matrix, overwritten by its LU
    piv: np.ndarray
    ptr: np.ndarray  # _lu_factor's nonzeros of the factors
    idx: np.ndarray
    val: np.ndarray
    slot: np.ndarray  # each entry's place in Ax
    Ap: np.ndarray  # A' = the matrix in pivot order, CSC
    Ai: np.ndarray
    Ax: np.ndarray
    perm_r: np.ndarray
    perm_c: np.ndarray
    Lp: np.ndarray  # L (strictly lower) and U (strictly upper) in CSC, U's diagonal Ud
    Li: np.ndarray
    Lx: np.ndarray
    Up: np.ndarray
    Ui: np.ndarray
    Ux: np.ndarray
    Ud: np.ndarray
    x: np.ndarray  # scratch, zero between factorizations
    y: np.ndarray  # scratch


@jit_noalloc
def _lu(fact, colmax):
    """The LU of the assembled entries: LU_DONE, LU_SINGULAR (a pivot at round-off level of its column),
    or LU_SETUP when Python must first resize the entries or (again, when a pivot of the sparse
    order became unstable) analyze the sparse pattern (CompiledLoop.setup)."""
    E = fact.entries
    count = E.count[0]
    if count > E.vals.shape[0]:
        return LU_SETUP
    if fact.sparse[0]:
        if not fact.sparse[1]:
            return LU_SETUP
        Ax = fact.Ax
        Ax[:] = 0.0
        for k in range(count):
            Ax[fact.slot[k]] += E.vals[k]
        code = sparse_lu_refactor(fact.Ap, fact.Ai, Ax, fact.Lp, fact.Li, fact.Lx, fact.Up, fact.Ui, fact.Ux, fact.Ud,
                                  fact.x)
        if code == LU_REPIVOT:
            fact.sparse[1] = 0
            return LU_SETUP
        return code
    A = fact.A
    A[:] = 0.0
    for k in range(count):
        A[E.rows[k], E.cols[k]] += E.vals[k]
    return LU_DONE if _lu_factor(A, fact.piv, colmax, fact.ptr, fact.idx, fact.val, fact.sparse[2] != 0) \
        else LU_SINGULAR


@jit_inline
def _solve(fact, x):
    """x := J̃⁻¹x with _lu's factors."""
    if fact.sparse[0]:
        lu_solve_csc_into(x, fact.y, fact.perm_r, fact.perm_c, fact.Lp, fact.Li, fact.Lx, fact.Up, fact.Ui, fact.Ux,
                          fact.Ud)
    else:
        _lu_solve(fact.A, fact.piv, fact.ptr, fact.idx, fact.val, x)


@jit_noalloc
def _lu_factor(A, piv, colmax, ptr, idx, val, ignore_singular):
    """LU with partial pivoting in place (LAPACK getf2's algorithm); False when a pivot is at
    round-off level of its column (the rule of linear.Factorization), unless `ignore_singular`: that
    column then gets the pivot 1 and eliminates nothing, a change of the matrix in that column only, so
    a consistent system is solved with that unknown 0 (redundant constraints: their multipliers are not
    unique, the motion is; Exudyn's FullPivLU also gives one such solution). The nonzeros of L and of
    U's strict upper part are then kept row by row (row i: L in idx/val[ptr[2i]:ptr[2i+1]], U in
    [ptr[2i+1]:ptr[2i+2]]), so solves cost the factors' nonzeros, not n²."""
    n = A.shape[0]
    for j in range(n):
        m = 0.0
        for i in range(n):
            m = max(m, abs(A[i, j]))
        colmax[j] = m
    for k in range(n):
        p, best = k, abs(A[k, k])
        for i in range(k + 1, n):
            if abs(A[i, k]) > best:
                p, best = i, abs(A[i, k])
        piv[k] = p
        if not best > 1e-13 * colmax[k]:
            if not ignore_singular:
                return False
            piv[k] = k
            A[k, k] = 1.0
            for i in range(k + 1, n):
                A[i, k] = 0.0
            continue
        if p != k:
            for j in range(n):
                A[k, j], A[p, j] = A[p, j], A[k, j]
        inv = 1.0 / A[k, k]
        for i in range(k + 1, n):
            lik = A[i, k] * inv
            A[i, k] = lik
            if lik != 0.0:
                for j in range(k + 1, n):
                    A[i, j] -= lik * A[k, j]
    nz = 0
    for i in range(n):
        ptr[2 * i] = nz
        for j in range(n):
            if j == i:
                ptr[2 * i + 1] = nz
            elif A[i, j] != 0.0:
                idx[nz] = j
                val[nz] = A[i, j]
                nz += 1
    ptr[2 * n] = nz
    return True


@jit_noalloc
def _lu_solve(A, piv, ptr, idx, val, x):
    """x := A⁻¹x from _lu_factor's factors; skipped zeros leave the sums of the dense solve unchanged."""
    n = x.shape[0]
    for k in range(n):
        p = piv[k]
        if p != k:
            x[k], x[p] = x[p], x[k]
    for i in range(n):
        s = x[i]
        for k in range(ptr[2 * i], ptr[2 * i + 1]):
            s -= val[k] * x[idx[k]]
        x[i] = s
    for i in range(n - 1, -1, -1):
        s = x[i]
        for k in range(ptr[2 * i + 1], ptr[2 * i + 2]):
            s -= val[k] * x[idx[k]]
        x[i] = s / A[i, i]


@jit_inline
def _factorize(fact, colmax, t, model, kin, w, method, h):
    """The Newton matrix at t (_assemble) and its LU (_lu's answer). Inlined into _newton: a call passes every
    array of the model's tuples (kernels.jit_inline), and _assemble's call is the one left."""
    beta, gamma, alpha_m, alpha_f, _, index2 = method
    c = (1.0 - alpha_f) / (1.0 - alpha_m)
    level = gamma / (beta * h) if index2 else 1.0
    _assemble(fact.entries, t, model, kin, w, 1.0 / c, beta * h * h, gamma * h, level, gamma / (beta * h),
              1.0 / (c * beta * h * h))
    return _lu(fact, colmax)


@jit_inline
def _newton(t1, h, q, v, a, abar, qn, vn, an, lam, ahat, rhs, method, newton, max_it, model, kin, w, fact, colmax,
            lie_old, istate):
    """One step t -> t + h with Exudyn's Newton rules (kernels.newton_rules): r0 is the predictor's
    residual; the Jacobian is kept across steps, also when h changes, until a rule asks for a new
    one. Returns (1 converged (qn, vn, an, lam, abar updated) | 0 Newton failed | -1 singular matrix
    or non-finite update | -2 the LU needs CompiledLoop.setup | -3 a motion's law undefined at
    (qn, vn, an), iterations). Inlined into run_steps, with the residual inlined at its one call site
    here: a compiled call increfs and decrefs every array of the model's tuples, which cost more
    than a small model's step (kernels.jit_inline)."""
    beta, gamma, alpha_m, alpha_f, newmark, index2 = method
    abs_tol, modified = newton[0], newton[5]  # newton: kernels.newton_parameters
    n2 = q.shape[0]
    c = (1.0 - alpha_f) / (1.0 - alpha_m)
    bh2 = beta * h * h
    cq, cv, hg = h * h * (0.5 - beta), h * (1.0 - gamma), h * gamma
    for i in range(n2):  # the predictor: â (0 for Newmark), then _predict
        ahat[i] = 0.0 if newmark else (alpha_f * a[i] - alpha_m * abar[i]) / (1.0 - alpha_m)
    vl = index2 != 0.0
    _predict(h, q, v, a, abar, qn, vn, an, lam, ahat, newmark, cq, cv, bh2, hg, beta, gamma, model)
    rq, rg = w.rq, w.rg
    r0, r_prev, full, restarted, extra, after_restart = 0.0, 0.0, modified == 0.0, False, False, False
    it = 0
    while True:
        rn = _residual(t1, qn, vn, an, lam, vl, model, kin, w)  # the predicted state's, or iteration it's
        if w.mo_bad[0] >= 0:
            return -3, it
        if after_restart:  # the restarted prediction's residual: the next iteration solves with it
            after_restart = False
        elif it == 0:
            if not math.isfinite(rn):
                return 0, 0
            r0 = rn if rn > abs_tol else 2 * abs_tol
            r_prev = r0
        else:
            action, r0, r_prev, full, restarted, extra, new_jacobian = newton_rules(it, rn, r0, r_prev, full,
                                                                                    restarted, extra, newton)
            if new_jacobian:
                istate[JACOBIAN_REQUESTED] = 1
            if action == CONVERGED:
                for i in range(n2):
                    abar[i] = an[i] if newmark else ahat[i] + c * an[i]
                return 1, it
            if action == GIVE_UP:
                return 0, it
            if action == RESTART:
                _predict(h, q, v, a, abar, qn, vn, an, lam, ahat, newmark, cq, cv, bh2, hg, beta, gamma, model)
                after_restart = True
                continue
        if it == max_it:
            return 0, max_it
        it += 1
        if full or istate[JACOBIAN_REQUESTED]:
            lu = _factorize(fact, colmax, t1, model, kin, w, method, h)
            if lu != LU_DONE:
                return (-1 if lu == LU_SINGULAR else -2), it
            istate[JACOBIAN_REQUESTED] = 0
            istate[JACOBIANS] += 1
        for i in range(n2):
            rhs[i] = rq[i] * bh2
        for i in range(rg.shape[0]):
            rhs[n2 + i] = rg[i]
        _solve(fact, rhs)
        for i in range(rhs.shape[0]):
            if not math.isfinite(rhs[i]):
                return -1, it
        newton_update(qn, vn, an, lam, rhs, lie_old, gamma / (beta * h), c * bh2, bh2, model.lie_cols, model.lie_ref)
        istate[ITERATIONS] += 1


@jit_inline
def _copy(target, source):
    for i in range(target.shape[0]):
        target[i] = source[i]


@jit_inline
def _predict(h, q, v, a, abar, qn, vn, an, lam, ahat, newmark, cq, cv, bh2, hg, beta, gamma, model):
    """The Newton start: predicted q, v (Lie group nodes' rotations: kernels.lie_group_prediction); q̈ = 0, λ = 0."""
    for i in range(q.shape[0]):
        ap = a[i] if newmark else abar[i]
        qn[i] = (q[i] + h * v[i]) + cq * ap + bh2 * ahat[i]
        vn[i] = (v[i] + cv * ap) + hg * ahat[i]
        an[i] = 0.0
    lam[:] = 0.0
    if model.lie_cols.shape[0]:
        lie_group_prediction(q, v, a if newmark else abar, ahat, vn, qn, h, cq, bh2, -0.5 * h * beta / gamma,
                             model.lie_cols, model.lie_ref)


@jit_noalloc
def initial_accelerations(model, kin, w, scratch, accelerations, t, q, v, fact, x):
    """x = [q̈; λ] from [[M, C_qᵀ], [C_q, 0]] x = [f; -d/dt(C_q v)] (d/dt by central differences along
    v with the step 1e-5/max(1, |v|); 0 for velocity-level constraints, as Exudyn; the motions' rows
    by their laws' exact time derivatives, Motions.rate_residual). Returns DONE, SINGULAR,
    UNDEFINED_LAW (a motion's law or its rate undefined at (t, q, v)), or LINEAR_SETUP
    (CompiledLoop.setup, then again). Called by run_steps when istate[INITIAL] is set, with its kin, w
    and scratch (its Newton iterate's q̈ and λ serve as zeros, its q as the shifted q, its column maxima
    as _lu's, its right-hand side as x); `accelerations` holds 2 per motion (motion_rows' levels)."""
    model, kin, w, scratch, fact = borrowed(model), borrowed(kin), borrowed(w), borrowed(scratch), borrowed(fact)
    q, v, x, accelerations = borrowed((q, v, x, accelerations))
    shifted, zero_a, zero_lam, colmax = scratch[0], scratch[2], scratch[3], scratch[6]
    n2, nae = q.shape[0], x.shape[0] - q.shape[0]
    zero_a[:] = 0.0
    zero_lam[:] = 0.0
    vmax = 0.0
    for i in range(n2):
        vmax = max(vmax, abs(v[i]))
    eps = 1e-5 / max(1.0, vmax)
    for k in range(3):  # at q + εv, q - εv, then q (r_q = M·0 - f + C_qᵀ·0): one inlined residual
        if k < 2:
            for i in range(n2):
                shifted[i] = q[i] + eps * v[i] if k == 0 else q[i] - eps * v[i]
        _residual(t, shifted if k < 2 else q, v, zero_a, zero_lam, True, model, kin, w)
        for i in range(nae):  # x's λ part: g(q + εv), then -d/dt(C_q v) by the central difference
            if k == 0:
                x[n2 + i] = w.rg[i]
            elif k == 1:
                x[n2 + i] = 0.0 if model.ae_velocity[i] else -((x[n2 + i] - w.rg[i]) / (2 * eps))
    if w.mo_bad[0] >= 0 or motion_rows(t, zero_a, accelerations, True, model, kin, w) >= 0:
        return UNDEFINED_LAW
    _assemble(fact.entries, t, model, kin, w, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0)
    lu = _lu(fact, colmax)
    if lu != LU_DONE:
        return SINGULAR if lu == LU_SINGULAR else LINEAR_SETUP
    for i in range(n2):
        x[i] = -w.rq[i]
    for k in range(model.mo_m0.shape[0]):
        x[n2 + model.mo_ae[k]] = -w.mo_g[k]
    _solve(fact, x)
    return DONE


@jit_noalloc
def run_steps(model, kin, w, scratch, method, newton, max_it, timing, q, v, a, abar, lam, fstate, istate, fact, rows,
              initial_levels, max_steps):
    """With istate[INITIAL] set: initial_accelerations at (fstate[T], q, v) into scratch's right-hand side,
    `initial_levels` its motion levels, and its code. Otherwise steps from the state (q, v, a = q̈, abar, λ,
    fstate, istate) until the end (DONE), `max_steps` steps or a full `rows` buffer (PAUSED), a failure
    (NEWTON_FAILED, NOT_FINITE, SINGULAR, UNDEFINED_LAW: fstate[FAIL_H] is then the failing step's size, (q, v)
    its start) or LINEAR_SETUP (fstate[FAIL_H] likewise: the step starts again after CompiledLoop.setup).
    Adaptive steps (Exudyn's ReduceStepSize, IncreaseStepSize): a failed step of more than `min_step` is retried
    with `decrease` times its size, at least `min_step`; each accepted step counts, and one of at most
    `recovery_its` iterations after `recovery_steps` counted ones grows it by `increase` up to the nominal step (a
    step of more iterations delays the growth, as Exudyn's); growth and reduction restart the count. Items with data
    coordinates (kernels.ItemKernels.post_newton) get Exudyn's discontinuous iteration: after a converged Newton
    their post-Newton step sets the data; while its error exceeds the tolerance, Newton solves the step again from
    its start with the new data, at most `disc_max` times (then the step is kept, or with `disc_ignore` false fails
    as a failed Newton does); a failed step restores the data of its start. Its extra Newton solves count in the
    recovery rule's iterations, as Exudyn's. An item's recommended step (`disc_recommend`: Exudyn's
    useRecommendedStepSize) shorter than the step, while the error exceeds the tolerance, fails the step as
    Exudyn's. As Exudyn's it.recommendedStepSize, the last post-Newton step's recommendation (fstate[RECOMMENDED],
    -1: none) stays until the next post-Newton step: every failed step, also a failed Newton, of a later step too,
    is retried with min(0.75 h, recommended) while it is set.
    Sensor rows are written when t reaches the next write time, and at the end.
    Written sensor rows go to rows[istate[ROWS]] = [t, q, v, q̈, λ, data coordinates]. The Newton matrix's LU stays
    in `fact` across calls: modified Newton reuses it. kin, w (kernels.work) and scratch (9 vectors:
    q, v, q̈ and λ of the Newton iterate, the predictor's â, the right-hand side, column maxima, abar at the
    step's start, the Lie group nodes' rotations in the Newton update) are the caller's: compiled without
    numba's runtime (kernels.jit_noalloc), this loop allocates nothing and counts no references, a
    third of a small model's step otherwise. So it copies arrays by loops: a slice assignment may need a
    temporary."""
    model, kin, w, scratch, fact = borrowed(model), borrowed(kin), borrowed(w), borrowed(scratch), borrowed(fact)
    q, v, a, abar, lam, fstate, istate, rows = borrowed((q, v, a, abar, lam, fstate, istate, rows))
    t0, t_end, steps, h_nominal, adaptive, decrease, increase, min_step, recovery_its, recovery_steps, \
        period, disc_tol, disc_max, disc_ignore, disc_recommend = timing
    qn, vn, an, lam_n, ahat, rhs, colmax, abar_start, lie_old = scratch
    if istate[INITIAL] != 0:
        return initial_accelerations(model, kin, w, scratch, initial_levels, fstate[T], q, v, fact, rhs)
    n2, nae = q.shape[0], lam.shape[0]
    discontinuous = compiled_data_items(model.x_forces) > 0
    done_here = 0
    end_tol = 1e-10 * max(1.0, abs(t_end))
    while (t_end - fstate[T] > end_tol) if adaptive else istate[STEP_INDEX] < steps:
        if done_here >= max_steps or istate[ROWS] >= rows.shape[0]:
            return PAUSED
        t, h = fstate[T], fstate[H]
        hh = h if not adaptive else (min(h, t_end - t) if t + h > t_end else h)
        if discontinuous:  # the step's start: Newton begins there again
            _copy(abar_start, abar)
            compiled_keep_data(model.x_forces, False)
        disc_its = 0
        while True:
            status, its = _newton(t + hh, hh, q, v, a, abar, qn, vn, an, lam_n, ahat, rhs, method, newton, max_it,
                                  model, kin, w, fact, colmax, lie_old, istate)
            if status != 1 or not discontinuous:
                break
            disc_its += 1  # kin is the converged state's (_newton's last residual)
            error, step = compiled_post_newton(model.x_forces, kin)
            fstate[RECOMMENDED] = step if disc_recommend != 0.0 and step >= 0.0 else -1.0
            if error <= disc_tol:
                break
            if disc_its >= disc_max:
                if disc_ignore == 0.0:
                    status = 0
                break
            _copy(abar, abar_start)
            if 0.0 <= fstate[RECOMMENDED] < (1.0 + 1e-8) * hh:
                status = 0
                break
        if discontinuous and status != 1:
            _copy(abar, abar_start)
            compiled_keep_data(model.x_forces, True)
        if disc_its > 1:
            its += disc_its - 1
        if status < 0:
            fstate[FAIL_H] = hh
            return SINGULAR if status == -1 else LINEAR_SETUP if status == -2 else UNDEFINED_LAW
        if status == 0:
            if not adaptive or hh <= min_step:
                fstate[FAIL_H] = hh
                return NEWTON_FAILED
            recommended = fstate[RECOMMENDED]
            fstate[H] = max(min_step, min(0.75 * hh, recommended) if recommended >= 0.0 else hh * decrease)
            istate[GOOD_STEPS] = 0
            continue
        _copy(q, qn)
        _copy(v, vn)
        _copy(a, an)
        _copy(lam, lam_n)
        t = t + hh if adaptive else t0 + (istate[STEP_INDEX] + 1) * h_nominal
        fstate[T] = t
        istate[STEP_INDEX] += 1
        istate[N_STEPS] += 1
        done_here += 1
        if adaptive:
            istate[GOOD_STEPS] += 1
            if istate[GOOD_STEPS] >= recovery_steps and its <= recovery_its:
                fstate[H] = min(h_nominal, fstate[H] * increase)
                istate[GOOD_STEPS] = 0
        last = (t_end - t <= end_tol) if adaptive else istate[STEP_INDEX] == steps
        due = t >= fstate[WRITE_NEXT] - 1e-10
        if due:
            fstate[WRITE_NEXT] = max(fstate[WRITE_NEXT] + period, t)
        if due or last:
            row = rows[istate[ROWS]]
            row[0] = t
            for i in range(n2):
                row[1 + i], row[1 + n2 + i], row[1 + 2 * n2 + i] = q[i], v[i], a[i]
            for i in range(nae):
                row[1 + 3 * n2 + i] = lam[i]
            if discontinuous:  # a call with every compiled type's arrays: only where there is data to write
                compiled_write_data(model.x_forces, row[1 + 3 * n2 + nae:])
            istate[ROWS] += 1
        for i in range(n2):
            if not math.isfinite(q[i]):
                return NOT_FINITE
    return DONE
