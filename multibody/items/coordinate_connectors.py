"""Connectors between two NodeCoordinate markers (one scalar coordinate each, Δq = q_m1 - q_m0).

ObjectConnectorCoordinateSpringDamper: f = k(Δq - offset) + d Δq̇; Exudyn puts +J1ᵀf, -J0ᵀf on
the left-hand side, so the applied generalized forces are +f on coordinate 0 and -f on coordinate 1.
ObjectConnectorCoordinate: g = factor1·q_m1 - q_m0 - offset (index 2: factor1·q̇_m1 - q̇_m0,
without offset); with velocityLevel the constraint is factor1·q̇_m1 - q̇_m0 - offset at every index.
A marker on a ground node reads 0 and has no column (the dummy slot).
"""
from __future__ import annotations

import numpy as np

from .. import schema as S
from .bodies import _block_pattern
from .declaration import ItemType


class _CoordinatePair:
    OBJECT_TYPE = ""

    def __init__(self, system):
        doc = system.loaded.document
        self.system = system
        self.objects = [i for i, o in enumerate(doc.objects) if o.objectType == self.OBJECT_TYPE]
        n = self.size = len(self.objects)
        self.items = [doc.objects[i] for i in self.objects]
        ms = np.array([system.loaded.ref("objects", i, "markerNumbers") for i in self.objects], dtype=int)
        self.cols = system.mcoord[ms.reshape(n, 2)]
        self.active = np.array([o.activeConnector for o in self.items], dtype=bool)
        self.uf = np.array([system.user_functions.of("objects", i) for i in self.objects], int)  # -1: none

    def param(self, name: str) -> np.ndarray:
        return np.array([getattr(o, name) for o in self.items], float)

    def relative(self, kin):
        """Δq, Δq̇ per item, over any leading axes of the kinematics (one state, or sensor rows)."""
        c0, c1 = self.cols[:, 0], self.cols[:, 1]
        return kin.q[..., c1] - kin.q[..., c0], kin.v[..., c1] - kin.v[..., c0]

    def relative_output(self, kin, k: int, var: str):
        """Displacement / Velocity over sensor rows: the raw Δq, Δq̇ (no factor, no offset, as
        Exudyn reports them)."""
        dq, dv = self.relative(kin)
        return dq[:, k] if var == "Displacement" else dv[:, k]


class CoordinateSpringDampers(_CoordinatePair):
    OBJECT_TYPE = "ConnectorCoordinateSpringDamper"

    def __init__(self, system):
        super().__init__(system)
        self.k, self.d, self.offset = self.param("stiffness"), self.param("damping"), self.param("offset")

    def force(self, kin) -> np.ndarray:
        dq, dv = self.relative(kin)
        f = self.k * (dq - self.offset) + self.d * dv
        for k in np.flatnonzero(self.uf >= 0):  # its user function at (t, displacement, velocity)
            f[..., k] = self.system.user_functions.evaluate(self.uf[k], 1, kin.t, dq[..., k], dv[..., k])[..., 0]
        return f * self.active

    def generalized(self, kin) -> np.ndarray:
        f = self.force(kin)
        return self.system.scatter(self.cols, np.stack([f, -f], axis=1))

    def jacobian_pattern(self):
        return _block_pattern(self.cols)

    def jacobian_values(self, kin):
        """∂f/∂q = k·[[-1, 1], [1, -1]] on (coordinate 0, coordinate 1), ∂f/∂v the same with d."""
        block = np.array([[-1.0, 1.0], [1.0, -1.0]])
        act = self.active[:, None, None]
        k, d = self.k.copy(), self.d.copy()
        dq, dv = self.relative(kin)
        for i in np.flatnonzero(self.uf >= 0):  # ∂f/∂displacement, ∂f/∂velocity of its user function
            k[i], d[i] = self.system.user_functions.evaluate(self.uf[i] + 1, 2, kin.t, dq[i], dv[i])
        return k[:, None, None] * block * act, d[:, None, None] * block * act

    def output(self, kin, k: int, var: str):
        if var in ("Displacement", "Velocity"):
            return self.relative_output(kin, k, var)
        if var == "Force":
            return self.force(kin)[:, k]
        if var == "PotentialEnergy":
            return 0.5 * self.k[k] * (self.relative(kin)[0][:, k] - self.offset[k]) ** 2
        raise KeyError(var)


class CoordinateConstraints(_CoordinatePair):
    OBJECT_TYPE = "ConnectorCoordinate"

    @classmethod
    def groups(cls, system) -> list:
        return [cls(system)]

    def __init__(self, system):
        super().__init__(system)
        self.factor, self.offset = self.param("factor1"), self.param("offset")
        self.velocity_level = np.array([o.velocityLevel for o in self.items], dtype=bool)
        self.row_levels = self.velocity_level.astype(int).reshape(self.size, 1)
        self.ae = system.allocate_ae(self.size).reshape(self.size, 1)

    def equation(self, kin, velocity_level: bool) -> np.ndarray:
        q0, q1 = kin.q[..., self.cols[:, 0]], kin.q[..., self.cols[:, 1]]
        v0, v1 = kin.v[..., self.cols[:, 0]], kin.v[..., self.cols[:, 1]]
        vel = self.factor * v1 - v0 - np.where(self.velocity_level, self.offset, 0.0)
        return np.where(velocity_level | self.velocity_level, vel, self.factor * q1 - q0 - self.offset)

    def evaluate(self, kin, velocity_level: bool):
        C = np.stack([-np.ones(self.size), self.factor], axis=1)[:, None, :]
        return self.equation(kin, velocity_level)[:, None], C

    def output(self, kin, k: int, var: str, lam: np.ndarray, motion_force: np.ndarray):
        """Over sensor rows: lam (rows, 1) this connector's multiplier."""
        if var in ("Displacement", "Velocity"):
            return self.relative_output(kin, k, var)
        if var == "Force":
            return lam
        if var == "ConstraintEquation":
            return self.equation(kin, False)[:, k]
        raise KeyError(var)


ITEMS = (ItemType(S.ObjectConnectorCoordinateSpringDamper, "force", ("Displacement", "Velocity", "Force", "PotentialEnergy"),
                  CoordinateSpringDampers, markers="coordinate", explicit="apply"),
         ItemType(S.ObjectConnectorCoordinate, "constraint", ("Displacement", "Velocity", "Force", "ConstraintEquation"),
                  CoordinateConstraints, markers="coordinate", explicit="eliminate"))
