"""ObjectJointPrismatic2D: marker 1 slides along the axis t0 of marker 0 (rigid-body markers, planar bodies).

With a1 = A_m1 n1 (n1 = normalMarker1) and a0 = A_m0 t0 (t0 = axisMarker0), as Exudyn writes it:
    g0 = Δpᵀ a1        the "t1" row of J1 = A_m1 [0 | n1 | 0]
    g1 = a0ᵀ a1        the "r" row between J0 = A_m0 [t0 | 0 | 0] and J1 (with constrainRotation)
neither vector normalized. Without constrainRotation Exudyn keeps g1 = λ1 (λ1 = 0); we allocate no
row for it. Outputs as Exudyn 1.13.6 gives them: Position, Velocity and HomogeneousTransformation of
marker 0; Distance a0ᵀΔp; DisplacementLocal A_m0ᵀΔp; Rotation the angle of A_m0ᵀA_m1 about z;
ForceLocal λ0 A_m0ᵀ a1 (the transverse force in marker 0's axes); HomogeneousTransformationLocal
[A_m0ᵀA_m1, A_m0ᵀΔp].
"""
from __future__ import annotations

import numpy as np

from ..rotations import homogeneous_transformation, matvec
from .. import schema as S
from .declaration import ItemType
from .frame_joint import FrameJointGroup


class JointPrismatic2D(FrameJointGroup):
    OBJECT_TYPE = "JointPrismatic2D"

    @classmethod
    def groups(cls, system) -> list:
        """One group with the rotation row, one without."""
        doc = system.loaded.document
        by_rows: dict[bool, list[int]] = {}
        for i, o in enumerate(doc.objects):
            if o.objectType == cls.OBJECT_TYPE:
                by_rows.setdefault(o.constrainRotation, []).append(i)
        return [cls(system, objects, rotation) for rotation, objects in by_rows.items()]

    def __init__(self, system, objects: list[int], rotation: bool):
        self.rotation = rotation
        self.slots = (0, 1) if rotation else (0,)  # of Exudyn's two multipliers (solution files)
        super().__init__(system, objects)
        doc = system.loaded.document
        n = self.size
        self.R0, self.R1 = np.zeros((n, 3, 3)), np.zeros((n, 3, 3))
        self.R0[:, :, 0] = np.array([doc.objects[i].axisMarker0 for i in self.objects], float).reshape(n, 3)
        self.R1[:, :, 1] = np.array([doc.objects[i].normalMarker1 for i in self.objects], float).reshape(n, 3)

    def row_specs(self, doc) -> tuple:
        return (("t1", 1), ("r", 0, 1)) if self.rotation else (("t1", 1),)

    def output(self, kin, k: int, var: str, lam: np.ndarray, motion_force: np.ndarray):
        """Over sensor rows: lam (rows, 1 or 2) this joint's multipliers."""
        m0, m1 = self.m0[k], self.m1[k]
        A0T = kin.rot[:, m0].swapaxes(-1, -2)
        dp = kin.pos[:, m1] - kin.pos[:, m0]
        if var == "Position":
            return kin.pos[:, m0]
        if var == "Velocity":
            return kin.vel[:, m0]
        if var == "Distance":
            return np.einsum("ri,ri->r", matvec(kin.rot[:, m0], self.R0[k, :, 0]), dp)
        if var == "DisplacementLocal":
            return matvec(A0T, dp)
        relative = A0T @ kin.rot[:, m1]
        if var == "Rotation":
            return np.arctan2(relative[:, 1, 0], relative[:, 0, 0])
        if var == "ForceLocal":
            return lam[:, :1] * matvec(relative, self.R1[k, :, 1])
        if var == "HomogeneousTransformation":
            return homogeneous_transformation(kin.rot[:, m0], kin.pos[:, m0])
        if var == "HomogeneousTransformationLocal":
            return homogeneous_transformation(relative, matvec(A0T, dp))
        raise KeyError(var)


ITEMS = (ItemType(S.ObjectJointPrismatic2D, "constraint",
                  ("Distance", "Position", "DisplacementLocal", "Velocity", "Rotation", "ForceLocal",
                   "HomogeneousTransformation", "HomogeneousTransformationLocal"),
                  JointPrismatic2D, markers="rigid", explicit="refuse", exudyn_multipliers=2),)
