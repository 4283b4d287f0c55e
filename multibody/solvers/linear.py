"""Assembling and factorizing the Newton matrix: dense LU for small systems, sparse LU
(SuperLU via scipy.sparse) once the system grows, on the system's fixed sparsity pattern."""
from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .. import kernels

_getrs = sla.lapack.dgetrs
DENSE_LU_MAX_UNKNOWNS = 120  # measured crossover of LAPACK vs SuperLU on the chain models


class SingularMatrix(Exception):
    def __init__(self, columns: list[int]):
        self.columns = columns
        super().__init__("singular system matrix")


class Factorization:
    def __init__(self, system, values: np.ndarray, extra: tuple | None = None):
        """`values` on the system's pattern; `extra` = (rows, cols, values) added to it."""
        n = system.n
        self.n = n
        rows, cols = system.jac_rows, system.jac_cols
        if extra is not None:
            rows, cols, values = (np.concatenate(pair) for pair in zip((rows, cols, values), extra))
        if n <= DENSE_LU_MAX_UNKNOWNS:
            A = np.zeros((n, n))
            np.add.at(A, (rows, cols), values)
            with warnings.catch_warnings():
                warnings.simplefilter("error", sla.LinAlgWarning)
                try:
                    self.lu = sla.lu_factor(A, check_finite=True)
                except (sla.LinAlgWarning, ValueError, np.linalg.LinAlgError):
                    raise SingularMatrix(dependent_columns(A)) from None
            # a pivot at round-off level of its column: (numerically) dependent unknowns
            if not np.all(np.abs(np.diag(self.lu[0])) > 1e-13 * np.abs(A).max(axis=0)):
                raise SingularMatrix(dependent_columns(A))
            self.sparse = None
        else:
            A = sp.csc_matrix((values, (rows, cols)), shape=(n, n))
            self.sparse = A
            try:
                lu = spla.splu(A, permc_spec="COLAMD", options={"SymmetricMode": False})
            except RuntimeError:
                raise SingularMatrix(dependent_columns(A.toarray() if n < 3000 else None)) from None
            L, U = sp.tril(lu.L, -1, format="csc"), sp.triu(lu.U, 1, format="csc")
            self.lu = (lu.perm_r, lu.perm_c, L.indptr, L.indices, L.data, U.indptr, U.indices, U.data,
                       lu.U.diagonal())

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        if self.sparse is None:
            x = _getrs(*self.lu, rhs)[0]  # LAPACK directly: lu_solve's checks cost more than the solve
        else:
            x = kernels.lu_solve_csc(rhs, *self.lu)
        if not np.isfinite(x).all():
            raise SingularMatrix([])
        return x


def dependent_columns(A: np.ndarray | None) -> list[int]:
    """Columns that are (numerically) linear combinations of others: the unknowns to blame."""
    if A is None or not np.all(np.isfinite(A)):
        return []
    _, r, perm = sla.qr(A, pivoting=True, mode="economic")
    d = np.abs(np.diag(r))
    rank = int(np.sum(d > 1e-10 * max(d.max(), 1e-300)))
    return sorted(int(c) for c in perm[rank:])
