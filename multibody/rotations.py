"""Rotation kinematics, vectorized over any leading axes (items, rows), as Exudyn evaluates it.

Euler parameters θ = [θ0, θ1, θ2, θ3] (θ0 scalar) are used unnormalized, like Exudyn does.
"""
from __future__ import annotations

import numpy as np


def skew(v: np.ndarray) -> np.ndarray:
    """(...,3) -> (...,3,3) with skew(a) b = a x b."""
    s = np.zeros(v.shape[:-1] + (3, 3))
    s[..., 0, 1], s[..., 0, 2] = -v[..., 2], v[..., 1]
    s[..., 1, 0], s[..., 1, 2] = v[..., 2], -v[..., 0]
    s[..., 2, 0], s[..., 2, 1] = -v[..., 1], v[..., 0]
    return s


def ep_rotation(t: np.ndarray) -> np.ndarray:
    """A(θ) = I + 2 θ0 θ̃v + 2 θ̃v θ̃v, (...,4) -> (...,3,3)."""
    t0, t1, t2, t3 = t[..., 0], t[..., 1], t[..., 2], t[..., 3]
    a = np.empty(t.shape[:-1] + (3, 3))
    a[..., 0, 0] = 1 - 2 * (t2 * t2 + t3 * t3)
    a[..., 1, 1] = 1 - 2 * (t1 * t1 + t3 * t3)
    a[..., 2, 2] = 1 - 2 * (t1 * t1 + t2 * t2)
    a[..., 0, 1] = 2 * (t1 * t2 - t0 * t3)
    a[..., 1, 0] = 2 * (t1 * t2 + t0 * t3)
    a[..., 0, 2] = 2 * (t1 * t3 + t0 * t2)
    a[..., 2, 0] = 2 * (t1 * t3 - t0 * t2)
    a[..., 1, 2] = 2 * (t2 * t3 - t0 * t1)
    a[..., 2, 1] = 2 * (t2 * t3 + t0 * t1)
    return a


def rotation_z(phi) -> np.ndarray:
    """The rotation by φ about z (a planar node's frame), φ (...) -> (...,3,3)."""
    phi = np.asarray(phi, float)
    c, s = np.cos(phi), np.sin(phi)
    a = np.zeros(phi.shape + (3, 3))
    a[..., 0, 0], a[..., 0, 1], a[..., 1, 0], a[..., 1, 1], a[..., 2, 2] = c, -s, s, c, 1.0
    return a


def rxyz_rotation(phi) -> np.ndarray:
    """A = Rx(φ0) Ry(φ1) Rz(φ2) of Tait-Bryan angles (Exudyn's RotXYZ2RotationMatrix)."""
    c0, s0, c1, s1 = np.cos(phi[0]), np.sin(phi[0]), np.cos(phi[1]), np.sin(phi[1])
    c2, s2 = np.cos(phi[2]), np.sin(phi[2])
    return np.array([[c1 * c2, -c1 * s2, s1],
                     [s0 * s1 * c2 + c0 * s2, -s0 * s1 * s2 + c0 * c2, -s0 * c1],
                     [-c0 * s1 * c2 + s0 * s2, c0 * s1 * s2 + s0 * c2, c0 * c1]])


def rotation_vector_matrix(v) -> np.ndarray:
    """A = exp(ν̃) of a rotation vector (Exudyn's RotationVector2RotationMatrix: above 2π its coefficients take the
    angle modulo 2π, as kernels._rotation_vector_matrix)."""
    v = np.asarray(v, float)
    angle = float(np.linalg.norm(v))
    if angle == 0.0:
        return np.eye(3)
    if angle > 2 * np.pi:
        angle = float(np.fmod(angle, 2 * np.pi))
    s = skew(v)
    half = np.sin(0.5 * angle)
    return np.eye(3) + (np.sin(angle) / angle) * s + (2 * half * half / (angle * angle)) * (s @ s)


def rotation_vector(r: np.ndarray) -> np.ndarray:
    """The rotation vector (angle in [0, π]) of a rotation matrix (3,3): log on SO(3) via Euler parameters, as
    Exudyn's LogSO3Vector."""
    ep = rotation_to_ep(r)
    norm = float(np.linalg.norm(ep[1:]))
    return np.zeros(3) if norm == 0.0 else 2 * np.arctan2(norm, ep[0]) * ep[1:] / norm


def rxyz_g_t_rates(phi: np.ndarray, phi_t: np.ndarray) -> np.ndarray:
    """Ġ φ̇ of Tait-Bryan angles (Exudyn's RotXYZ2G_t times the rates; α = G φ̈ + Ġ φ̇), over rows (...,3+)."""
    t0, t1, t2 = phi_t[..., 0], phi_t[..., 1], phi_t[..., 2]
    c0, s0, c1, s1 = np.cos(phi[..., 0]), np.sin(phi[..., 0]), np.cos(phi[..., 1]), np.sin(phi[..., 1])
    return np.stack([t1 * c1 * t2, -t0 * s0 * t1 + (t1 * s0 * s1 - t0 * c0 * c1) * t2,
                     t0 * c0 * t1 + (-t0 * c1 * s0 - t1 * c0 * s1) * t2], axis=-1)


def rotation_to_ep(r: np.ndarray) -> np.ndarray:
    """Unit Euler parameters of a rotation matrix (3,3) (Shepperd's method, θ0 >= 0)."""
    tr = np.trace(r)
    k = int(np.argmax([tr, r[0, 0], r[1, 1], r[2, 2]]))
    if k == 0:
        s = 2.0 * np.sqrt(1.0 + tr)
        ep = [0.25 * s, (r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s]
    else:
        i, j, m = k - 1, k % 3, (k + 1) % 3
        s = 2.0 * np.sqrt(1.0 + r[i, i] - r[j, j] - r[m, m])
        ep = [0.0] * 4
        ep[0] = (r[m, j] - r[j, m]) / s
        ep[1 + i] = 0.25 * s
        ep[1 + j] = (r[j, i] + r[i, j]) / s
        ep[1 + m] = (r[m, i] + r[i, m]) / s
    ep = np.array(ep)
    return -ep if ep[0] < 0 else ep


def tait_bryan_xyz(r: np.ndarray) -> np.ndarray:
    """Exudyn's RotationMatrix2RotXYZ, R = Rx(φ0) Ry(φ1) Rz(φ2), (...,3,3) -> (...,3)."""
    phi1 = np.arctan2(r[..., 0, 2], np.sqrt(r[..., 1, 2] ** 2 + r[..., 2, 2] ** 2))
    regular = np.sqrt(r[..., 1, 2] ** 2 + r[..., 2, 2] ** 2) > 1e-14
    phi0 = np.where(regular, np.arctan2(-r[..., 1, 2], r[..., 2, 2]), 0.0)
    phi2 = np.where(regular, np.arctan2(-r[..., 0, 1], r[..., 0, 0]), np.arctan2(r[..., 1, 0], r[..., 1, 1]))
    return np.stack([phi0, phi1, phi2], axis=-1)


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b over the last axis; np.cross is ~20x slower on small arrays (axis juggling)."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    out[..., 0] = a1 * b2 - a2 * b1
    out[..., 1] = a2 * b0 - a0 * b2
    out[..., 2] = a0 * b1 - a1 * b0
    return out


def matvec(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """a x over leading axes, (...,m,n),(...,n) -> (...,m); through np.matmul, so one matrix
    gets the same round-off as a @ x."""
    return (a @ x[..., None])[..., 0]


def homogeneous_transformation(rot: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """(...,4,4) homogeneous transformations [[rot, pos], [0, 1]] (Exudyn's output: row by row)."""
    h = np.zeros(rot.shape[:-2] + (4, 4))
    h[..., :3, :3], h[..., :3, 3], h[..., 3, 3] = rot, pos, 1.0
    return h
