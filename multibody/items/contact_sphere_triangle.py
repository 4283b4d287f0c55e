"""ObjectContactSphereTriangle: Exudyn 1.13.6's penalty contact of a sphere (radius R, centered at marker 0) with a
triangle given by three points in marker 1's frame (marker 1 rigid); the normal laws and the regularized friction of
ContactSphereSphere (its compiled helpers: contact_force, update_data) and its NodeGenericData of four
data coordinates [gap, tangential slip speed, impact velocity, 0].

The triangle's point p nearest the sphere's center p0 is Exudyn's (Geometry.h MinDistTrigEdges): the projection when
it falls inside the triangle, else the nearest point of ONE edge, the first of edge 2 (points 2-0; λ1 < 0), edge 0
(points 0-1; λ2 < 0), edge 1 (points 1-2; λ1 + λ2 > 1) the projection's triangle coordinates leave. Δp = p - p0,
gap g = |Δp| - R, n = Δp/|Δp|. includeEdges (bits 1, 2, 4: edges 0, 1, 2): the post-Newton step counts no contact
on an edge left out (Exudyn adds R to the distance, so the data hold g + R and n shrinks by |Δp|/(|Δp| + R)); during
Newton the data's gap decides, as in ContactSphereSphere. Velocities at p: vJ = v1 + ω1 × (p - p1) (always),
vI = v0 + ω0 × (p - p0) (with friction; else v0), Δv = vJ - vI, v_n = n·Δv. The force on marker 1's side (Exudyn's
fVec) is f n, f = -normal_force(g, v_n) (no elasto-plastic model), plus friction with μ ≠ 0; the markers get
[fVec, (R + g/2) n × fVec (with friction only)] and [-fVec, -(c - p1) × fVec], c = p0 + (R + g/2) n the contact
point. Post-Newton steps, recommended steps and the Newton matrix (forward differences in the markers' positions,
velocities, angular velocities and marker 1's orientation, the marker Jacobians held fixed) as ContactSphereSphere's.
Exudyn's CreateSphereQuadContact splits a quad into two such contacts (includeEdges of each from the quad's).
"""
from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np
from pydantic import Field

from .. import schema as S
from ..kernels import ItemKernels, jit, jit_noalloc
from .contact_sphere_sphere import (DATA_COORDINATES, GAP, MU, ContactGroup, ContactWork, SphereContactLaw, _gather,
                                    add_difference, contact_force, contact_laws, contact_work, project_derivatives,
                                    project_wrench, update_data)
from .declaration import RIGID_MARKERS, ItemType


class ObjectContactSphereTriangle(SphereContactLaw):
    """Penalty contact of a sphere centered at marker 0 with a triangle fixed in marker 1's frame (a rigid-body
    marker), optionally at the triangle's edges, with ContactSphereSphere's restitution models and friction
    (Exudyn's discontinuous iteration); its data in a NodeGenericData of 4 coordinates."""
    objectType: Literal["ContactSphereTriangle"]
    sphereRadius: S.FiniteFloat = Field(0.0, ge=0)
    """R, the sphere's radius (m)"""
    trianglePoints: S.Matrix3
    """the triangle's three points in marker 1's frame (m)"""
    includeEdges: int = Field(7, ge=0, le=7)
    """contact also at the edges: the sum of 1 (edge 0, points 0-1), 2 (edge 1, points 1-2), 4 (edge 2, points
    2-0); 0: at the face only"""


class TriangleContactData(NamedTuple):
    cols: np.ndarray  # (n,14) the two markers' columns
    m0: np.ndarray  # the sphere's marker
    m1: np.ndarray  # the triangle's marker
    active: np.ndarray
    radius: np.ndarray  # (n,)
    points: np.ndarray  # (n,3,3) the triangle's points (rows) in marker 1's frame
    edges: np.ndarray  # (n,) int64, includeEdges
    law: np.ndarray  # (n,12) contact_sphere_sphere.LAW
    dc: np.ndarray  # (n,4) the data coordinates (kernels.ItemKernels.post_newton)
    dc_start: np.ndarray  # (n,4) their values at the step's start
    work: ContactWork


@jit_noalloc
def _on_segment(a, b, p, pp):
    """pp := the point of the segment a-b nearest p (Exudyn's MinDistToLinePoints)."""
    num, den = 0.0, 0.0
    for r in range(3):
        num += (b[r] - a[r]) * (p[r] - a[r])
        den += (b[r] - a[r]) ** 2
    for r in range(3):
        if num <= 0.0 or den <= 0.0:
            pp[r] = a[r]
        elif num >= den:
            pp[r] = b[r]
        else:
            pp[r] = a[r] + num / den * (b[r] - a[r])


@jit_noalloc
def nearest_point(T, p, pp):
    """pp := the point of the triangle T (rows: its points) nearest p as Exudyn finds it (MinDistTrigEdges); returns
    the edge's flag (1: points 0-1, 2: 1-2, 4: 2-0) when pp lies on an edge's side, 0 inside."""
    m11, m12, m22, rs1, rs2 = 0.0, 0.0, 0.0, 0.0, 0.0
    for r in range(3):
        e1, e2, v = T[1, r] - T[0, r], T[2, r] - T[0, r], p[r] - T[0, r]
        m11 += e1 * e1
        m12 += e1 * e2
        m22 += e2 * e2
        rs1 += v * e1
        rs2 += v * e2
    det = m11 * m22 - m12 * m12
    if det != 0.0:
        lam1, lam2 = (rs1 * m22 - rs2 * m12) / det, (m11 * rs2 - m12 * rs1) / det
    else:
        lam1 = rs1 / m11 if m11 != 0.0 else 0.0
        lam2 = rs2 / m22 if m22 != 0.0 else 0.0
    tol = 1e-15
    if lam1 < -tol:
        _on_segment(T[0], T[2], p, pp)
        return 4
    if lam2 < -tol:
        _on_segment(T[0], T[1], p, pp)
        return 1
    if lam1 + lam2 > 1.0 + tol:
        _on_segment(T[1], T[2], p, pp)
        return 2
    for r in range(3):
        pp[r] = T[0, r] + lam1 * (T[1, r] - T[0, r]) + lam2 * (T[2, r] - T[0, r])
    return 0


@jit_noalloc
def contact(d, i, P, V, W, A, data, from_data, S):
    """Exudyn's ComputeConnectorProperties for marker positions P, velocities V, global angular velocities W (2,3),
    marker 1's orientation A and the data coordinates; from_data: contact and friction zone as the data say (during
    Newton), else as the state does (post-Newton). S rows: Δp, n, Δv, fVec, the triangle's nearest point, the
    triangle's points (3 rows); returns the gap."""
    dp, n, dv, f, pp, T = S[0], S[1], S[2], S[3], S[4], S[5:8]
    c, radius = d.law[i], d.radius[i]
    for k in range(3):
        for r in range(3):
            T[k, r] = A[r, 0] * d.points[i, k, 0] + A[r, 1] * d.points[i, k, 1] + A[r, 2] * d.points[i, k, 2] \
                + P[1, r]
    edge = nearest_point(T, P[0], pp)
    for r in range(3):
        dp[r] = pp[r] - P[0, r]
    dist = np.sqrt(dp[0] * dp[0] + dp[1] * dp[1] + dp[2] * dp[2])
    left_out = edge != 0 and (edge & d.edges[i]) == 0
    if left_out and not from_data:
        dist += radius  # Exudyn's signal of no contact to the post-Newton step
    scale = 1.0 / dist if dist != 0.0 else 1.0
    mu = c[MU]
    for r in range(3):
        s, t = (r + 1) % 3, (r + 2) % 3
        n[r] = scale * dp[r]
        v_sphere = V[0, r] + (W[0, s] * dp[t] - W[0, t] * dp[s] if mu != 0.0 else 0.0)
        dv[r] = (W[1, s] * (pp[t] - P[1, t]) - W[1, t] * (pp[s] - P[1, s]) + V[1, r]) - v_sphere
        f[r] = 0.0
    gap = dist - radius
    if not (data[GAP] < 0.0 if from_data else gap < 0.0 and not left_out):
        return gap
    contact_force(c, d.active[i], gap, n, dv, data, from_data, f)
    return gap


@jit_noalloc
def wrench(d, i, P, V, W, A, data, S, out):
    """out (12,) the right-hand side forces and torques [f0, τ0, f1, τ1] on the markers (ComputeODE2LHS negated)."""
    gap = contact(d, i, P, V, W, A, data, True, S)
    n, f = S[1], S[3]
    out[:] = 0.0
    if not d.active[i]:
        return
    a = d.radius[i] + 0.5 * gap
    friction = d.law[i, MU] != 0.0
    for r in range(3):
        s, t = (r + 1) % 3, (r + 2) % 3
        out[r], out[6 + r] = f[r], -f[r]
        if friction:
            out[3 + r] = a * (n[s] * f[t] - n[t] * f[s])
        arm_s, arm_t = P[0, s] + a * n[s] - P[1, s], P[0, t] + a * n[t] - P[1, t]  # contact point - p1
        out[9 + r] = f[s] * arm_t - f[t] * arm_s


@jit_noalloc
def _orientation(kin, d, i, A):
    m = d.m1[i]
    for r in range(3):
        for c in range(3):
            A[r, c] = kin.rot[m, r, c]


@jit_noalloc
def _copy(src, dst):  # (an array assignment would need numba's runtime: it may copy through a temporary)
    for r in range(src.shape[0]):
        for c in range(src.shape[1]):
            dst[r, c] = src[r, c]


@jit_noalloc
def triangle_forces(d, kin, F):
    P, V, W, A, S, w = d.work.P, d.work.V, d.work.W, d.work.A, d.work.S, d.work.w0
    for i in range(d.m0.shape[0]):
        _gather(kin, d, i, P, V, W)
        _orientation(kin, d, i, A)
        wrench(d, i, P, V, W, A, d.dc[i], S, w)
        project_wrench(kin, d.m0[i], d.m1[i], w, F[i])


@jit_noalloc
def triangle_jacobians(d, kin, dq, dv):
    """∂F/∂q ≈ Gᵀ ((∂w/∂p) Jpos + (∂w/∂θ1) Jrot1), ∂F/∂v ≈ Gᵀ ((∂w/∂v) Jpos + (∂w/∂ω) Jrot) by forward differences of
    the wrench w in the markers' positions p, velocities v, angular velocities ω (steps 1e-7 max(1e-2, |x|)) and
    marker 1's orientation (rotated by 1e-7 about each global axis), the marker Jacobians G held fixed. (Exudyn
    differences its node coordinates, so its matrix also has the angular velocities' dependence on them, with
    friction, and with Euler parameters the change along the parameters themselves, which is no rotation, where a
    moving triangle's body has such a node.)"""
    P, V, W, A, A0, S = d.work.P, d.work.V, d.work.W, d.work.A, d.work.A0, d.work.S
    w0, w1, D = d.work.w0, d.work.w1, d.work.D
    for i in range(d.m0.shape[0]):
        dq[i], dv[i] = 0.0, 0.0
        if not d.active[i]:
            continue
        _gather(kin, d, i, P, V, W)
        _orientation(kin, d, i, A)
        _copy(A, A0)
        wrench(d, i, P, V, W, A, d.dc[i], S, w0)
        for level in range(2):
            D[:] = 0.0
            # level 0: positions (kind 0) and marker 1's orientation (kind 1); level 1: velocities, angular velocities
            for kind in range(2):
                for side in range(2):
                    if level == 0 and kind == 1 and side == 0:
                        continue  # the sphere's orientation does not enter
                    m = d.m0[i] if side == 0 else d.m1[i]
                    for c in range(3):
                        if level == 0 and kind == 1:
                            eps = 1e-7
                            for col in range(3):  # A := A0 + eps e_c × A0
                                for r in range(3):
                                    s, t = (r + 1) % 3, (r + 2) % 3
                                    A[r, col] = A0[r, col] + eps * ((c == s) * A0[t, col] - (c == t) * A0[s, col])
                            wrench(d, i, P, V, W, A, d.dc[i], S, w1)
                            _copy(A0, A)
                        else:
                            X = P if level == 0 else (V if kind == 0 else W)
                            x = X[side, c]
                            eps = 1e-7 * max(1e-2, abs(x))
                            X[side, c] = x + eps
                            wrench(d, i, P, V, W, A, d.dc[i], S, w1)
                            X[side, c] = x
                        add_difference(kin, m, c, kind == 1, side, w0, w1, eps, D)
            project_derivatives(kin, d.m0[i], d.m1[i], D, dq[i] if level == 0 else dv[i])


@jit_noalloc
def triangle_post_newton(d, kin):
    """Exudyn's PostNewtonStep of every active item at the converged state (contact_sphere_sphere.update_data, no
    plastic overlap); returns (the largest error, the smallest recommended step or -1)."""
    P, V, W, A, S = d.work.P, d.work.V, d.work.W, d.work.A, d.work.S
    largest, recommended = 0.0, -1.0
    for i in range(d.m0.shape[0]):
        if d.active[i]:
            _gather(kin, d, i, P, V, W)
            _orientation(kin, d, i, A)
            gap = contact(d, i, P, V, W, A, d.dc[i], False, S)
            error, step = update_data(d.law[i], d.dc[i], d.dc_start[i], gap, S[1], S[2], S[3], 0.0)
            largest = max(largest, error)
            if step >= 0.0 and (recommended < 0.0 or step < recommended):
                recommended = step
    return largest, recommended


@jit
def triangle_outputs(d, i, pos, vel, omega, rot, data):
    """(rows, 16) over sensor rows with their data coordinates (rows, 4): Position (the contact point
    p0 + (R + g/2) n), Displacement Δp, DisplacementLocal [gap], Director1 n, Force (Exudyn's fVec), Torque
    (Exudyn's, -(R + g/2) n × fVec)."""
    out = np.empty((pos.shape[0], 16))
    P, V, W, A, S = np.empty((2, 3)), np.empty((2, 3)), np.empty((2, 3)), np.empty((3, 3)), np.empty((8, 3))
    m0, m1 = d.m0[i], d.m1[i]
    for k in range(pos.shape[0]):
        for r in range(3):
            P[0, r], P[1, r], V[0, r], V[1, r] = pos[k, m0, r], pos[k, m1, r], vel[k, m0, r], vel[k, m1, r]
            W[0, r], W[1, r] = omega[k, m0, r], omega[k, m1, r]
            A[r, 0], A[r, 1], A[r, 2] = rot[k, m1, r, 0], rot[k, m1, r, 1], rot[k, m1, r, 2]
        gap = contact(d, i, P, V, W, A, data[k], True, S)
        a = d.radius[i] + 0.5 * gap
        n, f = S[1], S[3]
        out[k, 0:3] = P[0] + a * n
        out[k, 3:6] = S[0]
        out[k, 6] = gap
        out[k, 7:10] = n
        out[k, 10:13] = f
        for r in range(3):
            s, t = (r + 1) % 3, (r + 2) % 3
            out[k, 13 + r] = (-a * n[s]) * f[t] - (-a * n[t]) * f[s]
    return out


KERNELS = ItemKernels(TriangleContactData, triangle_forces, triangle_jacobians, triangle_post_newton)
OUTPUT_COLUMNS = {"Position": slice(0, 3), "Displacement": slice(3, 6), "DisplacementLocal": slice(6, 7),
                  "Director1": slice(7, 10), "Force": slice(10, 13), "Torque": slice(13, 16)}


class TriangleContacts(ContactGroup):
    OBJECT_TYPE = "ContactSphereTriangle"
    KERNELS = KERNELS

    def make_data(self, m0, m1, dc):
        return TriangleContactData(
            self.cols, m0, m1, self.active, self.param("sphereRadius"),
            np.array([o.trianglePoints for o in self.items], float).reshape(-1, 3, 3),
            np.array([o.includeEdges for o in self.items], dtype=np.int64), contact_laws(self), dc, dc.copy(), contact_work())

    def output(self, kin, k: int, var: str, data: np.ndarray):
        """Over sensor rows (kin: their kinematics; data: their data coordinates)."""
        c = np.ascontiguousarray
        values = triangle_outputs(self.data, k, c(kin.pos), c(kin.vel), c(kin.omega), c(kin.rot), c(data))
        return values[:, OUTPUT_COLUMNS[var]]


def marker_problems(item, marker_types: list[str]) -> list[tuple[str, str]]:
    """Exudyn's requested marker types: the triangle's marker 1 a rigid-body marker, the sphere's with friction."""
    return [(f".markerNumbers[{k}]", f"a {t} marker has no orientation; " + (
        "the triangle's marker 1 is a rigid-body marker (BodyRigid, NodeRigid)" if k == 1 else
        "with dynamicFriction the sphere's marker needs an orientation (BodyRigid, NodeRigid)"))
        for k, t in enumerate(marker_types) if t not in RIGID_MARKERS and (k == 1 or item.dynamicFriction != 0.0)]


ITEMS = (ItemType(ObjectContactSphereTriangle, "force", tuple(OUTPUT_COLUMNS), TriangleContacts, markers="position",
                  explicit="apply", kernels=KERNELS, data_coordinates=DATA_COORDINATES,
                  marker_problems=marker_problems),)
