"""Bodies: inertia of rigid bodies (Euler-parameter nodes, and planar ones with an off-center mass), mass
points (3D and planar) and planar rigid bodies, and the Euler-parameter normalization constraint of each
RigidBodyEP node."""
from __future__ import annotations

import numpy as np

from .. import kernels as K
from .. import schema as S
from .declaration import ItemType

RIGID_BODY_OUTPUTS = ("Position", "Displacement", "Velocity", "VelocityLocal", "Acceleration", "AccelerationLocal",
                      "RotationMatrix", "Rotation", "AngularVelocity", "AngularVelocityLocal", "AngularAcceleration",
                      "AngularAccelerationLocal", "HomogeneousTransformation")
POINT_BODY_OUTPUTS = ("Position", "Displacement", "Velocity", "Acceleration")
POINT_BODY_2D_OUTPUTS = ("Position", "Displacement", "Velocity", "Acceleration", "RotationMatrix", "Rotation",
                         "AngularVelocity", "AngularVelocityLocal", "HomogeneousTransformation")
RIGID_BODY_2D_OUTPUTS = ("Position", "Displacement", "Velocity", "VelocityLocal", "Acceleration", "AccelerationLocal",
                         "RotationMatrix", "Rotation", "AngularVelocity", "AngularVelocityLocal", "AngularAcceleration",
                         "AngularAccelerationLocal", "HomogeneousTransformation")


def _block_pattern(cols: np.ndarray):
    """rows/cols of dense per-item blocks cols x cols, shape (n, k, k) raveled."""
    k = cols.shape[1]
    rows = np.broadcast_to(cols[:, :, None], (len(cols), k, k))
    cc = np.broadcast_to(cols[:, None, :], (len(cols), k, k))
    return rows.ravel(), cc.ravel()


def off_center(obj) -> bool:
    """A RigidBody2D whose center of mass is away from its node: its mass matrix depends on φ
    (Exudyn adds the center-of-mass terms only then)."""
    return obj.objectType == "RigidBody2D" and any(obj.centerOfMass)


class RigidBodies:
    """ObjectRigidBody: M = [[m I, -m A b̃ Ḡ], [.ᵀ, Ḡᵀ J Ḡ]] with b the center of mass. An off-center
    ObjectRigidBody2D is the same on its planar frame (columns x, y, -, φ; Ḡ = e_z on φ), which gives
    M = [[m I, m ∂(A b)/∂φ], [.ᵀ, J]] and the centrifugal force m φ̇² A b."""

    def __init__(self, system):
        doc = system.loaded.document
        self.objects = [i for i, o in enumerate(doc.objects) if o.objectType == "RigidBody" or off_center(o)]
        n = self.size = len(self.objects)
        self.frame = np.array([system.frame_of_node[system.loaded.ref("objects", i, "nodeNumber")]
                               for i in self.objects], dtype=int)
        self.cols = system.fcols[self.frame] if n else np.zeros((0, 7), int)
        self.f_rotation = system.f_rotation
        self.mass = np.array([doc.objects[i].mass for i in self.objects], float)
        self.com = np.zeros((n, 3))
        J = np.zeros((n, 3, 3))
        for k, i in enumerate(self.objects):
            obj = doc.objects[i]
            self.com[k, :len(obj.centerOfMass)] = obj.centerOfMass
            if obj.objectType == "RigidBody2D":
                J[k, 2, 2] = obj.inertia
            else:
                xx, yy, zz, yz, xz, xy = obj.inertia
                J[k] = [[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]
        self.inertia = J

    def mass_pattern(self):
        return _block_pattern(self.cols)

    def mass_matrices(self, kin) -> np.ndarray:
        return K.rigid_mass_matrices(kin.fA, kin.fGbar, self.frame, self.mass, self.com, self.inertia)

    def mass_values(self, kin) -> np.ndarray:
        return self.mass_matrices(kin).ravel()

    def newton_values(self, kin, mass_factor: float, k_factor: float, d_factor: float) -> np.ndarray:
        """mass_factor·M − k_factor·∂f/∂q − d_factor·∂f/∂v per body, f the quadratic velocity terms."""
        M = self.mass_matrices(kin)
        if k_factor == 0.0 and d_factor == 0.0:
            return (M * mass_factor).ravel()
        dq, dv = K.rigid_quadratic_velocity_jacobians(kin.theta, kin.theta_t, self.f_rotation, self.frame, self.cols,
                                                      self.mass, self.com, self.inertia, kin.q, kin.v, len(kin.q) - 1)
        return (M * mass_factor - (k_factor * dq + d_factor * dv)).ravel()

    def quadratic_velocity(self, kin) -> np.ndarray:
        """-(LHS quadratic velocity terms): translation m A (ω̄×(ω̄×b)), rotation Ḡᵀ(ω̄ × J ω̄)."""
        return K.rigid_quadratic_velocity(kin.fA, kin.fGbar, kin.theta, kin.theta_t, self.f_rotation, self.frame,
                                          self.cols, self.mass, self.com, self.inertia, len(kin.q) - 1)


class MassPoints:
    """The bodies with a constant diagonal mass matrix on their node's coordinates:
    ObjectMassPoint M = m I on x, y, z; ObjectRigidBody2D with its node at the center of mass
    M = diag(m, m, J) on x, y, φ (no quadratic velocity terms); ObjectMassPoint2D M = m I on x, y
    (three columns like the others, its y column twice with mass 0 the second time: no dummy
    slot in the kernels' mass loops)."""

    def __init__(self, system):
        doc = system.loaded.document
        # a MassPoint on a PointGround node has no coordinates to carry its mass
        self.objects = [i for i, o in enumerate(doc.objects) if (o.objectType in ("MassPoint", "MassPoint2D")
                        or o.objectType == "RigidBody2D" and not off_center(o))
                        and system.node_ncoords[system.loaded.ref("objects", i, "nodeNumber")]]
        n = self.size = len(self.objects)
        nodes = [system.loaded.ref("objects", i, "nodeNumber") for i in self.objects]
        self.frame = np.array([system.frame_of_node[k] for k in nodes], dtype=int)
        # a planar frame's columns are x, y, -, φ; a Point2D frame's x, y (System.fcols)
        pick = {"MassPoint": [0, 1, 2], "RigidBody2D": [0, 1, 3], "MassPoint2D": [0, 1, 1]}
        self.cols = np.array([system.fcols[f][pick[doc.objects[i].objectType]]
                              for i, f in zip(self.objects, self.frame)], dtype=int).reshape(n, 3)
        third = {"MassPoint": lambda o: o.mass, "RigidBody2D": lambda o: o.inertia, "MassPoint2D": lambda o: 0.0}
        self.mass = np.array([[o.mass, o.mass, third[o.objectType](o)] for o in (doc.objects[i] for i in self.objects)],
                             float).reshape(n, 3)

    def mass_pattern(self):
        return _block_pattern(self.cols)

    def mass_values(self) -> np.ndarray:
        return (self.mass[:, :, None] * np.eye(3)).ravel()


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
        return K.ep_normalization(kin.theta, kin.theta_t, self.frame, velocity_level)


ITEMS = (ItemType(S.ObjectGround, "body", RIGID_BODY_OUTPUTS, body_markers=frozenset({"BodyRigid", "BodyPosition"})),
         ItemType(S.ObjectRigidBody, "body", RIGID_BODY_OUTPUTS, RigidBodies,
                  nodes=frozenset({"RigidBodyEP", "RigidBodyRxyz", "RigidBodyRotVecLG"}),
                  body_markers=frozenset({"BodyRigid", "BodyPosition", "BodyMass"})),
         ItemType(S.ObjectMassPoint, "body", POINT_BODY_OUTPUTS, MassPoints, nodes=frozenset({"Point", "PointGround"}),
                  body_markers=frozenset({"BodyPosition", "BodyMass"})),
         ItemType(S.ObjectRigidBody2D, "body", RIGID_BODY_2D_OUTPUTS, MassPoints, nodes=frozenset({"RigidBody2D"}),
                  body_markers=frozenset({"BodyRigid", "BodyPosition", "BodyMass"})),
         ItemType(S.ObjectMassPoint2D, "body", POINT_BODY_2D_OUTPUTS, MassPoints, nodes=frozenset({"Point2D"}),
                  body_markers=frozenset({"BodyPosition", "BodyMass"})))
