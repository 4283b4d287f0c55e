"""Bodies: inertia of rigid bodies (Euler-parameter nodes) and mass points, and the
Euler-parameter normalization constraint of each RigidBodyEP node."""
from __future__ import annotations

import numpy as np

from ..rotations import cross

from .. import rotations as R


def _block_pattern(cols: np.ndarray):
    """rows/cols of dense per-item blocks cols x cols, shape (n, k, k) raveled."""
    k = cols.shape[1]
    rows = np.broadcast_to(cols[:, :, None], (len(cols), k, k))
    cc = np.broadcast_to(cols[:, None, :], (len(cols), k, k))
    return rows.ravel(), cc.ravel()


class RigidBodies:
    """ObjectRigidBody: M = [[m I, -m A b̃ Ḡ], [.ᵀ, Ḡᵀ J Ḡ]] with b the center of mass."""

    def __init__(self, system):
        doc = system.loaded.document
        self.objects = [i for i, o in enumerate(doc.objects) if o.objectType == "RigidBody"]
        n = self.size = len(self.objects)
        self.frame = np.array([system.frame_of_node[system.loaded.ref("objects", i, "nodeNumber")]
                               for i in self.objects], dtype=int)
        self.cols = system.fcols[self.frame] if n else np.zeros((0, 7), int)
        self.mass = np.array([doc.objects[i].mass for i in self.objects], float)
        self.com = np.array([doc.objects[i].centerOfMass for i in self.objects], float).reshape(n, 3)
        self.com_skew = R.skew(self.com)
        J = np.zeros((n, 3, 3))
        for k, i in enumerate(self.objects):
            xx, yy, zz, yz, xz, xy = doc.objects[i].inertia
            J[k] = [[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]
        self.inertia = J
        self.scatter = system.scatter

    def mass_pattern(self):
        return _block_pattern(self.cols)

    def mass_matrices(self, kin) -> np.ndarray:
        n = self.size
        M = np.zeros((n, 7, 7))
        if not n:
            return M
        A, Gb = kin.fA[self.frame], kin.fGbar[self.frame]
        m = self.mass[:, None, None]
        M[:, 0, 0] = M[:, 1, 1] = M[:, 2, 2] = self.mass
        Mtr = -m * (A @ self.com_skew @ Gb)
        M[:, :3, 3:] = Mtr
        M[:, 3:, :3] = Mtr.transpose(0, 2, 1)
        M[:, 3:, 3:] = Gb.transpose(0, 2, 1) @ self.inertia @ Gb
        return M

    def mass_values(self, kin) -> np.ndarray:
        return self.mass_matrices(kin).ravel()

    def mass_times(self, kin, a: np.ndarray) -> np.ndarray:
        ax = np.append(a, 0.0)[self.cols]
        return self.scatter(self.cols, np.einsum("nij,nj->ni", self.mass_matrices(kin), ax))

    def quadratic_velocity(self, kin) -> np.ndarray:
        """-(LHS quadratic velocity terms): translation m A (ω̄×(ω̄×b)), rotation Ḡᵀ(ω̄ × J ω̄)."""
        if not self.size:
            return self.scatter(self.cols, np.zeros((0, 7)))
        Gb, A = kin.fGbar[self.frame], kin.fA[self.frame]
        wbar = np.einsum("nij,nj->ni", Gb, kin.theta_t[self.frame])
        out = np.zeros((self.size, 7))
        out[:, :3] = -self.mass[:, None] * np.einsum("nij,nj->ni", A, cross(wbar, cross(wbar, self.com)))
        out[:, 3:] = -np.einsum("nji,nj->ni", Gb, cross(wbar, np.einsum("nij,nj->ni", self.inertia, wbar)))
        return self.scatter(self.cols, out)


class MassPoints:
    """ObjectMassPoint: M = m I on the node's 3 coordinates."""

    def __init__(self, system):
        doc = system.loaded.document
        self.objects = [i for i, o in enumerate(doc.objects) if o.objectType == "MassPoint"]
        n = self.size = len(self.objects)
        nodes = [system.loaded.ref("objects", i, "nodeNumber") for i in self.objects]
        self.frame = np.array([system.frame_of_node[k] for k in nodes], dtype=int)
        self.cols = system.fcols[self.frame][:, :3] if n else np.zeros((0, 3), int)
        self.mass = np.array([doc.objects[i].mass for i in self.objects], float)
        self.scatter = system.scatter

    def mass_pattern(self):
        return _block_pattern(self.cols)

    def mass_values(self) -> np.ndarray:
        return (self.mass[:, None, None] * np.eye(3)).ravel()

    def mass_times(self, a: np.ndarray) -> np.ndarray:
        return self.scatter(self.cols, self.mass[:, None] * a[self.cols])


class EPNormalization:
    """θᵀθ - 1 = 0 per RigidBodyEP node (index 2: 2θᵀθ̇ = 0); Jacobian row [0 0 0 | 2θᵀ]."""
    row_levels = np.array([0])

    def __init__(self, system):
        doc = system.loaded.document
        self.nodes = [i for i, nd in enumerate(doc.nodes) if nd.nodeType == "RigidBodyEP" and nd.addConstraintEquation]
        n = self.size = len(self.nodes)
        self.frame = np.array([system.frame_of_node[k] for k in self.nodes], dtype=int)
        self.cols = system.fcols[self.frame] if n else np.zeros((0, 7), int)
        self.ae = system.allocate_ae(n).reshape(n, 1)
        self.active = np.ones(n, dtype=bool)

    def evaluate(self, kin, velocity_level: bool):
        th = kin.theta[self.frame]
        C = np.zeros((self.size, 1, 7))
        C[:, 0, 3:] = 2.0 * th
        if velocity_level:
            g = 2.0 * np.einsum("ni,ni->n", th, kin.theta_t[self.frame])
        else:
            g = np.einsum("ni,ni->n", th, th) - 1.0
        return g[:, None], C
