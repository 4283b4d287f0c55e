"""Compiled (numba) loops for the hot path of one residual evaluation.

With numpy every stage costs tens of small array calls (~1 µs each) however small the model,
and temporaries of (n,3,3) stacks when it is large; these loops do one pass per stage over the
items instead. They take and return the same arrays as the numpy code they replaced (the
callers keep the interfaces of system.py and items/), in the same summation order, so results
change at round-off level only. `cache=True` keeps the machine code on disk across processes.
"""
from __future__ import annotations

import numba
import numpy as np

jit = numba.njit(cache=True, nogil=True, boundscheck=False)


@jit
def _ep_frame(th, A, G, Gb):
    """A(θ), G and Ḡ of Euler parameters θ (rotations.ep_rotation and EP_G_SIGN/EP_GBAR_SIGN)."""
    t0, t1, t2, t3 = th[0], th[1], th[2], th[3]
    A[0, 0] = 1 - 2 * (t2 * t2 + t3 * t3)
    A[1, 1] = 1 - 2 * (t1 * t1 + t3 * t3)
    A[2, 2] = 1 - 2 * (t1 * t1 + t2 * t2)
    A[0, 1] = 2 * (t1 * t2 - t0 * t3)
    A[1, 0] = 2 * (t1 * t2 + t0 * t3)
    A[0, 2] = 2 * (t1 * t3 + t0 * t2)
    A[2, 0] = 2 * (t1 * t3 - t0 * t2)
    A[1, 2] = 2 * (t2 * t3 - t0 * t1)
    A[2, 1] = 2 * (t2 * t3 + t0 * t1)
    G[0, 0], G[0, 1], G[0, 2], G[0, 3] = -2 * t1, 2 * t0, -2 * t3, 2 * t2
    G[1, 0], G[1, 1], G[1, 2], G[1, 3] = -2 * t2, 2 * t3, 2 * t0, -2 * t1
    G[2, 0], G[2, 1], G[2, 2], G[2, 3] = -2 * t3, -2 * t2, 2 * t1, 2 * t0
    Gb[0, 0], Gb[0, 1], Gb[0, 2], Gb[0, 3] = -2 * t1, 2 * t0, 2 * t3, -2 * t2
    Gb[1, 0], Gb[1, 1], Gb[1, 2], Gb[1, 3] = -2 * t2, -2 * t3, 2 * t0, 2 * t1
    Gb[2, 0], Gb[2, 1], Gb[2, 2], Gb[2, 3] = -2 * t3, 2 * t2, -2 * t1, 2 * t0


@jit
def kinematics(q, v, fcols, fpos_ref, ftheta_ref, f_is_ep, mframe, mlocal, mrot, mrot_identity):
    """Frames of nodes and grounds, then markers (System.kinematics); q, v without the dummy slot."""
    n2 = q.shape[0]
    nF, nm = fcols.shape[0], mframe.shape[0]
    qx = np.zeros(n2 + 1)
    vx = np.zeros(n2 + 1)
    qx[:n2] = q
    vx[:n2] = v
    theta = np.empty((nF, 4))
    theta_t = np.empty((nF, 4))
    fA = np.empty((nF, 3, 3))
    fG = np.zeros((nF, 3, 4))
    fGbar = np.zeros((nF, 3, 4))
    fpos = np.empty((nF, 3))
    fvel = np.empty((nF, 3))
    fomega = np.zeros((nF, 3))
    G = np.empty((3, 4))
    Gb = np.empty((3, 4))
    for f in range(nF):
        for i in range(3):
            fpos[f, i] = fpos_ref[f, i] + qx[fcols[f, i]]
            fvel[f, i] = vx[fcols[f, i]]
        for i in range(4):
            theta[f, i] = ftheta_ref[f, i] + qx[fcols[f, 3 + i]]
            theta_t[f, i] = vx[fcols[f, 3 + i]]
        _ep_frame(theta[f], fA[f], G, Gb)
        if f_is_ep[f]:  # G, Ḡ and ω stay zero on frames without rotation coordinates
            fG[f] = G
            fGbar[f] = Gb
            for i in range(3):
                s = 0.0
                for j in range(4):
                    s += G[i, j] * theta_t[f, j]
                fomega[f, i] = s
    pos = np.empty((nm, 3))
    rot = np.empty((nm, 3, 3))
    vel = np.empty((nm, 3))
    omega = np.empty((nm, 3))
    Jpos = np.zeros((nm, 3, 7))
    Jrot = np.zeros((nm, 3, 7))
    r = np.empty(3)
    for m in range(nm):
        f = mframe[m]
        A = fA[f]
        for i in range(3):
            r[i] = A[i, 0] * mlocal[m, 0] + A[i, 1] * mlocal[m, 1] + A[i, 2] * mlocal[m, 2]
            pos[m, i] = fpos[f, i] + r[i]
            omega[m, i] = fomega[f, i]
        if mrot_identity[m]:
            rot[m] = A
        else:
            for i in range(3):
                for j in range(3):
                    rot[m, i, j] = A[i, 0] * mrot[m, 0, j] + A[i, 1] * mrot[m, 1, j] + A[i, 2] * mrot[m, 2, j]
        w = fomega[f]
        vel[m, 0] = fvel[f, 0] + (w[1] * r[2] - w[2] * r[1])
        vel[m, 1] = fvel[f, 1] + (w[2] * r[0] - w[0] * r[2])
        vel[m, 2] = fvel[f, 2] + (w[0] * r[1] - w[1] * r[0])
        # -A b̃ Ḡ as Exudyn writes it, evaluated as -(A b)~ G (equal for unit Euler parameters,
        # which the normalization constraint keeps to Newton tolerance)
        g = fG[f]
        for i in range(3):
            Jpos[m, i, i] = 1.0
        for j in range(4):
            Jpos[m, 0, 3 + j] = -(-r[2] * g[1, j] + r[1] * g[2, j])
            Jpos[m, 1, 3 + j] = -(r[2] * g[0, j] - r[0] * g[2, j])
            Jpos[m, 2, 3 + j] = -(-r[1] * g[0, j] + r[0] * g[1, j])
            for i in range(3):
                Jrot[m, i, 3 + j] = g[i, j]
    return qx, vx, theta, theta_t, fA, fG, fGbar, fpos, fvel, fomega, pos, rot, vel, omega, Jpos, Jrot
