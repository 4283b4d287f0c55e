"""ObjectJointRevolute2D: marker 1's position equals marker 0's in x and y (position markers, planar bodies).

g = [Δp_x, Δp_y] (index 2: Δv_x, Δv_y). Outputs as Exudyn 1.13.6 gives them: Position and Velocity of
marker 0, Displacement Δp (the drift), Force [λ0, λ1, 0] (global).
"""
from __future__ import annotations

import numpy as np

from .. import schema as S
from .declaration import ItemType
from .frame_joint import FrameJointGroup


class JointRevolute2D(FrameJointGroup):
    OBJECT_TYPE = "JointRevolute2D"
    ROWS = (("tg", 0), ("tg", 1))

    def output(self, kin, k: int, var: str, lam: np.ndarray, motion_force: np.ndarray):
        """Over sensor rows: lam (rows, 2) this joint's multipliers."""
        if var == "Displacement":
            return kin.pos[:, self.m1[k]] - kin.pos[:, self.m0[k]]
        if var == "Force":
            return np.stack([lam[:, 0], lam[:, 1], np.zeros(len(lam))], axis=-1)
        return self.frame_output(kin, k, var)


ITEMS = (ItemType(S.ObjectJointRevolute2D, "constraint", ("Position", "Displacement", "Velocity", "Force"),
                  JointRevolute2D, markers="position", explicit="refuse"),)
