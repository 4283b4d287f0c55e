"""Redundant or conflicting constraints, found before solving: the rank of the constraint Jacobian
C_q at the initial state.

Exudyn would run into a singular Newton matrix instead; a rank-deficient C_q at the start is either
a structurally redundant set (a prismatic and a revolute joint between the same bodies, a closed
planar loop of revolute joints in 3D) or a singular initial configuration. Both are reported with
the items whose rows are linearly dependent.

C_q is assembled sparse (memory O(nnz)). A small model gets a dense QR with column pivoting on
C_qᵀ (the pivot order picks independent rows); a large one a sparse LDLᵀ of C_q C_qᵀ with its rows
scaled to unit length (memory O(nnz + fill), banded for chains): a dependent row shows as a tiny
pivot, inverse iteration with that factorization gives the null vectors of C_qᵀ, and the singular
values of C_qᵀ on them (not squared, so with the dense path's tolerance) confirm them.

scipy is imported only where it is needed (the dense path of a model with full rank needs none): its
import is ~0.25 s of a small model's cold run.
"""
from __future__ import annotations

import numpy as np

RANK_TOL = 1e-9  # dense: relative to the largest pivot of R; C_q entries are O(1) lengths and directions
DENSE_MAX_ENTRIES = 1e6  # rows x columns of C_q for the dense QR (8 MB; ~0.05 s)
# sparse: entries of C_q C_qᵀ, bounded before it is formed (~0.8 GB with its indices, about as much again
# for its factors): rows that share a coordinate fill it densely, so thousands of constraints on one body
# would take all the memory of a job; such a model is refused with code limit_exceeded
MAX_PRODUCT_ENTRIES = 5e7
# sparse: C_q C_qᵀ with unit rows, shifted by SHIFT so that a dependent row's pivot is not exactly 0.
# Measured on prismatic chains of N = 200 / 3000 bodies with a redundant joint: the dependent rows'
# pivots 2e-14 to 3e-12 / 3e-11 (round-off grows with N); those of the weakest independent modes
# are σ² (3.7e-7 / 1.6e-10), so pivots only pick candidates, and σ decides.
SHIFT = 1e-14
PIVOT_TOL = 1e-6
MAX_CANDIDATES = 64  # rows followed by inverse iteration (more dependent rows: at least this many found)
EXTRA_VECTORS = 8  # random start vectors, to take in the weakest independent modes
MAX_SETS = 3  # dependent sets named in the message
MAX_NAMES = 8  # names per set in the message (all of them in detail)


def constraint_entries(system, kin) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """C_q of the active constraint rows as (row, column, value) entries, the ground markers' columns left
    out, and the item that owns each row."""
    rows, cols, vals, owners = [], [], [], []
    for g, _, C in system.constraint_values(kin, False):
        act = np.flatnonzero(g.active)
        if not act.size:
            continue
        n_rows = C.shape[1]
        r = len(owners) + np.arange(act.size * n_rows).reshape(act.size, n_rows)
        rows.append(np.broadcast_to(r[:, :, None], C[act].shape).ravel())
        cols.append(np.broadcast_to(g.cols[act][:, None, :], C[act].shape).ravel())
        vals.append(C[act].ravel())
        for k in act:
            owners += [system.constraint_item_name(g, int(k))] * n_rows
    if not owners:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), owners
    rows, cols, vals = np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)
    keep = cols != system.dummy
    return rows[keep], cols[keep], vals[keep], owners


def _dense_rank(C: np.ndarray) -> tuple[int, list[list[int]]]:
    """Rank of C (rows x columns) and, for up to MAX_SETS dependent rows, the rows they combine.

    The rank is that of a QR with column pivoting on Cᵀ, |R_kk| against RANK_TOL |R_00|. A full
    rank is first recognized from C's singular values, as costly as the QR and without importing
    scipy.linalg (~0.2 s of a small model's cold run): |R_00| <= σ_max and every |R_kk| >= σ_min,
    so σ_min > 10 RANK_TOL σ_max (the 10 for round-off) means the QR's answer is full rank too."""
    m, n = C.shape
    if m <= n:
        sigma = np.linalg.svd(C, compute_uv=False)
        if sigma[-1] > 10 * RANK_TOL * sigma[0]:
            return m, []
    import scipy.linalg as sla
    Ct = C.T
    _, R, perm = sla.qr(Ct, mode="economic", pivoting=True)
    d = np.abs(np.diag(R))
    rank = int(np.sum(d > RANK_TOL * max(d.max(initial=0.0), 1e-300)))
    independent = perm[:rank]
    sets = []
    for j in perm[rank:][:MAX_SETS]:
        x = np.linalg.lstsq(Ct[:, independent], Ct[:, j], rcond=None)[0]
        used = [int(i) for i, xi in zip(independent, x) if abs(xi) > 1e-8 * max(1.0, np.abs(x).max())]
        sets.append([int(j)] + used)
    return rank, sets


def _sparse_rank(C) -> tuple[int, list[list[int]]]:
    """As _dense_rank, for C as a scipy.sparse.csr_matrix, in memory O(nnz + fill) (see the module doc)."""
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla
    norms = np.sqrt(np.asarray(C.multiply(C).sum(axis=1)).ravel())
    Cs = (sp.diags(1.0 / np.maximum(norms, 1e-300)) @ C).tocsr()
    B = (Cs @ Cs.T + SHIFT * sp.identity(C.shape[0])).tocsc()
    lu = spla.splu(B, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options={"SymmetricMode": True})
    small = np.flatnonzero(np.abs(lu.U.diagonal()) < PIVOT_TOL)
    if not small.size:
        return C.shape[0], []
    candidates = np.argsort(lu.perm_c)[small][:MAX_CANDIDATES]  # the rows eliminated at those positions
    # block inverse iteration from the candidate rows and a few random vectors: its span converges to the
    # null space of C_qᵀ together with the weakest independent modes (eigenvalues of C_q C_qᵀ ~σ², a long
    # chain's are 1e-10); the singular values of C_qᵀ on that span (~σ) tell them apart
    Z = np.random.default_rng(0).standard_normal((C.shape[0], candidates.size + EXTRA_VECTORS))
    Z[:, :candidates.size] = 0.0
    Z[candidates, np.arange(candidates.size)] = 1.0
    for _ in range(3):
        Z = np.linalg.qr(lu.solve(Z))[0]
    _, sigma, Vt = np.linalg.svd(np.asarray(Cs.T @ Z), full_matrices=False)
    Y = Z @ Vt[sigma < RANK_TOL].T  # an orthonormal basis of the null vectors found: yᵀC_q = 0
    sets = []
    for j in candidates:
        y = Y @ Y[j]  # the shortest null vector through row j: a local dependency if there is one
        if abs(y[j]) > 1e-6 and len(sets) < MAX_SETS:
            support = np.flatnonzero(np.abs(y) > 1e-6 * np.abs(y).max())
            sets.append([int(j)] + [int(i) for i in support if i != j])
    return C.shape[0] - Y.shape[1], sets


def _product_over_limit(C, owners: list[str], t: float) -> dict | None:
    """An error dict if C_q C_qᵀ could have more than MAX_PRODUCT_ENTRIES entries: Σ over the
    coordinates of (rows acting on it)², its bound, counted from C_q's pattern."""
    per_column = np.bincount(C.indices, minlength=C.shape[1]).astype(np.int64)
    entries = int(per_column @ per_column)
    if entries <= MAX_PRODUCT_ENTRIES:
        return None
    column = int(np.argmax(per_column))
    rows = np.flatnonzero(C.getcol(column).toarray().ravel())
    items = list(dict.fromkeys(owners[i] for i in rows))
    return {"code": "limit_exceeded",
            "message": f"{per_column[column]} constraint equations of {len(items)} items act on one coordinate, so "
                       f"the redundant-constraint check would form a matrix of up to {entries:.3g} entries (the "
                       f"limit is {MAX_PRODUCT_ENTRIES:.3g}): {', '.join(items[:MAX_NAMES])}"
                       f"{', ...' if len(items) > MAX_NAMES else ''}. So many constraints on one body are "
                       "redundant or nearly so; constrain it once",
            "detail": {"time": float(t), "items": items[:MAX_NAMES]}}


def find_redundant(system, t0: float, q=None) -> dict | None:
    """An error dict {"code", "message", "detail"} if the active constraint rows are dependent."""
    kin = system.kinematics(t0, system.q_init if q is None else q, system.v_init)
    rows, cols, vals, owners = constraint_entries(system, kin)
    m = len(owners)
    if not m:
        return None
    if m * system.n2 <= DENSE_MAX_ENTRIES:
        C = np.zeros((m, system.n2))
        np.add.at(C, (rows, cols), vals)
        rank, sets = _dense_rank(C)
    else:
        import scipy.sparse as sp
        C = sp.csr_matrix((vals, (rows, cols)), shape=(m, system.n2))
        too_big = _product_over_limit(C, owners, kin.t)
        if too_big is not None:
            return too_big
        rank, sets = _sparse_rank(C)
    if rank == m:
        return None
    first = {}
    for i, name in enumerate(owners):
        first.setdefault(name, i)
    groups = []
    for s in sets:
        group = sorted({owners[i] for i in s}, key=first.get)
        if group not in groups and len(groups) < MAX_SETS:
            groups.append(group)
    groups.sort(key=len)  # the smallest sets say most (a chain may give one over all its joints too)
    items = sorted({name for grp in groups for name in grp}, key=first.get)
    sets = "; ".join(", ".join(grp) if len(grp) <= MAX_NAMES else
                     ", ".join(grp[:MAX_NAMES]) + f", ... ({len(grp)} items)" for grp in groups)
    return {"code": "redundant_constraints",
            "message": f"{m - rank} redundant or conflicting constraint equation(s) at the initial state "
                       f"(the constraint Jacobian has rank {rank} of {m}); dependent: {sets}. Remove "
                       "the redundant axes (e.g. use JointGeneric with fewer constrainedAxes) or change the "
                       "initial configuration if it is singular",
            "detail": {"time": float(kin.t), "items": items, "dependentSets": groups}}
