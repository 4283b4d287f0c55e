"""ObjectJointPrismaticX: free sliding along the x axis of joint frame J0.

g = [y0ᵀΔp, z0ᵀΔp, z0ᵀy1, z0ᵀx1, x0ᵀy1]; ForceLocal = [0, λ0, λ1], TorqueLocal = [λ2, λ3, λ4]
(raw multipliers, as Exudyn reports them). A motion on the joint adds its force along x.
"""
from __future__ import annotations

import numpy as np

from .. import schema as S
from .declaration import ItemType
from .frame_joint import ROT_OUTPUTS, FrameJointGroup


class JointPrismaticX(FrameJointGroup):
    OBJECT_TYPE = "JointPrismaticX"
    ROWS = (("t", 1), ("t", 2), ("r", 2, 1), ("r", 2, 0), ("r", 0, 1))

    def output(self, kin, k: int, var: str, lam: np.ndarray, motion_force: np.ndarray):
        """Over sensor rows: lam (rows, 5) this joint's multipliers, motion_force (rows,)."""
        if var == "ForceLocal":
            return np.stack([motion_force, lam[:, 0], lam[:, 1]], axis=-1)
        if var == "TorqueLocal":
            return lam[:, 2:5]
        return self.frame_output(kin, k, var)


ITEMS = (ItemType(S.ObjectJointPrismaticX, "constraint", ROT_OUTPUTS, JointPrismaticX, markers="rigid",
                  explicit="refuse", motion_coordinate="sliding"),)
