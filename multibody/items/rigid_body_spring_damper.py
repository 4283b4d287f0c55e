"""ObjectConnectorRigidBodySpringDamper: a 6x6 spring-damper between two rigid-body markers, acting in joint
frame 0 (A_J0 = A_m0 R0, A_J1 = A_m1 R1; R0, R1 = rotationMarker0/1), as Exudyn 1.13.6 (non-intrinsic form):

  u = [A_J0ᵀ(p1 - p0), Tait-Bryan xyz angles of A_J0ᵀA_J1], w = [A_J0ᵀ(v1 - v0), A_J0ᵀ(ω1 - ω0)],
  f = K(u - offset) + D w (local), applied as the global force A_J0 f[:3] and torque A_J0 f[3:] on marker 1
  and their negatives on marker 0 (ω global angular velocities; an angle of +π is reported as -π).

The outputs are u, w and f (an inactive item's f is 0, as Exudyn's). The Jacobian is exact along
the rotation parameters' tangent (Exudyn's is numerical): the turning of joint frame 0 and of the markers'
lever arms, the angles' gradient and, on Euler-parameter frames, ω = G θ̇ and J_rot = [0 | G(θ)].
"""
from __future__ import annotations

from typing import Annotated, Literal, NamedTuple

import numpy as np
from pydantic import Field, field_validator

from .. import schema as S
from ..kernels import ItemKernels, jit
from .compiled import CompiledForces
from .declaration import ItemType
from .torsional_spring_damper import _euler_parameter_terms

Matrix6 = Annotated[list[S.Vector6], Field(min_length=6, max_length=6)]


class ObjectConnectorRigidBodySpringDamper(S._RotationMarkers):
    """A spring-damper on the relative displacement and rotation of two rigid-body markers (a penalty joint):
    force and torque K(u - offset) + D w in joint frame 0, u the displacement and Tait-Bryan xyz angles of
    joint frame 1, w its velocity and angular velocity, all in joint frame 0."""
    objectType: Literal["ConnectorRigidBodySpringDamper"]
    nodeNumber: Literal[-1] = -1
    """-1 (none) only: Exudyn's NodeGenericData serves postNewtonStepUserFunction, which is not supported"""
    stiffness: Matrix6 = Field(default_factory=lambda: [[0.0] * 6 for _ in range(6)])
    """6x6 stiffness K on [displacement, angles] (N/m, N m/rad)"""
    damping: Matrix6 = Field(default_factory=lambda: [[0.0] * 6 for _ in range(6)])
    """6x6 damping D on [velocity, angular velocity] (N s/m, N m s/rad)"""
    offset: S.Vector6 = Field(default_factory=lambda: [0.0] * 6)
    """[displacement, angles] at which the spring force and torque are zero"""
    useIntrinsicFormulation: Literal[False] = False
    """false only: the intrinsic (mid-frame, Lie group) formulation is not supported"""
    springForceTorqueUserFunction: Literal[0] = Field(0, description="0 (none) only: an expression would need t, "
                                                      "which this type's compiled kernels do not get")
    postNewtonStepUserFunction: Literal[0] = Field(0, description="0 (none) only: a post-Newton step (with its "
                                                   "data node) is not supported")

    @field_validator("nodeNumber", mode="before")
    @classmethod
    def no_data_node(cls, v):
        if v != -1:
            raise ValueError(f"{v!r}: a NodeGenericData only serves postNewtonStepUserFunction, which is not "
                             "supported (mbserve has no data nodes); -1 (none) only")
        return v

    @field_validator("useIntrinsicFormulation", mode="before")
    @classmethod
    def no_intrinsic_formulation(cls, v):
        if v is not False:
            raise ValueError(f"{v!r}: the intrinsic (mid-frame, Lie group) formulation is not supported; false only")
        return v


class RigidSpringData(NamedTuple):
    cols: np.ndarray  # (n,14) the two markers' columns
    m0: np.ndarray
    m1: np.ndarray
    f0: np.ndarray  # (n,) marker 0's frame (its lever arm r0 = p0 - frame position)
    f1: np.ndarray
    R0: np.ndarray  # (n,3,3) rotationMarker0
    R1: np.ndarray
    K: np.ndarray  # (n,6,6)
    D: np.ndarray
    offset: np.ndarray  # (n,6)
    active: np.ndarray  # (n,) bool
    ep0: np.ndarray  # (n,) bool: marker 0's frame turns by Euler parameters (J_rot's columns 3..6 are G(θ))
    ep1: np.ndarray


@jit
def joint_state(d, i, pos, vel, rot, omega, A0, u, w, f, gam):
    """Into A0 joint frame 0, u, w, f (local, as in the module's docstring) and gam the angles' gradient
    (δangles = gam A0ᵀ(δψ1 - δψ0), δψ global small rotations) of item i at one state; f is 0 for an inactive item."""
    p, q = d.m0[i], d.m1[i]
    A1 = np.empty((3, 3))
    for r in range(3):
        for c in range(3):
            A0[r, c] = rot[p, r, 0] * d.R0[i, 0, c] + rot[p, r, 1] * d.R0[i, 1, c] + rot[p, r, 2] * d.R0[i, 2, c]
            A1[r, c] = rot[q, r, 0] * d.R1[i, 0, c] + rot[q, r, 1] * d.R1[i, 1, c] + rot[q, r, 2] * d.R1[i, 2, c]
    R = np.empty((3, 3))  # A_J0ᵀ A_J1
    for r in range(3):
        for c in range(3):
            R[r, c] = A0[0, r] * A1[0, c] + A0[1, r] * A1[1, c] + A0[2, r] * A1[2, c]
    for c in range(3):
        u[c] = (A0[0, c] * (pos[q, 0] - pos[p, 0]) + A0[1, c] * (pos[q, 1] - pos[p, 1])
                + A0[2, c] * (pos[q, 2] - pos[p, 2]))
        w[c] = (A0[0, c] * (vel[q, 0] - vel[p, 0]) + A0[1, c] * (vel[q, 1] - vel[p, 1])
                + A0[2, c] * (vel[q, 2] - vel[p, 2]))
        w[3 + c] = (A0[0, c] * (omega[q, 0] - omega[p, 0]) + A0[1, c] * (omega[q, 1] - omega[p, 1])
                    + A0[2, c] * (omega[q, 2] - omega[p, 2]))
    # Exudyn's RotationMatrix2RotXYZ (gimbal lock: the x angle 0, the z angle from the second row)
    cos_b = np.sqrt(R[1, 2] ** 2 + R[2, 2] ** 2)
    u[4] = np.arctan2(R[0, 2], cos_b)
    if cos_b > 1e-14:
        u[3], u[5] = np.arctan2(-R[1, 2], R[2, 2]), np.arctan2(-R[0, 1], R[0, 0])
    else:
        u[3], u[5] = 0.0, np.arctan2(R[1, 0], R[1, 1])
    for c in range(3, 6):
        if u[c] > np.pi:
            u[c] -= 2.0 * np.pi
    # ω = e_x ȧ + Rx(a) e_y ḃ + Rx(a)Ry(b) e_z ċ in joint frame 0, inverted
    sa, ca, sb = np.sin(u[3]), np.cos(u[3]), np.sin(u[4])
    gam[0, 0], gam[0, 1], gam[0, 2] = 1.0, sb * sa / cos_b, -sb * ca / cos_b
    gam[1, 0], gam[1, 1], gam[1, 2] = 0.0, ca, sa
    gam[2, 0], gam[2, 1], gam[2, 2] = 0.0, -sa / cos_b, ca / cos_b
    for r in range(6):
        s = 0.0
        if d.active[i]:  # an inactive item's f: 0, as Exudyn's ForceLocal and TorqueLocal
            for c in range(6):
                s += d.K[i, r, c] * (u[c] - d.offset[i, c]) + d.D[i, r, c] * w[c]
        f[r] = s


@jit
def _global_load(A0, f, fp, fr):
    """fp, fr: the global force and torque A0 f[:3], A0 f[3:]."""
    for r in range(3):
        fp[r] = A0[r, 0] * f[0] + A0[r, 1] * f[1] + A0[r, 2] * f[2]
        fr[r] = A0[r, 0] * f[3] + A0[r, 1] * f[4] + A0[r, 2] * f[5]


@jit
def rigid_spring_forces(d, kin, F):
    A0, gam = np.empty((3, 3)), np.empty((3, 3))
    u, w, f, fp, fr = np.empty(6), np.empty(6), np.empty(6), np.empty(3), np.empty(3)
    for i in range(d.m0.shape[0]):
        if not d.active[i]:
            F[i, :] = 0.0
            continue
        joint_state(d, i, kin.pos, kin.vel, kin.rot, kin.omega, A0, u, w, f, gam)
        _global_load(A0, f, fp, fr)
        p, q = d.m0[i], d.m1[i]
        for j in range(7):
            F[i, j] = (kin.Jpos[p, 0, j] * fp[0] + kin.Jpos[p, 1, j] * fp[1] + kin.Jpos[p, 2, j] * fp[2]
                       + kin.Jrot[p, 0, j] * fr[0] + kin.Jrot[p, 1, j] * fr[1] + kin.Jrot[p, 2, j] * fr[2])
            F[i, 7 + j] = -(kin.Jpos[q, 0, j] * fp[0] + kin.Jpos[q, 1, j] * fp[1] + kin.Jpos[q, 2, j] * fp[2]
                            + kin.Jrot[q, 0, j] * fr[0] + kin.Jrot[q, 1, j] * fr[1] + kin.Jrot[q, 2, j] * fr[2])


@jit
def _cross(a, b, out):
    out[0], out[1], out[2] = a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]


@jit
def rigid_spring_jacobians(d, kin, dq, dv):
    """∂F/∂q, ∂F/∂v of F = -Jdᵀ g, Jd = [[-J_pos0, J_pos1], [-J_rot0, J_rot1]] (6x14), g = [A0 f[:3], A0 f[3:]]:
    δu = [A0ᵀ(δΔp + Δp × δψ0), gam A0ᵀ(δψ1 - δψ0)], δw = [A0ᵀ(δΔv + Δv × δψ0), A0ᵀ(δΔω + Δω × δψ0)], δA0 = δψ0~A0,
    δψk = J_rotk δqk. A marker's velocity is v_frame + ω × r (r its lever arm), so at fixed velocities
    δv = -r × δω + ω × (δψ × r), δω = W δq on Euler-parameter frames; on the rotation columns
    J_posᵀ fp + J_rotᵀ fr = Gᵀ(fr + r × fp), whose δ is L (δG) and Gᵀ((δψ × r) × fp)."""
    A0, gam = np.empty((3, 3)), np.empty((3, 3))
    u, w, f, fp, fr = np.empty(6), np.empty(6), np.empty(6), np.empty(3), np.empty(3)
    dp, dvel, dw, psi, x, y = np.empty(3), np.empty(3), np.empty(3), np.empty(3), np.empty(3), np.empty(3)
    r0, r1, m, rk, wk, e = np.empty(3), np.empty(3), np.empty(3), np.empty(3), np.empty(3), np.empty(3)
    uq, wq, wv, fq, fv, gq, gv = np.empty(6), np.empty(6), np.empty(6), np.empty(6), np.empty(6), np.empty(6), \
        np.empty(6)
    Jd, W, L = np.empty((6, 14)), np.empty((3, 14)), np.empty((14, 14))
    for i in range(d.m0.shape[0]):
        if not d.active[i]:
            continue
        joint_state(d, i, kin.pos, kin.vel, kin.rot, kin.omega, A0, u, w, f, gam)
        _global_load(A0, f, fp, fr)
        p, q = d.m0[i], d.m1[i]
        for r in range(3):
            dp[r], dvel[r], dw[r] = kin.pos[q, r] - kin.pos[p, r], kin.vel[q, r] - kin.vel[p, r], \
                kin.omega[q, r] - kin.omega[p, r]
            r0[r], r1[r] = kin.pos[p, r] - kin.fpos[d.f0[i], r], kin.pos[q, r] - kin.fpos[d.f1[i], r]
            for j in range(7):
                Jd[r, j], Jd[r, 7 + j] = -kin.Jpos[p, r, j], kin.Jpos[q, r, j]
                Jd[3 + r, j], Jd[3 + r, 7 + j] = -kin.Jrot[p, r, j], kin.Jrot[q, r, j]
        W[:] = 0.0
        L[:] = 0.0
        if d.ep0[i]:
            _cross(r0, fp, m)
            m += fr
            _euler_parameter_terms(L, W, m, kin.v[d.cols[i, 3:7]], -1.0, 3)
        if d.ep1[i]:
            _cross(r1, fp, m)
            m += fr
            _euler_parameter_terms(L, W, m, kin.v[d.cols[i, 10:14]], 1.0, 10)
        for b in range(14):
            for r in range(3):
                psi[r] = -Jd[3 + r, b] if b < 7 else 0.0  # δψ0 of column b
            # local δu, δw (position) and δw (velocity) of column b
            _cross(dp, psi, x)
            for r in range(3):
                y[r] = Jd[r, b] + x[r]
            for c in range(3):
                uq[c] = A0[0, c] * y[0] + A0[1, c] * y[1] + A0[2, c] * y[2]
                wv[c] = A0[0, c] * Jd[0, b] + A0[1, c] * Jd[1, b] + A0[2, c] * Jd[2, b]
                wv[3 + c] = A0[0, c] * Jd[3, b] + A0[1, c] * Jd[4, b] + A0[2, c] * Jd[5, b]
            for c in range(3):
                uq[3 + c] = gam[c, 0] * wv[3] + gam[c, 1] * wv[4] + gam[c, 2] * wv[5]
            # δΔv of column b's marker k (Jd's rows 3..5: its signed J_rot; W signed too)
            rk[:] = r0 if b < 7 else r1
            for r in range(3):
                wk[r] = kin.omega[p if b < 7 else q, r]
                e[r] = Jd[3 + r, b]
            _cross(e, rk, y)
            _cross(wk, y, e)
            _cross(rk, W[:, b], y)
            _cross(dvel, psi, x)
            x += e - y
            for c in range(3):
                wq[c] = A0[0, c] * x[0] + A0[1, c] * x[1] + A0[2, c] * x[2]
            _cross(dw, psi, x)
            for r in range(3):
                x[r] += W[r, b]
            for c in range(3):
                wq[3 + c] = A0[0, c] * x[0] + A0[1, c] * x[1] + A0[2, c] * x[2]
            # global δg: A0 (K δu + D δw) + δψ0 × (A0 f) over position, and A0 D δw over velocity
            for r in range(6):
                fq[r], fv[r] = 0.0, 0.0
                for c in range(6):
                    fq[r] += d.K[i, r, c] * uq[c] + d.D[i, r, c] * wq[c]
                    fv[r] += d.D[i, r, c] * wv[c]
            _cross(psi, fp, x)
            _cross(psi, fr, y)
            for r in range(3):
                gq[r] = A0[r, 0] * fq[0] + A0[r, 1] * fq[1] + A0[r, 2] * fq[2] + x[r]
                gq[3 + r] = A0[r, 0] * fq[3] + A0[r, 1] * fq[4] + A0[r, 2] * fq[5] + y[r]
                gv[r] = A0[r, 0] * fv[0] + A0[r, 1] * fv[1] + A0[r, 2] * fv[2]
                gv[3 + r] = A0[r, 0] * fv[3] + A0[r, 1] * fv[4] + A0[r, 2] * fv[5]
            for r in range(3):
                e[r] = Jd[3 + r, b]
            _cross(e, rk, y)
            _cross(y, fp, e)  # (δψ × r) × fp, signed as marker k's J_rot
            for a in range(14):
                sq, sv = 0.0, 0.0
                for r in range(6):
                    sq += Jd[r, a] * gq[r]
                    sv += Jd[r, a] * gv[r]
                if (a < 7) == (b < 7):
                    sq += (Jd[3, a] * e[0] + Jd[4, a] * e[1] + Jd[5, a] * e[2]) * (-1.0 if b < 7 else 1.0)
                dq[i, a, b] = -sq - L[a, b]
                dv[i, a, b] = -sv


@jit
def rigid_spring_outputs(d, i, pos, vel, rot, omega):
    """(rows, 18): u, w, f of item i over sensor rows (pos (rows,nm,3), rot (rows,nm,3,3), ...)."""
    out = np.empty((rot.shape[0], 18))
    A0, gam = np.empty((3, 3)), np.empty((3, 3))
    u, w, f = np.empty(6), np.empty(6), np.empty(6)
    for r in range(rot.shape[0]):
        joint_state(d, i, pos[r], vel[r], rot[r], omega[r], A0, u, w, f, gam)
        out[r, 0:3], out[r, 3:6], out[r, 6:9] = u[0:3], w[0:3], u[3:6]
        out[r, 9:12], out[r, 12:18] = w[3:6], f
    return out


KERNELS = ItemKernels(RigidSpringData, rigid_spring_forces, rigid_spring_jacobians)
# the columns of rigid_spring_outputs, three each
OUTPUTS = ("DisplacementLocal", "VelocityLocal", "Rotation", "AngularVelocityLocal", "ForceLocal", "TorqueLocal")


class RigidBodySpringDampers(CompiledForces):
    OBJECT_TYPE = "ConnectorRigidBodySpringDamper"
    KERNELS = KERNELS

    def __init__(self, system):
        super().__init__(system)
        m0, m1, self.cols = self.markers()
        ep = system.f_is_ep[system.mframe]
        R = np.array([[o.rotationMarker0, o.rotationMarker1] for o in self.items], float).reshape(-1, 2, 3, 3)
        KD = np.array([[o.stiffness, o.damping] for o in self.items], float).reshape(-1, 2, 6, 6)
        offset = np.array([o.offset for o in self.items], float).reshape(-1, 6)
        self.data = RigidSpringData(self.cols, m0, m1, system.mframe[m0], system.mframe[m1], R[:, 0].copy(),
                                    R[:, 1].copy(), KD[:, 0].copy(), KD[:, 1].copy(), offset,
                                    self.active, ep[m0], ep[m1])

    def output(self, kin, k: int, var: str):
        """Over sensor rows (kin: their kinematics)."""
        values = rigid_spring_outputs(self.data, k, *(np.ascontiguousarray(a)
                                                      for a in (kin.pos, kin.vel, kin.rot, kin.omega)))
        first = 3 * OUTPUTS.index(var)
        return values[:, first:first + 3]


ITEMS = (ItemType(ObjectConnectorRigidBodySpringDamper, "force", OUTPUTS, RigidBodySpringDampers, markers="rigid",
                  explicit="apply", kernels=KERNELS),)
