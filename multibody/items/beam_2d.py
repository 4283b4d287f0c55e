"""ObjectBeamGeometricallyExact2D: Exudyn's planar shear-deformable (Simo-Reissner) beam on two
NodeRigidBody2D nodes (coordinates q = [x0, y0, θ0, x1, y1, θ1], displacements; totals add the references).

Linear shape functions over x in [-L/2, L/2]: SV = [1/2 - x/L, 1/2 + x/L], SV_x = [-1/L, 1/L]. Strains at x:
r' = Σ SV_x r_i (totals); θ = Σ SV θ_i (totals) with includeReferenceRotations, else the reference slope's
angle plus Σ SV of the rotation displacements; θ_x = Σ SV_x θ_i (totals) - referenceCurvature;
γ1 = [c, s]·r' - 1, γ2 = [-s, c]·r' (c, s = cos θ, sin θ). Elastic and damping forces (Exudyn's
CObjectBeamGeometricallyExact2D::ComputeODE2LHS): one Gauss point at x = 0 with weight L,
LHS = L[σ1 δγ1 + σ2 δγ2 + σ3 δθ_x], σ1 = EA γ1 + dA γ̇1, σ2 = GA γ2 + dS γ̇2, σ3 = EI θ_x + dK θ̇_x;
the Jacobians are exact (Exudyn's automatic differentiation). The mass matrix is constant (2-point Gauss:
ρA L/6 [[2, 1], [1, 2]] on x and on y, ρJ L/6 [[2, 1], [1, 2]] on θ) and joins the constant mass triplets
(System.constant_mass), so every solver applies it without code of its own.
"""
from __future__ import annotations

from typing import Annotated, Literal, NamedTuple

import numpy as np
from pydantic import Field

from .. import schema as S
from ..kernels import ItemKernels, jit
from .compiled import CompiledForces
from .declaration import ItemType

OUTPUTS = ("Position", "Displacement", "Velocity", "Rotation", "StrainLocal", "CurvatureLocal", "ForceLocal",
           "TorqueLocal")


class ObjectBeamGeometricallyExact2D(S.Item):
    """A planar geometrically exact (shear-deformable) beam element between two NodeRigidBody2D nodes: axial,
    shear and bending strains at its midpoint, a consistent constant mass matrix."""
    objectType: Literal["BeamGeometricallyExact2D"]
    nodeNumbers: Annotated[list[S.Ref], Field(min_length=2, max_length=2)]
    """its two NodeRigidBody2D nodes (indices or names)"""
    length: Annotated[S.FiniteFloat, Field(gt=0)]
    """reference length L of the element (m)"""
    massPerLength: S.FiniteFloat = 0.0
    """ρA (kg/m)"""
    crossSectionInertia: S.FiniteFloat = 0.0
    """ρJ, the cross section's mass moment of inertia per length (kg m)"""
    bendingStiffness: S.FiniteFloat = 0.0
    """EI (N m²)"""
    axialStiffness: S.FiniteFloat = 0.0
    """EA (N)"""
    shearStiffness: S.FiniteFloat = 0.0
    """GA, shear correction included (N)"""
    bendingDamping: S.FiniteFloat = 0.0
    """dK, on the curvature rate (N m² s)"""
    axialDamping: S.FiniteFloat = 0.0
    """dA, on the axial strain rate (N s)"""
    shearDamping: S.FiniteFloat = 0.0
    """dS, on the shear strain rate (N s)"""
    referenceCurvature: S.FiniteFloat = 0.0
    """curvature of the stress-free beam (1/m)"""
    includeReferenceRotations: bool = False
    """true: the cross sections' rotation interpolates the nodes' reference rotations; false: it is the angle of
    the line between the nodes' reference positions (plus the interpolated rotation displacements)"""


class BeamData(NamedTuple):
    cols: np.ndarray  # (n,6) the nodes' coordinates x0, y0, θ0, x1, y1, θ1
    ref: np.ndarray  # (n,6) their reference values
    rot_ref: np.ndarray  # (n,2) the reference rotation θ interpolates: the nodes', or twice the slope's angle
    length: np.ndarray
    EI: np.ndarray
    EA: np.ndarray
    GA: np.ndarray
    dK: np.ndarray
    dA: np.ndarray
    dS: np.ndarray
    curvature: np.ndarray


@jit
def strains(d, i, x, q, v, sv, svx, g1, g2, e1, e2):
    """(θ, γ1, γ2, θ_x, γ̇1, γ̇2, θ̇_x) of item i at x (q, v: all coordinates); into sv, svx the shape functions
    and their slopes, into g1, g2 (6) δγ1, δγ2, into e1, e2 (6) their parts [c SV_x, s SV_x, 0], [-s SV_x, c SV_x, 0]."""
    L = d.length[i]
    sv[0], sv[1] = 0.5 - x / L, 0.5 + x / L
    svx[0], svx[1] = -1.0 / L, 1.0 / L
    c0, c1 = d.cols[i, 0:3], d.cols[i, 3:6]
    rx = svx[0] * (q[c0[0]] + d.ref[i, 0]) + svx[1] * (q[c1[0]] + d.ref[i, 3])
    ry = svx[0] * (q[c0[1]] + d.ref[i, 1]) + svx[1] * (q[c1[1]] + d.ref[i, 4])
    theta = sv[0] * (q[c0[2]] + d.rot_ref[i, 0]) + sv[1] * (q[c1[2]] + d.rot_ref[i, 1])
    theta_x = svx[0] * (q[c0[2]] + d.ref[i, 2]) + svx[1] * (q[c1[2]] + d.ref[i, 5]) - d.curvature[i]
    c, s = np.cos(theta), np.sin(theta)
    gamma1 = c * rx + s * ry - 1.0
    gamma2 = -s * rx + c * ry
    for k in range(2):
        b = 3 * k
        e1[b], e1[b + 1], e1[b + 2] = c * svx[k], s * svx[k], 0.0
        e2[b], e2[b + 1], e2[b + 2] = -s * svx[k], c * svx[k], 0.0
        g1[b], g1[b + 1], g1[b + 2] = e1[b], e1[b + 1], gamma2 * sv[k]
        g2[b], g2[b + 1], g2[b + 2] = e2[b], e2[b + 1], -(1.0 + gamma1) * sv[k]
    gamma1_t, gamma2_t = 0.0, 0.0
    for j in range(6):
        vj = v[d.cols[i, j]]
        gamma1_t += g1[j] * vj
        gamma2_t += g2[j] * vj
    theta_xt = svx[0] * v[c0[2]] + svx[1] * v[c1[2]]
    return theta, gamma1, gamma2, theta_x, gamma1_t, gamma2_t, theta_xt


@jit
def beam_forces(d, kin, F):
    sv, svx, g1, g2, e1, e2 = np.empty(2), np.empty(2), np.empty(6), np.empty(6), np.empty(6), np.empty(6)
    for i in range(d.cols.shape[0]):
        _, gamma1, gamma2, theta_x, gamma1_t, gamma2_t, theta_xt = strains(d, i, 0.0, kin.q, kin.v, sv, svx, g1, g2,
                                                                           e1, e2)
        L = d.length[i]
        s1 = d.dA[i] * gamma1_t + d.EA[i] * gamma1
        s2 = d.dS[i] * gamma2_t + d.GA[i] * gamma2
        s3 = d.dK[i] * theta_xt + d.EI[i] * theta_x
        for j in range(6):
            F[i, j] = -L * (s1 * g1[j] + s2 * g2[j])
        F[i, 2] -= L * s3 * svx[0]
        F[i, 5] -= L * s3 * svx[1]


@jit
def beam_jacobians(d, kin, dq, dv):
    """-∂LHS/∂q, -∂LHS/∂q̇ with δg1 = e2 aᵀ + a g2ᵀ, δg2 = -e1 aᵀ - a g1ᵀ (a: SV on the rotations), so
    δγ̇1 = a (e2·q̇) + g2 (a·q̇), δγ̇2 = -a (e1·q̇) - g1 (a·q̇)."""
    sv, svx, g1, g2, e1, e2 = np.empty(2), np.empty(2), np.empty(6), np.empty(6), np.empty(6), np.empty(6)
    a, sx, w, dg1t, dg2t = np.zeros(6), np.zeros(6), np.empty(6), np.empty(6), np.empty(6)
    for i in range(d.cols.shape[0]):
        _, gamma1, gamma2, theta_x, gamma1_t, gamma2_t, theta_xt = strains(d, i, 0.0, kin.q, kin.v, sv, svx, g1, g2,
                                                                           e1, e2)
        L = d.length[i]
        EA, GA, EI, dA, dS, dK = d.EA[i], d.GA[i], d.EI[i], d.dA[i], d.dS[i], d.dK[i]
        s1 = dA * gamma1_t + EA * gamma1
        s2 = dS * gamma2_t + GA * gamma2
        a[2], a[5], sx[2], sx[5] = sv[0], sv[1], svx[0], svx[1]
        e1v, e2v, av = 0.0, 0.0, 0.0
        for j in range(6):
            w[j] = kin.v[d.cols[i, j]]
            e1v += e1[j] * w[j]
            e2v += e2[j] * w[j]
            av += a[j] * w[j]
        for j in range(6):
            dg1t[j] = a[j] * e2v + g2[j] * av
            dg2t[j] = -a[j] * e1v - g1[j] * av
        for r in range(6):
            for c in range(6):
                lhs = EA * g1[r] * g1[c] + dA * g1[r] * dg1t[c] + s1 * (e2[r] * a[c] + a[r] * g2[c]) \
                    + GA * g2[r] * g2[c] + dS * g2[r] * dg2t[c] - s2 * (e1[r] * a[c] + a[r] * g1[c]) \
                    + EI * sx[r] * sx[c]
                dq[i, r, c] = -L * lhs
                dv[i, r, c] = -L * (dA * g1[r] * g1[c] + dS * g2[r] * g2[c] + dK * sx[r] * sx[c])


@jit
def beam_outputs(d, i, x, y, q, v):
    """(rows, 11) of item i at local (x, y) over rows of q, v: position (2), velocity (2), rotation φ, γ1, γ2,
    θ_x, then the force [σ1, σ2] and the bending moment σ3. Off the axis (y ≠ 0), as Exudyn: the position
    adds A(φ)[0, y] and the velocity A(φ)[-ω y, 0] (ω the interpolated angular velocity)."""
    out = np.empty((q.shape[0], 11))
    sv, svx, g1, g2, e1, e2 = np.empty(2), np.empty(2), np.empty(6), np.empty(6), np.empty(6), np.empty(6)
    c0, c1 = d.cols[i, 0:3], d.cols[i, 3:6]
    for r in range(q.shape[0]):
        phi, gamma1, gamma2, theta_x, gamma1_t, gamma2_t, theta_xt = strains(d, i, x, q[r], v[r], sv, svx, g1, g2,
                                                                             e1, e2)
        c, s = np.cos(phi), np.sin(phi)
        omega = sv[0] * v[r, c0[2]] + sv[1] * v[r, c1[2]]
        out[r, 0] = sv[0] * (q[r, c0[0]] + d.ref[i, 0]) + sv[1] * (q[r, c1[0]] + d.ref[i, 3]) - s * y
        out[r, 1] = sv[0] * (q[r, c0[1]] + d.ref[i, 1]) + sv[1] * (q[r, c1[1]] + d.ref[i, 4]) + c * y
        out[r, 2] = sv[0] * v[r, c0[0]] + sv[1] * v[r, c1[0]] - c * omega * y
        out[r, 3] = sv[0] * v[r, c0[1]] + sv[1] * v[r, c1[1]] - s * omega * y
        out[r, 4], out[r, 5], out[r, 6], out[r, 7] = phi, gamma1, gamma2, theta_x
        out[r, 8] = d.dA[i] * gamma1_t + d.EA[i] * gamma1
        out[r, 9] = d.dS[i] * gamma2_t + d.GA[i] * gamma2
        out[r, 10] = d.dK[i] * theta_xt + d.EI[i] * theta_x
    return out


KERNELS = ItemKernels(BeamData, beam_forces, beam_jacobians)


class Beams2D(CompiledForces):
    OBJECT_TYPE = "BeamGeometricallyExact2D"
    KERNELS = KERNELS

    def __init__(self, system):
        super().__init__(system)
        self.cols = self.node_columns(3)
        q_ref = system.q_ref[self.cols] if self.size else np.zeros((0, 6))
        slope = np.arctan2(q_ref[:, 4] - q_ref[:, 1], q_ref[:, 3] - q_ref[:, 0])  # SV_x·r_ref, up to the factor 1/L
        own = np.array([o.includeReferenceRotations for o in self.items], dtype=bool)
        rot_ref = np.where(own[:, None], q_ref[:, [2, 5]], slope[:, None]).reshape(-1, 2)
        self.data = BeamData(self.cols, np.ascontiguousarray(q_ref), np.ascontiguousarray(rot_ref),
                             self.param("length"), self.param("bendingStiffness"), self.param("axialStiffness"),
                             self.param("shearStiffness"), self.param("bendingDamping"), self.param("axialDamping"),
                             self.param("shearDamping"), self.param("referenceCurvature"))

    def mass_triplets(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows, columns, values) of the constant mass matrices, zeros dropped."""
        L = self.param("length")
        per = np.stack([self.param("massPerLength"), self.param("massPerLength"), self.param("crossSectionInertia")],
                       axis=1) * L[:, None] / 6.0  # (n, 3): x, y, θ
        # coordinate j of the first node pairs with j of the second: x, y, θ each per·[[2, 1], [1, 2]]
        blocks = np.zeros((self.size, 2, 3, 2, 3))
        for j in range(3):
            blocks[:, :, j, :, j] = per[:, j, None, None] * np.array([[2.0, 1.0], [1.0, 2.0]])
        return self.block_triplets(blocks)

    def output(self, kin, k: int, var: str, local=None):
        """Over sensor rows at the sensor's localPosition (x along the axis in [-L/2, L/2], y across)."""
        x, y = (0.0, 0.0) if local is None else (float(local[0]), float(local[1]))
        q, v = np.ascontiguousarray(kin.q), np.ascontiguousarray(kin.v)
        values = beam_outputs(self.data, k, x, y, q, v)
        zero = np.zeros(len(values))
        if var == "Displacement":
            values = values - beam_outputs(self.data, k, x, y, np.zeros_like(q), v)
        columns = {"Position": (0, 1, None), "Displacement": (0, 1, None), "Velocity": (2, 3, None),
                   "Rotation": (None, None, 4), "CurvatureLocal": (None, None, 7), "ForceLocal": (8, 9, None),
                   "TorqueLocal": (None, None, 10)}
        if var == "StrainLocal":
            return np.stack([values[:, 5], zero, zero, zero, zero, values[:, 6]], axis=1)
        return np.stack([zero if j is None else values[:, j] for j in columns[var]], axis=1)


ITEMS = (ItemType(ObjectBeamGeometricallyExact2D, "body", OUTPUTS, Beams2D, nodes=frozenset({"RigidBody2D"}),
                  kernels=KERNELS),)
