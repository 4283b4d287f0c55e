"""ObjectConnectorRollingDiscPenalty: a rigid disc (marker 1, at the disc's center) on a plane (marker 0, normal
`planeNormal` in its frame) by a penalty law with friction, as Exudyn 1.13.6 has it; its NodeGenericData holds three
data coordinates [lateral slip velocity, forward slip velocity, gap] of the last post-Newton step.

Directions as the JointRollingDisc: w1 = A1 discAxis, n0 = A0 planeNormal, w2 = (w1 × n0)/|w1 × n0| (forward),
w3 = w1 × w2, wL = n0 × w2 (lateral); contact point pC = p1 + r w3 - p0 (from marker 0), its velocity
vC = v1 + ω1 × r w3 - (v0 + ω0 × pC), slip s = [wL·vC, w2·vC]. In contact (the data gap < 0) the normal force is
N = -(k pC·n0 + d vC·n0) and the tangential one -φ|N| μ(|s|) e: e is the data slip's direction (the current one,
and φ = |s|/v_z, times 2 - |s|/v_z unless useLinearProportionalZone, when the data slip is within the
proportional zone v_z), μ = dryFriction + viscousFriction |s| per direction, turned by dryFrictionAngle.
The data are fixed during Newton and set after it (Exudyn's PostNewtonStep): the step's discontinuous iteration
(alpha_kernel.run_steps) repeats Newton while the largest item error exceeds discontinuous.iterationTolerance.
The Newton matrix: forward differences of the markers' forces and torques in their positions, rotations and
velocities, with the marker Jacobians held fixed (Exudyn differentiates the generalized forces numerically).
Sensors evaluate with the data of their row's own state, as the step's last post-Newton step left them, and at
startTime with the node's initialCoordinates, as Exudyn's.
"""
from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np
from pydantic import Field

from .. import schema as S
from ..kernels import ItemKernels, jit
from .compiled import CompiledForces
from .declaration import ItemType


class ObjectConnectorRollingDiscPenalty(S._Connector):
    """A disc rolling on a plane by a penalty contact with friction (Exudyn's discontinuous iteration); marker 1 at
    the disc's center, marker 0 on the plane, its data in a NodeGenericData of 3 coordinates."""
    objectType: Literal["ConnectorRollingDiscPenalty"]
    nodeNumber: S.Ref = -1
    """a NodeGenericData with numberOfDataCoordinates 3: slip velocities and gap of the last post-Newton step"""
    discRadius: S.FiniteFloat = Field(0.0, ge=0)
    """disc radius r (m)"""
    discAxis: S.Vector3 = Field(default_factory=lambda: [1.0, 0.0, 0.0])
    """the disc's axis in marker 1's frame"""
    planeNormal: S.Vector3 = Field(default_factory=lambda: [0.0, 0.0, 1.0])
    """the plane's normal in marker 0's frame"""
    dryFrictionAngle: S.FiniteFloat = 0.0
    """rotation of the tangential friction directions (rad; Mecanum wheels)"""
    contactStiffness: S.FiniteFloat = 0.0
    """normal contact stiffness k (N/m)"""
    contactDamping: S.FiniteFloat = 0.0
    """normal contact damping d (N s/m)"""
    dryFriction: S.Vector2 = Field(default_factory=lambda: [0.0, 0.0])
    """dry friction coefficients [lateral, forward]"""
    dryFrictionProportionalZone: S.FiniteFloat = 0.0
    """slip velocity v_z below which friction grows with the slip (m/s; regularization); 0: none"""
    viscousFriction: S.Vector2 = Field(default_factory=lambda: [0.0, 0.0])
    """viscous friction coefficients [lateral, forward] (s/m), times the slip velocity"""
    rollingViscousFriction: S.FiniteFloat = 0.0
    """rolling friction: |N| times this times the disc center's velocity along the plane, against it (s/m)"""
    useLinearProportionalZone: bool = False
    """true: friction linear in the slip within the proportional zone (else quadratic)"""


class DiscPenaltyData(NamedTuple):
    cols: np.ndarray  # (n,14) the two markers' columns
    m0: np.ndarray
    m1: np.ndarray
    active: np.ndarray
    radius: np.ndarray
    axis: np.ndarray  # (n,3) in marker 1's frame
    normal: np.ndarray  # (n,3) in marker 0's frame
    angle: np.ndarray
    stiffness: np.ndarray
    damping: np.ndarray
    dry: np.ndarray  # (n,2)
    zone: np.ndarray
    viscous: np.ndarray  # (n,2)
    rolling: np.ndarray
    linear: np.ndarray  # (n,) bool
    dc: np.ndarray  # (n,3) the data coordinates (kernels.ItemKernels.post_newton)
    dc_start: np.ndarray  # (n,3) their values at the step's start


@jit
def _cross_into(a, b, out):
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@jit
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@jit
def slip_force(d, i, s0, s1, ds0, ds1, normal_force):
    """Exudyn's ComputeSlipForce: the tangential force [lateral, forward] at slip s and data slip ds."""
    slip, data_slip = np.sqrt(s0 * s0 + s1 * s1), np.sqrt(ds0 * ds0 + ds1 * ds1)
    if data_slip == 0.0 or slip == 0.0:
        return 0.0, 0.0
    e0, e1 = ds0 / data_slip, ds1 / data_slip
    phi = 1.0
    zone = d.zone[i]
    if data_slip <= zone and zone != 0.0:
        fact = slip / zone
        phi = fact if d.linear[i] else fact * (2.0 - fact)
        e0, e1 = s0 / slip, s1 / slip  # the current direction (Exudyn: better convergence when sticking)
    mu0, mu1 = d.dry[i, 0] + d.viscous[i, 0] * slip, d.dry[i, 1] + d.viscous[i, 1] * slip
    f0, f1 = -(phi * abs(normal_force) * e0), -(phi * abs(normal_force) * e1)
    a = d.angle[i]
    if a == 0.0:
        return mu0 * f0, mu1 * f1
    c, s = np.cos(a), np.sin(a)
    r0, r1 = mu0 * (c * f0 - s * f1), mu1 * (s * f0 + c * f1)
    return c * r0 + s * r1, -s * r0 + c * r1


@jit
def contact(d, i, P, A, V, W, data, current, S):
    """Exudyn's ComputeContactForces for markers (P positions, A rotations, V velocities, W global angular
    velocities; index 0 the plane's, 1 the disc's) and data coordinates `data` (current: the gap of the state,
    not the data's). S rows: pC, vC, wL, w2, n0, w3, the contact force [lateral, forward, normal], [s0, s1, -]."""
    pC, vC, wL, w2, n0, w3, fc, slip = S[0], S[1], S[2], S[3], S[4], S[5], S[6], S[7]
    w1, arm, tmp = np.empty(3), np.empty(3), np.empty(3)
    for r in range(3):
        w1[r] = A[1, r, 0] * d.axis[i, 0] + A[1, r, 1] * d.axis[i, 1] + A[1, r, 2] * d.axis[i, 2]
        n0[r] = A[0, r, 0] * d.normal[i, 0] + A[0, r, 1] * d.normal[i, 1] + A[0, r, 2] * d.normal[i, 2]
    _cross_into(w1, n0, w2)
    length = np.sqrt(_dot(w2, w2))
    for r in range(3):
        w2[r] /= length
    _cross_into(w1, w2, w3)
    _cross_into(n0, w2, wL)
    r_disc = d.radius[i]
    for r in range(3):
        arm[r] = r_disc * w3[r]
        pC[r] = P[1, r] + arm[r] - P[0, r]
    _cross_into(W[1], arm, tmp)
    for r in range(3):
        vC[r] = V[1, r] + tmp[r]
    _cross_into(W[0], pC, tmp)
    for r in range(3):
        vC[r] -= V[0, r] + tmp[r]
    gap = _dot(pC, n0) if current else data[2]
    slip[0], slip[1], slip[2] = _dot(vC, wL), _dot(vC, w2), 0.0
    fc[0], fc[1], fc[2] = 0.0, 0.0, 0.0
    if gap < 0.0:
        fc[2] = -(d.stiffness[i] * _dot(pC, n0) + d.damping[i] * _dot(vC, n0))
        fc[0], fc[1] = slip_force(d, i, slip[0], slip[1], data[0], data[1], fc[2])


@jit
def wrench(d, i, P, A, V, W, data, S, out):
    """out (12,) the right-hand side forces and torques [f0, τ0, f1, τ1] on the markers (Exudyn's ComputeODE2LHS
    negated; the torques about each marker's own point, the rolling friction without torque)."""
    contact(d, i, P, A, V, W, data, False, S)
    pC, wL, w2, n0, w3, fc = S[0], S[2], S[3], S[4], S[5], S[6]
    f, arm, tau = np.empty(3), np.empty(3), np.empty(3)
    for r in range(3):
        f[r] = -(fc[0] * wL[r] + fc[1] * w2[r] + fc[2] * n0[r])  # Exudyn's fPos, on the disc's left-hand side
        arm[r] = d.radius[i] * w3[r]
    _cross_into(arm, f, tau)
    for r in range(3):
        out[9 + r] = -tau[r]
    _cross_into(pC, f, tau)
    for r in range(3):
        out[3 + r] = tau[r]
    rolling = d.rolling[i]
    if rolling != 0.0:  # against the disc center's velocity along the plane, relative to the plane's point at pC
        _cross_into(W[0], pC, arm)
        for r in range(3):
            arm[r] = V[1, r] - (V[0, r] + arm[r])
        along = _dot(arm, n0)
        for r in range(3):
            f[r] += rolling * abs(fc[2]) * (arm[r] - along * n0[r])
    for r in range(3):
        out[r], out[6 + r] = f[r], -f[r]


@jit
def _gather(kin, p, q, P, A, V, W):
    for side in range(2):
        m = p if side == 0 else q
        for r in range(3):
            P[side, r], V[side, r], W[side, r] = kin.pos[m, r], kin.vel[m, r], kin.omega[m, r]
            for c in range(3):
                A[side, r, c] = kin.rot[m, r, c]


@jit
def _marker_jacobian(kin, p, q, G):
    """G (12,14): δ[pos0, rot0, pos1, rot1] = G δq over the columns (the rotations as global small angles)."""
    G[:] = 0.0
    for side in range(2):
        m = p if side == 0 else q
        for r in range(3):
            for j in range(7):
                G[6 * side + r, 7 * side + j] = kin.Jpos[m, r, j]
                G[6 * side + 3 + r, 7 * side + j] = kin.Jrot[m, r, j]


@jit
def disc_forces(d, kin, F):
    P, A, V, W = np.empty((2, 3)), np.empty((2, 3, 3)), np.empty((2, 3)), np.empty((2, 3))
    S, w, G = np.empty((8, 3)), np.empty(12), np.empty((12, 14))
    for i in range(d.m0.shape[0]):
        if not d.active[i]:
            F[i] = 0.0
            continue
        _gather(kin, d.m0[i], d.m1[i], P, A, V, W)
        wrench(d, i, P, A, V, W, d.dc[i], S, w)
        _marker_jacobian(kin, d.m0[i], d.m1[i], G)
        for j in range(14):
            s = 0.0
            for r in range(12):
                s += G[r, j] * w[r]
            F[i, j] = s


@jit
def disc_jacobians(d, kin, dq, dv):
    """∂F/∂q ≈ Gᵀ (∂w/∂y) G, ∂F/∂v ≈ Gᵀ (∂w/∂ẏ) G by forward differences of the wrench w in y = the markers'
    positions and small rotations (ẏ: velocities and angular velocities), G (_marker_jacobian) held fixed."""
    P, A, V, W = np.empty((2, 3)), np.empty((2, 3, 3)), np.empty((2, 3)), np.empty((2, 3))
    S, w0, w1, G = np.empty((8, 3)), np.empty(12), np.empty(12), np.empty((12, 14))
    Dq, Dv = np.empty((12, 12)), np.empty((12, 12))
    for i in range(d.m0.shape[0]):
        dq[i], dv[i] = 0.0, 0.0
        if not d.active[i]:
            continue
        _gather(kin, d.m0[i], d.m1[i], P, A, V, W)
        wrench(d, i, P, A, V, W, d.dc[i], S, w0)
        for y in range(12):
            side, kind, c = y // 6, (y % 6) // 3, y % 3
            for level in range(2):
                if level == 0 and kind == 0:
                    eps = 1e-7 * max(1e-2, abs(P[side, c]))
                    P[side, c] += eps
                elif level == 0:  # A := (I + eps [e_c]×) A
                    eps = 1e-7
                    a, b = (c + 1) % 3, (c + 2) % 3
                    for col in range(3):
                        ra, rb = A[side, a, col], A[side, b, col]
                        A[side, a, col], A[side, b, col] = ra - eps * rb, rb + eps * ra
                elif kind == 0:
                    eps = 1e-7 * max(1e-2, abs(V[side, c]))
                    V[side, c] += eps
                else:
                    eps = 1e-7 * max(1e-2, abs(W[side, c]))
                    W[side, c] += eps
                wrench(d, i, P, A, V, W, d.dc[i], S, w1)
                D = Dq if level == 0 else Dv
                for r in range(12):
                    D[r, y] = (w1[r] - w0[r]) / eps
                _gather(kin, d.m0[i], d.m1[i], P, A, V, W)
        _marker_jacobian(kin, d.m0[i], d.m1[i], G)
        for level in range(2):
            D, out = (Dq, dq) if level == 0 else (Dv, dv)
            for b in range(14):
                for r in range(12):
                    s = 0.0
                    for y in range(12):
                        s += D[r, y] * G[y, b]
                    w0[r] = s  # (∂w/∂y) G, column b
                for a_ in range(14):
                    s = 0.0
                    for r in range(12):
                        s += G[r, a_] * w0[r]
                    out[i, a_, b] = s


@jit
def disc_post_newton(d, kin):
    """Exudyn's PostNewtonStep of every active item at the converged state: the data coordinates := [slip, gap] of
    the state; returns the largest error: |k gap| and the slip force when the contact changed, else (in contact)
    the change of the slip force by the data slip's change; no recommended step (Exudyn's disc gives none)."""
    P, A, V, W = np.empty((2, 3)), np.empty((2, 3, 3)), np.empty((2, 3)), np.empty((2, 3))
    S = np.empty((8, 3))
    largest = 0.0
    for i in range(d.m0.shape[0]):
        if not d.active[i]:
            continue
        _gather(kin, d.m0[i], d.m1[i], P, A, V, W)
        data = d.dc[i]
        contact(d, i, P, A, V, W, data, True, S)
        gap, s0, s1, normal_force = _dot(S[0], S[4]), S[7, 0], S[7, 1], S[6, 2]
        error = 0.0
        if (gap > 0.0 and data[2] <= 0.0) or (gap <= 0.0 and data[2] > 0.0):
            error += abs(gap * d.stiffness[i])
            f0, f1 = slip_force(d, i, s0, s1, s0, s1, normal_force)
            error += np.sqrt(f0 * f0 + f1 * f1)
        elif gap < 0.0:
            g0, g1 = slip_force(d, i, s0, s1, data[0], data[1], normal_force)
            f0, f1 = slip_force(d, i, s0, s1, s0, s1, normal_force)
            error += np.sqrt((f0 - g0) * (f0 - g0) + (f1 - g1) * (f1 - g1))
        data[0], data[1], data[2] = s0, s1, gap
        largest = max(largest, error)
    return largest, -1.0


@jit
def disc_outputs(d, i, pos, rot, vel, omega, initial, initial_data):
    """(rows, 21) over sensor rows: Position pC, VelocityLocal [wL, w2, n0]·vC, Velocity (the trail's), ForceLocal,
    RotationMatrix [wL, w2, n0] row by row; the data those of the row's state (the post-Newton step's), or
    initial_data (3,) on the rows marked initial."""
    rows = pos.shape[0]
    out = np.empty((rows, 21))
    P, A, V, W = np.empty((2, 3)), np.empty((2, 3, 3)), np.empty((2, 3)), np.empty((2, 3))
    S, data = np.empty((8, 3)), np.empty(3)
    w1, w1_t, n0_t, f, f_t, tmp, w3_t = np.empty(3), np.empty(3), np.empty(3), np.empty(3), np.empty(3), \
        np.empty(3), np.empty(3)
    p, q = d.m0[i], d.m1[i]
    for k in range(rows):
        data[:] = 0.0  # the state's gap and slip first (the force of this call unused)
        for side in range(2):
            m = p if side == 0 else q
            for r in range(3):
                P[side, r], V[side, r], W[side, r] = pos[k, m, r], vel[k, m, r], omega[k, m, r]
                for c in range(3):
                    A[side, r, c] = rot[k, m, r, c]
        contact(d, i, P, A, V, W, data, True, S)
        data[0], data[1], data[2] = S[7, 0], S[7, 1], _dot(S[0], S[4])
        if initial[k]:
            data[:] = initial_data
        contact(d, i, P, A, V, W, data, False, S)
        pC, vC, wL, w2, n0 = S[0], S[1], S[2], S[3], S[4]
        for r in range(3):
            out[k, r] = pC[r]
            out[k, 9 + r] = S[6, r]
            out[k, 12 + 3 * r], out[k, 13 + 3 * r], out[k, 14 + 3 * r] = wL[r], w2[r], n0[r]
        out[k, 3], out[k, 4], out[k, 5] = _dot(wL, vC), _dot(w2, vC), _dot(n0, vC)
        for r in range(3):  # the trail: pC's motion without the disc's spin (Exudyn's vTrail)
            w1[r] = A[1, r, 0] * d.axis[i, 0] + A[1, r, 1] * d.axis[i, 1] + A[1, r, 2] * d.axis[i, 2]
        _cross_into(W[1], w1, w1_t)
        _cross_into(W[0], n0, n0_t)
        _cross_into(w1, n0, f)
        _cross_into(w1_t, n0, f_t)
        _cross_into(w1, n0_t, tmp)
        for r in range(3):
            f_t[r] += tmp[r]
        g = np.sqrt(_dot(f, f))
        w3_t[:] = 0.0
        if g != 0.0:
            g_t = 1.0 / g * _dot(f, f_t)
            for r in range(3):
                tmp[r] = (f_t[r] * g - f[r] * g_t) * (1.0 / (g * g))  # w2_t
            _cross_into(w1, tmp, w3_t)
            _cross_into(w1_t, w2, tmp)
            for r in range(3):
                w3_t[r] += tmp[r]
        _cross_into(W[0], pC, tmp)
        for r in range(3):
            out[k, 6 + r] = V[1, r] + d.radius[i] * w3_t[r] - (V[0, r] + tmp[r])
    return out


KERNELS = ItemKernels(DiscPenaltyData, disc_forces, disc_jacobians, disc_post_newton)
OUTPUT_COLUMNS = {"Position": slice(0, 3), "Velocity": slice(6, 9), "VelocityLocal": slice(3, 6),
                  "ForceLocal": slice(9, 12), "RotationMatrix": slice(12, 21)}
DATA_COORDINATES = 3


class RollingDiscPenalties(CompiledForces):
    OBJECT_TYPE = "ConnectorRollingDiscPenalty"
    KERNELS = KERNELS

    def __init__(self, system):
        super().__init__(system)
        m0, m1, self.cols = self.markers()
        ref, nodes = system.loaded.ref, system.loaded.document.nodes
        dc = np.array([nodes[ref("objects", i, "nodeNumber")].initialCoordinates for i in self.objects],
                      float).reshape(-1, DATA_COORDINATES)
        self.initial_data = dc.copy()
        self.t0 = float(system.loaded.settings["timeIntegration"]["startTime"])
        self.data = DiscPenaltyData(
            self.cols, m0, m1, self.active, self.param("discRadius"), self.param("discAxis").reshape(-1, 3),
            self.param("planeNormal").reshape(-1, 3), self.param("dryFrictionAngle"), self.param("contactStiffness"),
            self.param("contactDamping"), self.param("dryFriction").reshape(-1, 2),
            self.param("dryFrictionProportionalZone"), self.param("viscousFriction").reshape(-1, 2),
            self.param("rollingViscousFriction"), self.param("useLinearProportionalZone").astype(bool), dc, dc.copy())

    def output(self, kin, k: int, var: str):
        """Over sensor rows (kin: their kinematics)."""
        initial = np.ascontiguousarray(np.asarray(kin.t) <= self.t0, dtype=bool)
        values = disc_outputs(self.data, k, np.ascontiguousarray(kin.pos), np.ascontiguousarray(kin.rot),
                              np.ascontiguousarray(kin.vel), np.ascontiguousarray(kin.omega), initial,
                              self.initial_data[k])
        return values[:, OUTPUT_COLUMNS[var]]


ITEMS = (ItemType(ObjectConnectorRollingDiscPenalty, "force", tuple(OUTPUT_COLUMNS), RollingDiscPenalties,
                  markers="rigid", explicit="apply", kernels=KERNELS, data_coordinates=DATA_COORDINATES),)
