"""Compiled (numba) loops for the hot path of a time step: the stages of one residual
evaluation, the Newton update and rules, and the triangular solves of the sparse LU.

With numpy every stage costs tens of small array calls (~1 µs each) however small the model,
and temporaries of (n,3,3) stacks when it is large; these loops do one pass per stage over the
items instead. They take and return the same arrays as the numpy code they replaced (the
callers keep the interfaces of system.py and items/), mostly in the same summation order, so
results change at round-off level only. `cache=True` keeps the machine code on disk across
processes: compiling them (with solvers/alpha_kernel.py) takes ~40 s of CPU once, loading them ~1 s per process.
"""
from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
from numba import types
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic, overload
from numba.np.arrayobj import populate_array

from .programs import eval_program, motion_residual

# error_model="numpy": a division by zero gives inf/nan as in numpy (the solvers check finiteness). _nrt=True
# explicitly: a kernel whose flag is unset inherits its first caller's, so one first called from a jit_noalloc
# kernel would be compiled, and cached, without the runtime that its allocations need.
jit = numba.njit(cache=True, nogil=True, boundscheck=False, error_model="numpy", _nrt=True)
# For the stages that take the model's named tuples: a compiled call increfs and decrefs every
# array of its tuple arguments (~100 atomic operations per call), which cost far more than a
# small model's arithmetic; inlined into their caller they cost nothing.
jit_inline = numba.njit(cache=True, nogil=True, boundscheck=False, error_model="numpy", inline="always")
# For kernels that allocate nothing: compiled without numba's runtime (NRT), so taking arrays out of the
# model's tuples or passing them on emits no reference-count calls. Borrowed arrays (kernels.borrowed) make
# those calls cheap but not free: a call per array each time, ~2/3 of a sphere contact's force evaluation.
jit_noalloc = numba.njit(cache=True, nogil=True, boundscheck=False, error_model="numpy", _nrt=False)


def _without_meminfo(context, builder, ty, value):
    if isinstance(ty, types.Array):
        array = context.make_array(ty)(context, builder, value)
        array.meminfo = cgutils.get_null_value(array.meminfo.type)
        return array._getvalue()
    if isinstance(ty, types.BaseTuple):
        for i, element in enumerate(ty):
            value = builder.insert_value(
                value, _without_meminfo(context, builder, element, builder.extract_value(value, i)), i)
    return value


@intrinsic
def borrowed(typingctx, value):
    """`value` (an array, or a tuple of arrays and tuples) with each array's memory-info pointer null:
    the same data, but NRT does not count its references. Every compiled call, copy or unpacking of
    a tuple increfs and decrefs each of its arrays with an atomic instruction; for the model's ~100
    arrays that cost most of a small model's step. Only for arrays that something else keeps alive
    (the caller's) for as long as the borrowed copy is used."""
    def codegen(context, builder, signature, args):
        return _without_meminfo(context, builder, signature.args[0], args[0])
    return value(value), codegen


def _row_axis_type(ty):
    if isinstance(ty, types.Array):
        return ty.copy(ndim=ty.ndim + 1, layout="C" if ty.layout == "C" else "A")
    return types.NamedTuple([_row_axis_type(t) for t in ty], ty.instance_class)


def _with_row_axis(context, builder, ty, rty, value):
    if isinstance(ty, types.Array):
        src, dst = context.make_array(ty)(context, builder, value), context.make_array(rty)(context, builder)
        one = context.get_constant(types.intp, 1)
        shape, strides = cgutils.unpack_tuple(builder, src.shape), cgutils.unpack_tuple(builder, src.strides)
        populate_array(dst, data=src.data, shape=cgutils.pack_array(builder, [one] + shape),
                       strides=cgutils.pack_array(builder, [builder.mul(src.nitems, src.itemsize)] + strides),
                       itemsize=src.itemsize, meminfo=src.meminfo, parent=src.parent)
        return dst._getvalue()
    out = cgutils.get_null_value(context.get_value_type(rty))
    for i, (t, rt) in enumerate(zip(ty, rty)):
        out = builder.insert_value(out, _with_row_axis(context, builder, t, rt, builder.extract_value(value, i)), i)
    return out


@intrinsic
def with_row_axis(typingctx, value):
    """`value` (an array, or a NamedTuple of arrays) as views with a leading axis of length 1, without a copy or a
    check: one state for the kernels written for many rows (kinematics_of_rows)."""
    def codegen(context, builder, signature, args):
        result = _with_row_axis(context, builder, signature.args[0], signature.return_type, args[0])
        return impl_ret_borrowed(context, builder, signature.return_type, result)
    return _row_axis_type(value)(value), codegen


NO_ROTATION3, TAIT_BRYAN, ROTATION_VECTOR = 0, 1, 2  # Model.f_rotation


class Model(NamedTuple):
    """The compiled model the kernels read: frozen arrays (System builds it once per model), all
    C-contiguous (one compiled signature for every model). Frames are the nodes', then the grounds';
    a column index n2 is the dummy slot (ground markers, absent coordinates)."""
    fcols: np.ndarray  # (nF,7) the coordinates of each frame
    fpos_ref: np.ndarray  # (nF,3) reference position
    ftheta_ref: np.ndarray  # (nF,4) reference Euler parameters
    f_is_ep: np.ndarray  # (nF,) the frame has Euler-parameter rotation coordinates
    f_is_2d: np.ndarray  # (nF,) a planar frame: columns x, y, -, φ (its θ is [φ, 0, 0, 0])
    f_rotation: np.ndarray  # (nF,) the parametrization of a frame's three rotation coordinates (columns x, y, z, r0,
    # r1, r2, -; θ = [r0, r1, r2, 0]): TAIT_BRYAN, ROTATION_VECTOR; NO_ROTATION3 on the other frames
    f_R0: np.ndarray  # (nF,3,3) a turned frame's constant rotation R0 (the referenceRotation of a Mass1D or
    # RotationalMass1D on a Node1D): position p_ref + R0 u, A = R0 A(θ), ω = R0 G θ̇ (kernels._turn_frame)
    f_turned: np.ndarray  # (nF,) the frame is turned by f_R0
    lie_cols: np.ndarray  # (nL,3) the rotation columns of the rotation-vector (Lie group) nodes
    lie_ref: np.ndarray  # (nL,3) their reference rotation vectors
    mframe: np.ndarray  # (nm,) each marker's frame
    mlocal: np.ndarray  # (nm,3) marker position in its frame
    mrot: np.ndarray  # (nm,3,3) marker rotation in its frame (localHT)
    mrot_identity: np.ndarray  # (nm,)
    mcols: np.ndarray  # (nm,7) the marker's frame columns
    # rigid bodies
    b_frame: np.ndarray
    b_cols: np.ndarray
    b_mass: np.ndarray
    b_com: np.ndarray
    b_inertia: np.ndarray  # (nb,3,3)
    # bodies with a constant diagonal mass matrix: mass points diag(m, m, m) on x, y, z, planar
    # rigid bodies diag(m, m, J) on x, y, φ
    p_cols: np.ndarray  # (np,3)
    p_mass: np.ndarray  # (np,3)
    # ObjectGenericODE2 (items/generic_ode2.py): constant M, K, D as triplets (row, column, value) on the
    # coordinates, and the constant force vector (column, value); lhs M q̈ + K q + D q̇ - f. The mass triplets
    # are every body's constant mass matrix (System.constant_mass: also the beams')
    g_mr: np.ndarray
    g_mc: np.ndarray
    g_mv: np.ndarray
    g_kr: np.ndarray
    g_kc: np.ndarray
    g_kv: np.ndarray
    g_dr: np.ndarray
    g_dc: np.ndarray
    g_dv: np.ndarray
    g_fc: np.ndarray
    g_fv: np.ndarray
    # loads: l_kind 0 a force (on the marker's position), 1 a torque (on its rotation), 2 a coordinate
    # load (l_vec[k,0] on coordinate l_coord[k]); body-fixed vectors are rotated by the marker frame
    l_kind: np.ndarray
    l_markers: np.ndarray
    l_coord: np.ndarray
    l_vec: np.ndarray  # (nl,3)
    l_weight: np.ndarray  # the body's mass for MassProportional, else 1
    l_fixed: np.ndarray
    # spring-dampers
    s_m0: np.ndarray
    s_m1: np.ndarray
    s_k: np.ndarray
    s_d: np.ndarray
    s_L0: np.ndarray
    s_fa: np.ndarray
    s_voff: np.ndarray
    s_active: np.ndarray
    # Cartesian spring-dampers
    c_m0: np.ndarray
    c_m1: np.ndarray
    c_k: np.ndarray  # (nc,3)
    c_d: np.ndarray
    c_offset: np.ndarray
    c_active: np.ndarray
    # coordinate spring-dampers (coordinates cs_cols, the dummy slot on a ground node)
    cs_cols: np.ndarray  # (ncs,2)
    cs_k: np.ndarray
    cs_d: np.ndarray
    cs_offset: np.ndarray
    cs_active: np.ndarray
    # Euler-parameter normalization
    e_frame: np.ndarray
    e_cols: np.ndarray
    e_ae: np.ndarray  # (ne,1) its λ index
    # frame joints of all types in one table, rows padded to the longest (items/frame_joint.py)
    j_m0: np.ndarray
    j_m1: np.ndarray
    j_R0: np.ndarray
    j_R1: np.ndarray
    j_kinds: np.ndarray  # (nj,nr) row kind: 0 "t", 1 "tg", 2 "r", 3 "t1"
    j_ri: np.ndarray
    j_rj: np.ndarray
    j_nrows: np.ndarray  # (nj,) rows of each joint
    j_cols: np.ndarray  # (nj,14)
    j_ae: np.ndarray  # (nj,nr)
    j_active: np.ndarray
    # coordinate constraints factor·q1 - q0 - offset (velocity forms, and velocity-level items)
    cc_cols: np.ndarray  # (ncc,2)
    cc_factor: np.ndarray
    cc_offset: np.ndarray
    cc_vlevel: np.ndarray  # velocityLevel: the row is a velocity-level constraint at every index
    cc_ae: np.ndarray  # (ncc,1)
    cc_active: np.ndarray
    # prescribed motions (items/motion_constraints.py): the joint of each (markers, frames, revolute
    # or prismatic), its row's level (0 position, 1 velocity, 2 acceleration), λ index and columns,
    # and the laws' programs (programs.ProgramSet; three per motion) with their scratch size
    mo_m0: np.ndarray
    mo_m1: np.ndarray
    mo_R0: np.ndarray  # (nmo,3,3)
    mo_R1: np.ndarray
    mo_revolute: np.ndarray
    mo_levels: np.ndarray
    mo_ae: np.ndarray  # (nmo,)
    mo_cols: np.ndarray  # (nmo,14)
    mo_code: np.ndarray
    mo_consts: np.ndarray
    mo_start: np.ndarray
    mo_work_size: np.ndarray  # (1,)
    # user functions as expressions (user_function_programs.py): one program set; per load and
    # force item its first program, or -1 for none
    uf_code: np.ndarray
    uf_consts: np.ndarray
    uf_start: np.ndarray
    uf_work_size: np.ndarray  # (1,)
    l_uf: np.ndarray
    s_uf: np.ndarray
    c_uf: np.ndarray
    cs_uf: np.ndarray
    # the λ rows of velocity-level constraints (rolling discs, velocityLevel coordinate constraints):
    # their initial-acceleration rows are 0, as in Exudyn, which leaves out their ∂g/∂q q̇ there
    ae_velocity: np.ndarray  # (nae,) bool
    # item types with kernels of their own (ItemKernels): one data tuple per such type of the registry
    x_constraints: tuple
    x_forces: tuple


class FrameModel(NamedTuple):
    """The arrays of kernels.Model that the kinematics read. A compiled call types and unboxes every array of its
    arguments: with the whole Model (~100 arrays) that cost more than mini's rows themselves."""
    fcols: np.ndarray
    fpos_ref: np.ndarray
    ftheta_ref: np.ndarray
    f_is_ep: np.ndarray
    f_is_2d: np.ndarray
    f_rotation: np.ndarray
    f_R0: np.ndarray
    f_turned: np.ndarray
    mframe: np.ndarray
    mlocal: np.ndarray
    mrot: np.ndarray
    mrot_identity: np.ndarray


class Kin(NamedTuple):
    """The kinematics of one state (System.Kinematics' arrays; q, v with the dummy slot)."""
    q: np.ndarray
    v: np.ndarray
    theta: np.ndarray  # (nF,4) the frame's rotation coordinates (Euler parameters, [r0, r1, r2, 0] or [φ, 0, 0, 0])
    theta_t: np.ndarray
    fA: np.ndarray  # (nF,3,3)
    fG: np.ndarray  # (nF,3,4) ω = G θ̇ (a planar frame: e_z in column 0)
    fGbar: np.ndarray
    fpos: np.ndarray
    fvel: np.ndarray
    fomega: np.ndarray
    pos: np.ndarray  # (nm,3)
    rot: np.ndarray  # (nm,3,3)
    vel: np.ndarray
    omega: np.ndarray  # (nm,3) global: A_m ω_m (Exudyn's orientation times angularVelocityLocal)
    Jpos: np.ndarray  # (nm,3,7)
    Jrot: np.ndarray
    omega_local: np.ndarray  # (nm,3) ω_m, in the marker's frame (Exudyn's markerData.angularVelocityLocal)


class Work(NamedTuple):
    """What residual writes (rq, rg; g and C of the EP normalization and of the joint table) and
    its scratch, made once per solve: an allocation costs about as much as a small item's arithmetic."""
    rq: np.ndarray  # (n2,) M a - f + C_qᵀ λ
    rg: np.ndarray  # (nae,)
    eg: np.ndarray  # (ne,1)
    eC: np.ndarray  # (ne,1,7)
    jg: np.ndarray  # (nj,nr)
    jC: np.ndarray  # (nj,nr,14)
    ccg: np.ndarray  # (ncc,1)
    ccC: np.ndarray  # (ncc,1,2)
    f: np.ndarray  # (n2,) scratch
    tmp: np.ndarray
    cf: np.ndarray
    s7: np.ndarray  # (2,7)
    mats: np.ndarray  # (2,3,3)
    vecs: np.ndarray  # (5,3)
    mo_g: np.ndarray  # (nmo,) the motions' rows
    mo_C: np.ndarray  # (nmo,14)
    mo_q: np.ndarray  # (4,nmo) joint coordinates, rates, accelerations; scratch
    mo_Cs: np.ndarray  # (nmo,14) scratch
    mo_x: np.ndarray  # (3,) a law's variables
    mo_work: np.ndarray  # the programs' scratch
    mo_bad: np.ndarray  # (1,) int: -1, or the first motion whose law is undefined (programs.motion_residual)
    mo_kin: "Kin"  # the kinematics at q ± εv for the motions' u̇_j (empty without motions)
    uf_x: np.ndarray  # (7,) a user function's variables
    uf_work: np.ndarray  # the user functions' scratch
    x_scratch: np.ndarray  # the compiled item types' F, dq/dv or g/C (compiled_scratch_size)


class Entries(NamedTuple):
    """The Newton matrix as the assembly writes it: entry k adds vals[k] at (rows[k], cols[k]), in an
    order fixed by the model (alpha_kernel._assemble), so that the dense matrix sums them in the same
    order every time and the sparse LU maps each entry to its place once (solvers.linear.SparseAnalysis).
    count[0] is the number of entries written, also past the arrays' length (the caller then resizes)."""
    rows: np.ndarray  # (capacity,) int64
    cols: np.ndarray  # (capacity,) int64
    vals: np.ndarray  # (capacity,)
    count: np.ndarray  # (1,) int64


@jit_inline
def add_entry(E, r, c, value):
    k = E.count[0]
    if k < E.vals.shape[0]:
        E.rows[k], E.cols[k], E.vals[k] = r, c, value
    E.count[0] = k + 1


# ---------------------------------------------------------------------------- compiled item types
# An item type with its own kernels (items/README.md) plugs into the fused residual, applied_forces
# and alpha_kernel._assemble without an edit there. Its items are one small NamedTuple of arrays (its
# `data` class; Model.x_constraints / Model.x_forces hold one per compiled type of the registry) and
# its kernels are ordinary @jit functions of its module. Why this mechanism: numba cannot call a
# function chosen at run time without giving up inlining and the on-disk cache, but an @overload picks
# each element's kernel by its NamedTuple class while compiling. The loops over the tuple take its
# head and pass its tail to their own overload again (a tuple of several data classes is heterogeneous,
# and numba's literal_unroll does not compile inside an overload), so they unroll while compiling. So the dispatch costs nothing at run time,
# the callers stay cached (per registry, not per model: the tuples hold every compiled type, empty
# when a model has none), and a model without compiled types compiles the same code as before.
class ItemKernels(NamedTuple):
    """The kernels of a compiled item type (items.declaration.ItemType.kernels). Its data has `cols`
    (n, ncols), int64: the coordinates its items act on, n2 (the dummy slot) for none; a constraint
    type's also `ae` (n, R) its λ indices, `levels` (n, R) 0 position / 1 velocity / 2 acceleration level,
    `active` (n,) bool.
        constraint: evaluate(data, kin, velocity_level, g (n,R), C (n,R,ncols)) writes the rows (index 2:
            their time derivatives, or at every index for velocity-level rows) and C = ∂g/∂q over cols.
        force: evaluate(data, kin, F (n,ncols)) writes the applied generalized forces (right-hand side)
            on cols; jacobians(data, kin, dq, dv (n,ncols,ncols)) their derivatives ∂F/∂q, ∂F/∂v.
    A force type with data coordinates (Exudyn's NodeGenericData, fixed during Newton) has them in its data as
    `dc` (n, k) and `dc_start` (their values at the step's start), and post_newton(data, kin) -> (error, step):
    after a converged Newton at kin, sets dc and returns its items' largest discontinuous error (alpha_kernel.run_steps
    repeats the step's Newton while that exceeds the tolerance) and their smallest recommended step size (Exudyn's
    recommendedStepSize, e.g. the time to a contact; negative: none)."""
    data: type
    evaluate: object
    jacobians: object = None
    post_newton: object = None


ITEM_KERNELS: dict[type, ItemKernels] = {}  # data class -> its type's kernels (filled by items.register)


def _kernel_of(data, which: str):
    kernels = ITEM_KERNELS.get(getattr(data, "instance_class", None))
    return None if kernels is None else getattr(kernels, which)


def _item_rows(data, kin, velocity_level, g, C):
    """A compiled constraint type's rows (its ItemKernels.evaluate, chosen while compiling)."""


def _item_forces(data, kin, F):
    """A compiled force type's generalized forces (its ItemKernels.evaluate)."""


def _item_force_jacobians(data, kin, dq, dv):
    """A compiled force type's force derivatives (its ItemKernels.jacobians)."""


_OVERLOAD = dict(jit_options=dict(nogil=True, boundscheck=False, error_model="numpy", _nrt=True))  # as jit
# The data-coordinate loops of the step loop (post-Newton, save/restore, sensor rows) allocate nothing: without
# the runtime, their recursion over the registry's tuple (a new tail forces[1:] at each level) counts no
# references, which cost ~10 % of a sphere contact's solve (perf: NRT_incref/NRT_decref).
_OVERLOAD_NOALLOC = dict(jit_options=dict(nogil=True, boundscheck=False, error_model="numpy", _nrt=False))


@overload(_item_rows, inline="always", **_OVERLOAD)  # no wrapper call between loop and kernel
def _item_rows_typed(data, kin, velocity_level, g, C):
    kernel = _kernel_of(data, "evaluate")
    if kernel is not None:
        return lambda data, kin, velocity_level, g, C: kernel(data, kin, velocity_level, g, C)


@overload(_item_forces, inline="always", **_OVERLOAD)  # no wrapper call between loop and kernel
def _item_forces_typed(data, kin, F):
    kernel = _kernel_of(data, "evaluate")
    if kernel is not None:
        return lambda data, kin, F: kernel(data, kin, F)


@overload(_item_force_jacobians, inline="always", **_OVERLOAD)  # no wrapper call between loop and kernel
def _item_force_jacobians_typed(data, kin, dq, dv):
    kernel = _kernel_of(data, "jacobians")
    if kernel is not None:
        return lambda data, kin, dq, dv: kernel(data, kin, dq, dv)


def _item_post_newton(data, kin):
    """A compiled force type's post-Newton step (ItemKernels.post_newton; 0.0 for a type without)."""


def _item_keep_data(data, restore):
    """A compiled force type's data coordinates: saved at the step's start, or restored (restore)."""


@overload(_item_post_newton, **_OVERLOAD_NOALLOC)
def _item_post_newton_typed(data, kin):
    kernel = _kernel_of(data, "post_newton")
    if kernel is None:
        return lambda data, kin: (0.0, -1.0)
    return lambda data, kin: kernel(data, kin)


def _item_write_data(data, out):
    """A compiled force type's data coordinates into out (flat); returns how many (0 for a type without)."""


@overload(_item_write_data, **_OVERLOAD_NOALLOC)
def _item_write_data_typed(data, out):
    if _kernel_of(data, "post_newton") is None:
        return lambda data, out: 0

    def impl(data, out):
        n, k = data.dc.shape
        for i in range(n):
            for j in range(k):
                out[i * k + j] = data.dc[i, j]
        return n * k
    return impl


@overload(_item_keep_data, **_OVERLOAD_NOALLOC)
def _item_keep_data_typed(data, restore):
    if _kernel_of(data, "post_newton") is None:
        return lambda data, restore: None

    def impl(data, restore):  # loops: a slice assignment may need a temporary, which needs the runtime
        source, target = (data.dc_start, data.dc) if restore else (data.dc, data.dc_start)
        n, k = source.shape
        for i in range(n):
            for j in range(k):
                target[i, j] = source[i, j]
    return impl


def compiled_post_newton(forces, kin):
    """(the largest discontinuous error, the smallest recommended step size or -1) of the compiled force types'
    post-Newton steps (their data coordinates set from kin); (0.0, -1.0) without such types."""


def compiled_write_data(forces, out):
    """out = the data coordinates of every compiled force type's items, in the order of `forces` (sensor rows)."""


def compiled_keep_data(forces, restore):
    """Save (at a step's start) or restore (after a failed step) every compiled force type's data coordinates."""


def compiled_data_items(forces):
    """The number of items with data coordinates (0: no discontinuous iteration)."""


@overload(compiled_post_newton, **_OVERLOAD_NOALLOC)
def _compiled_post_newton(forces, kin):
    if len(forces) == 0:
        return lambda forces, kin: (0.0, -1.0)

    def impl(forces, kin):
        error, step = _item_post_newton(forces[0], kin)
        rest_error, rest_step = compiled_post_newton(forces[1:], kin)
        if step < 0.0 or (0.0 <= rest_step < step):
            step = rest_step
        return max(error, rest_error), step
    return impl


@overload(compiled_write_data, **_OVERLOAD_NOALLOC)
def _compiled_write_data(forces, out):
    if len(forces) == 0:
        return lambda forces, out: None

    def impl(forces, out):
        compiled_write_data(forces[1:], out[_item_write_data(forces[0], out):])
    return impl


@overload(compiled_keep_data, **_OVERLOAD_NOALLOC)
def _compiled_keep_data(forces, restore):
    if len(forces) == 0:
        return lambda forces, restore: None

    def impl(forces, restore):
        _item_keep_data(forces[0], restore)
        compiled_keep_data(forces[1:], restore)
    return impl


@overload(compiled_data_items, **_OVERLOAD_NOALLOC)
def _compiled_data_items(forces):
    if len(forces) == 0:
        return lambda forces: 0
    n = 0 if _kernel_of(forces[0], "post_newton") is None else 1
    return lambda forces: n * forces[0].cols.shape[0] + compiled_data_items(forces[1:])


def compiled_scratch_size(forces, constraints):
    """The length of Work.x_scratch: the largest of the compiled types' F (n, ncols), dq and dv (n, ncols, ncols),
    g (n, R) and C (n, R, ncols), which the kernels below take as views of it: the step loop allocates nothing
    (alpha_kernel.run_steps runs without numba's runtime)."""


def compiled_forces(forces, kin, f, scratch):
    """f += the generalized forces of every compiled force type (forces: Model.x_forces; scratch: Work.x_scratch)."""


def compiled_rows(constraints, kin, lam, velocity_level, rq, rg, scratch):
    """rq += C_qᵀλ and rg = g (λ for inactive items) of every compiled constraint type."""


def compiled_matrix(E, forces, constraints, kin, scratch, k_factor, d_factor, level_factor, velocity_factor,
                    acceleration_factor):
    """Entries E of −(k_factor ∂F/∂q + d_factor ∂F/∂v) of the compiled force types and C_qᵀ, factor·C_q and
    the (λ, λ) diagonal of inactive items of the compiled constraint types (as alpha_kernel._assemble)."""


@overload(compiled_scratch_size, **_OVERLOAD)
def _compiled_scratch_size(forces, constraints):
    if len(forces):
        def impl(forces, constraints):
            n, nc = forces[0].cols.shape
            return max(2 * n * nc * nc, compiled_scratch_size(forces[1:], constraints))
        return impl
    if len(constraints):
        def impl(forces, constraints):
            (n, nr), nc = constraints[0].ae.shape, constraints[0].cols.shape[1]
            return max(n * nr * (1 + nc), compiled_scratch_size(forces, constraints[1:]))
        return impl
    return lambda forces, constraints: 0


@jit_inline
def _zeroed(scratch, size):
    """The first `size` entries of scratch, set to 0."""
    for i in range(size):
        scratch[i] = 0.0
    return scratch[:size]


@overload(compiled_forces, inline="always", **_OVERLOAD)  # a call passes every type's arrays
def _compiled_forces(forces, kin, f, scratch):
    if len(forces) == 0:
        return lambda forces, kin, f, scratch: None

    def impl(forces, kin, f, scratch):
        n2, data = f.shape[0], forces[0]
        n, nc = data.cols.shape
        if n:
            F = _zeroed(scratch, n * nc).reshape((n, nc))
            _item_forces(data, kin, F)
            for k in range(n):
                for c in range(nc):
                    if data.cols[k, c] < n2:
                        f[data.cols[k, c]] += F[k, c]
        compiled_forces(forces[1:], kin, f, scratch)
    return impl


@overload(compiled_rows, inline="always", **_OVERLOAD)
def _compiled_rows(constraints, kin, lam, velocity_level, rq, rg, scratch):
    if len(constraints) == 0:
        return lambda constraints, kin, lam, velocity_level, rq, rg, scratch: None

    def impl(constraints, kin, lam, velocity_level, rq, rg, scratch):
        n2, data = rq.shape[0], constraints[0]
        (n, nr), nc = data.ae.shape, data.cols.shape[1]
        if n:
            g, C = scratch[:n * nr].reshape((n, nr)), scratch[n * nr:n * nr * (1 + nc)].reshape((n, nr, nc))
            _item_rows(data, kin, velocity_level, g, C)
            for k in range(n):
                for c in range(nc):
                    col = data.cols[k, c]
                    if col < n2 and data.active[k]:
                        s = 0.0
                        for r in range(nr):
                            s += C[k, r, c] * lam[data.ae[k, r]]
                        rq[col] += s
                for r in range(nr):
                    rg[data.ae[k, r]] = g[k, r] if data.active[k] else lam[data.ae[k, r]]
        compiled_rows(constraints[1:], kin, lam, velocity_level, rq, rg, scratch)
    return impl


@overload(compiled_matrix, **_OVERLOAD)
def _compiled_matrix(E, forces, constraints, kin, scratch, k_factor, d_factor, level_factor, velocity_factor,
                     acceleration_factor):
    if len(forces) == 0 and len(constraints) == 0:
        return lambda E, forces, constraints, kin, scratch, k_factor, d_factor, level_factor, velocity_factor, \
            acceleration_factor: None

    def impl(E, forces, constraints, kin, scratch, k_factor, d_factor, level_factor, velocity_factor,
             acceleration_factor):
        n2 = kin.q.shape[0] - 1
        compiled_force_matrix(E, forces, kin, n2, scratch, k_factor, d_factor)
        compiled_constraint_matrix(E, constraints, kin, n2, scratch, level_factor, velocity_factor,
                                   acceleration_factor)
    return impl


def compiled_force_matrix(E, forces, kin, n2, scratch, k_factor, d_factor):
    """E += −(k_factor ∂F/∂q + d_factor ∂F/∂v) of the compiled force types."""


def compiled_constraint_matrix(E, constraints, kin, n2, scratch, level_factor, velocity_factor, acceleration_factor):
    """E += C_qᵀ, factor·C_q (by each row's level) and the (λ, λ) diagonal of inactive items."""


@overload(compiled_force_matrix, **_OVERLOAD)
def _compiled_force_matrix(E, forces, kin, n2, scratch, k_factor, d_factor):
    if len(forces) == 0:
        return lambda E, forces, kin, n2, scratch, k_factor, d_factor: None

    def impl(E, forces, kin, n2, scratch, k_factor, d_factor):
        data = forces[0]
        n, nc = data.cols.shape
        if n:
            size = n * nc * nc
            dq = _zeroed(scratch, 2 * size)[:size].reshape((n, nc, nc))
            dv = scratch[size:2 * size].reshape((n, nc, nc))
            _item_force_jacobians(data, kin, dq, dv)
            for k in range(n):
                for i in range(nc):
                    r = data.cols[k, i]
                    for j in range(nc):
                        c = data.cols[k, j]
                        if r < n2 and c < n2:
                            add_entry(E, r, c, -(k_factor * dq[k, i, j] + d_factor * dv[k, i, j]))
        compiled_force_matrix(E, forces[1:], kin, n2, scratch, k_factor, d_factor)
    return impl


@overload(compiled_constraint_matrix, **_OVERLOAD)
def _compiled_constraint_matrix(E, constraints, kin, n2, scratch, level_factor, velocity_factor, acceleration_factor):
    if len(constraints) == 0:
        return lambda E, constraints, kin, n2, scratch, level_factor, velocity_factor, acceleration_factor: None

    def impl(E, constraints, kin, n2, scratch, level_factor, velocity_factor, acceleration_factor):
        data = constraints[0]
        (n, nr), nc = data.ae.shape, data.cols.shape[1]
        if n:
            g, C = scratch[:n * nr].reshape((n, nr)), scratch[n * nr:n * nr * (1 + nc)].reshape((n, nr, nc))
            _item_rows(data, kin, False, g, C)  # C does not depend on the level
            for k in range(n):
                act = 1.0 if data.active[k] else 0.0
                for r in range(nr):
                    row = n2 + data.ae[k, r]
                    level = data.levels[k, r]
                    factor = level_factor if level == 0 else (velocity_factor if level == 1 else acceleration_factor)
                    for j in range(nc):
                        c = data.cols[k, j]
                        if c < n2:
                            add_entry(E, c, row, C[k, r, j] * act)
                            add_entry(E, row, c, C[k, r, j] * act * factor)
                    add_entry(E, row, row, 1.0 - act)
        compiled_constraint_matrix(E, constraints[1:], kin, n2, scratch, level_factor, velocity_factor,
                                   acceleration_factor)
    return impl


# The frame helpers write A, G, Ḡ of row r, frame f of (R, nF, 3, 3|4) arrays by index: a view per frame costs
# two atomic reference counts (numba's), more than the arithmetic.
@jit_inline
def _ep_frame(t0, t1, t2, t3, A, G, Gb, r, f):
    """A(θ) (rotations.ep_rotation), G = 2[-θv | θ0 I + θ̃v] and Ḡ = 2[-θv | θ0 I - θ̃v]."""
    A[r, f, 0, 0] = 1 - 2 * (t2 * t2 + t3 * t3)
    A[r, f, 1, 1] = 1 - 2 * (t1 * t1 + t3 * t3)
    A[r, f, 2, 2] = 1 - 2 * (t1 * t1 + t2 * t2)
    A[r, f, 0, 1] = 2 * (t1 * t2 - t0 * t3)
    A[r, f, 1, 0] = 2 * (t1 * t2 + t0 * t3)
    A[r, f, 0, 2] = 2 * (t1 * t3 + t0 * t2)
    A[r, f, 2, 0] = 2 * (t1 * t3 - t0 * t2)
    A[r, f, 1, 2] = 2 * (t2 * t3 - t0 * t1)
    A[r, f, 2, 1] = 2 * (t2 * t3 + t0 * t1)
    G[r, f, 0, 0], G[r, f, 0, 1], G[r, f, 0, 2], G[r, f, 0, 3] = -2 * t1, 2 * t0, -2 * t3, 2 * t2
    G[r, f, 1, 0], G[r, f, 1, 1], G[r, f, 1, 2], G[r, f, 1, 3] = -2 * t2, 2 * t3, 2 * t0, -2 * t1
    G[r, f, 2, 0], G[r, f, 2, 1], G[r, f, 2, 2], G[r, f, 2, 3] = -2 * t3, -2 * t2, 2 * t1, 2 * t0
    Gb[r, f, 0, 0], Gb[r, f, 0, 1], Gb[r, f, 0, 2], Gb[r, f, 0, 3] = -2 * t1, 2 * t0, 2 * t3, -2 * t2
    Gb[r, f, 1, 0], Gb[r, f, 1, 1], Gb[r, f, 1, 2], Gb[r, f, 1, 3] = -2 * t2, -2 * t3, 2 * t0, 2 * t1
    Gb[r, f, 2, 0], Gb[r, f, 2, 1], Gb[r, f, 2, 2], Gb[r, f, 2, 3] = -2 * t3, 2 * t2, -2 * t1, 2 * t0


@jit_inline
def _planar_frame(phi, A, G, Gb, r, f):
    """A = rotation by φ about z; G = Ḡ = e_z on the φ column (a planar frame's θ is [φ, 0, 0, 0])."""
    c, s = np.cos(phi), np.sin(phi)
    for i in range(3):
        for j in range(3):
            A[r, f, i, j] = 0.0
        for j in range(4):
            G[r, f, i, j] = 0.0
            Gb[r, f, i, j] = 0.0
    A[r, f, 0, 0], A[r, f, 0, 1], A[r, f, 1, 0], A[r, f, 1, 1], A[r, f, 2, 2] = c, -s, s, c, 1.0
    G[r, f, 2, 0] = 1.0
    Gb[r, f, 2, 0] = 1.0


@jit_inline
def _rxyz_frame(p0, p1, p2, A, G, Gb, r, f):
    """A = Rx(φ0) Ry(φ1) Rz(φ2), G and Ḡ (Exudyn's RotXYZ2RotationMatrix, RotXYZ2G, RotXYZ2Glocal) of a
    Tait-Bryan frame (θ = [φ0, φ1, φ2, 0]); the fourth columns of G, Ḡ are 0."""
    c0, s0, c1, s1, c2, s2 = np.cos(p0), np.sin(p0), np.cos(p1), np.sin(p1), np.cos(p2), np.sin(p2)
    A[r, f, 0, 0], A[r, f, 0, 1], A[r, f, 0, 2] = c1 * c2, -c1 * s2, s1
    A[r, f, 1, 0], A[r, f, 1, 1], A[r, f, 1, 2] = s0 * s1 * c2 + c0 * s2, -s0 * s1 * s2 + c0 * c2, -s0 * c1
    A[r, f, 2, 0], A[r, f, 2, 1], A[r, f, 2, 2] = -c0 * s1 * c2 + s0 * s2, c0 * s1 * s2 + s0 * c2, c0 * c1
    G[r, f, 0, 0], G[r, f, 0, 1], G[r, f, 0, 2], G[r, f, 0, 3] = 1.0, 0.0, s1, 0.0
    G[r, f, 1, 0], G[r, f, 1, 1], G[r, f, 1, 2], G[r, f, 1, 3] = 0.0, c0, -c1 * s0, 0.0
    G[r, f, 2, 0], G[r, f, 2, 1], G[r, f, 2, 2], G[r, f, 2, 3] = 0.0, s0, c0 * c1, 0.0
    Gb[r, f, 0, 0], Gb[r, f, 0, 1], Gb[r, f, 0, 2], Gb[r, f, 0, 3] = c1 * c2, s2, 0.0, 0.0
    Gb[r, f, 1, 0], Gb[r, f, 1, 1], Gb[r, f, 1, 2], Gb[r, f, 1, 3] = -c1 * s2, c2, 0.0, 0.0
    Gb[r, f, 2, 0], Gb[r, f, 2, 1], Gb[r, f, 2, 2], Gb[r, f, 2, 3] = s1, 0.0, 1.0, 0.0


@jit_inline
def _rotation_vector_matrix(v0, v1, v2, A, r, f):
    """A = exp(ν̃) of a rotation vector ν (Exudyn's RotationVector2RotationMatrix, its angle taken modulo 2π
    in the sine terms as there)."""
    angle = np.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
    for i in range(3):
        for j in range(3):
            A[r, f, i, j] = 1.0 if i == j else 0.0
    if angle == 0.0:
        return
    if angle > 2 * np.pi:
        angle = np.fmod(angle, 2 * np.pi)
    a = np.sin(angle) / angle
    s2 = np.sin(0.5 * angle)
    b = 2.0 * s2 * s2 / (angle * angle)
    # ν̃ ν̃ = ν νᵀ - |ν|² I
    n2 = v0 * v0 + v1 * v1 + v2 * v2
    A[r, f, 0, 0] += b * (v0 * v0 - n2)
    A[r, f, 1, 1] += b * (v1 * v1 - n2)
    A[r, f, 2, 2] += b * (v2 * v2 - n2)
    A[r, f, 0, 1] += -a * v2 + b * v0 * v1
    A[r, f, 1, 0] += a * v2 + b * v0 * v1
    A[r, f, 0, 2] += a * v1 + b * v0 * v2
    A[r, f, 2, 0] += -a * v1 + b * v0 * v2
    A[r, f, 1, 2] += -a * v0 + b * v1 * v2
    A[r, f, 2, 1] += a * v0 + b * v1 * v2


@jit_inline
def _rotation_vector_frame(v0, v1, v2, A, G, Gb, r, f):
    """A = exp(ν̃), G = A and Ḡ = I (CNodeRigidBodyRotVecLG: the rates are the body-axis angular velocity ω̄) of a
    rotation-vector frame (θ = [ν0, ν1, ν2, 0]); the fourth columns of G, Ḡ are 0."""
    _rotation_vector_matrix(v0, v1, v2, A, r, f)
    for i in range(3):
        for j in range(3):
            G[r, f, i, j] = A[r, f, i, j]
            Gb[r, f, i, j] = 1.0 if i == j else 0.0
        G[r, f, i, 3] = 0.0
        Gb[r, f, i, 3] = 0.0


@jit_inline
def _rotation3_frame(kind, x0, x1, x2, A, G, Gb, r, f):
    """A, G, Ḡ of a frame with three rotation coordinates x, by its Model.f_rotation."""
    if kind == TAIT_BRYAN:
        _rxyz_frame(x0, x1, x2, A, G, Gb, r, f)
    else:
        _rotation_vector_frame(x0, x1, x2, A, G, Gb, r, f)


@jit_inline
def _sinc(x):
    return np.sin(x) / x if x != 0.0 else 1.0


@jit_inline
def compose_rotation_vectors(a0, a1, a2, b0, b1, b2):
    """log(exp(ã) exp(b̃)) of rotation vectors a, b by their half-angle (quaternion) forms, as Exudyn's
    CompositionRotationVector (an angle in [0, 2π])."""
    h1 = 0.5 * np.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
    h2 = 0.5 * np.sqrt(b0 * b0 + b1 * b1 + b2 * b2)
    c0, c1, s0, s1 = np.cos(h1), np.cos(h2), _sinc(h1), _sinc(h2)
    x = c0 * c1 - 0.25 * s0 * s1 * (a0 * b0 + a1 * b1 + a2 * b2)
    w = np.pi - 2.0 * np.arctan2(x, np.sqrt(abs(1.0 - x * x)))
    r0 = s0 * c1 * a0 + c0 * s1 * b0 + 0.5 * s0 * s1 * (a1 * b2 - a2 * b1)
    r1 = s0 * c1 * a1 + c0 * s1 * b1 + 0.5 * s0 * s1 * (a2 * b0 - a0 * b2)
    r2 = s0 * c1 * a2 + c0 * s1 * b2 + 0.5 * s0 * s1 * (a0 * b1 - a1 * b0)
    n = np.sqrt(r0 * r0 + r1 * r1 + r2 * r2)
    if n == 0.0:
        return 0.0, 0.0, 0.0
    return w * r0 / n, w * r1 / n, w * r2 / n


@jit_inline
def texp_inverse_times(o0, o1, o2, x0, x1, x2):
    """T⁻¹(Ω) x, the inverse tangent operator of exp on SO(3) (Exudyn's TExpSO3Inv, series below |Ω| = 0.02)."""
    phi2 = o0 * o0 + o1 * o1 + o2 * o2
    if phi2 == 0.0:
        return x0, x1, x2
    phi = np.sqrt(phi2)
    if phi <= 0.02:
        c = 1.0 / 12 + phi2 / 720 + phi2 * phi2 / 30240
        b = 1.0 - c * phi2
    else:
        e = 0.5 * phi
        b = e * np.cos(e) / np.sin(e)
        c = (1.0 - b) / phi2
    d = c * (o0 * x0 + o1 * x1 + o2 * x2)
    return (b * x0 + 0.5 * (o1 * x2 - o2 * x1) + d * o0, b * x1 + 0.5 * (o2 * x0 - o0 * x2) + d * o1,
            b * x2 + 0.5 * (o0 * x1 - o1 * x0) + d * o2)


@jit_noalloc
def lie_compose(q, d, sign, lie_cols, lie_ref):
    """q's rotation-vector coordinates ν - ν_ref := log(exp(ν) exp(sign·d)) - ν_ref per Lie group node (the
    composition update of Exudyn's solvers; d on q's columns)."""
    for k in range(lie_cols.shape[0]):
        c0, c1, c2 = lie_cols[k, 0], lie_cols[k, 1], lie_cols[k, 2]
        r0, r1, r2 = lie_ref[k, 0], lie_ref[k, 1], lie_ref[k, 2]
        n0, n1, n2 = compose_rotation_vectors(q[c0] + r0, q[c1] + r1, q[c2] + r2, sign * d[c0], sign * d[c1],
                                              sign * d[c2])
        q[c0], q[c1], q[c2] = n0 - r0, n1 - r1, n2 - r2


@jit_noalloc
def lie_group_prediction(q, v, ap, ahat, vs, qs, h, cq, bh2, xi, lie_cols, lie_ref):
    """The generalized-α predictor of the Lie group nodes' rotations (CSolverImplicitSecondOrderTimeInt with
    lieGroupSimplifiedKinematicRelations = false): the increment Δ = h v + cq a + βh² â in the Lie algebra,
    turned by (I + xi ω̃̄*) with the predicted ω̄* (xi = -h β/(2γ)), composed onto q_n: qs's rotation columns."""
    for k in range(lie_cols.shape[0]):
        c0, c1, c2 = lie_cols[k, 0], lie_cols[k, 1], lie_cols[k, 2]
        d0 = (h * v[c0] + cq * ap[c0]) + bh2 * ahat[c0]
        d1 = (h * v[c1] + cq * ap[c1]) + bh2 * ahat[c1]
        d2 = (h * v[c2] + cq * ap[c2]) + bh2 * ahat[c2]
        w0, w1, w2 = xi * vs[c0], xi * vs[c1], xi * vs[c2]
        e0 = (d0 - w2 * d1) + w1 * d2
        e1 = (w2 * d0 + d1) - w0 * d2
        e2 = (-w1 * d0 + w0 * d1) + d2
        r0, r1, r2 = lie_ref[k, 0], lie_ref[k, 1], lie_ref[k, 2]
        n0, n1, n2 = compose_rotation_vectors(q[c0] + r0, q[c1] + r1, q[c2] + r2, e0, e1, e2)
        qs[c0], qs[c1], qs[c2] = n0 - r0, n1 - r1, n2 - r2


@jit_inline
def rxyz_gbar_t_rates(th, tt):
    """Ḡ̇ φ̇ of a Tait-Bryan frame (RotXYZ2Glocal_t times the rates): ω̄̇ = Ḡ φ̈ + Ḡ̇ φ̇."""
    c1, s1, c2, s2 = np.cos(th[1]), np.sin(th[1]), np.cos(th[2]), np.sin(th[2])
    return ((-tt[2] * c1 * s2 - tt[1] * c2 * s1) * tt[0] + tt[2] * c2 * tt[1],
            (tt[1] * s2 * s1 - tt[2] * c2 * c1) * tt[0] - tt[2] * s2 * tt[1],
            tt[1] * c1 * tt[0])


@jit_inline
def _turn_frame(R0, p_ref, cols, qx, vx, fpos, fvel, fA, fG, fomega, r, f):
    """Frame f turned by its constant R0 = R0[f]: position p_ref + R0 u (u its x, y, z coordinates), velocity R0 u̇,
    A = R0 A(θ), G = R0 G(θ), ω = R0 ω (Ḡ and ω̄ unchanged): Exudyn's Mass1D (A_ref (u + b) + p_ref) and
    RotationalMass1D (A_ref A_z(φ) b + p_ref), their referenceRotation R0."""
    u0, u1, u2 = qx[r, cols[f, 0]], qx[r, cols[f, 1]], qx[r, cols[f, 2]]
    w0, w1, w2 = vx[r, cols[f, 0]], vx[r, cols[f, 1]], vx[r, cols[f, 2]]
    o0, o1, o2 = fomega[r, f, 0], fomega[r, f, 1], fomega[r, f, 2]
    for i in range(3):
        fpos[r, f, i] = p_ref[f, i] + (R0[f, i, 0] * u0 + R0[f, i, 1] * u1 + R0[f, i, 2] * u2)
        fvel[r, f, i] = R0[f, i, 0] * w0 + R0[f, i, 1] * w1 + R0[f, i, 2] * w2
        fomega[r, f, i] = R0[f, i, 0] * o0 + R0[f, i, 1] * o1 + R0[f, i, 2] * o2
    for j in range(3):
        a0, a1, a2 = fA[r, f, 0, j], fA[r, f, 1, j], fA[r, f, 2, j]
        for i in range(3):
            fA[r, f, i, j] = R0[f, i, 0] * a0 + R0[f, i, 1] * a1 + R0[f, i, 2] * a2
    for j in range(4):
        g0, g1, g2 = fG[r, f, 0, j], fG[r, f, 1, j], fG[r, f, 2, j]
        for i in range(3):
            fG[r, f, i, j] = R0[f, i, 0] * g0 + R0[f, i, 1] * g1 + R0[f, i, 2] * g2


@jit_inline
def kinematics(q, v, model, kin):
    """Frames of nodes and grounds, then markers (System.kinematics), into kin (allocated by the
    caller: returning 16 arrays from a compiled function costs more than the loops); q, v without
    the dummy slot, kin.q, kin.v with it. kinematics_of_rows of one row."""
    kinematics_of_rows(with_row_axis(q), with_row_axis(v), model, with_row_axis(kin))


@jit_inline
def kinematics_of_rows(q, v, model, kin):
    """kinematics of every row r of q, v (R, n2) into row r of kin's arrays (leading axis R): the sensors' rows, or
    one state (kinematics). Every array is taken out of its tuple once and indexed [r, ...]: a row or frame view
    costs two atomic reference counts (numba's), more than the arithmetic."""
    fcols, fpos_ref, ftheta_ref, f_is_ep, f_is_2d, f_rotation = model.fcols, model.fpos_ref, model.ftheta_ref, \
        model.f_is_ep, model.f_is_2d, model.f_rotation
    f_R0, f_turned = model.f_R0, model.f_turned
    mframe, mlocal, mrot, mrot_identity = model.mframe, model.mlocal, model.mrot, model.mrot_identity
    qx, vx, theta, theta_t, fA, fG, fGbar = kin.q, kin.v, kin.theta, kin.theta_t, kin.fA, kin.fG, kin.fGbar
    fpos, fvel, fomega, pos, rot, vel, omega, Jpos, Jrot, omega_local = kin.fpos, kin.fvel, kin.fomega, kin.pos, \
        kin.rot, kin.vel, kin.omega, kin.Jpos, kin.Jrot, kin.omega_local
    R, n2 = q.shape[0], q.shape[1]
    nF, nm = fcols.shape[0], mframe.shape[0]
    for r in range(R):
        for i in range(n2):
            qx[r, i] = q[r, i]
            vx[r, i] = v[r, i]
        qx[r, n2] = 0.0
        vx[r, n2] = 0.0
        for f in range(nF):
            for i in range(3):
                fpos[r, f, i] = fpos_ref[f, i] + qx[r, fcols[f, i]]
                fvel[r, f, i] = vx[r, fcols[f, i]]
            for i in range(4):
                theta[r, f, i] = ftheta_ref[f, i] + qx[r, fcols[f, 3 + i]]
                theta_t[r, f, i] = vx[r, fcols[f, 3 + i]]
            if f_is_2d[f]:  # the marker Jacobians below become e_z × (A b) and e_z, and ω = [0, 0, φ̇]
                _planar_frame(theta[r, f, 0], fA, fG, fGbar, r, f)
                fomega[r, f, 0], fomega[r, f, 1], fomega[r, f, 2] = 0.0, 0.0, theta_t[r, f, 0]
                if f_turned[f]:
                    _turn_frame(f_R0, fpos_ref, fcols, qx, vx, fpos, fvel, fA, fG, fomega, r, f)
                continue
            if f_rotation[f] != NO_ROTATION3:
                _rotation3_frame(f_rotation[f], theta[r, f, 0], theta[r, f, 1], theta[r, f, 2], fA, fG, fGbar, r, f)
            else:
                _ep_frame(theta[r, f, 0], theta[r, f, 1], theta[r, f, 2], theta[r, f, 3], fA, fG, fGbar, r, f)
            if f_is_ep[f] or f_rotation[f] != NO_ROTATION3:  # G, Ḡ and ω are zero on frames without rotation
                # coordinates
                for i in range(3):
                    s = 0.0
                    for j in range(4):
                        s += fG[r, f, i, j] * theta_t[r, f, j]
                    fomega[r, f, i] = s
            else:
                for i in range(3):
                    for j in range(4):
                        fG[r, f, i, j] = 0.0
                        fGbar[r, f, i, j] = 0.0
                    fomega[r, f, i] = 0.0
            if f_turned[f]:
                _turn_frame(f_R0, fpos_ref, fcols, qx, vx, fpos, fvel, fA, fG, fomega, r, f)
        for m in range(nm):
            f = mframe[m]
            b0, b1, b2 = mlocal[m, 0], mlocal[m, 1], mlocal[m, 2]
            r0 = fA[r, f, 0, 0] * b0 + fA[r, f, 0, 1] * b1 + fA[r, f, 0, 2] * b2
            r1 = fA[r, f, 1, 0] * b0 + fA[r, f, 1, 1] * b1 + fA[r, f, 1, 2] * b2
            r2 = fA[r, f, 2, 0] * b0 + fA[r, f, 2, 1] * b1 + fA[r, f, 2, 2] * b2
            pos[r, m, 0], pos[r, m, 1], pos[r, m, 2] = fpos[r, f, 0] + r0, fpos[r, f, 1] + r1, fpos[r, f, 2] + r2
            # ω̄ = Ḡ θ̇ in body axes ([0, 0, φ̇] on a planar frame, 0 on a ground), then in the marker's frame
            u0, u1, u2 = 0.0, 0.0, 0.0
            for j in range(4):
                u0 += fGbar[r, f, 0, j] * theta_t[r, f, j]
                u1 += fGbar[r, f, 1, j] * theta_t[r, f, j]
                u2 += fGbar[r, f, 2, j] * theta_t[r, f, j]
            omega_local[r, m, 0], omega_local[r, m, 1], omega_local[r, m, 2] = u0, u1, u2
            for i in range(3):
                if not mrot_identity[m]:
                    omega_local[r, m, i] = u0 * mrot[m, 0, i] + u1 * mrot[m, 1, i] + u2 * mrot[m, 2, i]
                for j in range(3):
                    if mrot_identity[m]:
                        rot[r, m, i, j] = fA[r, f, i, j]
                    else:
                        rot[r, m, i, j] = fA[r, f, i, 0] * mrot[m, 0, j] + fA[r, f, i, 1] * mrot[m, 1, j] \
                            + fA[r, f, i, 2] * mrot[m, 2, j]
                    Jpos[r, m, i, j] = f_R0[f, i, j] if f_turned[f] else 1.0 if i == j else 0.0
                    Jrot[r, m, i, j] = 0.0
            if f_is_ep[f]:
                # Exudyn's forms on the body's axes: v = u̇ + A (ω̄ × b), ω = A ω̄, J_pos = [I | -A b̃ Ḡ]. For
                # unit Euler parameters they equal (Gθ̇) × (A b), Gθ̇ and -(A b)~ G, but index-2 constraints
                # let |θ| drift from 1, and then only these give Exudyn's solution
                c0, c1, c2 = u1 * b2 - u2 * b1, u2 * b0 - u0 * b2, u0 * b1 - u1 * b0
                for i in range(3):
                    vel[r, m, i] = fvel[r, f, i] + (fA[r, f, i, 0] * c0 + fA[r, f, i, 1] * c1 + fA[r, f, i, 2] * c2)
                    omega[r, m, i] = fA[r, f, i, 0] * u0 + fA[r, f, i, 1] * u1 + fA[r, f, i, 2] * u2
                for j in range(4):
                    g0, g1, g2 = fGbar[r, f, 0, j], fGbar[r, f, 1, j], fGbar[r, f, 2, j]
                    c0, c1, c2 = g1 * b2 - g2 * b1, g2 * b0 - g0 * b2, g0 * b1 - g1 * b0  # -b̃ Ḡ_j = Ḡ_j × b
                    for i in range(3):
                        Jpos[r, m, i, 3 + j] = fA[r, f, i, 0] * c0 + fA[r, f, i, 1] * c1 + fA[r, f, i, 2] * c2
                        Jrot[r, m, i, 3 + j] = fG[r, f, i, j]
                continue
            # planar, Tait-Bryan and rotation-vector frames (A an exact rotation) and grounds (ω = 0): ω × (A b) and
            # -(A b)~ G
            w0, w1, w2 = fomega[r, f, 0], fomega[r, f, 1], fomega[r, f, 2]
            omega[r, m, 0], omega[r, m, 1], omega[r, m, 2] = w0, w1, w2
            vel[r, m, 0] = fvel[r, f, 0] + (w1 * r2 - w2 * r1)
            vel[r, m, 1] = fvel[r, f, 1] + (w2 * r0 - w0 * r2)
            vel[r, m, 2] = fvel[r, f, 2] + (w0 * r1 - w1 * r0)
            for j in range(4):
                g0, g1, g2 = fG[r, f, 0, j], fG[r, f, 1, j], fG[r, f, 2, j]
                Jpos[r, m, 0, 3 + j] = -(-r2 * g1 + r1 * g2)
                Jpos[r, m, 1, 3 + j] = -(r2 * g0 - r0 * g2)
                Jpos[r, m, 2, 3 + j] = -(-r1 * g0 + r0 * g1)
                Jrot[r, m, 0, 3 + j], Jrot[r, m, 1, 3 + j], Jrot[r, m, 2, 3 + j] = g0, g1, g2


@jit
def _rigid_mass(A, Gb, m, b, J, M):
    """M = [[m I, -m A b̃ Ḡ], [.ᵀ, Ḡᵀ J Ḡ]] of one rigid body into M (7,7)."""
    M[:] = 0.0
    for i in range(3):
        M[i, i] = m
    # A b̃: column j of b̃ is e_j × b
    Ab = np.empty((3, 3))
    for i in range(3):
        Ab[i, 0] = A[i, 1] * b[2] - A[i, 2] * b[1]
        Ab[i, 1] = -A[i, 0] * b[2] + A[i, 2] * b[0]
        Ab[i, 2] = A[i, 0] * b[1] - A[i, 1] * b[0]
    for i in range(3):
        for j in range(4):
            s = Ab[i, 0] * Gb[0, j] + Ab[i, 1] * Gb[1, j] + Ab[i, 2] * Gb[2, j]
            M[i, 3 + j] = -m * s
            M[3 + j, i] = -m * s
    JG = np.empty((3, 4))
    for i in range(3):
        for j in range(4):
            JG[i, j] = J[i, 0] * Gb[0, j] + J[i, 1] * Gb[1, j] + J[i, 2] * Gb[2, j]
    for i in range(4):
        for j in range(4):
            M[3 + i, 3 + j] = Gb[0, i] * JG[0, j] + Gb[1, i] * JG[1, j] + Gb[2, i] * JG[2, j]


@jit
def rigid_mass_matrices(fA, fGbar, frame, mass, com, inertia):
    n = frame.shape[0]
    M = np.empty((n, 7, 7))
    for k in range(n):
        f = frame[k]
        _rigid_mass(fA[f], fGbar[f], mass[k], com[k], inertia[k], M[k])
    return M


@jit_noalloc
def rigid_mass_times_into(out, x, ar, fA, fGbar, frame, cols, mass, com, inertia, a):
    """Σ_bodies M_k a[cols_k] into out (n2; the dummy column dropped), with scratch x (7) and ar
    (>= 4), without forming M: [m a_t + Mtr a_r; Mtrᵀ a_t + Ḡᵀ J Ḡ a_r], Mtr = -m A b̃ Ḡ (zero when b = 0)."""
    n2 = out.shape[0]
    out[:] = 0.0
    for k in range(frame.shape[0]):
        f = frame[k]
        for i in range(7):
            x[i] = a[cols[k, i]] if cols[k, i] < n2 else 0.0
        for j in range(4):
            ar[j] = x[3 + j]
        w0 = fGbar[f, 0, 0] * ar[0] + fGbar[f, 0, 1] * ar[1] + fGbar[f, 0, 2] * ar[2] + fGbar[f, 0, 3] * ar[3]
        w1 = fGbar[f, 1, 0] * ar[0] + fGbar[f, 1, 1] * ar[1] + fGbar[f, 1, 2] * ar[2] + fGbar[f, 1, 3] * ar[3]
        w2 = fGbar[f, 2, 0] * ar[0] + fGbar[f, 2, 1] * ar[1] + fGbar[f, 2, 2] * ar[2] + fGbar[f, 2, 3] * ar[3]
        J = inertia[k]
        j0 = J[0, 0] * w0 + J[0, 1] * w1 + J[0, 2] * w2
        j1 = J[1, 0] * w0 + J[1, 1] * w1 + J[1, 2] * w2
        j2 = J[2, 0] * w0 + J[2, 1] * w1 + J[2, 2] * w2
        m = mass[k]
        t0, t1, t2 = m * x[0], m * x[1], m * x[2]
        b0, b1, b2 = com[k, 0], com[k, 1], com[k, 2]
        if b0 != 0.0 or b1 != 0.0 or b2 != 0.0:
            # translation: -m A (b × w); rotation: -m Ḡᵀ b̃ᵀ Aᵀ a_t = -m Ḡᵀ (Aᵀ a_t × b)
            c0, c1, c2 = b1 * w2 - b2 * w1, b2 * w0 - b0 * w2, b0 * w1 - b1 * w0
            t0 -= m * (fA[f, 0, 0] * c0 + fA[f, 0, 1] * c1 + fA[f, 0, 2] * c2)
            t1 -= m * (fA[f, 1, 0] * c0 + fA[f, 1, 1] * c1 + fA[f, 1, 2] * c2)
            t2 -= m * (fA[f, 2, 0] * c0 + fA[f, 2, 1] * c1 + fA[f, 2, 2] * c2)
            u0 = fA[f, 0, 0] * x[0] + fA[f, 1, 0] * x[1] + fA[f, 2, 0] * x[2]
            u1 = fA[f, 0, 1] * x[0] + fA[f, 1, 1] * x[1] + fA[f, 2, 1] * x[2]
            u2 = fA[f, 0, 2] * x[0] + fA[f, 1, 2] * x[1] + fA[f, 2, 2] * x[2]
            j0 -= m * (u1 * b2 - u2 * b1)
            j1 -= m * (u2 * b0 - u0 * b2)
            j2 -= m * (u0 * b1 - u1 * b0)
        x[0], x[1], x[2] = t0, t1, t2
        for j in range(4):
            x[3 + j] = fGbar[f, 0, j] * j0 + fGbar[f, 1, j] * j1 + fGbar[f, 2, j] * j2
        for i in range(7):
            if cols[k, i] < n2:
                out[cols[k, i]] += x[i]


@jit_noalloc
def _rigid_qv(A, Gb, theta, theta_t, m, b, J, rxyz, x):
    """One body's -(quadratic velocity terms) into x (7): -m A (ω̄×(ω̄×b)) and -Ḡᵀ(ω̄ × J ω̄), on a
    Tait-Bryan frame (rxyz) also the Ḡ̇ φ̇ terms (Euler parameters have none) as CObjectRigidBody's LHS:
    +m A (b × Ḡ̇ φ̇) and -Ḡᵀ J Ḡ̇ φ̇ (scalars only: this runs per body and residual)."""
    w0 = Gb[0, 0] * theta_t[0] + Gb[0, 1] * theta_t[1] + Gb[0, 2] * theta_t[2] + Gb[0, 3] * theta_t[3]
    w1 = Gb[1, 0] * theta_t[0] + Gb[1, 1] * theta_t[1] + Gb[1, 2] * theta_t[2] + Gb[1, 3] * theta_t[3]
    w2 = Gb[2, 0] * theta_t[0] + Gb[2, 1] * theta_t[1] + Gb[2, 2] * theta_t[2] + Gb[2, 3] * theta_t[3]
    c0 = w1 * b[2] - w2 * b[1]
    c1 = w2 * b[0] - w0 * b[2]
    c2 = w0 * b[1] - w1 * b[0]
    u0 = w1 * c2 - w2 * c1
    u1 = w2 * c0 - w0 * c2
    u2 = w0 * c1 - w1 * c0
    for i in range(3):
        x[i] = -m * (A[i, 0] * u0 + A[i, 1] * u1 + A[i, 2] * u2)
    Jw0 = J[0, 0] * w0 + J[0, 1] * w1 + J[0, 2] * w2
    Jw1 = J[1, 0] * w0 + J[1, 1] * w1 + J[1, 2] * w2
    Jw2 = J[2, 0] * w0 + J[2, 1] * w1 + J[2, 2] * w2
    c0 = w1 * Jw2 - w2 * Jw1
    c1 = w2 * Jw0 - w0 * Jw2
    c2 = w0 * Jw1 - w1 * Jw0
    for j in range(4):
        x[3 + j] = -(Gb[0, j] * c0 + Gb[1, j] * c1 + Gb[2, j] * c2)
    if rxyz:
        r0, r1, r2 = rxyz_gbar_t_rates(theta, theta_t)
        Jr0 = J[0, 0] * r0 + J[0, 1] * r1 + J[0, 2] * r2
        Jr1 = J[1, 0] * r0 + J[1, 1] * r1 + J[1, 2] * r2
        Jr2 = J[2, 0] * r0 + J[2, 1] * r1 + J[2, 2] * r2
        for j in range(3):
            x[3 + j] -= Gb[0, j] * Jr0 + Gb[1, j] * Jr1 + Gb[2, j] * Jr2
        c0, c1, c2 = b[1] * r2 - b[2] * r1, b[2] * r0 - b[0] * r2, b[0] * r1 - b[1] * r0
        for i in range(3):
            x[i] += m * (A[i, 0] * c0 + A[i, 1] * c1 + A[i, 2] * c2)


@jit
def rigid_quadratic_velocity(fA, fGbar, theta, theta_t, f_rotation, frame, cols, mass, com, inertia, n2):
    """-(quadratic velocity terms) of all rigid bodies, scattered on n2."""
    out = np.empty(n2)
    rigid_quadratic_velocity_into(out, np.empty(7), fA, fGbar, theta, theta_t, f_rotation, frame, cols, mass, com,
                                  inertia)
    return out


@jit_noalloc
def rigid_quadratic_velocity_into(out, x, fA, fGbar, theta, theta_t, f_rotation, frame, cols, mass, com, inertia):
    """rigid_quadratic_velocity into out (n2), with scratch x (7)."""
    n2 = out.shape[0]
    out[:] = 0.0
    for k in range(frame.shape[0]):
        f = frame[k]
        _rigid_qv(fA[f], fGbar[f], theta[f], theta_t[f], mass[k], com[k], inertia[k], f_rotation[f] == TAIT_BRYAN, x)
        for i in range(7):
            if cols[k, i] < n2:
                out[cols[k, i]] += x[i]


@jit
def rigid_quadratic_velocity_jacobians(theta, theta_t, f_rotation, frame, cols, mass, com, inertia, q, v, n2):
    """∂f/∂q and ∂f/∂v (per body, 7x7) of the quadratic velocity terms f, as Exudyn forms them
    (CSystem::JacobianODE2RHS): forward differences with step 1e-7·max(0.01, |x|), x the
    coordinate without its reference value. Only the rotation coordinates and their rates enter f
    (a planar body's φ and φ̇: its frame has no z column; three rotation coordinates: no seventh, System.fcols).
    Leaving this out changes no converged result but the Newton path: with it, modified Newton
    takes Exudyn's iterations on spinning bodies."""
    nb = frame.shape[0]
    dq, dv = np.zeros((nb, 7, 7)), np.zeros((nb, 7, 7))
    A, G, Gb = np.empty((1, 1, 3, 3)), np.empty((1, 1, 3, 4)), np.empty((1, 1, 3, 4))  # the frame helpers' row 0, frame 0
    A0, Gb0 = A[0, 0], Gb[0, 0]
    x0, x1, th, tt = np.empty(7), np.empty(7), np.empty(4), np.empty(4)
    for k in range(nb):
        f = frame[k]
        m, b, J = mass[k], com[k], inertia[k]
        planar, kind = cols[k, 2] >= n2, f_rotation[f]
        rxyz = kind == TAIT_BRYAN
        if planar:
            _planar_frame(theta[f, 0], A, G, Gb, 0, 0)
        elif kind != NO_ROTATION3:
            _rotation3_frame(kind, theta[f, 0], theta[f, 1], theta[f, 2], A, G, Gb, 0, 0)
        else:
            _ep_frame(theta[f, 0], theta[f, 1], theta[f, 2], theta[f, 3], A, G, Gb, 0, 0)
        _rigid_qv(A0, Gb0, theta[f], theta_t[f], m, b, J, rxyz, x0)
        for j in range(4):
            c = cols[k, 3 + j]
            if c >= n2:
                continue
            for wrt_rate in (True, False):
                th[:], tt[:] = theta[f], theta_t[f]
                eps = 1e-7 * max(0.01, abs(v[c] if wrt_rate else q[c]))
                if wrt_rate:
                    tt[j] += eps
                else:
                    th[j] += eps
                if planar:
                    _planar_frame(th[0], A, G, Gb, 0, 0)
                elif kind != NO_ROTATION3:
                    _rotation3_frame(kind, th[0], th[1], th[2], A, G, Gb, 0, 0)
                else:
                    _ep_frame(th[0], th[1], th[2], th[3], A, G, Gb, 0, 0)
                _rigid_qv(A0, Gb0, th, tt, m, b, J, rxyz, x1)
                D = dv if wrt_rate else dq
                for i in range(7):
                    D[k, i, 3 + j] = (x1[i] - x0[i]) / eps
    return dq, dv


@jit
def marker_loads(out, mcols, J, markers, vec, weight):
    """out[cols] += weight Jᵀ vec per load (force or torque on a marker), dummy column dropped."""
    n2 = out.shape[0]
    for k in range(markers.shape[0]):
        m = markers[k]
        for c in range(7):
            col = mcols[m, c]
            if col < n2:
                out[col] += weight[k] * (J[m, 0, c] * vec[k, 0] + J[m, 1, c] * vec[k, 1] + J[m, 2, c] * vec[k, 2])


@jit_noalloc
def add_constraint_forces(out, cols, C, lam, ae):
    """out += C_qᵀ λ of one constraint group (C (n,R,ncols)), dummy column dropped."""
    n2 = out.shape[0]
    for k in range(cols.shape[0]):
        for c in range(cols.shape[1]):
            col = cols[k, c]
            if col < n2:
                s = 0.0
                for r in range(ae.shape[1]):
                    s += C[k, r, c] * lam[ae[k, r]]
                out[col] += s


@jit_noalloc
def _cross_dot(a, b, c):
    """(a × b)·c"""
    return (a[1] * b[2] - a[2] * b[1]) * c[0] + (a[2] * b[0] - a[0] * b[2]) * c[1] + (a[0] * b[1] - a[1] * b[0]) * c[2]


@jit_noalloc
def _joint_frames(rot, pos, vel, R0, R1, p, q_, A0, A1, dp, dv):
    """Joint frames A0 = A_m0 R0, A1 = A_m1 R1 and Δp, Δv (marker 1 minus marker 0) into the given arrays."""
    for i in range(3):
        for j in range(3):
            A0[i, j] = rot[p, i, 0] * R0[0, j] + rot[p, i, 1] * R0[1, j] + rot[p, i, 2] * R0[2, j]
            A1[i, j] = rot[q_, i, 0] * R1[0, j] + rot[q_, i, 1] * R1[1, j] + rot[q_, i, 2] * R1[2, j]
        dp[i] = pos[q_, i] - pos[p, i]
        dv[i] = vel[q_, i] - vel[p, i]


@jit_noalloc
def _axis_rate(rot, omega_local, m, R, i):
    """ȧ of the joint axis a = A_m R e_i on marker m, as Exudyn forms it: A_m (ω_m × R e_i), ω_m in
    the marker's frame (equal to (A_m ω_m) × a only for unit Euler parameters)."""
    w0, w1, w2 = omega_local[m, 0], omega_local[m, 1], omega_local[m, 2]
    c0, c1, c2 = w1 * R[2, i] - w2 * R[1, i], w2 * R[0, i] - w0 * R[2, i], w0 * R[1, i] - w1 * R[0, i]
    return (rot[m, 0, 0] * c0 + rot[m, 0, 1] * c1 + rot[m, 0, 2] * c2,
            rot[m, 1, 0] * c0 + rot[m, 1, 1] * c1 + rot[m, 1, 2] * c2,
            rot[m, 2, 0] * c0 + rot[m, 2, 1] * c1 + rot[m, 2, 2] * c2)


@jit
def joint_rows(rot, pos, vel, omega_local, Jpos, Jrot, m0, m1, R0, R1, kinds, ri, rj, nrows, velocity_level):
    """(g (n,R), C (n,R,14)) of frame-joint rows (the row kinds of items/frame_joint.py): per joint k its
    first nrows[k] rows of kinds[k] (0 "t", 1 "tg", 2 "r", 3 "t1") with axis indices ri[k] (and rj[k] for "r");
    rows past nrows[k] (joints of several types in one table) are left unset."""
    n, nr = m0.shape[0], kinds.shape[1]
    g = np.empty((n, nr))
    C = np.empty((n, nr, 14))  # every row kind writes all 14 columns
    joint_rows_into(g, C, np.empty((2, 3, 3)), np.empty((5, 3)), rot, pos, vel, omega_local, Jpos, Jrot, m0, m1, R0,
                    R1, kinds, ri, rj, nrows, velocity_level)
    return g, C


@jit_noalloc
def joint_rows_into(g, C, mats, vecs, rot, pos, vel, omega_local, Jpos, Jrot, m0, m1, R0, R1, kinds, ri, rj, nrows,
                    velocity_level):
    """joint_rows into (g, C), with scratch mats (2,3,3) and vecs (5,3)."""
    A0, A1 = mats[0], mats[1]
    dp, dv, a, b, w = vecs[0], vecs[1], vecs[2], vecs[3], vecs[4]
    for k in range(m0.shape[0]):
        p, q_ = m0[k], m1[k]
        _joint_frames(rot, pos, vel, R0[k], R1[k], p, q_, A0, A1, dp, dv)
        for r in range(nrows[k]):
            kind = kinds[k, r]
            if kind == 1:
                c = ri[k, r]
                for j in range(7):
                    C[k, r, j] = -Jpos[p, c, j]
                    C[k, r, 7 + j] = Jpos[q_, c, j]
                g[k, r] = dv[c] if velocity_level else dp[c]
            elif kind == 0 or kind == 3:  # Δp along an axis a of J0 ("t") or of J1 ("t1", turning with marker 1)
                m, Af, Rf = (p, A0, R0[k]) if kind == 0 else (q_, A1, R1[k])
                for i in range(3):
                    a[i] = Af[i, ri[k, r]]
                w[0] = a[1] * dp[2] - a[2] * dp[1]
                w[1] = a[2] * dp[0] - a[0] * dp[2]
                w[2] = a[0] * dp[1] - a[1] * dp[0]
                for j in range(7):
                    c0 = -(a[0] * Jpos[p, 0, j] + a[1] * Jpos[p, 1, j] + a[2] * Jpos[p, 2, j])
                    c1 = a[0] * Jpos[q_, 0, j] + a[1] * Jpos[q_, 1, j] + a[2] * Jpos[q_, 2, j]
                    rw = w[0] * Jrot[m, 0, j] + w[1] * Jrot[m, 1, j] + w[2] * Jrot[m, 2, j]  # δa = (Γ δq) × a
                    C[k, r, j] = c0 + rw if kind == 0 else c0
                    C[k, r, 7 + j] = c1 if kind == 0 else c1 + rw
                if velocity_level:
                    a_t = _axis_rate(rot, omega_local, m, Rf, ri[k, r])
                    g[k, r] = (a[0] * dv[0] + a[1] * dv[1] + a[2] * dv[2]) \
                        + (a_t[0] * dp[0] + a_t[1] * dp[1] + a_t[2] * dp[2])
                else:
                    g[k, r] = a[0] * dp[0] + a[1] * dp[1] + a[2] * dp[2]
            else:
                for i in range(3):
                    a[i] = A0[i, ri[k, r]]
                    b[i] = A1[i, rj[k, r]]
                w[0] = a[1] * b[2] - a[2] * b[1]
                w[1] = a[2] * b[0] - a[0] * b[2]
                w[2] = a[0] * b[1] - a[1] * b[0]
                for j in range(7):
                    C[k, r, j] = w[0] * Jrot[p, 0, j] + w[1] * Jrot[p, 1, j] + w[2] * Jrot[p, 2, j]
                    C[k, r, 7 + j] = -(w[0] * Jrot[q_, 0, j] + w[1] * Jrot[q_, 1, j] + w[2] * Jrot[q_, 2, j])
                if velocity_level:
                    a_t = _axis_rate(rot, omega_local, p, R0[k], ri[k, r])
                    b_t = _axis_rate(rot, omega_local, q_, R1[k], rj[k, r])
                    g[k, r] = (a_t[0] * b[0] + a_t[1] * b[1] + a_t[2] * b[2]) \
                        + (a[0] * b_t[0] + a[1] * b_t[1] + a[2] * b_t[2])
                else:
                    g[k, r] = a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@jit
def joint_coordinates(rot, pos, vel, omega, Jpos, Jrot, m0, m1, R0, R1, revolute):
    """(q_j, u_j, C (n,14)) of the free coordinate of each joint, for one state (as
    Motions.coordinate): sliding x0ᵀΔp of a JointPrismaticX with its rate and the "t" row's
    Jacobian, or for a JointRevoluteZ the angle atan2(y0ᵀx1, x0ᵀx1), z0ᵀ(ω1 - ω0) and
    [-z0ᵀΓ0, z0ᵀΓ1]."""
    n = m0.shape[0]
    qj, uj, C = np.empty(n), np.empty(n), np.empty((n, 14))
    joint_coordinates_into(qj, uj, C, np.empty((2, 3, 3)), np.empty((5, 3)), rot, pos, vel, omega, Jpos, Jrot, m0, m1,
                           R0, R1, revolute)
    return qj, uj, C


@jit_noalloc
def joint_coordinates_into(qj, uj, C, mats, vecs, rot, pos, vel, omega, Jpos, Jrot, m0, m1, R0, R1, revolute):
    """joint_coordinates into (qj, uj, C), with scratch mats (2,3,3) and vecs (>= 4,3)."""
    A0, A1 = mats[0], mats[1]
    a, dp, dv, w = vecs[0], vecs[1], vecs[2], vecs[3]
    for k in range(m0.shape[0]):
        p, q_ = m0[k], m1[k]
        _joint_frames(rot, pos, vel, R0[k], R1[k], p, q_, A0, A1, dp, dv)
        if revolute[k]:
            cos_ = A0[0, 0] * A1[0, 0] + A0[1, 0] * A1[1, 0] + A0[2, 0] * A1[2, 0]
            sin_ = A0[0, 1] * A1[0, 0] + A0[1, 1] * A1[1, 0] + A0[2, 1] * A1[2, 0]
            qj[k] = np.arctan2(sin_, cos_)
            uj[k] = A0[0, 2] * (omega[q_, 0] - omega[p, 0]) + A0[1, 2] * (omega[q_, 1] - omega[p, 1]) \
                + A0[2, 2] * (omega[q_, 2] - omega[p, 2])
            for j in range(7):
                C[k, j] = -(A0[0, 2] * Jrot[p, 0, j] + A0[1, 2] * Jrot[p, 1, j] + A0[2, 2] * Jrot[p, 2, j])
                C[k, 7 + j] = A0[0, 2] * Jrot[q_, 0, j] + A0[1, 2] * Jrot[q_, 1, j] + A0[2, 2] * Jrot[q_, 2, j]
            continue
        for i in range(3):
            a[i] = A0[i, 0]
        w[0] = a[1] * dp[2] - a[2] * dp[1]
        w[1] = a[2] * dp[0] - a[0] * dp[2]
        w[2] = a[0] * dp[1] - a[1] * dp[0]
        for j in range(7):
            C[k, j] = -(a[0] * Jpos[p, 0, j] + a[1] * Jpos[p, 1, j] + a[2] * Jpos[p, 2, j]) \
                + (w[0] * Jrot[p, 0, j] + w[1] * Jrot[p, 1, j] + w[2] * Jrot[p, 2, j])
            C[k, 7 + j] = a[0] * Jpos[q_, 0, j] + a[1] * Jpos[q_, 1, j] + a[2] * Jpos[q_, 2, j]
        qj[k] = a[0] * dp[0] + a[1] * dp[1] + a[2] * dp[2]
        uj[k] = (a[0] * dv[0] + a[1] * dv[1] + a[2] * dv[2]) + _cross_dot(omega[p], a, dp)


@jit_noalloc
def _spring(dp, dv, k, d, L0, fa, voff, e):
    """(L, f) of a spring-damper and its direction into e (SpringDampers._geometry and scalar_force)."""
    L = np.sqrt(dp[0] * dp[0] + dp[1] * dp[1] + dp[2] * dp[2])
    e[:] = 0.0
    if L > 0:
        for i in range(3):
            e[i] = dp[i] / L
    else:
        vn = np.sqrt(dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2])
        if vn > 0:
            for i in range(3):
                e[i] = dv[i] / vn
    f = k * (L - L0) + d * ((e[0] * dv[0] + e[1] * dv[1] + e[2] * dv[2]) - voff) + fa
    return L, f


@jit_noalloc
def _spring_uf(p, t, dp, dv, k, d, L0, fa, voff, e, uf):
    """(L, f, ∂f/∂L, ∂f/∂L̇) of a spring-damper, f from its user function's programs p, p+1, p+2
    (uf = (code, consts, start, x, work)) at deltaL = L - L0, deltaL_t = eᵀΔv - v_off, or
    k(L - L0) + d(eᵀΔv - v_off) + f_a with derivatives k, d when p < 0."""
    L, f = _spring(dp, dv, k, d, L0, fa, voff, e)
    if p < 0:
        return L, f, k, d
    code, consts, start, x, work = uf
    x[0], x[1], x[2] = t, L - L0, (e[0] * dv[0] + e[1] * dv[1] + e[2] * dv[2]) - voff
    return L, eval_program(code, consts, start, p, x, work), eval_program(code, consts, start, p + 1, x, work), \
        eval_program(code, consts, start, p + 2, x, work)


@jit
def spring_forces(t, pos, vel, Jpos, mcols, m0, m1, k, d, L0, fa, voff, active, n2, p_uf, uf):
    """Generalized forces +J0ᵀ(f e), -J1ᵀ(f e) of all spring-dampers, scattered on n2 (p_uf: the
    first program of each one's user function or -1; uf: _spring_uf's programs and scratch)."""
    out = np.empty(n2)
    spring_forces_into(out, np.empty((3, 3)), t, pos, vel, Jpos, mcols, m0, m1, k, d, L0, fa, voff, active, p_uf, uf)
    return out


@jit_noalloc
def spring_forces_into(out, vecs, t, pos, vel, Jpos, mcols, m0, m1, k, d, L0, fa, voff, active, p_uf, uf):
    """spring_forces into out (n2), with scratch vecs (3,3)."""
    n2 = out.shape[0]
    out[:] = 0.0
    dp, dv, e = vecs[0], vecs[1], vecs[2]
    for i in range(m0.shape[0]):
        if not active[i]:
            continue
        p, q_ = m0[i], m1[i]
        for c in range(3):
            dp[c] = pos[q_, c] - pos[p, c]
            dv[c] = vel[q_, c] - vel[p, c]
        _, f, _, _ = _spring_uf(p_uf[i], t, dp, dv, k[i], d[i], L0[i], fa[i], voff[i], e, uf)
        F0, F1, F2 = f * e[0], f * e[1], f * e[2]
        for j in range(7):
            col = mcols[p, j]
            if col < n2:
                out[col] += Jpos[p, 0, j] * F0 + Jpos[p, 1, j] * F1 + Jpos[p, 2, j] * F2
            col = mcols[q_, j]
            if col < n2:
                out[col] -= Jpos[q_, 0, j] * F0 + Jpos[q_, 1, j] * F1 + Jpos[q_, 2, j] * F2


@jit
def spring_jacobians(t, pos, vel, Jpos, m0, m1, k, d, L0, fa, voff, active, p_uf, uf):
    """∂f/∂q, ∂f/∂v (n,14,14) of the spring-damper forces, marker Jacobians held fixed:
    -Jdᵀ K Jd and -Jdᵀ D Jd with Jd = [-J0, J1],
    K = e (k e + d P Δv / L)ᵀ + (f/L) P, D = d e eᵀ, P = I - e eᵀ; with a user function
    k = ∂f/∂deltaL and d = ∂f/∂deltaL_t at the state."""
    n = m0.shape[0]
    dq = np.zeros((n, 14, 14))
    dvv = np.zeros((n, 14, 14))
    dp = np.empty(3)
    dv = np.empty(3)
    e = np.empty(3)
    Jd = np.empty((3, 14))
    K = np.empty((3, 3))
    D = np.empty((3, 3))
    P = np.empty((3, 3))
    KJ = np.empty((3, 14))
    DJ = np.empty((3, 14))
    for i in range(n):
        if not active[i]:
            continue
        p, q_ = m0[i], m1[i]
        for c in range(3):
            dp[c] = pos[q_, c] - pos[p, c]
            dv[c] = vel[q_, c] - vel[p, c]
            for j in range(7):
                Jd[c, j] = -Jpos[p, c, j]
                Jd[c, 7 + j] = Jpos[q_, c, j]
        L, f, ki, di = _spring_uf(p_uf[i], t, dp, dv, k[i], d[i], L0[i], fa[i], voff[i], e, uf)
        invL = 1.0 / L if L > 0 else 0.0
        for a in range(3):
            for b in range(3):
                P[a, b] = (1.0 if a == b else 0.0) - e[a] * e[b]
        for b in range(3):
            dvP = dv[0] * P[0, b] + dv[1] * P[1, b] + dv[2] * P[2, b]
            for a in range(3):
                K[a, b] = e[a] * (ki * e[b] + di * dvP * invL) + f * invL * P[a, b]
                D[a, b] = di * e[a] * e[b]
        for a in range(3):
            for j in range(14):
                KJ[a, j] = K[a, 0] * Jd[0, j] + K[a, 1] * Jd[1, j] + K[a, 2] * Jd[2, j]
                DJ[a, j] = D[a, 0] * Jd[0, j] + D[a, 1] * Jd[1, j] + D[a, 2] * Jd[2, j]
        for r in range(14):
            for c in range(14):
                dq[i, r, c] = -(Jd[0, r] * KJ[0, c] + Jd[1, r] * KJ[1, c] + Jd[2, r] * KJ[2, c])
                dvv[i, r, c] = -(Jd[0, r] * DJ[0, c] + Jd[1, r] * DJ[1, c] + Jd[2, r] * DJ[2, c])
    return dq, dvv


@jit
def ep_normalization(theta, theta_t, frame, velocity_level):
    """(g (n,1), C (n,1,7)) of θᵀθ - 1 (index 2: 2θᵀθ̇) per Euler-parameter node."""
    n = frame.shape[0]
    g, C = np.empty((n, 1)), np.empty((n, 1, 7))
    ep_normalization_into(g, C, theta, theta_t, frame, velocity_level)
    return g, C


@jit_noalloc
def ep_normalization_into(g, C, theta, theta_t, frame, velocity_level):
    """ep_normalization into (g, C)."""
    C[:] = 0.0
    for k in range(frame.shape[0]):
        th = theta[frame[k]]
        if velocity_level:
            tt = theta_t[frame[k]]
            g[k, 0] = 2.0 * (th[0] * tt[0] + th[1] * tt[1] + th[2] * tt[2] + th[3] * tt[3])
        else:
            g[k, 0] = (th[0] * th[0] + th[1] * th[1] + th[2] * th[2] + th[3] * th[3]) - 1.0
        for i in range(4):
            C[k, 0, 3 + i] = 2.0 * th[i]


@jit
def _empty_kin(n2, nF, nm):
    e = np.empty
    return Kin(e(n2 + 1), e(n2 + 1), e((nF, 4)), e((nF, 4)), e((nF, 3, 3)), e((nF, 3, 4)), e((nF, 3, 4)), e((nF, 3)),
               e((nF, 3)), e((nF, 3)), e((nm, 3)), e((nm, 3, 3)), e((nm, 3)), e((nm, 3)), e((nm, 3, 7)), e((nm, 3, 7)),
               e((nm, 3)))


@jit
def work(model, n2, nae):
    """The Kin and Work arrays of one solve (their contents are overwritten by every evaluation)."""
    nF, nm = model.fcols.shape[0], model.mframe.shape[0]
    nj, nr, ne = model.j_m0.shape[0], model.j_kinds.shape[1], model.e_frame.shape[0]
    e = np.empty
    kin = _empty_kin(n2, nF, nm)
    ncc, nmo = model.cc_cols.shape[0], model.mo_m0.shape[0]
    mo_kin = _empty_kin(n2, nF, nm) if nmo else _empty_kin(0, 0, 0)  # for u̇_j (rate forms, acceleration level)
    w = Work(e(n2), e(nae), e((ne, 1)), e((ne, 1, 7)), e((nj, nr)), e((nj, nr, 14)), e((ncc, 1)), e((ncc, 1, 2)),
             e(n2), e(n2), e(n2), e((2, 7)), e((2, 3, 3)), e((5, 3)), e(nmo), e((nmo, 14)), e((4, nmo)),
             e((nmo, 14)), e(3), e(model.mo_work_size[0]), np.full(1, -1, np.int64), mo_kin, e(7),
             e(model.uf_work_size[0]), e(compiled_scratch_size(model.x_forces, model.x_constraints)))
    return kin, w


@jit_inline
def joint_accelerations_into(ujd, us, scratch, Cs, mats, vecs, qs, mk, a, q, v, C, cols, m0, m1, R0, R1, revolute,
                             model):
    """u̇_j = C a + (∂u_j/∂q) v into ujd of the joints (m0, m1, R0, R1, revolute; their columns cols
    and Jacobians C at (q, v), q and v with the dummy slot), the second term by a central difference
    along v: u_j at q ± εv, ε = 1e-6 / max(1, |v|∞) (kinematics into mk, scratch us, scratch, Cs, qs).
    The one copy for the motions' rows (motion_rows) and their sensors (joint_accelerations_rows)."""
    n2 = a.shape[0]
    vmax = 0.0
    for i in range(n2):
        vmax = max(vmax, abs(v[i]))
    eps = 1e-6 / max(1.0, vmax)
    vv = v[:n2]
    for sign in (1.0, -1.0):
        for i in range(n2):
            qs[i] = q[i] + (sign * eps) * v[i]
        kinematics(qs, vv, model, mk)
        joint_coordinates_into(scratch, us if sign > 0 else ujd, Cs, mats, vecs, mk.rot, mk.pos, mk.vel, mk.omega,
                               mk.Jpos, mk.Jrot, m0, m1, R0, R1, revolute)
    for r in range(ujd.shape[0]):
        s = 0.0
        for c in range(14):
            col = cols[r, c]
            if col < n2:
                s += C[r, c] * a[col]
        ujd[r] = s + (us[r] - ujd[r]) / (2 * eps)


@jit_noalloc
def motion_accelerations(ujd, us, scratch, Cs, mats, vecs, qs, mk, a, q, v, C, cols, m0, m1, R0, R1, revolute,
                         frames):
    """joint_accelerations_into (frames: a FrameModel), compiled once rather than inlined into every residual."""
    joint_accelerations_into(ujd, us, scratch, Cs, mats, vecs, qs, mk, a, q, v, C, cols, m0, m1, R0, R1, revolute,
                             frames)


@jit_inline
def motion_rows(t, a, levels, velocity_level, model, kin, w):
    """The motions' rows into w.mo_g and their C into w.mo_C (Motions.evaluate; with levels all 2
    and velocity_level, Motions.rate_residual), the joint coordinates and rates into w.mo_q[0:2].
    Acceleration-level rows take u̇_j from joint_accelerations_into. Returns -1, or the first motion
    whose law is undefined there (its row is then unset). Inlined: a compiled call with the whole Model
    cost ~3 µs per residual, three times a small model's residual without motions."""
    m = model
    qj, uj, ujd, us = w.mo_q[0], w.mo_q[1], w.mo_q[2], w.mo_q[3]
    joint_coordinates_into(qj, uj, w.mo_C, w.mats, w.vecs, kin.rot, kin.pos, kin.vel, kin.omega, kin.Jpos, kin.Jrot,
                           m.mo_m0, m.mo_m1, m.mo_R0, m.mo_R1, m.mo_revolute)
    for r in range(levels.shape[0]):
        if levels[r] == 2:
            motion_accelerations(ujd, us, w.mo_g, w.mo_Cs, w.mats, w.vecs, w.tmp, w.mo_kin, a, kin.q, kin.v, w.mo_C,
                                 m.mo_cols, m.mo_m0, m.mo_m1, m.mo_R0, m.mo_R1, m.mo_revolute,
                                 FrameModel(m.fcols, m.fpos_ref, m.ftheta_ref, m.f_is_ep, m.f_is_2d, m.f_rotation,
                                            m.f_R0, m.f_turned, m.mframe, m.mlocal, m.mrot, m.mrot_identity))
            break
    return motion_residual(m.mo_code, m.mo_consts, m.mo_start, levels, m.mo_revolute, t, qj, uj, ujd, velocity_level,
                           w.mo_g, w.mo_x, w.mo_work)


@jit
def motion_rows_at(t, a, levels, velocity_level, model, kin, w):
    """motion_rows called from Python (Motions.rows): an inlined kernel has no cached machine code of its own."""
    return motion_rows(t, a, levels, velocity_level, model, kin, w)


@jit_noalloc
def cartesian_uf_force(p, t, dp, dv, F, uf):
    """F = a Cartesian spring-damper's user function (programs p..p+2) at displacement dp, velocity dv."""
    code, consts, start, x, work = uf
    x[0] = t
    for c in range(3):
        x[1 + c], x[4 + c] = dp[c], dv[c]
    for c in range(3):
        F[c] = eval_program(code, consts, start, p + c, x, work)


@jit_inline
def applied_forces(t, model, kin, w, load_factor):
    """f(q, v, t) into w.f: loads, quadratic velocity terms, connector forces (System.applied_forces,
    the same order of summation). A user function is evaluated at t and not scaled by load_factor
    (Exudyn's rule for static load steps)."""
    m = model
    f, tmp, vecs = w.f, w.tmp, w.vecs
    n2 = f.shape[0]
    uf = (m.uf_code, m.uf_consts, m.uf_start, w.uf_x, w.uf_work)
    f[:] = 0.0
    for k in range(m.l_kind.shape[0]):  # in the order of items.loads (by type, then load)
        mk, kind = m.l_markers[k], m.l_kind[k]
        p = m.l_uf[k]
        if p >= 0:
            w.uf_x[0] = t
            x0 = eval_program(m.uf_code, m.uf_consts, m.uf_start, p, w.uf_x, w.uf_work)
            x1 = x2 = 0.0
            if kind != 2:
                x1 = eval_program(m.uf_code, m.uf_consts, m.uf_start, p + 1, w.uf_x, w.uf_work)
                x2 = eval_program(m.uf_code, m.uf_consts, m.uf_start, p + 2, w.uf_x, w.uf_work)
        else:
            x0, x1, x2 = m.l_vec[k, 0] * load_factor, m.l_vec[k, 1] * load_factor, m.l_vec[k, 2] * load_factor
        if kind == 2:
            c = m.l_coord[k]
            if c < n2:
                f[c] += x0
            continue
        if m.l_fixed[k]:  # summed in the order of numpy's einsum (the per-group path): identical results
            R = kin.rot[mk]
            x0, x1, x2 = (R[0, 0] * x0 + R[0, 2] * x2) + R[0, 1] * x1, (R[1, 0] * x0 + R[1, 2] * x2) + R[1, 1] * x1, \
                (R[2, 0] * x0 + R[2, 2] * x2) + R[2, 1] * x1
        J = kin.Jrot if kind == 1 else kin.Jpos
        for c in range(7):
            col = m.mcols[mk, c]
            if col < n2:
                f[col] += m.l_weight[k] * (J[mk, 0, c] * x0 + J[mk, 1, c] * x1 + J[mk, 2, c] * x2)
    rigid_quadratic_velocity_into(tmp, w.s7[0], kin.fA, kin.fGbar, kin.theta, kin.theta_t, m.f_rotation, m.b_frame,
                                  m.b_cols, m.b_mass, m.b_com, m.b_inertia)
    f += tmp
    if m.s_m0.shape[0]:
        spring_forces_into(tmp, vecs[:3], t, kin.pos, kin.vel, kin.Jpos, m.mcols, m.s_m0, m.s_m1, m.s_k, m.s_d,
                           m.s_L0, m.s_fa, m.s_voff, m.s_active, m.s_uf, uf)
        f += tmp
    if m.c_m0.shape[0]:  # +J0ᵀF, -J1ᵀF with F = k∘(Δp - offset) + d∘Δv
        tmp[:] = 0.0
        for i in range(m.c_m0.shape[0]):
            if not m.c_active[i]:
                continue
            p, q_ = m.c_m0[i], m.c_m1[i]
            F = vecs[0]
            if m.c_uf[i] >= 0:
                for c in range(3):
                    vecs[1, c], vecs[2, c] = kin.pos[q_, c] - kin.pos[p, c], kin.vel[q_, c] - kin.vel[p, c]
                cartesian_uf_force(m.c_uf[i], t, vecs[1], vecs[2], F, uf)
            else:
                for c in range(3):
                    F[c] = m.c_k[i, c] * ((kin.pos[q_, c] - kin.pos[p, c]) - m.c_offset[i, c]) \
                        + m.c_d[i, c] * (kin.vel[q_, c] - kin.vel[p, c])
            for j in range(7):
                col = m.mcols[p, j]
                if col < n2:
                    tmp[col] += kin.Jpos[p, 0, j] * F[0] + kin.Jpos[p, 1, j] * F[1] + kin.Jpos[p, 2, j] * F[2]
                col = m.mcols[q_, j]
                if col < n2:
                    tmp[col] -= kin.Jpos[q_, 0, j] * F[0] + kin.Jpos[q_, 1, j] * F[1] + kin.Jpos[q_, 2, j] * F[2]
        f += tmp
    if m.cs_cols.shape[0]:  # +f on coordinate 0, -f on coordinate 1
        tmp[:] = 0.0
        for i in range(m.cs_cols.shape[0]):
            c0, c1 = m.cs_cols[i, 0], m.cs_cols[i, 1]
            if m.cs_uf[i] >= 0:  # displacement q1 - q0, velocity v1 - v0
                w.uf_x[0], w.uf_x[1], w.uf_x[2] = t, kin.q[c1] - kin.q[c0], kin.v[c1] - kin.v[c0]
                fi = eval_program(m.uf_code, m.uf_consts, m.uf_start, m.cs_uf[i], w.uf_x, w.uf_work) \
                    * (1.0 if m.cs_active[i] else 0.0)
            else:
                fi = (m.cs_k[i] * ((kin.q[c1] - kin.q[c0]) - m.cs_offset[i]) + m.cs_d[i] * (kin.v[c1] - kin.v[c0])) \
                    * (1.0 if m.cs_active[i] else 0.0)
            if c0 < n2:
                tmp[c0] += fi
            if c1 < n2:
                tmp[c1] -= fi
        f += tmp
    for k in range(m.g_fc.shape[0]):  # generic ODE2 objects: f - K q - D q̇
        f[m.g_fc[k]] += m.g_fv[k]
    for k in range(m.g_kr.shape[0]):
        f[m.g_kr[k]] -= m.g_kv[k] * kin.q[m.g_kc[k]]
    for k in range(m.g_dr.shape[0]):
        f[m.g_dr[k]] -= m.g_dv[k] * kin.v[m.g_dc[k]]
    compiled_forces(m.x_forces, kin, f, w.x_scratch)


@jit_inline
def residual(t, a, lam, velocity_level, model, kin, w):
    """The residual [M a - f + C_qᵀ λ; g] at time t in one call (the compiled step loop's): the same
    kernels in the same order of summation as the per-group path. Writes w.rq,
    w.rg and g, C of the EP normalization, of all frame joints in one padded table, of the
    coordinate constraints and of the motions (boxing returned arrays costs ~0.5 µs each); w.mo_bad
    is the first motion whose law is undefined, else -1 (then rq, rg are not all set)."""
    theta, theta_t, fA, fGbar, pos, vel, omega_local, rot, Jpos, Jrot = kin.theta, kin.theta_t, kin.fA, kin.fGbar, \
        kin.pos, kin.vel, kin.omega_local, kin.rot, kin.Jpos, kin.Jrot
    m = model
    b_frame, b_cols, b_mass, b_com, b_inertia = m.b_frame, m.b_cols, m.b_mass, m.b_com, m.b_inertia
    e_frame, e_cols, e_ae = m.e_frame, m.e_cols, m.e_ae
    j_m0, j_m1, j_R0, j_R1, j_kinds, j_ri, j_rj, j_nrows, j_cols, j_ae, j_active = m.j_m0, m.j_m1, m.j_R0, m.j_R1, \
        m.j_kinds, m.j_ri, m.j_rj, m.j_nrows, m.j_cols, m.j_ae, m.j_active
    rq, rg, eg, eC, jg, jC, ccg, ccC, f, tmp, cf, s7, mats, vecs = w.rq, w.rg, w.eg, w.eC, w.jg, w.jC, w.ccg, w.ccC, \
        w.f, w.tmp, w.cf, w.s7, w.mats, w.vecs
    n2 = a.shape[0]
    applied_forces(t, model, kin, w, 1.0)
    rigid_mass_times_into(tmp, s7[0], s7[1], fA, fGbar, b_frame, b_cols, b_mass, b_com, b_inertia, a)
    for k in range(m.p_mass.shape[0]):
        for i in range(3):
            c = m.p_cols[k, i]
            tmp[c] += m.p_mass[k, i] * a[c]
    for k in range(m.g_mr.shape[0]):
        tmp[m.g_mr[k]] += m.g_mv[k] * a[m.g_mc[k]]
    for i in range(n2):
        rq[i] = tmp[i] - f[i]
    cf[:] = 0.0
    ep_normalization_into(eg, eC, theta, theta_t, e_frame, velocity_level)
    add_constraint_forces(cf, e_cols, eC, lam, e_ae)
    joint_rows_into(jg, jC, mats, vecs, rot, pos, vel, omega_local, Jpos, Jrot, j_m0, j_m1, j_R0, j_R1, j_kinds, j_ri,
                    j_rj, j_nrows, velocity_level)
    for k in range(j_m0.shape[0]):  # add_constraint_forces over each joint's own rows
        for c in range(14):
            col = j_cols[k, c]
            if col < n2:
                s = 0.0
                for r in range(j_nrows[k]):
                    s += jC[k, r, c] * lam[j_ae[k, r]]
                cf[col] += s
    for k in range(m.cc_cols.shape[0]):
        c0, c1, fac = m.cc_cols[k, 0], m.cc_cols[k, 1], m.cc_factor[k]
        ccC[k, 0, 0], ccC[k, 0, 1] = -1.0, fac
        if velocity_level or m.cc_vlevel[k]:
            ccg[k, 0] = fac * kin.v[c1] - kin.v[c0] - (m.cc_offset[k] if m.cc_vlevel[k] else 0.0)
        else:
            ccg[k, 0] = fac * kin.q[c1] - kin.q[c0] - m.cc_offset[k]
        lk = lam[m.cc_ae[k, 0]]
        if c0 < n2:
            cf[c0] += -lk
        if c1 < n2:
            cf[c1] += fac * lk
    if m.mo_m0.shape[0]:
        w.mo_bad[0] = motion_rows(t, a, m.mo_levels, velocity_level, model, kin, w)
        for k in range(m.mo_m0.shape[0]):
            lk = lam[m.mo_ae[k]]
            for c in range(14):
                col = m.mo_cols[k, c]
                if col < n2:
                    cf[col] += w.mo_C[k, c] * lk
    rq += cf
    rg[:] = 0.0
    for k in range(e_frame.shape[0]):
        rg[e_ae[k, 0]] = eg[k, 0]
    for k in range(j_m0.shape[0]):  # inactive joints: λ = 0 through the (λ, λ) diagonal
        for r in range(j_nrows[k]):
            rg[j_ae[k, r]] = jg[k, r] if j_active[k] else lam[j_ae[k, r]]
    for k in range(m.cc_cols.shape[0]):
        rg[m.cc_ae[k, 0]] = ccg[k, 0] if m.cc_active[k] else lam[m.cc_ae[k, 0]]
    for k in range(m.mo_m0.shape[0]):  # always active
        rg[m.mo_ae[k]] = w.mo_g[k]
    compiled_rows(m.x_constraints, kin, lam, velocity_level, rq, rg, w.x_scratch)


@jit
def lu_solve_csc(b, perm_r, perm_c, Lp, Li, Lx, Up, Ui, Ux, Ud):
    """x with A x = b from SuperLU's Pr A Pc = L U: L unit lower and U strictly upper triangular
    in CSC without their diagonals, Ud the diagonal of U. SuperLU's own solve costs ~5x more."""
    x = b.copy()
    lu_solve_csc_into(x, np.empty(b.shape[0]), perm_r, perm_c, Lp, Li, Lx, Up, Ui, Ux, Ud)
    return x


@jit_inline
def lu_solve_csc_into(x, y, perm_r, perm_c, Lp, Li, Lx, Up, Ui, Ux, Ud):
    """x := A⁻¹x as lu_solve_csc, y scratch."""
    n = x.shape[0]
    for i in range(n):
        y[perm_r[i]] = x[i]
    for j in range(n):
        yj = y[j]
        for k in range(Lp[j], Lp[j + 1]):
            y[Li[k]] -= Lx[k] * yj
    for j in range(n - 1, -1, -1):
        y[j] /= Ud[j]
        yj = y[j]
        for k in range(Up[j], Up[j + 1]):
            y[Ui[k]] -= Ux[k] * yj
    for i in range(n):
        x[i] = y[perm_c[i]]


# sparse_lu_refactor's answers
LU_SINGULAR, LU_DONE, LU_REPIVOT = 0, 1, 2


@jit_inline
def sparse_lu_refactor(Ap, Ai, Ax, Lp, Li, Lx, Up, Ui, Ux, Ud, x):
    """L U = A' (CSC Ap/Ai/Ax, rows and columns already in the pivot order) on the fixed patterns of L
    (strictly lower) and U (strictly upper, rows ascending per column) that SparseAnalysis found for
    this order: left-looking, column by column, x a zeroed scratch of length n (left zeroed). LU_SINGULAR
    when a pivot is at round-off level of its column (as the dense LU); LU_REPIVOT when it fell below
    0.1 of the column's largest candidate, so that the pivot order chosen earlier is no longer stable
    (threshold partial pivoting, as UMFPACK's default)."""
    n = Ud.shape[0]
    for j in range(n):
        col_max = 0.0
        for p in range(Ap[j], Ap[j + 1]):
            x[Ai[p]] = Ax[p]
            col_max = max(col_max, abs(Ax[p]))
        for p in range(Up[j], Up[j + 1]):  # ascending rows k < j: x[k] is final when reached
            k = Ui[p]
            ukj = x[k]
            Ux[p] = ukj
            x[k] = 0.0
            if ukj != 0.0:
                for q in range(Lp[k], Lp[k + 1]):
                    x[Li[q]] -= Lx[q] * ukj
        d = x[j]
        x[j] = 0.0
        below = 0.0
        for q in range(Lp[j], Lp[j + 1]):
            below = max(below, abs(x[Li[q]]))
        if not abs(d) > 1e-13 * col_max or not abs(d) >= 0.1 * below:
            for q in range(Lp[j], Lp[j + 1]):
                x[Li[q]] = 0.0
            return LU_SINGULAR if not abs(d) > 1e-13 * col_max else LU_REPIVOT
        Ud[j] = d
        for q in range(Lp[j], Lp[j + 1]):
            Lx[q] = x[Li[q]] / d
            x[Li[q]] = 0.0
    return LU_DONE


@jit_noalloc
def newton_update(qn, vn, an, lam, dx, old, v_factor, a_divisor, lam_divisor, lie_cols, lie_ref):
    """q -= Δq, v -= v_factor Δq, q̈ -= Δq / a_divisor, λ -= Δλ̃ / lam_divisor, in place (dx = [Δq; Δλ̃]);
    the rotation vectors of Lie group nodes compose instead: ν := log(exp(ν) exp(-Δν)) (Exudyn's update;
    old: scratch of length n2)."""
    n2 = qn.shape[0]
    nl = lie_cols.shape[0]
    if nl:  # the rotation columns before the loop below
        for k in range(nl):
            for j in range(3):
                old[lie_cols[k, j]] = qn[lie_cols[k, j]]
    for i in range(n2):
        d = dx[i]
        qn[i] -= d
        vn[i] -= v_factor * d
        an[i] -= d / a_divisor
    if nl:
        for k in range(nl):
            for j in range(3):
                qn[lie_cols[k, j]] = old[lie_cols[k, j]]
        lie_compose(qn, dx, -1.0, lie_cols, lie_ref)
    for i in range(lam.shape[0]):
        lam[i] -= dx[n2 + i] / lam_divisor


CONVERGED, ITERATE, RESTART, GIVE_UP = range(4)  # newton_rules' actions


def newton_parameters(newton: dict) -> np.ndarray:
    """The Newton settings newton_rules reads, as one array."""
    return np.array([newton["absoluteTolerance"], newton["relativeTolerance"], newton["maxModifiedNewtonIterations"],
                     newton["maxModifiedNewtonRestartIterations"], newton["modifiedNewtonContractivity"],
                     newton["useModifiedNewton"], newton["adaptInitialResidual"]], float)


@jit_noalloc
def newton_rules(it, rn, r0, r_prev, full, restarted, extra, parameters):
    """Exudyn's CSolverBase::Newton after iteration `it` (counted on across restarts) with residual
    norm rn (the compiled step loop's, solvers/alpha_kernel.py). Returns (action, r0, r_prev, full,
    restarted, extra, new_jacobian): r0 becomes the first iterate's residual when that is larger;
    a converged step after a restart makes one extra iteration; a new Jacobian is asked for after
    more than maxModifiedNewtonIterations iterations or, from the third on, a contraction worse
    than modifiedNewtonContractivity; a contraction worse than 2, a diverged iterate, or a second
    bad contraction after a restart restarts the step from the predictor (the second time in full
    Newton); more than maxModifiedNewtonIterations + maxModifiedNewtonRestartIterations go full
    Newton. The caller stops after maxIterations."""
    abs_tol, rel_tol, max_mod_it, max_restart_it, contractivity, modified, adapt_r0 = parameters
    new_jacobian = False
    if it == 1 and adapt_r0 != 0.0 and rn > r0:
        r0 = r_prev = rn
    if rn / r0 <= rel_tol or rn <= abs_tol:
        action = ITERATE if extra else CONVERGED
        return action, r0, r_prev, full, restarted, False, new_jacobian
    diverged = not np.isfinite(rn)
    if diverged and full:
        return GIVE_UP, r0, r_prev, full, restarted, False, new_jacobian
    if not full and it > max_mod_it:
        new_jacobian = True
    if not full and it > max_mod_it + max_restart_it:
        full = True
    contraction, r_prev = rn / r_prev, rn
    action = ITERATE
    if not full and modified != 0.0 and (diverged or (contraction > contractivity and it > 2)):
        new_jacobian = True
        if restarted:
            full = True
        if diverged or contraction > 2.0 or full:
            action, restarted, r_prev = RESTART, True, r0
    return action, r0, r_prev, full, restarted, action == RESTART, new_jacobian
