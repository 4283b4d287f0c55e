"""ObjectConnectorDistance: two position markers held at a distance, |p1 - p0| = distance.

One row g = |Δp| - distance, Δp = p1 - p0 (index 2: its time derivative Δpᵀ Δv / |Δp|), with
C_q = eᵀ [-J0, J1], e = Δp / |Δp|, the marker Jacobians held fixed as in Exudyn 1.13.6. The first
core type with kernels of its own (items/README.md). Outputs as Exudyn gives them: Displacement Δp,
Velocity Δv, Distance |Δp|, Force λ (positive when the connector pulls the markers together, the
weight m g for a mass point hanging from the ground).
"""
from __future__ import annotations

import math
from typing import Literal, NamedTuple

import numpy as np
from pydantic import Field

from .. import schema as S
from ..kernels import ItemKernels, jit_noalloc
from .compiled import CompiledConstraints
from .declaration import ItemType


class ObjectConnectorDistance(S._Connector):
    """Holds two position markers at a distance (a massless rod with ball joints at its ends)."""
    objectType: Literal["ConnectorDistance"]
    distance: S.FiniteFloat = Field(gt=0)
    """the distance |p1 - p0| held (m); must be positive (Exudyn has no default: its 0 is a placeholder)"""


class DistanceData(NamedTuple):
    cols: np.ndarray  # (n,14) the two markers' columns
    ae: np.ndarray  # (n,1)
    levels: np.ndarray  # (n,1)
    active: np.ndarray
    m0: np.ndarray
    m1: np.ndarray
    distance: np.ndarray


@jit_noalloc
def distance_rows(d, kin, velocity_level, g, C):
    for i in range(d.m0.shape[0]):
        p, q = d.m0[i], d.m1[i]
        dx, dy, dz = kin.pos[q, 0] - kin.pos[p, 0], kin.pos[q, 1] - kin.pos[p, 1], kin.pos[q, 2] - kin.pos[p, 2]
        length = math.sqrt(dx * dx + dy * dy + dz * dz)
        inverse = 1.0 / length  # at zero length inf: the solver reports the non-finite residual
        if velocity_level:
            g[i, 0] = inverse * (dx * (kin.vel[q, 0] - kin.vel[p, 0]) + dy * (kin.vel[q, 1] - kin.vel[p, 1])
                                 + dz * (kin.vel[q, 2] - kin.vel[p, 2]))
        else:
            g[i, 0] = length - d.distance[i]
        for j in range(7):
            C[i, 0, j] = -inverse * (dx * kin.Jpos[p, 0, j] + dy * kin.Jpos[p, 1, j] + dz * kin.Jpos[p, 2, j])
            C[i, 0, 7 + j] = inverse * (dx * kin.Jpos[q, 0, j] + dy * kin.Jpos[q, 1, j] + dz * kin.Jpos[q, 2, j])


DISTANCE_KERNELS = ItemKernels(DistanceData, distance_rows)


class DistanceConstraints(CompiledConstraints):
    OBJECT_TYPE = "ConnectorDistance"
    KERNELS = DISTANCE_KERNELS

    def __init__(self, system):
        super().__init__(system)
        m0, m1, self.cols = self.markers()
        self.rows(1)
        self.data = DistanceData(self.cols, self.ae, self.row_levels, self.active, m0, m1, self.param("distance"))

    def output(self, kin, k: int, var: str, lam: np.ndarray, motion_force: np.ndarray):
        """Over sensor rows: lam (rows, 1) this connector's multiplier."""
        if var == "Force":
            return lam[:, 0]
        m0, m1 = self.data.m0[k], self.data.m1[k]
        if var == "Velocity":
            return kin.vel[:, m1] - kin.vel[:, m0]
        displacement = kin.pos[:, m1] - kin.pos[:, m0]
        return displacement if var == "Displacement" else np.linalg.norm(displacement, axis=-1)


ITEMS = (ItemType(ObjectConnectorDistance, "constraint", ("Displacement", "Velocity", "Distance", "Force"),
                  DistanceConstraints, markers="position", explicit="refuse", kernels=DISTANCE_KERNELS),)
