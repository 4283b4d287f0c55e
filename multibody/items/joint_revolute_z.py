"""ObjectJointRevoluteZ: free rotation about the z axis of joint frame J0.

g = [Δp (global, 3 rows), z0ᵀx1, z0ᵀy1]; ForceLocal = A_J0ᵀ[λ0, λ1, λ2] (the global multipliers
in joint axes, as Exudyn 1.13 reports them), TorqueLocal = [λ3, λ4, 0] plus a motion's torque about z.
"""
from __future__ import annotations

import numpy as np

from .. import schema as S
from ..rotations import matvec
from .declaration import ItemType
from .frame_joint import ROT_OUTPUTS, FrameJointGroup


class JointRevoluteZ(FrameJointGroup):
    OBJECT_TYPE = "JointRevoluteZ"
    ROWS = (("tg", 0), ("tg", 1), ("tg", 2), ("r", 2, 0), ("r", 2, 1))

    def output(self, kin, k: int, var: str, lam: np.ndarray, motion_force: np.ndarray):
        """Over sensor rows: lam (rows, 5) this joint's multipliers, motion_force (rows,)."""
        if var == "ForceLocal":
            return matvec(self.joint_frame(kin, k, 0).swapaxes(-1, -2), lam[:, 0:3])
        if var == "TorqueLocal":
            return np.stack([lam[:, 3], lam[:, 4], motion_force], axis=-1)
        return self.frame_output(kin, k, var)


ITEMS = (ItemType(S.ObjectJointRevoluteZ, "constraint", ROT_OUTPUTS, JointRevoluteZ, markers="rigid",
                  explicit="refuse", motion_coordinate="angle"),)
