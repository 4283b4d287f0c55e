"""Assembling and factorizing the Newton matrix: dense LU for small systems, sparse LU
(SuperLU via scipy.sparse) once the system grows, on the system's fixed sparsity pattern.

scipy is imported where it is used: a small dynamic model's run never needs it here, and
scipy.sparse costs ~0.07 s of a cold `mbserve run`."""
from __future__ import annotations

import warnings

import numpy as np

from .. import kernels

DENSE_LU_MAX_UNKNOWNS = 120  # measured crossover of LAPACK vs SuperLU on the chain models


class SingularMatrix(Exception):
    def __init__(self, columns: list[int]):
        self.columns = columns
        super().__init__("singular system matrix")


class Factorization:
    def __init__(self, system, values: np.ndarray, extra: tuple | None = None):
        """`values` on the system's pattern; `extra` = (rows, cols, values) added to it."""
        import scipy.linalg as sla
        import scipy.sparse as sp
        import scipy.sparse.linalg as spla
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
            self._getrs = sla.lapack.dgetrs
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
            x = self._getrs(*self.lu, rhs)[0]  # LAPACK directly: lu_solve's checks cost more than the solve
        else:
            x = kernels.lu_solve_csc(rhs, *self.lu)
        if not np.isfinite(x).all():
            raise SingularMatrix([])
        return x


def dependent_columns(A: np.ndarray | None) -> list[int]:
    """Columns that are (numerically) linear combinations of others: the unknowns to blame."""
    if A is None or not np.all(np.isfinite(A)):
        return []
    import scipy.linalg as sla
    _, r, perm = sla.qr(A, pivoting=True, mode="economic")
    d = np.abs(np.diag(r))
    rank = int(np.sum(d > 1e-10 * max(d.max(), 1e-300)))
    return sorted(int(c) for c in perm[rank:])


def sparse_analysis(n: int, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray) -> dict[str, np.ndarray]:
    """For the compiled sparse LU (alpha_kernel.LinearSystem): SuperLU's pivot order for this matrix
    (COLAMD columns, partial pivoting; SingularMatrix if it finds none), the matrix's entries mapped
    to their places in A' (the matrix in that order, CSC), and the patterns of A''s L and U in that
    order. The patterns come from factorizing A''s pattern with random values without pivoting,
    so that no value that happens to be zero now hides a structural nonzero."""
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla
    A = sp.csc_matrix((vals, (rows, cols)), shape=(n, n))
    try:
        lu = spla.splu(A, permc_spec="COLAMD", options={"SymmetricMode": False})
    except RuntimeError:
        raise SingularMatrix([]) from None
    perm_r, perm_c = lu.perm_r.astype(np.int64), lu.perm_c.astype(np.int64)
    places, slot = np.unique(perm_c[cols] * n + perm_r[rows], return_inverse=True)  # column-major in A'
    Ai = places % n
    Ap = np.searchsorted(places // n, np.arange(n + 1))
    pattern = sp.csc_matrix((np.random.default_rng(0).uniform(1.0, 2.0, len(places)), Ai, Ap), shape=(n, n))
    try:
        symbolic = spla.splu(pattern, permc_spec="NATURAL", diag_pivot_thresh=0.0, options={"SymmetricMode": True})
    except RuntimeError:
        raise SingularMatrix([]) from None
    if not (np.array_equal(symbolic.perm_r, np.arange(n)) and np.array_equal(symbolic.perm_c, np.arange(n))):
        raise SingularMatrix([])  # a zero on A''s diagonal where SuperLU's own pivot was a fill-in
    L, U = sp.tril(symbolic.L, -1, format="csc"), sp.triu(symbolic.U, 1, format="csc")
    L.sort_indices()
    U.sort_indices()
    index = np.int64
    return dict(slot=slot.astype(index), Ap=Ap.astype(index), Ai=Ai.astype(index), Ax=np.zeros(len(places)),
                perm_r=perm_r, perm_c=perm_c, Lp=L.indptr.astype(index), Li=L.indices.astype(index),
                Lx=np.zeros(L.nnz), Up=U.indptr.astype(index), Ui=U.indices.astype(index), Ux=np.zeros(U.nnz),
                Ud=np.zeros(n))
