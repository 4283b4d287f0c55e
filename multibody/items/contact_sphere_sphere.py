"""ObjectContactSphereSphere: a penalty contact between two spheres at the markers' points (radii r0, r1), or of
sphere 0 inside the hollow sphere 1, with Exudyn 1.13.6's normal laws (linear, its Adhesive Elasto-Plastic model,
Hunt-Crossley and Gonthier/Carvalho-Martins restitution) and regularized friction; its NodeGenericData holds four
data coordinates [gap, tangential slip speed, impact velocity, plastic overlap] of the last post-Newton step.

h = -1 for a hollow sphere 1, else 1; d = p1 - p0, gap g = h|d| - (r0 + h r1), n = h d/|d|. In contact (during
Newton: the data gap < 0) the velocities at the contact point (with friction: vI = v0 + ω0 × (r0 + g/2) n,
vJ = v1 + h ω1 × (-(r1 + h g/2) n)) give Δv = vJ - vI and v_n = n·Δv. The normal force on marker 1 is f n with
f = -(k δ^e + λ δ^e v_n - d v_n) (δ^e = sign(-g)|g|^e; λ from the restitution coefficient and the data's impact
velocity) or the elasto-plastic law of the overlap and the data's plastic overlap; friction -μ f_c Δv_t/v, v the
slip speed or, in the proportional zone (the data's slip speed below it), the zone. Torques with friction only:
(r0 + g/2) n × f on marker 0, (h r1 + g/2) n × f on marker 1, f the force on marker 0 (Exudyn's fVec).
The data are fixed during Newton and set after it (Exudyn's PostNewtonStep); a contact that closes or opens
within the step recommends the step |gap_start / v_n| (adaptive steps shorten to it, alpha_kernel.run_steps). The Newton
matrix: forward differences of the markers' forces in their positions, velocities and angular velocities, the
marker Jacobians held fixed. Sensors read the data of their row (the step's last post-Newton step's).
"""
from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np
from pydantic import Field, field_validator

from .. import schema as S
from ..kernels import ItemKernels, jit, jit_noalloc
from .compiled import CompiledForces
from .declaration import RIGID_MARKERS, ItemType


class SphereContactLaw(S._Connector):
    """The NodeGenericData and the contact law's parameters that Exudyn's sphere contacts share (ContactSphereSphere,
    ContactSphereTriangle)."""
    nodeNumber: S.Ref = -1
    """a NodeGenericData with numberOfDataCoordinates 4: gap, slip speed, impact velocity and plastic overlap (0
    without the elasto-plastic model) of the last post-Newton step"""
    dynamicFriction: S.FiniteFloat = Field(0.0, ge=0)
    """dynamic friction coefficient μ; not 0: a marker at a sphere's center needs an orientation (BodyRigid,
    NodeRigid)"""
    frictionProportionalZone: S.FiniteFloat = Field(1e-3, ge=0)
    """slip speed below which friction grows in proportion to it (m/s; regularization)"""
    contactStiffness: S.FiniteFloat = Field(0.0, ge=0)
    """normal contact stiffness k (N/m for exponent 1)"""
    contactDamping: S.FiniteFloat = Field(0.0, ge=0)
    """linear normal contact damping d (N s/m), added in every impact model"""
    contactStiffnessExponent: S.FiniteFloat = Field(1.0, gt=0)
    """exponent e of the overlap in the normal force"""
    restitutionCoefficient: S.FiniteFloat = Field(1.0, gt=0, le=1)
    """coefficient of restitution of impactModel 1 and 2"""
    minimumImpactVelocity: S.FiniteFloat = Field(0.0, ge=0)
    """lower bound of the impact velocity in the restitution models (m/s)"""
    impactModel: int = Field(0, ge=0, le=2)
    """0: linear (ContactSphereSphere: with the elasto-plastic adhesion model if contactPlasticityRatio is not 0);
    1: Hunt-Crossley; 2: Gonthier (restitution ≤ 1/3) / Carvalho-Martins"""


class ObjectContactSphereSphere(SphereContactLaw):
    """Penalty contact of two spheres centered at the markers (or of sphere 0 inside the hollow sphere 1), with
    restitution or elasto-plastic adhesion models and friction (Exudyn's discontinuous iteration); its data in a
    NodeGenericData of 4 coordinates. With dynamicFriction, both markers need an orientation."""
    objectType: Literal["ContactSphereSphere"]
    spheresRadii: S.Vector2 = Field(default_factory=lambda: [-1.0, -1.0], validate_default=True)
    """[r0, r1], the spheres' radii (m)"""
    isHollowSphere1: bool = False
    """true: sphere 1 is hollow, sphere 0 inside it"""
    constantPullOffForce: S.FiniteFloat = Field(0.0, ge=0)
    """constant adhesion force (N; elasto-plastic model)"""
    contactPlasticityRatio: S.FiniteFloat = Field(0.0, ge=0, lt=1)
    """λ_P = 1 - k/K2, K2 the stiffness of unloading and reloading; 0: no elasto-plastic model"""
    adhesionCoefficient: S.FiniteFloat = Field(0.0, ge=0)
    """adhesion stiffness (N/m for exponent 1; elasto-plastic model)"""
    adhesionExponent: S.FiniteFloat = Field(1.0, ge=0)
    """exponent of the overlap in the adhesion force (used, as Exudyn's, when contactStiffnessExponent is not 1)"""

    @field_validator("spheresRadii")
    @classmethod
    def positive_radii(cls, v):
        if min(v) <= 0:
            raise ValueError(f"{v}: each radius must be greater than zero")
        return v


class ContactWork(NamedTuple):
    """The contact kernels' work arrays, made once with the model's data: a kernel call allocates nothing (the
    allocations and the reference counting of their views cost more than a contact's arithmetic)."""
    P: np.ndarray  # (2,3) the markers' positions
    V: np.ndarray  # (2,3) velocities
    W: np.ndarray  # (2,3) angular velocities
    S: np.ndarray  # (8,3) contact()'s rows
    A: np.ndarray  # (3,3) a marker's orientation (the triangle's)
    A0: np.ndarray  # (3,3) the same, unperturbed
    w0: np.ndarray  # (12,) a wrench
    w1: np.ndarray  # (12,) a perturbed wrench
    D: np.ndarray  # (12,14) the wrench's derivatives


def contact_work() -> ContactWork:
    e = np.empty
    return ContactWork(e((2, 3)), e((2, 3)), e((2, 3)), e((8, 3)), e((3, 3)), e((3, 3)), e(12), e(12), e((12, 14)))


class SphereContactData(NamedTuple):
    cols: np.ndarray  # (n,14) the two markers' columns
    m0: np.ndarray
    m1: np.ndarray
    active: np.ndarray
    radii: np.ndarray  # (n,2)
    hollow: np.ndarray  # (n,) bool
    law: np.ndarray  # (n,12): μ, zone, k, d, e, pull-off, λ_P, k_adh, e_adh, restitution, v_min, impact model
    dc: np.ndarray  # (n,4) the data coordinates (kernels.ItemKernels.post_newton)
    dc_start: np.ndarray  # (n,4) their values at the step's start
    work: ContactWork


MU, ZONE, K, D, EXP, PULL, PLASTIC, K_ADH, EXP_ADH, RESTITUTION, V_MIN, MODEL = range(12)
LAW = ("dynamicFriction", "frictionProportionalZone", "contactStiffness", "contactDamping",
       "contactStiffnessExponent", "constantPullOffForce", "contactPlasticityRatio", "adhesionCoefficient",
       "adhesionExponent", "restitutionCoefficient", "minimumImpactVelocity", "impactModel")
GAP, SLIP, IMPACT, OVERLAP = range(4)  # the data coordinates


@jit_noalloc
def _signed_power(x, e):
    return x if e == 1.0 else np.sign(x) * abs(x) ** e


@jit_noalloc
def normal_force(c, gap, vn, data):
    """Exudyn's contact force (before its sign change) for gap, normal velocity vn and the data coordinates."""
    k1, e = c[K], c[EXP]
    overlap = _signed_power(-gap, e)
    damping = -c[D] * vn
    force = k1 * overlap + damping
    if c[MODEL] == 0.0:
        if c[PLASTIC] != 0.0:
            k2 = k1 / (1.0 - c[PLASTIC])
            unloaded = k2 * (overlap - _signed_power(data[OVERLAP], e))
            if unloaded >= k1 * overlap:
                force = k1 * overlap
            else:
                adhesion = -gap
                if e != 1.0:  # Exudyn tests the stiffness exponent here
                    adhesion = np.sign(adhesion) * abs(adhesion) ** c[EXP_ADH]
                adhesion *= -c[K_ADH]
                if k1 * overlap > unloaded > adhesion:
                    force = unloaded
                if adhesion > unloaded:
                    force = adhesion
            force += -c[PULL] + damping
    else:
        v_impact = max(c[V_MIN], data[IMPACT])
        if v_impact > 0.0:
            factor, r = k1 / v_impact, c[RESTITUTION]
            if c[MODEL] == 1.0:
                factor *= 1.5 * (r - 1.0)
            else:
                factor *= 1.5 * (r - 1.0) * (11.0 - r) / (1.0 + 9.0 * r) if r > 1.0 / 3.0 else (r * r - 1.0) / r
            force += factor * overlap * vn
    return force


@jit_noalloc
def contact(d, i, P, V, W, data, from_data, S):
    """Exudyn's ComputeConnectorProperties for marker positions P, velocities V and global angular velocities W
    (2,3) and the data coordinates; from_data: contact and friction zone as the data say (during Newton), else as
    the state does (post-Newton). S rows: d = p1 - p0, n, Δv, fVec (the force on marker 0's side, Exudyn's);
    returns the gap."""
    dp, n, dv, f = S[0], S[1], S[2], S[3]
    c = d.law[i]
    h = -1.0 if d.hollow[i] else 1.0
    r0, r1 = d.radii[i, 0], d.radii[i, 1]
    for r in range(3):
        dp[r] = P[1, r] - P[0, r]
    dist = np.sqrt(dp[0] * dp[0] + dp[1] * dp[1] + dp[2] * dp[2])
    gap = h * dist - (r0 + h * r1)
    scale = h / dist if dist != 0.0 else h
    for r in range(3):
        n[r] = scale * dp[r]
        dv[r] = 0.0 if from_data else V[1, r] - V[0, r]
        f[r] = 0.0
    if not (data[GAP] < 0.0 if from_data else gap < 0.0):
        return gap
    a0, a1 = r0 + 0.5 * gap, -h * (r1 + h * 0.5 * gap)  # the contact point from each center, along n
    for r in range(3):
        dv[r] = V[1, r] - V[0, r]
    if c[MU] != 0.0:
        for r in range(3):
            s, t = (r + 1) % 3, (r + 2) % 3
            dv[r] += a1 * (W[1, s] * n[t] - W[1, t] * n[s]) - a0 * (W[0, s] * n[t] - W[0, t] * n[s])
    contact_force(c, d.active[i], gap, n, dv, data, from_data, f)
    return gap


@jit_noalloc
def contact_force(c, active, gap, n, dv, data, from_data, f):
    """f := Exudyn's fVec of a contact (its law c) at gap, normal n and relative velocity dv: the normal law and,
    with μ, friction (0 when not active)."""
    vn = n[0] * dv[0] + n[1] * dv[1] + n[2] * dv[2]
    force = -normal_force(c, gap, vn, data)
    for r in range(3):
        f[r] = force * n[r]
    if c[MU] != 0.0:
        add_friction(c, n, dv, vn, force, from_data, data[SLIP], f)
    if not active:
        f[:] = 0.0


@jit_noalloc
def add_friction(c, n, dv, vn, force, from_data, data_slip, f):
    """f += Exudyn's regularized friction against the tangential part of dv, for the normal force `force` (Exudyn's
    sign); in the proportional zone as the data's slip speed says (from_data) or the current one."""
    vt0, vt1, vt2 = dv[0] - vn * n[0], dv[1] - vn * n[1], dv[2] - vn * n[2]
    slip = np.sqrt(vt0 * vt0 + vt1 * vt1 + vt2 * vt2)
    zone = c[ZONE]
    proportional = data_slip < zone if from_data else slip < zone
    factor = 0.0
    if proportional and zone != 0.0:
        factor = -c[MU] * force / zone
    elif slip != 0.0:
        factor = -c[MU] * force / slip
    f[0] += factor * vt0
    f[1] += factor * vt1
    f[2] += factor * vt2


@jit_noalloc
def update_data(c, data, start, gap, n, dv, f, overlap):
    """Exudyn's PostNewtonStep of one item at a converged state (gap, normal n, relative velocity dv, force f,
    plastic overlap): data := [gap, slip speed, impact velocity (-v_n when the contact closed in this step, else
    the step's start value), overlap]; returns (its error: |k gap| when the contact changed, plus the friction
    force's jump when the slip crossed the proportional zone; the step |gap_start / v_n| it recommends or -1)."""
    vn = n[0] * dv[0] + n[1] * dv[1] + n[2] * dv[2]
    last_gap, last_slip = data[GAP], data[SLIP]
    slip = 0.0
    for r in range(3):
        slip += (dv[r] - vn * n[r]) ** 2
    data[GAP], data[SLIP], data[OVERLAP] = gap, np.sqrt(slip), overlap
    error, step = 0.0, -1.0
    if (gap > 0.0 and last_gap <= 0.0) or (gap <= 0.0 and last_gap > 0.0):
        error = abs(gap * c[K])
        if vn != 0.0 and start[GAP] != 0.0:  # Exudyn 1.13.6: also when it opens (its C++ 1.11: closing only)
            step = abs(start[GAP] / vn)
    zone = c[ZONE]
    if gap < 0.0 and zone != 0.0 and ((data[SLIP] < zone < last_slip) or (data[SLIP] > zone > last_slip)):
        error += abs(c[MU] * (f[0] * n[0] + f[1] * n[1] + f[2] * n[2]) / zone * (data[SLIP] - zone))
    data[IMPACT] = -vn if start[GAP] > 0.0 >= gap else start[IMPACT]
    return error, step


@jit_noalloc
def wrench(d, i, P, V, W, data, S, out):
    """out (12,) the right-hand side forces and torques [f0, τ0, f1, τ1] on the markers (ComputeODE2LHS negated)."""
    gap = contact(d, i, P, V, W, data, True, S)
    n, f = S[1], S[3]
    out[:] = 0.0
    if not d.active[i]:
        return
    h = -1.0 if d.hollow[i] else 1.0
    a0, a1 = d.radii[i, 0] + 0.5 * gap, h * d.radii[i, 1] + 0.5 * gap
    friction = d.law[i, MU] != 0.0
    for r in range(3):
        s, t = (r + 1) % 3, (r + 2) % 3
        out[r], out[6 + r] = f[r], -f[r]
        if friction:
            torque = n[s] * f[t] - n[t] * f[s]
            out[3 + r], out[9 + r] = a0 * torque, a1 * torque


@jit_noalloc
def _gather(kin, d, i, P, V, W):
    for side in range(2):
        m = d.m0[i] if side == 0 else d.m1[i]
        for r in range(3):
            P[side, r], V[side, r], W[side, r] = kin.pos[m, r], kin.vel[m, r], kin.omega[m, r]


@jit_noalloc
def sphere_forces(d, kin, F):
    P, V, W, S, w = d.work.P, d.work.V, d.work.W, d.work.S, d.work.w0
    for i in range(d.m0.shape[0]):
        _gather(kin, d, i, P, V, W)
        wrench(d, i, P, V, W, d.dc[i], S, w)
        project_wrench(kin, d.m0[i], d.m1[i], w, F[i])


@jit_noalloc
def project_wrench(kin, m0, m1, w, out):
    """out (14,) = Gᵀ w: the wrench w (12,) [f0, τ0, f1, τ1] on the markers m0, m1 as generalized forces on their
    columns, G = [Jpos; Jrot] of each marker."""
    for side in range(2):
        m = m0 if side == 0 else m1
        for j in range(7):
            s = 0.0
            for r in range(3):
                s += kin.Jpos[m, r, j] * w[6 * side + r] + kin.Jrot[m, r, j] * w[6 * side + 3 + r]
            out[7 * side + j] = s


@jit_noalloc
def add_difference(kin, m, c, rotation, side, w0, w1, eps, D):
    """D[:, 7 side + j] += (w1 - w0) / eps times row c of marker m's Jrot (rotation) or Jpos, j over its columns: a
    forward difference of the wrench in the marker's motion along c."""
    for j in range(7):
        J = kin.Jrot[m, c, j] if rotation else kin.Jpos[m, c, j]
        if J != 0.0:
            for r in range(12):
                D[r, 7 * side + j] += (w1[r] - w0[r]) / eps * J


@jit_noalloc
def project_derivatives(kin, m0, m1, D, out):
    """out (14,14) += Gᵀ D: D (12,14) the wrench's derivatives in the markers' columns (project_wrench)."""
    for side in range(2):
        m = m0 if side == 0 else m1
        for a in range(7):
            for r in range(3):
                jp, jr = kin.Jpos[m, r, a], kin.Jrot[m, r, a]
                if jp == 0.0 and jr == 0.0:
                    continue
                for b in range(14):
                    out[7 * side + a, b] += jp * D[6 * side + r, b] + jr * D[6 * side + 3 + r, b]


@jit_noalloc
def sphere_jacobians(d, kin, dq, dv):
    """∂F/∂q ≈ Gᵀ (∂w/∂p) Jpos, ∂F/∂v ≈ Gᵀ ((∂w/∂v) Jpos + (∂w/∂ω) Jrot) by forward differences of the wrench w in
    the markers' positions p, velocities v and angular velocities ω (steps 1e-7 max(1e-2, |x|), Exudyn's), the
    marker Jacobians G = [Jpos; Jrot] held fixed."""
    P, V, W, S = d.work.P, d.work.V, d.work.W, d.work.S
    w0, w1, D = d.work.w0, d.work.w1, d.work.D  # D: Σ_x ∂w/∂x times x's Jacobian row
    for i in range(d.m0.shape[0]):
        dq[i], dv[i] = 0.0, 0.0
        if not d.active[i]:
            continue
        _gather(kin, d, i, P, V, W)
        wrench(d, i, P, V, W, d.dc[i], S, w0)
        for level in range(2):
            D[:] = 0.0
            for kind in range(1 if level == 0 else 2):  # level 0: positions; 1: velocities, angular velocities
                if kind == 1 and d.law[i, MU] == 0.0:  # without friction the wrench does not depend on ω
                    continue
                X = P if level == 0 else (V if kind == 0 else W)
                for side in range(2):
                    m = d.m0[i] if side == 0 else d.m1[i]
                    for c in range(3):
                        x = X[side, c]
                        eps = 1e-7 * max(1e-2, abs(x))
                        X[side, c] = x + eps
                        wrench(d, i, P, V, W, d.dc[i], S, w1)
                        X[side, c] = x
                        add_difference(kin, m, c, kind == 1, side, w0, w1, eps, D)
            project_derivatives(kin, d.m0[i], d.m1[i], D, dq[i] if level == 0 else dv[i])


@jit_noalloc
def sphere_post_newton(d, kin):
    """Exudyn's PostNewtonStep of every active item at the converged state (update_data, with the plastic overlap
    of the elasto-plastic model); returns (the largest error, the smallest recommended step or -1)."""
    P, V, W, S = d.work.P, d.work.V, d.work.W, d.work.S
    largest, recommended = 0.0, -1.0
    for i in range(d.m0.shape[0]):
        if not d.active[i]:
            continue
        _gather(kin, d, i, P, V, W)
        data, start, c = d.dc[i], d.dc_start[i], d.law[i]
        gap = contact(d, i, P, V, W, data, False, S)
        overlap = 0.0
        if gap < 0.0 and c[PLASTIC] != 0.0:
            ratio = c[PLASTIC] if c[EXP] == 1.0 else c[PLASTIC] ** (1.0 / c[EXP])
            overlap = max(ratio * -gap, start[OVERLAP])
        error, step = update_data(c, data, start, gap, S[1], S[2], S[3], overlap)
        largest = max(largest, error)
        if step >= 0.0 and (recommended < 0.0 or step < recommended):
            recommended = step
    return largest, recommended


@jit
def sphere_outputs(d, i, pos, vel, omega, data):
    """(rows, 19) over sensor rows with their data coordinates (rows, 4): Position (the contact point),
    Displacement p1 - p0, DisplacementLocal [gap], Velocity Δv (0 out of contact), Director1 n, Force (Exudyn's
    fVec), Torque (Exudyn's, -(r0 + g/2) n × fVec)."""
    rows = pos.shape[0]
    out = np.empty((rows, 19))
    P, V, W, S = np.empty((2, 3)), np.empty((2, 3)), np.empty((2, 3)), np.empty((4, 3))
    for k in range(rows):
        for side in range(2):
            m = d.m0[i] if side == 0 else d.m1[i]
            for r in range(3):
                P[side, r], V[side, r], W[side, r] = pos[k, m, r], vel[k, m, r], omega[k, m, r]
        gap = contact(d, i, P, V, W, data[k], True, S)
        dp, n, dv, f = S[0], S[1], S[2], S[3]
        a = d.radii[i, 0] + 0.5 * gap
        out[k, 6] = gap
        for r in range(3):
            s, t = (r + 1) % 3, (r + 2) % 3
            out[k, r], out[k, 3 + r], out[k, 7 + r], out[k, 10 + r] = P[0, r] + a * n[r], dp[r], dv[r], n[r]
            out[k, 13 + r], out[k, 16 + r] = f[r], -a * (n[s] * f[t] - n[t] * f[s])
    return out


KERNELS = ItemKernels(SphereContactData, sphere_forces, sphere_jacobians, sphere_post_newton)
DATA_COORDINATES = 4
OUTPUT_COLUMNS = {"Position": slice(0, 3), "Displacement": slice(3, 6), "DisplacementLocal": slice(6, 7),
                  "Velocity": slice(7, 10), "Force": slice(13, 16), "Director1": slice(10, 13), "Torque": slice(16, 19)}


def initial_data(group: CompiledForces) -> np.ndarray:
    """(n, 4) the initial coordinates of the group's items' NodeGenericData."""
    ref, nodes = group.system.loaded.ref, group.system.loaded.document.nodes
    return np.array([nodes[ref("objects", i, "nodeNumber")].initialCoordinates for i in group.objects],
                    float).reshape(-1, DATA_COORDINATES)


def contact_laws(group: CompiledForces) -> np.ndarray:
    """(n, 12) the group's items' law parameters in LAW's order (0 for those its type has not: the elasto-plastic
    model's in ContactSphereTriangle)."""
    return np.array([[float(getattr(o, name, 0.0)) for name in LAW] for o in group.items], float).reshape(-1, len(LAW))


class ContactGroup(CompiledForces):
    """The items of a two-marker contact type with a NodeGenericData: its data from make_data(m0, m1, the data
    coordinates' initial values)."""
    OUTPUT_DATA = True  # output() takes the rows' data coordinates (outputs.SensorSet)

    def __init__(self, system):
        super().__init__(system)
        m0, m1, self.cols = self.markers()
        self.data = self.make_data(m0, m1, initial_data(self))


class SphereContacts(ContactGroup):
    OBJECT_TYPE = "ContactSphereSphere"
    KERNELS = KERNELS

    def make_data(self, m0, m1, dc):
        return SphereContactData(self.cols, m0, m1, self.active, self.param("spheresRadii").reshape(-1, 2),
                                 self.param("isHollowSphere1").astype(bool), contact_laws(self), dc, dc.copy(), contact_work())

    def output(self, kin, k: int, var: str, data: np.ndarray):
        """Over sensor rows (kin: their kinematics; data: their data coordinates)."""
        values = sphere_outputs(self.data, k, np.ascontiguousarray(kin.pos), np.ascontiguousarray(kin.vel),
                                np.ascontiguousarray(kin.omega), np.ascontiguousarray(data))
        return values[:, OUTPUT_COLUMNS[var]]


def marker_problems(item, marker_types: list[str]) -> list[tuple[str, str]]:
    """Exudyn's requested marker type: with friction, both markers need an orientation."""
    if item.dynamicFriction == 0.0:
        return []
    return [(f".markerNumbers[{k}]", f"a {t} marker has no orientation; with dynamicFriction the contact needs "
             "rigid-body markers (BodyRigid, NodeRigid)") for k, t in enumerate(marker_types) if t not in RIGID_MARKERS]


ITEMS = (ItemType(ObjectContactSphereSphere, "force", tuple(OUTPUT_COLUMNS), SphereContacts, markers="position",
                  explicit="apply", kernels=KERNELS, data_coordinates=DATA_COORDINATES,
                  marker_problems=marker_problems),)
