"""Redundant or conflicting constraints, found before solving: the rank of the constraint Jacobian
C_q at the initial state (QR with column pivoting on C_qᵀ, so the pivot order picks independent rows).

Exudyn would run into a singular Newton matrix instead; a rank-deficient C_q at the start is either
a structurally redundant set (a prismatic and a revolute joint between the same bodies, a closed
planar loop of revolute joints in 3D) or a singular initial configuration. Both are reported with
the items whose rows are linearly dependent.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

RANK_TOL = 1e-9  # relative to the largest pivot; C_q entries are O(1) lengths and directions
# entries of the dense C_q factorized before every solve (~0.05 s); larger models are checked only
# when their Newton matrix turns out singular (the dense QR of chain_200 costs up to 2.5 s CPU)
PRECHECK_MAX_ENTRIES = 1e6
DIAGNOSE_MAX_ENTRIES = 4e7


def find_redundant(system, t0: float, q=None, max_entries: float = PRECHECK_MAX_ENTRIES) -> dict | None:
    """An error dict {"code", "message", "detail"} if the active constraint rows are dependent."""
    kin = system.kinematics(t0, system.q_init if q is None else q, system.v_init)
    blocks, owners = [], []
    for g, _, C in system.constraint_values(kin, False):
        for k in np.flatnonzero(g.active):
            for r in range(C.shape[1]):
                row = np.zeros(system.n2 + 1)
                np.add.at(row, g.cols[k], C[k, r])
                blocks.append(row[:-1])
                owners.append(system.constraint_item_name(g, int(k)))
    if not blocks or len(blocks) * system.n2 > max_entries:
        return None
    Ct = np.array(blocks).T  # (n2, rows)
    _, R, perm = sla.qr(Ct, mode="economic", pivoting=True)
    d = np.abs(np.diag(R))
    rank = int(np.sum(d > RANK_TOL * max(d.max(initial=0.0), 1e-300)))
    if rank == len(owners):
        return None
    independent = perm[:rank]
    groups = []
    for j in perm[rank:][:3]:  # the rows each dependent row is a combination of
        x = np.linalg.lstsq(Ct[:, independent], Ct[:, j], rcond=None)[0]
        used = [owners[i] for i, xi in zip(independent, x) if abs(xi) > 1e-8 * max(1.0, np.abs(x).max())]
        group = sorted(set([owners[j]] + used), key=owners.index)
        if group not in groups:
            groups.append(group)
    items = sorted({name for grp in groups for name in grp}, key=owners.index)
    sets = "; ".join(", ".join(grp) for grp in groups)
    return {"code": "redundant_constraints",
            "message": f"{len(owners) - rank} redundant or conflicting constraint equation(s) at the initial state "
                       f"(the constraint Jacobian has rank {rank} of {len(owners)}); dependent: {sets}. Remove "
                       "the redundant axes (e.g. use JointGeneric with fewer constrainedAxes) or change the "
                       "initial configuration if it is singular",
            "detail": {"time": float(kin.t), "items": items, "dependentSets": groups}}
