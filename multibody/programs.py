"""Expression programs: user expressions as postfix code that one compiled evaluator runs.

A document's expressions (motion laws, `...UserFunction` expressions) are parsed by
the whitelist of expressions.py, differentiated by sympy, and translated once per model into
a *program set*: three flat arrays, no Python objects, so compiled code can evaluate them
without a per-model JIT compile. This module holds the evaluator and does not import sympy.

    ProgramSet(code, consts, start, work_size)
      code    int64[2*n]   instructions (opcode, argument), the programs one after the other
      consts  float64[m]   the numbers the CONST instructions push
      start   int64[k+1]   program p is code[2*start[p] : 2*start[p+1]]
      work_size            the scratch length every program of the set fits in (stack + temporaries)

    eval_program(code, consts, start, p, x, work) -> float       # @njit, callable from njit code
    eval_programs(code, consts, start, first, x, out, work)       # programs first.. first+len(out)-1
    eval_rows(code, consts, start, first, X, out, work)           # the same over rows X (sensor outputs)

`x` is the program's variables, a float64 array whose layout the compiler fixed (for a motion
law x = [t, q, u]; for a user function [t, its state-dependent arguments, vectors flattened];
a vector element `loadVector[1]` is one slot, so constant indices cost nothing at run time).
`work` is a float64 scratch array of at least work_size entries, owned by the caller (no
allocation per call). The result is NaN or ±inf where the expression is undefined (log of a
negative, 0/0, overflow, a complex power): callers check finiteness and report the item.

Named constants (a document's `parameters` block) are folded into `consts` at compile time.
Conditions (`a if c else b`, where(), step(), the derivative of min/max) compile to jumps, so
only the chosen branch runs; comparisons push 1.0 or 0.0, and/or/not combine those.

Program sets of one model are concatenated with `ProgramSet.concatenate`; program p of the
i-th part becomes p + offset_i. A motion uses the three programs MOTION_PROGRAMS per law; a
model's motions are `system.motions.programs` (programs 3r, 3r+1, 3r+2 for motion row r), with
`system.motions.levels` and `.revolute`, and

    motion_residual(code, consts, start, levels, revolute, t, qj, uj, uj_dot, velocity_level, g, x, work)
                                                                 # @njit: the motions' rows g, or the bad row
    first_undefined(code, consts, start, p, times, x, work)      # @njit: validation over a time grid
"""
from __future__ import annotations

import math
from typing import NamedTuple, Sequence

import numba
import numpy as np

# without numba's runtime (kernels.jit_noalloc): the evaluators only write into the arrays they are given
jit = numba.njit(cache=True, nogil=True, boundscheck=False, error_model="numpy", _nrt=False)

# opcodes; the argument is an index (CONST, VAR, LOAD, STORE), a jump target (instruction
# number), the derivative order (HERMITE), or unused (0)
(CONST, VAR, LOAD, STORE, ADD, SUB, MUL, DIV, POW, NEG, SQRT, EXP, LOG, SIN, COS, TAN, ASIN, ACOS, ATAN,
 SINH, COSH, TANH, ABS, SIGN, FLOOR, CEIL, HERMITE, NOT, JUMP_IF_FALSE, JUMP, ATAN2, MIN, MAX, LT, LE, EQ, NE,
 AND, OR) = range(39)
# stack effect (pops, pushes) of each opcode, for the compiler's stack-depth count
EFFECT = {CONST: (0, 1), VAR: (0, 1), LOAD: (0, 1), STORE: (1, 0), NEG: (1, 1), SQRT: (1, 1), EXP: (1, 1),
          LOG: (1, 1), SIN: (1, 1), COS: (1, 1), TAN: (1, 1), ASIN: (1, 1), ACOS: (1, 1), ATAN: (1, 1),
          SINH: (1, 1), COSH: (1, 1), TANH: (1, 1), ABS: (1, 1), SIGN: (1, 1), FLOOR: (1, 1), CEIL: (1, 1),
          HERMITE: (1, 1), NOT: (1, 1), JUMP_IF_FALSE: (1, 0), JUMP: (0, 0),
          **{op: (2, 1) for op in (ADD, SUB, MUL, DIV, POW, ATAN2, MIN, MAX, LT, LE, EQ, NE, AND, OR)}}

# a motion law's programs, in this order (x = [t, q, u]): the coordinate q(t) (Position level),
# the rate u(t, q) (Position: positionDot; Velocity: velocity) and the rate's total time
# derivative u̇(t, q, u) (positionDotDot, velocityDot, acceleration). A program a level does
# not define evaluates to NaN.
MOTION_PROGRAMS = ("coordinate", "rate", "rate_dot")


class EvaluationError(ArithmeticError):
    """An expression is undefined at the given arguments (log(-1), 1/0, overflow)."""


class ProgramSet(NamedTuple):
    code: np.ndarray
    consts: np.ndarray
    start: np.ndarray
    work_size: int

    @property
    def size(self) -> int:
        return len(self.start) - 1

    @staticmethod
    def concatenate(parts: Sequence["ProgramSet"]) -> "ProgramSet":
        """One set of every part's programs, in order (jump targets and constants renumbered)."""
        codes, consts, starts = [], [], [np.zeros(1, np.int64)]
        n_instr = n_const = 0
        for part in parts:
            code = part.code.reshape(-1, 2).copy()
            ops = code[:, 0]
            code[ops == CONST, 1] += n_const
            code[(ops == JUMP) | (ops == JUMP_IF_FALSE), 1] += n_instr
            codes.append(code.ravel())
            consts.append(part.consts)
            starts.append(part.start[1:] + n_instr)
            n_instr += len(code)
            n_const += len(part.consts)
        return ProgramSet(np.concatenate([np.zeros(0, np.int64), *codes]),
                          np.concatenate([np.zeros(0), *consts]), np.concatenate(starts),
                          max([1, *(p.work_size for p in parts)]))

    def __call__(self, p: int, x: np.ndarray, work: np.ndarray | None = None) -> float:
        """Program p at x, from Python (tests, validation); compiled code calls eval_program."""
        if work is None:
            work = np.empty(self.work_size)
        return eval_program(self.code, self.consts, self.start, p, np.asarray(x, dtype=float), work)


UNDEFINED = ProgramSet(np.array([CONST, 0], np.int64), np.array([math.nan]), np.array([0, 1], np.int64), 1)


@jit
def _hermite(s, k):
    """k-th derivative of the smooth step 3s² - 2s³, clamped to 0 (s <= 0) and 1 (s >= 1)."""
    if s <= 0.0 or s >= 1.0:
        return 1.0 if (k == 0 and s >= 1.0) else 0.0
    if k == 0:
        return s * s * (3.0 - 2.0 * s)
    if k == 1:
        return 6.0 * s * (1.0 - s)
    if k == 2:
        return 6.0 - 12.0 * s
    return -12.0 if k == 3 else 0.0


@jit
def eval_program(code, consts, start, p, x, work):
    """Program p of the set at variables x; work: scratch of at least the set's work_size.

    The stack grows up from work[0], temporaries (STORE/LOAD k) sit at work[len(work) - 1 - k].
    """
    top = -1
    i = start[p]
    end = start[p + 1]
    last = work.shape[0] - 1
    while i < end:
        op = code[2 * i]
        arg = code[2 * i + 1]
        i += 1
        if op == CONST:
            top += 1
            work[top] = consts[arg]
        elif op == VAR:
            top += 1
            work[top] = x[arg]
        elif op == LOAD:
            top += 1
            work[top] = work[last - arg]
        elif op == STORE:
            work[last - arg] = work[top]
            top -= 1
        elif op <= POW:  # binary arithmetic
            b = work[top]
            top -= 1
            a = work[top]
            if op == ADD:
                work[top] = a + b
            elif op == SUB:
                work[top] = a - b
            elif op == MUL:
                work[top] = a * b
            elif op == DIV:
                work[top] = a / b
            else:
                work[top] = a ** b
        elif op <= TANH:  # functions of one argument
            a = work[top]
            if op == NEG:
                r = -a
            elif op == SQRT:
                r = math.sqrt(a) if a >= 0.0 else math.nan
            elif op == EXP:
                r = math.exp(a)
            elif op == LOG:
                r = math.log(a) if a > 0.0 else (-math.inf if a == 0.0 else math.nan)
            elif op == SIN:
                r = math.sin(a)
            elif op == COS:
                r = math.cos(a)
            elif op == TAN:
                r = math.tan(a)
            elif op == ASIN:
                r = math.asin(a) if abs(a) <= 1.0 else math.nan
            elif op == ACOS:
                r = math.acos(a) if abs(a) <= 1.0 else math.nan
            elif op == ATAN:
                r = math.atan(a)
            elif op == SINH:
                r = math.sinh(a)
            elif op == COSH:
                r = math.cosh(a)
            else:
                r = math.tanh(a)
            work[top] = r
        elif op == JUMP_IF_FALSE:
            if work[top] == 0.0:
                i = arg
            top -= 1
        elif op == JUMP:
            i = arg
        elif op == ABS:
            work[top] = abs(work[top])
        elif op == SIGN:
            a = work[top]
            work[top] = 0.0 if a == 0.0 else (1.0 if a > 0.0 else (-1.0 if a < 0.0 else math.nan))
        elif op == FLOOR:
            work[top] = np.floor(work[top])
        elif op == CEIL:
            work[top] = np.ceil(work[top])
        elif op == HERMITE:
            work[top] = _hermite(work[top], arg)
        elif op == NOT:
            work[top] = 1.0 if work[top] == 0.0 else 0.0
        else:  # ATAN2, MIN, MAX, comparisons, AND, OR: two arguments
            b = work[top]
            top -= 1
            a = work[top]
            if op == ATAN2:
                r = math.atan2(a, b)
            elif op == MIN:  # as Python's min(a, b): a unless b < a
                r = b if b < a else a
            elif op == MAX:
                r = b if b > a else a
            elif op == LT:
                r = 1.0 if a < b else 0.0
            elif op == LE:
                r = 1.0 if a <= b else 0.0
            elif op == EQ:
                r = 1.0 if a == b else 0.0
            elif op == NE:
                r = 1.0 if a != b else 0.0
            elif op == AND:
                r = 1.0 if (a != 0.0 and b != 0.0) else 0.0
            else:
                r = 1.0 if (a != 0.0 or b != 0.0) else 0.0
            work[top] = r
    return work[0]


@jit
def eval_programs(code, consts, start, first, x, out, work):
    """out[k] = program first + k at x, for every k."""
    for k in range(out.shape[0]):
        out[k] = eval_program(code, consts, start, first + k, x, work)


@jit
def eval_rows(code, consts, start, first, X, out, work):
    """out[i, k] = program first + k at variables X[i], for every row i and column k."""
    for i in range(X.shape[0]):
        for k in range(out.shape[1]):
            out[i, k] = eval_program(code, consts, start, first + k, X[i], work)


@jit
def motion_residual(code, consts, start, levels, revolute, t, qj, uj, uj_dot, velocity_level, g, x, work):
    """The motions' constraint rows g from a set of their programs (three per motion, in
    MOTION_PROGRAMS order), the joint coordinates qj, rates uj and accelerations uj_dot:
    level 0 q_j - q(t) (an angle's difference wrapped to [-π, π)), or u_j - q̇(t) if
    velocity_level (the index-2 form); level 1 u_j - u(t, q_j); level 2 u̇_j - u̇(t, q_j, u_j).
    levels[r] = 2 for every row gives the rows' time derivatives (uj_dot at zero acceleration).

    x: scratch of 3. Returns -1, or the first row whose law is not finite there.
    """
    for r in range(levels.shape[0]):
        level = levels[r]
        x[0], x[1], x[2] = t, qj[r], uj[r]
        k = 1 if (level == 0 and velocity_level) else level
        target = eval_program(code, consts, start, 3 * r + k, x, work)
        if not math.isfinite(target):
            return r
        if k == 0:
            d = qj[r] - target
            g[r] = (d + math.pi) % (2 * math.pi) - math.pi if revolute[r] else d
        elif k == 1:
            g[r] = uj[r] - target
        else:
            g[r] = uj_dot[r] - target
    return -1


@jit
def first_undefined(code, consts, start, p, times, x, work):
    """The first i at which program p with x[0] = times[i] (x[1:] as given) is not finite, or -1."""
    for i in range(times.shape[0]):
        x[0] = times[i]
        if not math.isfinite(eval_program(code, consts, start, p, x, work)):
            return i
    return -1


def warm_up() -> None:
    """Load (or compile) the evaluator's kernels."""
    code, consts, start, size = UNDEFINED
    x, work, out = np.zeros(3), np.empty(size), np.empty(1)
    eval_programs(code, consts, start, 0, x, out, work)
    eval_rows(code, consts, start, 0, x.reshape(1, 3), out.reshape(1, 1), work)
    first_undefined(code, consts, start, 0, x, x, work)
    motion_residual(code, consts, start, np.zeros(0, np.int64), np.zeros(0, np.bool_), 0.0, x, x, x, False, out, x,
                    work)
