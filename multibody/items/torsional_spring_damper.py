"""ObjectConnectorTorsionalSpringDamper: a torque τ = k(φ - offset) + d(ω - velocityOffset) + torque about
the z axis z0 of joint frame 0 (A_J0 = A_m0 R0, A_J1 = A_m1 R1; R0, R1 = rotationMarker0/1).

φ is the z angle of Exudyn's Tait-Bryan xyz angles of A_J0ᵀA_J1, in (-π, π] (Exudyn counts turns past ±π
only with a NodeGenericData, which mbserve does not have), ω = z0ᵀ(ω_m1 - ω_m0) with global angular
velocities. Generalized forces (right-hand side): +J_rot0ᵀ z0 τ on marker 0, -J_rot1ᵀ z0 τ on marker 1.
The items plug in with kernels of their own (items/README.md).
"""
from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np
from pydantic import Field, field_validator

from .. import schema as S
from ..kernels import ItemKernels, jit
from .compiled import CompiledForces
from .declaration import ItemType


class ObjectConnectorTorsionalSpringDamper(S._RotationMarkers):
    """A torsional spring-damper about the z axis of joint frame 0 (marker 0's frame turned by rotationMarker0;
    rigid-body markers): the torque k(φ - offset) + d(ω - velocityOffset) + torque, φ and ω the relative rotation
    and angular velocity of joint frame 1 about it; with a JointRevoluteZ on the same markers, a revolute joint
    with a spring."""
    objectType: Literal["ConnectorTorsionalSpringDamper"]
    nodeNumber: Literal[-1] = -1
    """-1 (none) only: Exudyn's NodeGenericData that counts turns past ±π is not supported (Rotation in (-π, π])"""
    stiffness: S.FiniteFloat = 0.0
    """torsional stiffness k (N m/rad)"""
    damping: S.FiniteFloat = 0.0
    """torsional damping d (N m s/rad)"""
    offset: S.FiniteFloat = 0.0
    """angle at which the spring torque is zero (rad)"""
    velocityOffset: S.FiniteFloat = 0.0
    """angular velocity subtracted in the damping term (rad/s)"""
    torque: S.FiniteFloat = 0.0
    """constant torque added to the spring-damper torque (N m)"""
    springTorqueUserFunction: Literal[0] = Field(0, description="0 (none) only: an expression would need t, which "
                                                 "this type's compiled kernels do not get")

    @field_validator("nodeNumber", mode="before")
    @classmethod
    def no_data_node(cls, v):
        if v != -1:
            raise ValueError(f"{v!r}: counting turns past ±π with a NodeGenericData is not supported "
                             "(mbserve has no data nodes); -1 (none) only, so Rotation stays in (-π, π]")
        return v


class TorsionData(NamedTuple):
    cols: np.ndarray  # (n,14) the two markers' columns
    m0: np.ndarray
    m1: np.ndarray
    R0: np.ndarray  # (n,3,3) rotationMarker0
    R1: np.ndarray
    k: np.ndarray
    d: np.ndarray
    offset: np.ndarray
    voff: np.ndarray
    torque: np.ndarray
    active: np.ndarray  # (n,) bool
    ep0: np.ndarray  # (n,) bool: marker 0's frame turns by Euler parameters (J_rot's columns 3..6 are G(θ))
    ep1: np.ndarray


@jit
def joint_state(d, i, rot, omega, z, g, dw):
    """(φ, ω, τ) of item i from the markers' rotations rot (nm,3,3) and global angular velocities omega
    (nm,3); into z the axis z0, into g the gradient of φ (δφ = gᵀ(δψ1 - δψ0), δψ global small
    rotations) and into dw = ω_m1 - ω_m0. τ is 0 for an inactive item (as Exudyn's TorqueLocal)."""
    p, q = d.m0[i], d.m1[i]
    A0, A1 = np.empty((3, 3)), np.empty((3, 3))
    for r in range(3):
        for c in range(3):
            A0[r, c] = rot[p, r, 0] * d.R0[i, 0, c] + rot[p, r, 1] * d.R0[i, 1, c] + rot[p, r, 2] * d.R0[i, 2, c]
            A1[r, c] = rot[q, r, 0] * d.R1[i, 0, c] + rot[q, r, 1] * d.R1[i, 1, c] + rot[q, r, 2] * d.R1[i, 2, c]
    R = np.empty((3, 3))  # A_J0ᵀ A_J1
    for r in range(3):
        for c in range(3):
            R[r, c] = A0[0, r] * A1[0, c] + A0[1, r] * A1[1, c] + A0[2, r] * A1[2, c]
    # Exudyn's RotationMatrix2RotXYZ, z angle; δR = δψ̃ R with δψ in joint frame 0 gives the local gradient a
    a0, a1, a2 = 0.0, 0.0, 0.0
    if np.sqrt(R[1, 2] ** 2 + R[2, 2] ** 2) > 1e-14:
        phi = np.arctan2(-R[0, 1], R[0, 0])
        s = R[0, 0] ** 2 + R[0, 1] ** 2
        a1, a2 = (R[0, 1] * R[2, 0] - R[0, 0] * R[2, 1]) / s, (R[0, 0] * R[1, 1] - R[0, 1] * R[1, 0]) / s
    else:  # gimbal lock: Exudyn sets the x angle to 0 and gives the z angle from the second row
        phi = np.arctan2(R[1, 0], R[1, 1])
        s = R[1, 0] ** 2 + R[1, 1] ** 2
        a0, a2 = (R[1, 0] * R[2, 1] - R[1, 1] * R[2, 0]) / s, (R[1, 1] * R[0, 0] - R[1, 0] * R[0, 1]) / s
    rate = 0.0
    for c in range(3):
        z[c] = A0[c, 2]
        g[c] = A0[c, 0] * a0 + A0[c, 1] * a1 + A0[c, 2] * a2
        dw[c] = omega[q, c] - omega[p, c]
        rate += z[c] * dw[c]
    tau = 0.0
    if d.active[i]:
        tau = d.k[i] * (phi - d.offset[i]) + d.d[i] * (rate - d.voff[i]) + d.torque[i]
    return phi, rate, tau


@jit
def torsion_forces(d, kin, F):
    z, g, dw = np.empty(3), np.empty(3), np.empty(3)
    for i in range(d.m0.shape[0]):
        tau = joint_state(d, i, kin.rot, kin.omega, z, g, dw)[2]
        p, q = d.m0[i], d.m1[i]
        for j in range(7):
            F[i, j] = (kin.Jrot[p, 0, j] * z[0] + kin.Jrot[p, 1, j] * z[1] + kin.Jrot[p, 2, j] * z[2]) * tau
            F[i, 7 + j] = -(kin.Jrot[q, 0, j] * z[0] + kin.Jrot[q, 1, j] * z[1] + kin.Jrot[q, 2, j] * z[2]) * tau


@jit
def _euler_parameter_terms(L, W, m, theta_t, sign, base):
    """Sets the block of a marker's Euler parameters (columns base..base+3; sign +1 marker 1, -1 marker 0, as
    in Jd): L = sign ∂(Gᵀm)/∂θ = sign 2[[0, -mᵀ], [m, m̃]] and W = sign ∂(G θ̇)/∂θ = -sign G(θ̇)
    (G is linear in θ and G(θ)θ̇ = -G(θ̇)θ)."""
    s = 2.0 * sign
    L[base, base + 1], L[base, base + 2], L[base, base + 3] = -s * m[0], -s * m[1], -s * m[2]
    for r in range(3):
        L[base + 1 + r, base] = s * m[r]
    L[base + 1, base + 2], L[base + 1, base + 3] = -s * m[2], s * m[1]
    L[base + 2, base + 1], L[base + 2, base + 3] = s * m[2], -s * m[0]
    L[base + 3, base + 1], L[base + 3, base + 2] = -s * m[1], s * m[0]
    t0, t1, t2, t3 = theta_t[0], theta_t[1], theta_t[2], theta_t[3]
    W[0, base], W[0, base + 1], W[0, base + 2], W[0, base + 3] = s * t1, -s * t0, s * t3, -s * t2
    W[1, base], W[1, base + 1], W[1, base + 2], W[1, base + 3] = s * t2, -s * t3, -s * t0, s * t1
    W[2, base], W[2, base + 1], W[2, base + 2], W[2, base + 3] = s * t3, s * t2, -s * t1, -s * t0


@jit
def torsion_jacobians(d, kin, dq, dv):
    """∂F/∂q, ∂F/∂v of F = -Jdᵀ z0 τ, Jd = [-J_rot0, J_rot1] (δ(ω_m1 - ω_m0) = Jd δq̇), exactly: the
    torque's dependence (k ∂φ/∂q + d ∂ω/∂q), the turning axis z0 (δz0 = z̃0 Jd0 δq, Jd0 = [-J_rot0, 0])
    and, on Euler-parameter frames, J_rot = [0 | G(θ)] itself, as Exudyn's numerical Jacobian has them."""
    z, g, dw, c = np.empty(3), np.empty(3), np.empty(3), np.empty(3)
    Jd, W = np.empty((3, 14)), np.empty((3, 14))
    u, row, L = np.empty(14), np.empty(14), np.empty((14, 14))
    for i in range(d.m0.shape[0]):
        if not d.active[i]:
            continue
        tau = joint_state(d, i, kin.rot, kin.omega, z, g, dw)[2]
        p, q = d.m0[i], d.m1[i]
        for r in range(3):
            for j in range(7):
                Jd[r, j], Jd[r, 7 + j] = -kin.Jrot[p, r, j], kin.Jrot[q, r, j]
        W[:] = 0.0
        L[:] = 0.0
        if d.ep0[i]:
            _euler_parameter_terms(L, W, z, kin.v[d.cols[i, 3:7]], -1.0, 3)
        if d.ep1[i]:
            _euler_parameter_terms(L, W, z, kin.v[d.cols[i, 10:14]], 1.0, 10)
        c[0], c[1], c[2] = dw[1] * z[2] - dw[2] * z[1], dw[2] * z[0] - dw[0] * z[2], dw[0] * z[1] - dw[1] * z[0]
        for b in range(14):
            u[b] = Jd[0, b] * z[0] + Jd[1, b] * z[1] + Jd[2, b] * z[2]
            dphi = Jd[0, b] * g[0] + Jd[1, b] * g[1] + Jd[2, b] * g[2]
            drate = W[0, b] * z[0] + W[1, b] * z[1] + W[2, b] * z[2]
            if b < 7:
                drate += Jd[0, b] * c[0] + Jd[1, b] * c[1] + Jd[2, b] * c[2]
            row[b] = d.k[i] * dphi + d.d[i] * drate
        for a in range(14):
            for b in range(14):
                turn = 0.0  # Jd[:, a] · (z0 × Jd0[:, b])
                if b < 7:
                    turn = Jd[0, a] * (z[1] * Jd[2, b] - z[2] * Jd[1, b]) \
                        + Jd[1, a] * (z[2] * Jd[0, b] - z[0] * Jd[2, b]) \
                        + Jd[2, a] * (z[0] * Jd[1, b] - z[1] * Jd[0, b])
                dq[i, a, b] = -u[a] * row[b] - tau * (turn + L[a, b])
                dv[i, a, b] = -d.d[i] * u[a] * u[b]


@jit
def torsion_outputs(d, i, rot, omega):
    """(rows, 3): φ, ω, τ of item i over sensor rows (rot (rows,nm,3,3), omega (rows,nm,3))."""
    out = np.empty((rot.shape[0], 3))
    z, g, dw = np.empty(3), np.empty(3), np.empty(3)
    for r in range(rot.shape[0]):
        out[r, 0], out[r, 1], out[r, 2] = joint_state(d, i, rot[r], omega[r], z, g, dw)
    return out


KERNELS = ItemKernels(TorsionData, torsion_forces, torsion_jacobians)
OUTPUTS = ("Rotation", "AngularVelocityLocal", "TorqueLocal")  # the columns of torsion_outputs


class TorsionalSpringDampers(CompiledForces):
    OBJECT_TYPE = "ConnectorTorsionalSpringDamper"
    KERNELS = KERNELS

    def __init__(self, system):
        super().__init__(system)
        m0, m1, self.cols = self.markers()
        ep = system.f_is_ep[system.mframe]
        R = np.array([[o.rotationMarker0, o.rotationMarker1] for o in self.items], float).reshape(-1, 2, 3, 3)
        self.data = TorsionData(self.cols, m0, m1, R[:, 0].copy(), R[:, 1].copy(),
                                self.param("stiffness"), self.param("damping"), self.param("offset"),
                                self.param("velocityOffset"), self.param("torque"), self.active, ep[m0], ep[m1])

    def output(self, kin, k: int, var: str):
        """Over sensor rows (kin: their kinematics)."""
        values = torsion_outputs(self.data, k, np.ascontiguousarray(kin.rot), np.ascontiguousarray(kin.omega))
        return values[:, OUTPUTS.index(var)]


ITEMS = (ItemType(ObjectConnectorTorsionalSpringDamper, "force", OUTPUTS, TorsionalSpringDampers, markers="rigid",
                  explicit="apply", kernels=KERNELS),)
