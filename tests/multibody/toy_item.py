"""Two item types from one module outside the core, as multibody/items/README.md says to write them:
a linear spring between two position markers with zero rest length (force type) and the equal
height of two position markers (one-row constraint). tests/multibody/test_item_toy.py registers them.

Numba's cache of the core's compiled step loops keys on their own files: after editing the kernels
here, delete multibody's __pycache__/*.nbi (or touch multibody/kernels.py).
"""
from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np

from multibody.items.compiled import CompiledConstraints, CompiledForces
from multibody.items.declaration import ItemType
from multibody.kernels import ItemKernels, jit
from multibody.schema import FiniteFloat, _Connector


# ---------------------------------------------------------------- ToyZeroLengthSpring: F = k (p1 - p0) on marker 0
class ToyZeroLengthSpring(_Connector):
    objectType: Literal["ToyZeroLengthSpring"]
    stiffness: FiniteFloat = 0.0
    """N/m; the force is stiffness·(p1 - p0) on marker 0 and its opposite on marker 1"""


class SpringData(NamedTuple):
    cols: np.ndarray  # (n,14) the two markers' columns
    m0: np.ndarray
    m1: np.ndarray
    k: np.ndarray  # 0 for an inactive spring


@jit
def spring_forces(d, kin, F):
    for i in range(d.m0.shape[0]):
        p, q = d.m0[i], d.m1[i]
        for j in range(7):
            s0, s1 = 0.0, 0.0
            for x in range(3):
                f = d.k[i] * (kin.pos[q, x] - kin.pos[p, x])
                s0 += kin.Jpos[p, x, j] * f
                s1 -= kin.Jpos[q, x, j] * f
            F[i, j], F[i, 7 + j] = s0, s1


@jit
def spring_jacobians(d, kin, dq, dv):
    """∂F/∂q = -k Jdᵀ Jd with Jd = [-J0, J1] (marker Jacobians held fixed); no damping."""
    for i in range(d.m0.shape[0]):
        for a in range(14):
            for b in range(14):
                s = 0.0
                for x in range(3):
                    ja = -kin.Jpos[d.m0[i], x, a] if a < 7 else kin.Jpos[d.m1[i], x, a - 7]
                    jb = -kin.Jpos[d.m0[i], x, b] if b < 7 else kin.Jpos[d.m1[i], x, b - 7]
                    s += ja * jb
                dq[i, a, b] = -d.k[i] * s


SPRING_KERNELS = ItemKernels(SpringData, spring_forces, spring_jacobians)


class ZeroLengthSprings(CompiledForces):
    OBJECT_TYPE = "ToyZeroLengthSpring"
    KERNELS = SPRING_KERNELS

    def __init__(self, system):
        super().__init__(system)
        m0, m1, self.cols = self.markers()
        self.data = SpringData(self.cols, m0, m1, self.param("stiffness") * self.active)

    def output(self, kin, k: int, var: str):
        """Over sensor rows: the force on marker 0."""
        return self.data.k[k] * (kin.pos[:, self.data.m1[k]] - kin.pos[:, self.data.m0[k]])


# ---------------------------------------------------------------- ToyEqualHeight: z of marker 1 = z of marker 0
class ToyEqualHeight(_Connector):
    objectType: Literal["ToyEqualHeight"]


class HeightData(NamedTuple):
    cols: np.ndarray  # (n,14)
    ae: np.ndarray  # (n,1)
    levels: np.ndarray  # (n,1)
    active: np.ndarray
    m0: np.ndarray
    m1: np.ndarray


@jit
def height_rows(d, kin, velocity_level, g, C):
    for i in range(d.m0.shape[0]):
        p, q = d.m0[i], d.m1[i]
        g[i, 0] = (kin.vel[q, 2] - kin.vel[p, 2]) if velocity_level else (kin.pos[q, 2] - kin.pos[p, 2])
        for j in range(7):
            C[i, 0, j] = -kin.Jpos[p, 2, j]
            C[i, 0, 7 + j] = kin.Jpos[q, 2, j]


HEIGHT_KERNELS = ItemKernels(HeightData, height_rows)


class EqualHeights(CompiledConstraints):
    OBJECT_TYPE = "ToyEqualHeight"
    KERNELS = HEIGHT_KERNELS

    def __init__(self, system):
        super().__init__(system)
        m0, m1, self.cols = self.markers()
        self.rows(1)
        self.data = HeightData(self.cols, self.ae, self.row_levels, self.active, m0, m1)

    def output(self, kin, k: int, var: str, lam: np.ndarray, motion_force: np.ndarray):
        """Over sensor rows: the multiplier (the force on marker 1 along -z)."""
        return lam[:, 0]


ITEMS = (ItemType(ToyZeroLengthSpring, "force", ("Force",), ZeroLengthSprings, markers="position", explicit="apply",
                  kernels=SPRING_KERNELS),
         ItemType(ToyEqualHeight, "constraint", ("Force",), EqualHeights, markers="position", explicit="refuse",
                  kernels=HEIGHT_KERNELS))
