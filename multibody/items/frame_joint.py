"""Shared machinery of joints between two rigid-body markers, vectorized over all joints of a type.

A joint type is a list of scalar constraint rows, each one of
    ("t", k)      k-th axis of joint frame J0 times Δp        (translation in J0 axes)
    ("t1", k)     k-th axis of joint frame J1 times Δp        (translation in J1 axes)
    ("tg", k)     k-th global component of Δp                 (translation in global axes)
    ("r", i, j)   i-th axis of J0 times j-th axis of J1       (relative rotation)
with Δp = p_m1 - p_m0. Index-2 (velocity-level) forms are their time derivatives, an axis a = A_m R e_i
turning as Exudyn's ȧ = A_m (ω_m × R e_i) (ω_m in the marker's frame; kernels._axis_rate).
Jacobians use the marker Jacobians J (position) and Γ (rotation) and δa = (Γ δq) × a for a
frame axis a, as Exudyn does (exact for unit Euler parameters).
"""
from __future__ import annotations

import numpy as np

from .. import kernels as K
from ..rotations import homogeneous_transformation, matvec, tait_bryan_xyz

ROT_OUTPUTS = ("Position", "Velocity", "DisplacementLocal", "VelocityLocal", "Rotation", "AngularVelocityLocal",
               "ForceLocal", "TorqueLocal", "HomogeneousTransformation", "HomogeneousTransformationLocal")


class FrameJointGroup:
    """All joints of one type: the rows of `ROWS`, vectorized over the joints."""
    OBJECT_TYPE = ""
    ROWS: tuple = ()

    @classmethod
    def groups(cls, system) -> list:
        """The groups compiled for a model: one per type; types whose rows depend on parameters
        make one group per distinct row set."""
        return [cls(system)]

    def __init__(self, system, objects: list[int] | None = None):
        doc = system.loaded.document
        ref = system.loaded.ref
        self.system = system
        self.objects = objects if objects is not None else \
            [i for i, o in enumerate(doc.objects) if o.objectType == self.OBJECT_TYPE]
        n = self.size = len(self.objects)
        ms = np.array([ref("objects", i, "markerNumbers") for i in self.objects], dtype=int).reshape(n, 2)
        self.m0, self.m1 = ms[:, 0], ms[:, 1]
        self.R0 = np.array([getattr(doc.objects[i], "rotationMarker0", np.eye(3)) for i in self.objects],
                           float).reshape(n, 3, 3)
        self.R1 = np.array([getattr(doc.objects[i], "rotationMarker1", np.eye(3)) for i in self.objects],
                           float).reshape(n, 3, 3)
        self.active = np.array([doc.objects[i].activeConnector for i in self.objects], dtype=bool)
        self.rows = self.row_specs(doc)
        kinds = {"t": 0, "tg": 1, "r": 2, "t1": 3}  # the row specs as per-joint arrays for kernels.joint_rows
        self.row_code = tuple(np.tile(np.array(code, dtype=np.int64).reshape(1, -1), (n, 1)) for code in
                              ([kinds[r[0]] for r in self.rows], [r[1] for r in self.rows],
                               [r[2] if len(r) > 2 else 0 for r in self.rows]))
        self.row_code += (np.full(n, len(self.rows), dtype=np.int64),)
        self.row_levels = np.zeros(len(self.rows), dtype=int)
        self.ae = system.allocate_ae(n * len(self.rows)).reshape(n, len(self.rows))
        self.cols = np.concatenate([system.mcols[self.m0], system.mcols[self.m1]], axis=1) if n \
            else np.zeros((0, 14), int)

    def row_specs(self, doc) -> tuple:
        return self.ROWS

    def evaluate(self, kin, velocity_level: bool):
        return K.joint_rows(kin.rot, kin.pos, kin.vel, kin.omega_local, kin.Jpos, kin.Jrot, self.m0, self.m1,
                            self.R0, self.R1, *self.row_code, velocity_level)

    # ---------------------------------------------------------------- output variables
    # kin: the kinematics of sensor rows (leading axis: rows)
    def joint_frame(self, kin, k: int, marker: int) -> np.ndarray:
        """J0 (marker 0) or J1 (marker 1) of joint k: (rows,3,3)."""
        m, R = (self.m0[k], self.R0[k]) if marker == 0 else (self.m1[k], self.R1[k])
        return kin.rot[:, m] @ R

    def frame_output(self, kin, k: int, var: str):
        """The kinematic outputs shared by JointPrismaticX, JointRevoluteZ and JointGeneric."""
        m0, m1 = self.m0[k], self.m1[k]
        if var == "Position":
            return kin.pos[:, m0]
        if var == "Velocity":
            return kin.vel[:, m0]
        A0 = self.joint_frame(kin, k, 0)
        A0T = A0.swapaxes(-1, -2)
        if var == "DisplacementLocal":
            return matvec(A0T, kin.pos[:, m1] - kin.pos[:, m0])
        if var == "VelocityLocal":
            return matvec(A0T, kin.vel[:, m1] - kin.vel[:, m0])
        if var == "Rotation":
            return tait_bryan_xyz(A0T @ self.joint_frame(kin, k, 1))
        if var == "AngularVelocityLocal":
            return matvec(A0T, kin.omega[:, m1] - kin.omega[:, m0])
        if var == "HomogeneousTransformation":
            return homogeneous_transformation(A0, kin.pos[:, m0])
        if var == "HomogeneousTransformationLocal":
            return homogeneous_transformation(A0T @ self.joint_frame(kin, k, 1),
                                              matvec(A0T, kin.pos[:, m1] - kin.pos[:, m0]))
        raise KeyError(var)
