"""The kinematics of many solver states at once, for sensors: the written rows of a solve are
evaluated a chunk at a time (outputs.SensorSet), so every output is one numpy expression over
the rows instead of one Python evaluation per row.

Numba's on-disk cache does not notice changes of the kernels these call (kernels.py, another
file): after changing those, delete the cached `output_kernels.*` files (or touch this file).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .kernels import FrameModel, _empty_kin, jit, joint_accelerations_into, joint_coordinates, kinematics_of_rows
from .kinematics import ROW_ARRAYS, empty_kinematics


@jit
def kinematics_rows(q, v, model, rows):
    """kernels.kinematics of every row r of q, v (R,n2) into row r of `rows` (a Kin, leading axis R); model: a
    FrameModel."""
    kinematics_of_rows(q, v, model, rows)


@jit
def joint_coordinates_rows(rot, pos, vel, omega, Jpos, Jrot, m0, m1, R0, R1, revolute):
    """kernels.joint_coordinates of every row (leading axis of the kinematics arrays)."""
    R, n = rot.shape[0], m0.shape[0]
    qj, uj, C = np.empty((R, n)), np.empty((R, n)), np.empty((R, n, 14))
    for r in range(R):
        qj[r], uj[r], C[r] = joint_coordinates(rot[r], pos[r], vel[r], omega[r], Jpos[r], Jrot[r], m0, m1, R0, R1,
                                               revolute)
    return qj, uj, C


@jit
def joint_accelerations_rows(model, q, v, a, C, cols, m0, m1, R0, R1, revolute):
    """u̇_j (R, n) of the joints (m0, m1, R0, R1, revolute; columns cols) at every row of q, v (R, n2+1),
    a (R, n2), with their Jacobians C (R, n, 14) there (kernels.joint_accelerations_into)."""
    R, n, n2 = q.shape[0], m0.shape[0], a.shape[1]
    out = np.empty((R, n))
    mk = _empty_kin(n2, model.fcols.shape[0], model.mframe.shape[0])
    us, scratch, Cs, qs = np.empty(n), np.empty(n), np.empty((n, 14)), np.empty(n2)
    mats, vecs = np.empty((2, 3, 3)), np.empty((5, 3))
    for r in range(R):
        joint_accelerations_into(out[r], us, scratch, Cs, mats, vecs, qs, mk, a[r], q[r], v[r], C[r], cols, m0, m1,
                                 R0, R1, revolute, model)
    return out


def empty_rows(system, rows: int, markers: bool = True):
    """A Kinematics of `rows` rows for row_kinematics to fill; markers=False: frames only (no
    marker rows), for sensors that read no marker (most of the work on large models)."""
    return empty_kinematics(np.zeros(rows), system.n2, len(system.fcols), len(system.mframe) if markers else 0,
                            (rows,))


def row_bytes(system, markers: bool = True) -> int:
    """Memory of one row of empty_rows."""
    nF, nm = len(system.fcols), len(system.mframe) if markers else 0
    return 8 * (2 * (system.n2 + 1) + 50 * nF + 60 * nm)


def row_kinematics(system, t: np.ndarray, q: np.ndarray, v: np.ndarray, a: np.ndarray | None = None, out=None):
    """System.kinematics of the rows t (R,), q, v, a (R,n2): a Kinematics whose arrays all have
    the leading row axis R, in the first R rows of `out` (from empty_rows; their previous contents
    are overwritten) or in new arrays."""
    s = system
    if out is None:
        out = empty_rows(s, len(t))
    kin = dataclasses.replace(out, t=t, a=a, **{name: getattr(out, name)[:len(t)] for name in ROW_ARRAYS})
    nm = kin.pos.shape[1]
    kinematics_rows(np.ascontiguousarray(q), np.ascontiguousarray(v), frame_model(s.model, nm), kin.arrays())
    return kin


def frame_model(m, markers: int) -> FrameModel:
    """The arrays of the model m that kinematics_rows reads, for its first `markers` markers (leading rows of
    contiguous arrays: one compiled signature)."""
    return FrameModel(m.fcols, m.fpos_ref, m.ftheta_ref, m.f_is_ep, m.f_is_2d, m.f_rotation, m.f_R0, m.f_turned,
                      m.mframe[:markers],
                      m.mlocal[:markers], m.mrot[:markers], m.mrot_identity[:markers])
