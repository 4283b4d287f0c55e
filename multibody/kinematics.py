"""The kinematics that items read: frames and markers at one solver state, or at many rows of
states at once (sensors), as filled by kernels.kinematics."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .kernels import Kin

ROW_ARRAYS = Kin._fields  # the arrays of a Kinematics, in the order of kernels.Kin


@dataclass
class Kinematics:
    """Everything the items read at one (q, v): frames and markers, global coordinates. Sensors
    hold many states at once: then every array (and t, a) has a leading row axis."""
    t: float | np.ndarray
    q: np.ndarray  # extended by the dummy slot
    v: np.ndarray
    theta: np.ndarray  # (nF,4) Euler parameters of every frame
    theta_t: np.ndarray
    fA: np.ndarray  # (nF,3,3)
    fG: np.ndarray  # (nF,3,4), zero for frames without rotation coordinates
    fGbar: np.ndarray
    fpos: np.ndarray
    fvel: np.ndarray
    fomega: np.ndarray  # global angular velocity
    pos: np.ndarray  # markers (nm,3)
    rot: np.ndarray  # (nm,3,3) marker frame (A times localHT rotation)
    vel: np.ndarray
    omega: np.ndarray  # global: A_m ω_m
    Jpos: np.ndarray  # (nm,3,7) position Jacobian on the marker's 7 columns
    Jrot: np.ndarray  # (nm,3,7) rotation Jacobian (global angular velocity directions)
    omega_local: np.ndarray  # (nm,3) ω_m, the marker's angular velocity in its own frame
    a: np.ndarray | None = None  # the iterate's accelerations, for acceleration-level motions

    def arrays(self) -> Kin:
        """The arrays for the kernels."""
        return Kin(self.q, self.v, self.theta, self.theta_t, self.fA, self.fG, self.fGbar, self.fpos, self.fvel,
                   self.fomega, self.pos, self.rot, self.vel, self.omega, self.Jpos, self.Jrot, self.omega_local)


def empty_kinematics(t, n2: int, nF: int, nm: int, rows: tuple = ()) -> Kinematics:
    """Unfilled arrays for n2 coordinates, nF frames and nm markers, with leading axes `rows`."""
    shapes = ((n2 + 1,), (n2 + 1,), (nF, 4), (nF, 4), (nF, 3, 3), (nF, 3, 4), (nF, 3, 4), (nF, 3), (nF, 3), (nF, 3),
              (nm, 3), (nm, 3, 3), (nm, 3), (nm, 3), (nm, 3, 7), (nm, 3, 7), (nm, 3))
    return Kinematics(t, *(np.empty(rows + shape) for shape in shapes))

