"""ObjectJointSpherical and ObjectJointGeneric: joints whose rows are chosen by `constrainedAxes`.

Exudyn keeps a multiplier for every axis and sets it to 0 for a free one; we allocate rows only for
the constrained axes (the free ones carry no information) and group the joints by their mask.

JointSpherical: rows Δp (global components) of the constrained axes; Force = [λ0, λ1, λ2] (0 if free).
JointGeneric (CObjectJointGeneric.cpp), J0/J1 = marker frame times rotationMarker0/1:
  translation: Δp global if all three axes are constrained, else the constrained components of A_J0ᵀΔp;
  rotation: 3 locked: [z0ᵀy1, z0ᵀx1, x0ᵀy1]; 2 locked (free axis f): (f-th axis of J0)ᵀ(locked axes of J1);
  1 locked (free axes f1 < f2): (f1-th axis of J0)ᵀ(f2-th axis of J1), in the slot of the locked axis.
  ForceLocal = [λ0, λ1, λ2], rotated by A_J0ᵀ when all translations are constrained (then λ is global);
  TorqueLocal = [λ3, λ4, λ5] as they are.
"""
from __future__ import annotations

import numpy as np

from .. import schema as S
from ..rotations import matvec
from .declaration import ItemType
from .frame_joint import ROT_OUTPUTS, FrameJointGroup


def _generic_rows(mask: tuple) -> tuple[tuple, tuple]:
    """(row specs, slot 0..5 of each row) of a JointGeneric mask."""
    kind = "tg" if all(mask[:3]) else "t"
    rows = [(kind, k) for k in range(3) if mask[k]]
    slots = [k for k in range(3) if mask[k]]
    locked = [k for k in range(3) if mask[3 + k]]
    free = [k for k in range(3) if not mask[3 + k]]
    if len(locked) == 3:
        rows += [("r", 2, 1), ("r", 2, 0), ("r", 0, 1)]
    elif len(locked) == 2:
        rows += [("r", free[0], k) for k in locked]
    elif len(locked) == 1:
        rows += [("r", free[0], free[1])]
    slots += [3 + k for k in locked]
    return tuple(rows), tuple(slots)


class _MaskedJoint(FrameJointGroup):
    """Joints of one type that share one constrainedAxes mask."""

    @classmethod
    def groups(cls, system) -> list:
        doc = system.loaded.document
        by_mask: dict[tuple, list[int]] = {}
        for i, o in enumerate(doc.objects):
            if o.objectType == cls.OBJECT_TYPE:
                by_mask.setdefault(tuple(o.constrainedAxes), []).append(i)
        return [cls(system, objects, mask) for mask, objects in by_mask.items()]

    def __init__(self, system, objects: list[int], mask: tuple):
        self.rows, self.slots = self.mask_rows(mask)
        self.mask = mask
        super().__init__(system, objects)

    def row_specs(self, doc) -> tuple:
        return self.rows

    def evaluate(self, kin, velocity_level: bool):
        if not self.rows:  # nothing constrained: the joint only has outputs
            return np.zeros((self.size, 0)), np.zeros((self.size, 0, 14))
        return super().evaluate(kin, velocity_level)

    def full(self, lam: np.ndarray) -> np.ndarray:
        """The multipliers of one joint (rows, its rows) in Exudyn's slots (0 for free axes)."""
        out = np.zeros(lam.shape[:-1] + (len(self.mask),))
        out[..., list(self.slots)] = lam
        return out


class JointSpherical(_MaskedJoint):
    OBJECT_TYPE = "JointSpherical"

    @staticmethod
    def mask_rows(mask):
        return tuple(("tg", k) for k in range(3) if mask[k]), tuple(k for k in range(3) if mask[k])

    def output(self, kin, k: int, var: str, lam: np.ndarray, motion_force: np.ndarray):
        if var == "Displacement":
            return kin.pos[:, self.m1[k]] - kin.pos[:, self.m0[k]]
        if var == "Force":
            return self.full(lam)
        return self.frame_output(kin, k, var)


class JointGeneric(_MaskedJoint):
    OBJECT_TYPE = "JointGeneric"
    mask_rows = staticmethod(_generic_rows)

    def output(self, kin, k: int, var: str, lam: np.ndarray, motion_force: np.ndarray):
        if var == "ForceLocal":
            force = self.full(lam)[:, :3]
            if all(self.mask[:3]):
                force = matvec(self.joint_frame(kin, k, 0).swapaxes(-1, -2), force)
            return force
        if var == "TorqueLocal":
            return self.full(lam)[:, 3:]
        return self.frame_output(kin, k, var)


ITEMS = (ItemType(S.ObjectJointSpherical, "constraint", ("Position", "Velocity", "Displacement", "Force"),
                  JointSpherical, markers="position", explicit="refuse", exudyn_multipliers=3),
         ItemType(S.ObjectJointGeneric, "constraint", ROT_OUTPUTS, JointGeneric, markers="rigid", explicit="refuse",
                  exudyn_multipliers=6))
