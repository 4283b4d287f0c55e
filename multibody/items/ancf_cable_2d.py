"""ObjectANCFCable2D: Exudyn's planar Bernoulli-Euler ANCF cable on two NodePoint2DSlope1 nodes (coordinates
q = [r0, r0', r1, r1'], each a 2-vector; totals add the references).

Cubic Hermite shape functions over x in [0, L] (r = S q, r' = S' q). Elastic and damping forces as Exudyn's
CObjectANCFCable2DBase::ComputeODE2LHS: axial strain ε = |r'| - 1 and the material measure of curvature
K = (r' × r'')/|r'|², N = EA (ε - ε_ref) + dε ε̇, M = EI (K - K_ref) + dK K̇, integrated with Exudyn's rules
(useReducedOrderIntegration 0: Gauss 5 / 3 points for the axial / bending terms; 1: Gauss 4 / 2; 2: Lobatto 3 /
Gauss 2). ε_ref = referenceAxialStrain + strainIsRelativeToReference · (the reference configuration's strain),
K_ref likewise: fixed per integration point, computed once with the model. Exudyn differentiates the forces
automatically; the Jacobians here are exact too, by the complex step (the forces are analytic in q and q̇). The
mass matrix ρA ∫ SᵀS dx is constant (4 Gauss points, exact) and joins System.constant_mass.
"""
from __future__ import annotations

from typing import Annotated, Literal, NamedTuple

import numpy as np
from pydantic import Field

from .. import schema as S
from ..kernels import ItemKernels, jit
from .compiled import CompiledForces
from .declaration import ItemType

OUTPUTS = ("Position", "Displacement", "Velocity", "Rotation", "Director1", "StrainLocal", "CurvatureLocal",
           "ForceLocal", "TorqueLocal", "AngularVelocity")
# (axial, bending) integration rules on [-1, 1] per useReducedOrderIntegration
_GAUSS = {n: np.polynomial.legendre.leggauss(n) for n in (2, 3, 4, 5)}
RULES = {0: (_GAUSS[5], _GAUSS[3]), 1: (_GAUSS[4], _GAUSS[2]),
         2: ((np.array([-1.0, 0.0, 1.0]), np.array([1.0, 4.0, 1.0]) / 3.0), _GAUSS[2])}
STEP = 1e-30  # the complex step: exact first derivatives, no cancellation


class ObjectANCFCable2D(S.Item):
    """A planar ANCF cable element (Bernoulli-Euler beam with large axial and bending deformation) between two
    Point2DSlope1 nodes; x runs from 0 at the first node to L at the second."""
    objectType: Literal["ANCFCable2D"]
    nodeNumbers: Annotated[list[S.Ref], Field(min_length=2, max_length=2)]
    """its two Point2DSlope1 nodes (indices or names)"""
    length: Annotated[S.FiniteFloat, Field(gt=0)]
    """reference length L of the element (m)"""
    massPerLength: Annotated[S.FiniteFloat, Field(ge=0)] = 0.0
    """ρA (kg/m)"""
    bendingStiffness: S.FiniteFloat = 0.0
    """EI (N m²): the bending moment is EI (K - K_ref)"""
    axialStiffness: S.FiniteFloat = 0.0
    """EA (N): the axial force is EA (ε - ε_ref), ε = |r'| - 1"""
    bendingDamping: S.FiniteFloat = 0.0
    """dK, on the curvature rate (N m² s)"""
    axialDamping: S.FiniteFloat = 0.0
    """dε, on the axial strain rate (N s)"""
    referenceAxialStrain: S.FiniteFloat = 0.0
    """ε0, a pre-strain: the unloaded cable keeps it"""
    referenceCurvature: S.FiniteFloat = 0.0
    """K0, a pre-curvature (1/m): the unloaded cable keeps it"""
    strainIsRelativeToReference: S.FiniteFloat = 0.0
    """f: 1 makes the reference configuration stress-free (its strain and curvature join ε0, K0 with the factor
    f); 0: the straight configuration with ε0, K0 is"""
    useReducedOrderIntegration: Literal[0, 1, 2] = 0
    """0: Gauss order 9 for the axial and 5 for the bending terms; 1: orders 7 and 3; 2: Lobatto order 3 (at 0,
    L/2, L) and Gauss order 3"""
    axialForceUserFunction: S.UnsetUserFunction = 0
    bendingMomentUserFunction: S.UnsetUserFunction = 0


class CableData(NamedTuple):
    cols: np.ndarray  # (n,8) the nodes' coordinates
    ref: np.ndarray  # (n,8) their reference values
    length: np.ndarray
    EI: np.ndarray
    EA: np.ndarray
    dK: np.ndarray
    dA: np.ndarray
    axial_x: np.ndarray  # (n,5) integration points in [0, L], the first axial_n[i] used
    axial_w: np.ndarray  # (n,5) their weights, L/2 included
    axial_n: np.ndarray
    axial_ref: np.ndarray  # (n,5) ε_ref at the points
    bending_x: np.ndarray  # (n,3)
    bending_w: np.ndarray
    bending_n: np.ndarray
    bending_ref: np.ndarray  # (n,3) K_ref at the points
    strain0: np.ndarray  # ε0, K0 and the factor f of the reference configuration's (outputs at any x)
    curvature0: np.ndarray
    relative: np.ndarray


@jit
def shape(x, L, s, sx, sxx):
    """S, S', S'' (4 each) at x."""
    xi = x / L
    s[0], s[1], s[2], s[3] = 1 - 3 * xi * xi + 2 * xi ** 3, x * (1 - 2 * xi + xi * xi), 3 * xi * xi - 2 * xi ** 3, \
        x * (xi * xi - xi)
    sx[0], sx[1], sx[2], sx[3] = 6 * (xi * xi - xi) / L, 1 - 4 * xi + 3 * xi * xi, 6 * (xi - xi * xi) / L, \
        3 * xi * xi - 2 * xi
    sxx[0], sxx[1], sxx[2], sxx[3] = (12 * xi - 6) / (L * L), (6 * xi - 4) / L, (6 - 12 * xi) / (L * L), \
        (6 * xi - 2) / L


@jit
def interpolate(s, q):
    """Σ s_j q[2j], Σ s_j q[2j+1]: a position, slope or curvature vector (or its rate)."""
    return s[0] * q[0] + s[1] * q[2] + s[2] * q[4] + s[3] * q[6], s[0] * q[1] + s[1] * q[3] + s[2] * q[5] + s[3] * q[7]


@jit
def cable_lhs(d, i, q, v, out, s, sx, sxx):
    """Exudyn's LHS (elastic and damping forces) of item i on total coordinates q and velocities v (8 each,
    float or complex) into out (8, zeroed here)."""
    L, EA, EI, dA, dK = d.length[i], d.EA[i], d.EI[i], d.dA[i], d.dK[i]
    for j in range(8):
        out[j] = 0.0
    for p in range(d.axial_n[i]):
        shape(d.axial_x[i, p], L, s, sx, sxx)
        rx, ry = interpolate(sx, q)
        norm = np.sqrt(rx * rx + ry * ry)
        strain_t = rx * 0.0
        if dA != 0.0:
            rxt, ryt = interpolate(sx, v)
            strain_t = (rx * rxt + ry * ryt) / norm
        f = d.axial_w[i, p] * (EA * (norm - 1.0 - d.axial_ref[i, p]) + dA * strain_t) / norm
        for j in range(4):
            out[2 * j] += f * sx[j] * rx
            out[2 * j + 1] += f * sx[j] * ry
    for p in range(d.bending_n[i]):
        shape(d.bending_x[i, p], L, s, sx, sxx)
        rx, ry = interpolate(sx, q)
        rxx, ryx = interpolate(sxx, q)
        g = rx * rx + ry * ry
        cross = rx * ryx - ry * rxx
        curvature_t = rx * 0.0
        if dK != 0.0:
            rxt, ryt = interpolate(sx, v)
            rxxt, ryxt = interpolate(sxx, v)
            cross_t = rxt * ryx - ryt * rxx + rx * ryxt - ry * rxxt
            curvature_t = (cross_t * g - cross * 2.0 * (rx * rxt + ry * ryt)) / (g * g)
        moment = d.bending_w[i, p] * (EI * (cross / g - d.bending_ref[i, p]) + dK * curvature_t)
        temp_f = 2.0 * cross / (g * g)
        for j in range(4):
            out[2 * j] += moment * ((sx[j] * ryx - sxx[j] * ry) / g - temp_f * rx * sx[j])
            out[2 * j + 1] += moment * ((-sx[j] * rxx + sxx[j] * rx) / g - temp_f * ry * sx[j])


@jit
def cable_forces(d, kin, F):
    q, v, out = np.empty(8), np.empty(8), np.empty(8)
    s, sx, sxx = np.empty(4), np.empty(4), np.empty(4)
    for i in range(d.cols.shape[0]):
        for j in range(8):
            q[j] = kin.q[d.cols[i, j]] + d.ref[i, j]
            v[j] = kin.v[d.cols[i, j]]
        cable_lhs(d, i, q, v, out, s, sx, sxx)
        for j in range(8):
            F[i, j] = -out[j]


@jit
def cable_jacobians(d, kin, dq, dv):
    """-∂LHS/∂q and -∂LHS/∂q̇ by the complex step: column k is -Im LHS(q + i h e_k) / h."""
    q, v, out = np.empty(8, np.complex128), np.empty(8, np.complex128), np.empty(8, np.complex128)
    s, sx, sxx = np.empty(4), np.empty(4), np.empty(4)
    for i in range(d.cols.shape[0]):
        damped = d.dA[i] != 0.0 or d.dK[i] != 0.0
        for k in range(8):
            for j in range(8):
                q[j] = kin.q[d.cols[i, j]] + d.ref[i, j]
                v[j] = kin.v[d.cols[i, j]]
            q[k] += 1j * STEP
            cable_lhs(d, i, q, v, out, s, sx, sxx)
            for j in range(8):
                dq[i, j, k] = -out[j].imag / STEP
            if damped:
                q[k] = q[k].real
                v[k] += 1j * STEP
                cable_lhs(d, i, q, v, out, s, sx, sxx)
                for j in range(8):
                    dv[i, j, k] = -out[j].imag / STEP
            else:
                for j in range(8):
                    dv[i, j, k] = 0.0


@jit
def reference_strains(length, q_ref, points):
    """(ε, K) of the configuration q_ref (8 totals) at the points x (the references the strain rules subtract)."""
    s, sx, sxx = np.empty(4), np.empty(4), np.empty(4)
    out = np.empty((len(points), 2))
    for p in range(len(points)):
        shape(points[p], length, s, sx, sxx)
        rx, ry = interpolate(sx, q_ref)
        rxx, ryx = interpolate(sxx, q_ref)
        out[p, 0] = np.sqrt(rx * rx + ry * ry) - 1.0
        out[p, 1] = (rx * ryx - ry * rxx) / (rx * rx + ry * ry)
    return out


@jit
def cable_outputs(d, i, x, y, q, v):
    """(rows, 12) of item i at local (x, y) over rows of q, v (all coordinates): position (2), velocity (2),
    rotation φ = atan2(r'_y, r'_x), slope r' (2), ε - y K, K, N, M, ω. Off the axis (y ≠ 0) the position adds
    y n (n = [-t_y, t_x], t = r'/|r'|) and the velocity -y ω t, as Exudyn."""
    out = np.empty((q.shape[0], 12))
    s, sx, sxx = np.empty(4), np.empty(4), np.empty(4)
    qt, vt = np.empty(8), np.empty(8)
    shape(x, d.length[i], s, sx, sxx)
    r_ref, at = np.empty(8), np.empty(1)
    for j in range(8):
        r_ref[j] = d.ref[i, j]
    at[0] = x
    own = reference_strains(d.length[i], r_ref, at)
    strain_ref = d.strain0[i] + d.relative[i] * own[0, 0]
    curvature_ref = d.curvature0[i] + d.relative[i] * own[0, 1]
    for r in range(q.shape[0]):
        for j in range(8):
            qt[j] = q[r, d.cols[i, j]] + d.ref[i, j]
            vt[j] = v[r, d.cols[i, j]]
        px, py = interpolate(s, qt)
        rx, ry = interpolate(sx, qt)
        rxx, ryx = interpolate(sxx, qt)
        vx, vy = interpolate(s, vt)
        rxt, ryt = interpolate(sx, vt)
        rxxt, ryxt = interpolate(sxx, vt)
        g = rx * rx + ry * ry
        norm = np.sqrt(g)
        tx, ty = rx / norm, ry / norm
        omega = (-ry * rxt + rx * ryt) / g
        cross = rx * ryx - ry * rxx
        strain, curvature = norm - 1.0, cross / g
        strain_t = (rx * rxt + ry * ryt) / norm
        curvature_t = ((rxt * ryx - ryt * rxx + rx * ryxt - ry * rxxt) * g - cross * 2.0 * (rx * rxt + ry * ryt)) / (
            g * g)
        out[r, 0], out[r, 1] = px - y * ty, py + y * tx
        out[r, 2], out[r, 3] = vx - y * omega * tx, vy - y * omega * ty
        out[r, 4], out[r, 5], out[r, 6] = np.arctan2(ry, rx), rx, ry
        out[r, 7], out[r, 8] = strain - y * curvature, curvature
        out[r, 9] = d.EA[i] * (strain - strain_ref) + d.dA[i] * strain_t
        out[r, 10] = d.EI[i] * (curvature - curvature_ref) + d.dK[i] * curvature_t
        out[r, 11] = omega
    return out


KERNELS = ItemKernels(CableData, cable_forces, cable_jacobians)


class Cables2D(CompiledForces):
    OBJECT_TYPE = "ANCFCable2D"
    KERNELS = KERNELS

    def __init__(self, system):
        super().__init__(system)
        self.cols = self.node_columns(4)
        q_ref = np.ascontiguousarray(system.q_ref[self.cols]) if self.size else np.zeros((0, 8))
        L = self.param("length")
        rules = [(*RULES[o.useReducedOrderIntegration],) for o in self.items]
        axial = [self._points(rule[0], 5, length) for rule, length in zip(rules, L)]
        bending = [self._points(rule[1], 3, length) for rule, length in zip(rules, L)]
        axial_ref, bending_ref = np.zeros((self.size, 5)), np.zeros((self.size, 3))
        for k, o in enumerate(self.items):
            factor = o.strainIsRelativeToReference
            own_a = reference_strains(L[k], q_ref[k], axial[k][0]) if factor else np.zeros((5, 2))
            own_b = reference_strains(L[k], q_ref[k], bending[k][0]) if factor else np.zeros((3, 2))
            axial_ref[k] = o.referenceAxialStrain + factor * own_a[:, 0]
            bending_ref[k] = o.referenceCurvature + factor * own_b[:, 1]
        stack = lambda parts, j, shape: (np.array([p[j] for p in parts], dtype=float).reshape(shape)  # noqa: E731
                                         if parts else np.zeros(shape))
        self.data = CableData(
            self.cols, q_ref, L, self.param("bendingStiffness"), self.param("axialStiffness"),
            self.param("bendingDamping"), self.param("axialDamping"),
            stack(axial, 0, (self.size, 5)), stack(axial, 1, (self.size, 5)),
            np.array([p[2] for p in axial], dtype=np.int64), axial_ref,
            stack(bending, 0, (self.size, 3)), stack(bending, 1, (self.size, 3)),
            np.array([p[2] for p in bending], dtype=np.int64), bending_ref, self.param("referenceAxialStrain"),
            self.param("referenceCurvature"), self.param("strainIsRelativeToReference"))

    @staticmethod
    def _points(rule, size: int, length: float):
        """(points in [0, L], weights with L/2, count), padded to `size` (the padding is never read)."""
        xi, w = rule
        points, weights = np.zeros(size), np.zeros(size)
        points[:len(xi)], weights[:len(w)] = 0.5 * length * (xi + 1.0), 0.5 * length * w
        return points, weights, len(xi)

    def mass_triplets(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows, columns, values) of the constant mass matrices ρA Σ w SᵀS (4 Gauss points), zeros dropped."""
        s, sx, sxx = np.empty(4), np.empty(4), np.empty(4)
        blocks = np.zeros((self.size, 8, 8))
        for k, o in enumerate(self.items):
            L = o.length
            block = np.zeros((4, 4))
            for xi, w in zip(*_GAUSS[4]):
                shape(0.5 * L * (xi + 1.0), L, s, sx, sxx)
                block += 0.5 * L * w * o.massPerLength * np.outer(s, s)
            blocks[k] = np.kron(block, np.eye(2))  # coordinates interleave x, y per shape function
        return self.block_triplets(blocks)

    def output(self, kin, k: int, var: str, local=None):
        """Over sensor rows at the sensor's localPosition (x along the axis in [0, L], y across)."""
        x, y = (0.0, 0.0) if local is None else (float(local[0]), float(local[1]))
        q, v = np.ascontiguousarray(kin.q), np.ascontiguousarray(kin.v)
        values = cable_outputs(self.data, k, x, y, q, v)
        zero = np.zeros(len(values))
        if var == "Displacement":
            values = values - cable_outputs(self.data, k, x, y, np.zeros_like(q), v)
        columns = {"Position": (0, 1, None), "Displacement": (0, 1, None), "Velocity": (2, 3, None),
                   "Rotation": (4,), "Director1": (5, 6, None), "StrainLocal": (7,), "CurvatureLocal": (8,),
                   "ForceLocal": (9,), "TorqueLocal": (10,), "AngularVelocity": (None, None, 11)}
        return np.stack([zero if j is None else values[:, j] for j in columns[var]], axis=1)


ITEMS = (ItemType(ObjectANCFCable2D, "body", OUTPUTS, Cables2D, nodes=frozenset({"Point2DSlope1"}),
                  kernels=KERNELS),)
