"""Groups of item types with kernels of their own (kernels.ItemKernels; items/README.md).

The compiled solvers call the type's kernels through Model.x_constraints / Model.x_forces; these
groups give the System's Python path (static solver, sensors' helpers, redundancy) the same
kernels on one state, so each type's physics is written once.
"""
from __future__ import annotations

import numpy as np

from .bodies import _block_pattern


class CompiledGroup:
    """All items of one compiled type. A subclass sets OBJECT_TYPE and KERNELS, and in its __init__,
    after this one's, `cols` (n, ncols) and (constraints: after `rows(count)`) `data`, an instance of
    KERNELS.data."""
    OBJECT_TYPE = ""
    KERNELS = None  # kernels.ItemKernels

    def __init__(self, system):
        doc = system.loaded.document
        self.system = system
        self.objects = [i for i, o in enumerate(doc.objects) if o.objectType == self.OBJECT_TYPE]
        self.size = len(self.objects)
        self.items = [doc.objects[i] for i in self.objects]
        self.active = np.array([getattr(o, "activeConnector", True) for o in self.items], dtype=bool)

    def param(self, name: str) -> np.ndarray:
        return np.array([getattr(o, name) for o in self.items], float)

    def markers(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(m0, m1, cols) of two-marker connectors: the marker indices (n,) and their columns (n, 14)."""
        ref, mcols = self.system.loaded.ref, self.system.mcols
        ms = np.array([ref("objects", i, "markerNumbers") for i in self.objects], dtype=np.int64).reshape(-1, 2)
        cols = np.concatenate([mcols[ms[:, 0]], mcols[ms[:, 1]]], axis=1).reshape(-1, 14)
        return ms[:, 0].copy(), ms[:, 1].copy(), np.ascontiguousarray(cols, dtype=np.int64)


class CompiledConstraints(CompiledGroup):
    @classmethod
    def groups(cls, system) -> list:
        return [cls(system)]  # one group per type: Model.x_constraints holds one data per type

    def rows(self, count: int, levels=0) -> None:
        """Allocate `count` λ rows per item; levels: each row's level (0 position, 1 velocity)."""
        self.ae = self.system.allocate_ae(self.size * count).reshape(self.size, count).astype(np.int64)
        self.row_levels = np.broadcast_to(np.asarray(levels, dtype=np.int64), self.ae.shape).copy()

    def evaluate(self, kin, velocity_level: bool):
        g = np.empty(self.ae.shape)
        C = np.empty(self.ae.shape + (self.cols.shape[1],))
        self.KERNELS.evaluate(self.data, kin.arrays(), velocity_level, g, C)
        return g, C


class CompiledForces(CompiledGroup):
    def node_columns(self, per_node: int) -> np.ndarray:
        """(n, 2·per_node) a two-node body's coordinates: the first per_node of each of its nodeNumbers."""
        ref, offset = self.system.loaded.ref, self.system.node_offset
        nodes = np.array([ref("objects", i, "nodeNumbers") for i in self.objects], dtype=np.int64).reshape(-1, 2)
        return np.ascontiguousarray((offset[nodes][:, :, None] + np.arange(per_node)).reshape(-1, 2 * per_node),
                                    dtype=np.int64)

    def block_triplets(self, blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows, columns, values) of a constant matrix block (n, k, k) per item on its cols (n, k), item by item,
        zeros dropped (mass_triplets of a body with a constant mass matrix)."""
        k = self.cols.shape[1]
        rows, cols = np.repeat(self.cols, k, axis=1).ravel(), np.tile(self.cols, (1, k)).ravel()
        values = np.asarray(blocks, float).reshape(-1)
        keep = values != 0.0
        return rows[keep], cols[keep], values[keep]

    def generalized(self, kin) -> np.ndarray:
        F = np.zeros(self.cols.shape)
        self.KERNELS.evaluate(self.data, kin.arrays(), F)
        return self.system.scatter(self.cols, F)

    def jacobian_pattern(self):
        return _block_pattern(self.cols)

    def jacobian_values(self, kin):
        dq = np.zeros(self.cols.shape + (self.cols.shape[1],))
        dv = np.zeros_like(dq)
        self.KERNELS.jacobians(self.data, kin.arrays(), dq, dv)
        return dq, dv
