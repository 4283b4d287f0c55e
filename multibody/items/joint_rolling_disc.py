"""ObjectJointRollingDisc: a rigid disc (marker 1, the disc's center) rolling without slip on a plane
(marker 0, its normal `planeNormal` in marker 0's frame), as Exudyn 1.13.6 has it.

With w1 = A1 discAxis, n0 = A0 planeNormal: the forward direction wF = (w1 × n0)/|w1 × n0|, the
lateral one wL = n0 × wF, and w3 = w1 × wF points from the center to the contact point
pC = p1 + r w3. The disc's point there moves with vC1 = v1 + ω1 × r w3, the plane's with
vC0 = v0 + ω0 × (pC - p0). Three velocity-level rows at every index, no slip and no lift:
g = [wLᵀ, wFᵀ, n0ᵀ] (vC1 - vC0) = 0, with ∂g/∂q̇ from the marker Jacobians (δvC1 = J1pos δv +
J1rot δv × r w3); the directions are held fixed in the Jacobian, as Exudyn does. Its multipliers
are in that lateral/forward/normal frame; ForceLocal, the contact force on the disc, is -λ.
"""
from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np
from pydantic import Field, field_validator

from .. import schema as S
from ..kernels import ItemKernels, jit_noalloc
from .compiled import CompiledConstraints
from .declaration import ItemType


class ObjectJointRollingDisc(S._Connector):
    """A disc rolling on a plane without slip; marker 1 at the disc's center, marker 0 on the plane."""
    objectType: Literal["JointRollingDisc"]
    constrainedAxes: list[int] = Field(default_factory=lambda: [1, 1, 1], min_length=3, max_length=3)
    """[lateral, forward, normal] constraints on (1); [1, 1, 1] only: a free axis is not supported"""
    discRadius: S.FiniteFloat = Field(0.0, ge=0)
    """disc radius r (m)"""
    discAxis: S.Vector3 = Field(default_factory=lambda: [1.0, 0.0, 0.0])
    """the disc's axis in marker 1's frame"""
    planeNormal: S.Vector3 = Field(default_factory=lambda: [0.0, 0.0, 1.0])
    """the plane's normal in marker 0's frame"""

    @field_validator("constrainedAxes")
    @classmethod
    def all_axes(cls, v):
        if v != [1, 1, 1]:
            raise ValueError(f"{v!r}: only [1, 1, 1] (no slip, no lift) is supported")
        return v


class RollingDiscData(NamedTuple):
    cols: np.ndarray  # (n,14) the two markers' columns
    ae: np.ndarray  # (n,3)
    levels: np.ndarray  # (n,3): all velocity level
    active: np.ndarray
    m0: np.ndarray
    m1: np.ndarray
    radius: np.ndarray  # (n,)
    axis: np.ndarray  # (n,3) in marker 1's frame
    normal: np.ndarray  # (n,3) in marker 0's frame


@jit_noalloc
def _cross(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@jit_noalloc
def _turned(R, m, x):
    """R[m] x for a 3-vector x."""
    return (R[m, 0, 0] * x[0] + R[m, 0, 1] * x[1] + R[m, 0, 2] * x[2],
            R[m, 1, 0] * x[0] + R[m, 1, 1] * x[1] + R[m, 1, 2] * x[2],
            R[m, 2, 0] * x[0] + R[m, 2, 1] * x[1] + R[m, 2, 2] * x[2])


@jit_noalloc
def rolling_rows(d, kin, velocity_level, g, C):
    for i in range(d.m0.shape[0]):
        p, q, r = d.m0[i], d.m1[i], d.radius[i]
        w1 = _turned(kin.rot, q, d.axis[i])
        n0 = _turned(kin.rot, p, d.normal[i])
        f = _cross(w1[0], w1[1], w1[2], n0[0], n0[1], n0[2])
        inverse = 1.0 / np.sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2])  # axis along the normal: non-finite
        wF = (f[0] * inverse, f[1] * inverse, f[2] * inverse)
        w3 = _cross(w1[0], w1[1], w1[2], wF[0], wF[1], wF[2])
        wL = _cross(n0[0], n0[1], n0[2], wF[0], wF[1], wF[2])
        arm1 = (r * w3[0], r * w3[1], r * w3[2])
        arm0 = (kin.pos[q, 0] + arm1[0] - kin.pos[p, 0], kin.pos[q, 1] + arm1[1] - kin.pos[p, 1],
                kin.pos[q, 2] + arm1[2] - kin.pos[p, 2])  # the contact point from marker 0
        s1 = _cross(kin.omega[q, 0], kin.omega[q, 1], kin.omega[q, 2], arm1[0], arm1[1], arm1[2])
        s0 = _cross(kin.omega[p, 0], kin.omega[p, 1], kin.omega[p, 2], arm0[0], arm0[1], arm0[2])
        vC = (kin.vel[q, 0] + s1[0] - kin.vel[p, 0] - s0[0], kin.vel[q, 1] + s1[1] - kin.vel[p, 1] - s0[1],
              kin.vel[q, 2] + s1[2] - kin.vel[p, 2] - s0[2])
        g[i, 0] = wL[0] * vC[0] + wL[1] * vC[1] + wL[2] * vC[2]
        g[i, 1] = wF[0] * vC[0] + wF[1] * vC[1] + wF[2] * vC[2]
        g[i, 2] = n0[0] * vC[0] + n0[1] * vC[1] + n0[2] * vC[2]
        for side in range(2):
            m, arm, sign = (p, arm0, -1.0) if side == 0 else (q, arm1, 1.0)
            for j in range(7):
                c = _cross(kin.Jrot[m, 0, j], kin.Jrot[m, 1, j], kin.Jrot[m, 2, j], arm[0], arm[1], arm[2])
                c = (c[0] + kin.Jpos[m, 0, j], c[1] + kin.Jpos[m, 1, j], c[2] + kin.Jpos[m, 2, j])
                C[i, 0, 7 * side + j] = sign * (wL[0] * c[0] + wL[1] * c[1] + wL[2] * c[2])
                C[i, 1, 7 * side + j] = sign * (wF[0] * c[0] + wF[1] * c[1] + wF[2] * c[2])
                C[i, 2, 7 * side + j] = sign * (n0[0] * c[0] + n0[1] * c[1] + n0[2] * c[2])


ROLLING_DISC_KERNELS = ItemKernels(RollingDiscData, rolling_rows)


class RollingDiscJoints(CompiledConstraints):
    OBJECT_TYPE = "JointRollingDisc"
    KERNELS = ROLLING_DISC_KERNELS

    def __init__(self, system):
        super().__init__(system)
        m0, m1, self.cols = self.markers()
        self.rows(3, levels=1)
        self.data = RollingDiscData(self.cols, self.ae, self.row_levels, self.active, m0, m1, self.param("discRadius"),
                                    self.param("discAxis").reshape(-1, 3), self.param("planeNormal").reshape(-1, 3))

    def output(self, kin, k: int, var: str, lam: np.ndarray, motion_force: np.ndarray):
        """Over sensor rows (kin's leading axis): lam (rows, 3) this joint's multipliers."""
        if var == "ForceLocal":
            return -lam
        d = self.data
        p, q, r = d.m0[k], d.m1[k], d.radius[k]
        w1 = kin.rot[:, q] @ d.axis[k]
        n0 = kin.rot[:, p] @ d.normal[k]
        f = np.cross(w1, n0)
        length = np.linalg.norm(f, axis=-1)[:, None]
        wF = f / length
        wL = np.cross(n0, wF)
        if var == "RotationMatrix":  # columns wL, wF, n0, row by row
            return np.stack([wL, wF, n0], axis=-1).reshape(-1, 9)
        w3 = np.cross(w1, wF)
        pC = kin.pos[:, q] + r * w3
        if var == "Position":
            return pC
        # the trail's velocity (Exudyn's): the contact point moving over the disc, without the disc's spin
        omega0, omega1 = kin.omega[:, p], kin.omega[:, q]
        w1_t, n0_t = np.cross(omega1, w1), np.cross(omega0, n0)
        f_t = np.cross(w1_t, n0) + np.cross(w1, n0_t)
        length_t = np.einsum("ri,ri->r", f, f_t)[:, None] / length
        wF_t = (f_t * length - f * length_t) / length ** 2
        w3_t = np.cross(w1_t, wF) + np.cross(w1, wF_t)
        return kin.vel[:, q] + r * w3_t - (kin.vel[:, p] + np.cross(omega0, pC))


ITEMS = (ItemType(ObjectJointRollingDisc, "constraint", ("Position", "Velocity", "ForceLocal", "RotationMatrix"),
                  RollingDiscJoints, markers="rigid", explicit="refuse", kernels=ROLLING_DISC_KERNELS),)
