"""Bodies on one coordinate of a Node1D (Exudyn's ObjectMass1D and ObjectRotationalMass1D): M = [m] or [J] on
the node's coordinate, no other forces (Exudyn's ComputeODE2LHS is 0). Their node's frame is turned by their
referenceRotation A_ref (kernels._turn_frame), so markers, loads and connectors on them see Exudyn's
kinematics:
- Mass1D: position A_ref ([q_ref + q, 0, 0] + b) + p_ref, rotation A_ref (a frame with the x column only);
- RotationalMass1D: rotation A_ref A_z(φ), φ = q_ref + q, position A_ref A_z(φ) b + p_ref (a planar frame
  with the φ column only), ω = A_ref [0, 0, φ̇]."""
from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, field_validator

from .. import schema as S
from ..rotations import cross, matvec, rotation_z, tait_bryan_xyz
from .declaration import ItemType

MASS_1D_OUTPUTS = ("Position", "Displacement", "Velocity", "RotationMatrix", "Rotation", "AngularVelocity",
                   "AngularVelocityLocal")
ROTATIONAL_MASS_1D_OUTPUTS = MASS_1D_OUTPUTS  # Rotation: the angle q_ref + q, a scalar


class _Body1D(S.Item):
    nodeNumber: S.Ref = -1
    """its Node1D node (index or name)"""
    referencePosition: S.Vector3 = Field(default_factory=lambda: [0.0, 0.0, 0.0])
    """p_ref, the body's position at q = 0"""
    referenceRotation: S.Matrix3 = Field(default_factory=lambda: [r[:] for r in S.IDENTITY3])
    """A_ref (3x3, row by row): the body's axes"""

    @field_validator("referenceRotation")
    @classmethod
    def check_rotation(cls, v):
        return S._orthonormal(v, "referenceRotation")


class ObjectMass1D(_Body1D):
    """A point mass moving along the x axis of its referenceRotation: position A_ref [q_ref + q, 0, 0] + p_ref,
    M = [m] on the node's coordinate."""
    objectType: Literal["Mass1D"]
    mass: S.FiniteFloat = 0.0
    """mass in kg; must be positive"""


class ObjectRotationalMass1D(_Body1D):
    """A rotor turning about the z axis of its referenceRotation: rotation A_ref A_z(q_ref + q), fixed at p_ref,
    M = [J] on the node's coordinate."""
    objectType: Literal["RotationalMass1D"]
    inertia: S.FiniteFloat = 0.0
    """moment of inertia about the axis (kg m²); must be positive"""


ROTATIONAL = {"Mass1D": False, "RotationalMass1D": True}


def frames(doc, ref) -> dict[int, tuple[bool, np.ndarray, np.ndarray]]:
    """Node1D node -> (rotational, p_ref, A_ref) of the 1D body on it (model validation allows one)."""
    out = {}
    for i, obj in enumerate(doc.objects):
        if obj.objectType in ROTATIONAL:
            out[ref("objects", i, "nodeNumber")] = (ROTATIONAL[obj.objectType], np.array(obj.referencePosition, float),
                                                    np.array(obj.referenceRotation, float))
    return out


class OneDimBodies:
    """All Mass1D and RotationalMass1D items: their constant mass on their node's coordinate (System.constant_mass),
    and their sensors' outputs."""

    def __init__(self, system):
        doc, ref = system.loaded.document, system.loaded.ref
        self.objects = [i for i, o in enumerate(doc.objects) if o.objectType in ROTATIONAL]
        self.size = len(self.objects)
        self.items = [doc.objects[i] for i in self.objects]
        self.col = np.array([system.node_offset[ref("objects", i, "nodeNumber")] for i in self.objects], np.int64)
        self.q_ref = system.q_ref[self.col] if self.size else np.zeros(0)
        self.value = np.array([o.inertia if ROTATIONAL[o.objectType] else o.mass for o in self.items], float)

    def mass_triplets(self):
        return self.col, self.col.copy(), self.value

    def output(self, kin, k: int, var: str, local=None):
        """Exudyn's CObjectMass1D / CObjectRotationalMass1D::GetOutputVariableBody at `local` over the rows."""
        obj, c = self.items[k], self.col[k]
        A0, p0 = np.array(obj.referenceRotation, float), np.array(obj.referencePosition, float)
        local = np.zeros(3) if local is None else np.asarray(local, float)
        q, v = kin.q[:, c], kin.v[:, c]
        rows = len(q)
        zero = np.zeros((rows, 3))
        if not ROTATIONAL[obj.objectType]:
            x = np.zeros((rows, 3))
            x[:, 0] = q
            table = {"Position": lambda: matvec(A0, x + local + [self.q_ref[k], 0.0, 0.0]) + p0,
                     "Displacement": lambda: matvec(A0, x), "Velocity": lambda: np.outer(v, A0[:, 0]),
                     "RotationMatrix": lambda: np.broadcast_to(A0, (rows, 3, 3)),
                     "Rotation": lambda: np.broadcast_to(tait_bryan_xyz(A0), (rows, 3)),
                     "AngularVelocity": lambda: zero, "AngularVelocityLocal": lambda: zero}
            return table[var]()
        phi = self.q_ref[k] + q
        A = A0 @ rotation_z(phi)
        omega_local = np.zeros((rows, 3))
        omega_local[:, 2] = v
        table = {"Position": lambda: matvec(A, local) + p0,
                 "Displacement": lambda: matvec(A, local) - A0 @ rotation_z(self.q_ref[k]) @ local,
                 "Velocity": lambda: matvec(A, cross(omega_local, local)), "RotationMatrix": lambda: A,
                 "Rotation": lambda: phi, "AngularVelocity": lambda: matvec(A0, omega_local),
                 "AngularVelocityLocal": lambda: omega_local}
        return table[var]()


ITEMS = (ItemType(ObjectMass1D, "body", MASS_1D_OUTPUTS, OneDimBodies, nodes=frozenset({"1D"}),
                  body_markers=frozenset({"BodyRigid", "BodyPosition", "BodyMass"})),
         ItemType(ObjectRotationalMass1D, "body", ROTATIONAL_MASS_1D_OUTPUTS, OneDimBodies, nodes=frozenset({"1D"}),
                  body_markers=frozenset({"BodyRigid", "BodyPosition"})))
