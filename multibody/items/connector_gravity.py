"""ObjectConnectorGravity: Newton's gravitation between two position markers,
f = G m0 m1 / L² along e = Δp / L, Δp = p1 - p0, the markers attracting each other.

Below minDistanceRegularization r (if r > 0) Exudyn replaces 1/L² by 1/(L² + (L - r)²), which stays finite as
the markers meet. Generalized forces (right-hand side) +J0ᵀ(f e) on marker 0 and -J1ᵀ(f e) on marker 1, as
Exudyn's ComputeODE2LHS; the Jacobian is exact with the marker Jacobians held fixed (Exudyn differentiates the
same forces numerically). At L = 0 without regularization Exudyn stops with an error; here e and the force are 0.
"""
from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np
from pydantic import Field

from .. import schema as S
from ..kernels import ItemKernels, jit
from .compiled import CompiledForces
from .declaration import ItemType


class ObjectConnectorGravity(S._Connector):
    """Gravitational attraction between two position markers (celestial or small-scale mechanics). For the weight
    of bodies in a uniform field use LoadMassProportional."""
    objectType: Literal["ConnectorGravity"]
    gravitationalConstant: S.FiniteFloat = 6.67430e-11
    """G (m³ kg⁻¹ s⁻²); a negative value makes the force repulsive"""
    mass0: S.FiniteFloat = Field(0.0, ge=0)
    """mass of the body at marker 0 (kg)"""
    mass1: S.FiniteFloat = Field(0.0, ge=0)
    """mass of the body at marker 1 (kg)"""
    minDistanceRegularization: S.FiniteFloat = Field(0.0, ge=0)
    """distance r below which 1/L² becomes 1/(L² + (L - r)²), finite when the markers meet (m); 0: none"""


class GravityData(NamedTuple):
    cols: np.ndarray  # (n,14) the two markers' columns
    m0: np.ndarray
    m1: np.ndarray
    strength: np.ndarray  # G m0 m1, 0 for an inactive item
    r_min: np.ndarray


@jit
def gravity_state(d, i, pos, dp):
    """(L, f, ∂f/∂L) of item i at marker positions pos (nm,3); Δp into dp."""
    p, q = d.m0[i], d.m1[i]
    for c in range(3):
        dp[c] = pos[q, c] - pos[p, c]
    L = np.sqrt(dp[0] * dp[0] + dp[1] * dp[1] + dp[2] * dp[2])
    r = d.r_min[i]
    if L > r or r == 0.0:
        s = 1.0 / (L * L) if L > 0.0 else 0.0
        ds = -2.0 * s / L if L > 0.0 else 0.0
    else:
        den = L * L + (L - r) * (L - r)
        s = 1.0 / den
        ds = -(2.0 * L + 2.0 * (L - r)) * s * s
    return L, d.strength[i] * s, d.strength[i] * ds


@jit
def gravity_forces(d, kin, F):
    dp = np.empty(3)
    for i in range(d.m0.shape[0]):
        L, f, _ = gravity_state(d, i, kin.pos, dp)
        scale = f / L if L > 0.0 else 0.0  # f e = (f / L) Δp
        p, q = d.m0[i], d.m1[i]
        for j in range(7):
            F[i, j] = scale * (kin.Jpos[p, 0, j] * dp[0] + kin.Jpos[p, 1, j] * dp[1] + kin.Jpos[p, 2, j] * dp[2])
            F[i, 7 + j] = -scale * (kin.Jpos[q, 0, j] * dp[0] + kin.Jpos[q, 1, j] * dp[1] + kin.Jpos[q, 2, j] * dp[2])


@jit
def gravity_jacobians(d, kin, dq, dv):
    """∂F/∂q = -Jdᵀ K Jd, Jd = [-J0, J1], K = ∂(f e)/∂Δp = f' e eᵀ + (f / L)(I - e eᵀ); no velocity terms."""
    dp, e = np.empty(3), np.empty(3)
    Jd, KJ = np.empty((3, 14)), np.empty((3, 14))
    for i in range(d.m0.shape[0]):
        dv[i] = 0.0
        L, f, df = gravity_state(d, i, kin.pos, dp)
        if L == 0.0:
            dq[i] = 0.0
            continue
        for c in range(3):
            e[c] = dp[c] / L
        p, q = d.m0[i], d.m1[i]
        for r in range(3):
            for j in range(7):
                Jd[r, j], Jd[r, 7 + j] = -kin.Jpos[p, r, j], kin.Jpos[q, r, j]
        for r in range(3):
            for b in range(14):
                ej = e[0] * Jd[0, b] + e[1] * Jd[1, b] + e[2] * Jd[2, b]
                KJ[r, b] = df * e[r] * ej + f / L * (Jd[r, b] - e[r] * ej)
        for a in range(14):
            for b in range(14):
                dq[i, a, b] = -(Jd[0, a] * KJ[0, b] + Jd[1, a] * KJ[1, b] + Jd[2, a] * KJ[2, b])


@jit
def gravity_outputs(d, i, pos):
    """(rows, 7): L, Δp, f e of item i over sensor rows (pos (rows,nm,3))."""
    out = np.empty((pos.shape[0], 7))
    dp = np.empty(3)
    for r in range(pos.shape[0]):
        L, f, _ = gravity_state(d, i, pos[r], dp)
        out[r, 0] = L
        for c in range(3):
            out[r, 1 + c] = dp[c]
            out[r, 4 + c] = f * dp[c] / L if L > 0.0 else 0.0
    return out


KERNELS = ItemKernels(GravityData, gravity_forces, gravity_jacobians)
OUTPUT_COLUMNS = {"Distance": slice(0, 1), "Displacement": slice(1, 4), "Force": slice(4, 7)}


class Gravitations(CompiledForces):
    OBJECT_TYPE = "ConnectorGravity"
    KERNELS = KERNELS

    def __init__(self, system):
        super().__init__(system)
        m0, m1, self.cols = self.markers()
        strength = self.param("gravitationalConstant") * self.param("mass0") * self.param("mass1") * self.active
        self.data = GravityData(self.cols, m0, m1, strength, self.param("minDistanceRegularization"))

    def output(self, kin, k: int, var: str):
        """Over sensor rows (kin: their kinematics)."""
        values = gravity_outputs(self.data, k, np.ascontiguousarray(kin.pos))[:, OUTPUT_COLUMNS[var]]
        return values[:, 0] if var == "Distance" else values


ITEMS = (ItemType(ObjectConnectorGravity, "force", tuple(OUTPUT_COLUMNS), Gravitations, markers="position",
                  explicit="apply", kernels=KERNELS),)
