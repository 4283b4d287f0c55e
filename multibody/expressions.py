"""A safe expression language for motion laws and user functions: whitelisted user text ->
sympy -> programs (programs.py) that one compiled evaluator runs.

    expr = parse_expression("0.1*sin(2*pi*t)", ("t",))    # sympy.Expr; ExpressionError if not allowed
    d = derivative(expr, "t")                              # symbolic; a.e. derivative of kinks and steps
    program = to_program(d, {"t": 0})                      # a ProgramSet; x[0] is t
    f = compile_expression(d, ("t",))                      # f(0.25) -> float, from Python

User text never reaches eval/exec/sympify: it is parsed by `ast` and every node is translated
by hand, so only numbers, the allowed variables (vector elements by constant indices), named
parameters, pi, e, + - * / **, the functions in FUNCTIONS, comparisons with and/or/not and
`a if condition else b` can appear. Length, nesting depth, node count, constant magnitudes and
exponents are bounded *before* sympy builds anything, so parsing takes bounded time and memory;
a Budget bounds what all expressions of a document may cost together.
"""
from __future__ import annotations

import ast
import math
import operator
import time
from collections.abc import Mapping, Sequence
from typing import Callable

import numpy as np
import sympy as sp

from . import programs as P
from .programs import EvaluationError

# Limits. The costly step is not parsing but the second derivatives a motion law needs: they
# grow ~depth**2.5 with nested functions and ~factors**3 with products (16 factors: 1.4 s).
MAX_LENGTH = 2000
MAX_DEPTH = 30
MAX_NODES = 400
MAX_FACTORS = 12  # varying factors in one product
MAX_DERIVATIVE_SIZE = 50_000  # tree nodes, a last guard before compiling
MAX_MAGNITUDE = 1e100  # literals and constant subexpressions
MAX_EXPONENT = 100
MAX_RATIONAL_BITS = 4096  # exact fractions like (1/10**100)**100 grow without a float bound



def symbol(name: str) -> sp.Symbol:
    """The symbol of a scalar variable (sympy keeps one object per name and assumptions)."""
    return sp.Symbol(name, real=True)


def element_symbol(name: str, index: tuple[int, ...]) -> sp.Symbol:
    """The symbol of one element of a vector or matrix variable: loadVector[1], stiffness[0][2]."""
    return symbol(name + "".join(f"[{i}]" for i in index))


SYMBOLS = {name: symbol(name) for name in ("t", "q", "u")}
CONSTANTS = {"pi": (sp.pi, math.pi), "e": (sp.E, math.e)}


class ExpressionError(ValueError):
    """User text that is not an allowed expression; `message` says why (and where)."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message




class BudgetExceeded(ValueError):
    """A document's expressions cost more than its Budget: the work stopped here. `message`
    says why, `limit` names the limit. Not an ExpressionError: it ends the document's
    expression work, it is not a problem of one expression."""

    def __init__(self, message: str, limit: str):
        super().__init__(message)
        self.message, self.limit = message, limit


class Budget:
    """The work one document's expressions may cost: tree nodes built (every parsed
    expression, derivative and compiled program counts) and the CPU seconds of this thread
    since the budget was made. Checked as each stage finishes and while each derivative is
    measured, so the work stops once past either limit (ExpressionLimits gives both).
    """

    def __init__(self, max_cost: int, max_seconds: float = math.inf, cost_name: str = "the expression cost limit",
                 seconds_name: str = "the expression time limit"):
        self.limit, self.max_seconds, self.cost_name, self.seconds_name = int(max_cost), max_seconds, cost_name, \
            seconds_name
        self.used, self.started = 0, time.thread_time()

    def remaining(self) -> int:
        return self.limit - self.used

    def charge(self, units: int) -> None:
        self.used += units
        if self.used > self.limit:
            raise BudgetExceeded(f"the document's expressions cost more than {self.limit} units ({self.cost_name}: "
                                 "tree nodes parsed, differentiated and compiled); simplify them or use fewer",
                                 self.cost_name)
        if time.thread_time() - self.started > self.max_seconds:
            raise BudgetExceeded(f"the document's expressions took more than {self.max_seconds:g} s of CPU to parse, "
                                 f"differentiate and compile ({self.seconds_name}); simplify them or use fewer",
                                 self.seconds_name)


class Select(sp.Function):
    """Select(condition, a, b): a where the condition holds, else b.

    Our own piecewise node for `a if c else b`, where(), step() and the derivatives of min/max.
    sympy's Piecewise solves inequalities when a condition contains another Piecewise (seconds
    for min(t, max(t, 1)), unbounded in general); this node does no such evaluation, and its
    derivative is that of the branches (almost everywhere). It compiles to a jump, so only the
    chosen branch is evaluated.
    """
    nargs = 3

    @classmethod
    def eval(cls, condition, a, b):
        if a == b:  # e.g. the derivative of a step
            return a

    def _eval_derivative(self, v):
        condition, a, b = self.args
        return Select(condition, a.diff(v), b.diff(v))


class _Condition(sp.Function):
    """A truth value (1.0 or 0.0 when compiled) of a Select; never differentiated."""

    def _eval_derivative(self, v):
        return sp.S.Zero


class Less(_Condition):
    nargs = 2


class LessEq(_Condition):
    nargs = 2


class Equal(_Condition):
    nargs = 2


class NotEqual(_Condition):
    nargs = 2


class AllOf(_Condition):
    pass


class AnyOf(_Condition):
    pass


class Negation(_Condition):
    nargs = 1


class MinOf(sp.Function):
    """min(a, b) without duplicating a and b (sympy's Min differentiates to Heaviside terms)."""
    nargs = 2
    pick = "min"

    def _eval_derivative(self, v):
        a, b = self.args
        # min(a, b) is a unless b < a (Python's rule), so its derivative is a' where a <= b
        return Select(LessEq(a, b) if self.pick == "min" else LessEq(b, a), a.diff(v), b.diff(v))


class MaxOf(MinOf):
    pick = "max"


class Hermite(sp.Function):
    """Hermite(s, k): k-th derivative of the smooth step 3s^2 - 2s^3 clamped to 0 (s <= 0) and 1 (s >= 1)."""
    nargs = 2

    @classmethod
    def eval(cls, s, k):
        if k > 3:
            return sp.S.Zero

    def fdiff(self, argindex=1):
        return Hermite(self.args[0], self.args[1] + 1)


def _hermite(s: float, k: int) -> float:
    if s <= 0 or s >= 1:
        return 1.0 if (k == 0 and s >= 1) else 0.0
    return s * s * (3 - 2 * s) if k == 0 else 6 * s * (1 - s) if k == 1 else 6 - 12 * s if k == 2 else -12.0


def _smoothstep(x, x0, x1):
    # Cubic Hermite from 0 at x0 to 1 at x1: C1, so a velocity built from it stays continuous.
    return Hermite((x - x0) / (x1 - x0), 0)


def _fold(node):
    """min(a, b, c) as MinOf(MinOf(a, b), c)."""
    def build(*args):
        acc = args[0]
        for a in args[1:]:
            acc = node(acc, a)
        return acc
    return build


def _float_sign(x):
    return 0.0 if x == 0 else math.copysign(1.0, x)


# name -> (allowed argument counts (min, max), sympy builder, float evaluator for constant folding)
FUNCTIONS: dict[str, tuple[tuple[int, int], Callable, Callable]] = {
    "sin": ((1, 1), sp.sin, math.sin),
    "cos": ((1, 1), sp.cos, math.cos),
    "tan": ((1, 1), sp.tan, math.tan),
    "asin": ((1, 1), sp.asin, math.asin),
    "acos": ((1, 1), sp.acos, math.acos),
    "atan": ((1, 1), sp.atan, math.atan),
    "atan2": ((2, 2), sp.atan2, math.atan2),
    "sinh": ((1, 1), sp.sinh, math.sinh),
    "cosh": ((1, 1), sp.cosh, math.cosh),
    "tanh": ((1, 1), sp.tanh, math.tanh),
    "exp": ((1, 1), sp.exp, math.exp),
    "log": ((1, 1), sp.log, math.log),
    "sqrt": ((1, 1), sp.sqrt, math.sqrt),
    "abs": ((1, 1), sp.Abs, abs),
    "sign": ((1, 1), sp.sign, _float_sign),
    "floor": ((1, 1), sp.floor, math.floor),
    "ceil": ((1, 1), sp.ceiling, math.ceil),
    "min": ((2, 10), _fold(MinOf), min),
    "max": ((2, 10), _fold(MaxOf), max),
    "step": ((1, 1), lambda x: Select(LessEq(0, x), 1, 0), lambda x: 0.0 if x < 0 else 1.0),
    "smoothstep": ((3, 3), _smoothstep, lambda x, x0, x1: _hermite((x - x0) / (x1 - x0), 0)),
    "where": ((3, 3), None, None),  # where(condition, value_if_true, value_otherwise): _Builder.where
}
# a OP b: (the condition node, the test for constants)
COMPARISONS = {ast.Lt: (Less, operator.lt), ast.LtE: (LessEq, operator.le),
               ast.Gt: (lambda a, b: Less(b, a), operator.gt), ast.GtE: (lambda a, b: LessEq(b, a), operator.ge),
               ast.Eq: (Equal, operator.eq), ast.NotEq: (NotEqual, operator.ne)}
OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
             ast.Div: operator.truediv, ast.Pow: operator.pow}
NONFINITE = {sp.zoo, sp.nan, sp.oo, -sp.oo}


def parse_expression(text: str, variables: Sequence[str] | Mapping[str, tuple[int, ...]],
                     parameters: Mapping[str, float] | None = None, budget: "Budget | None" = None) -> sp.Expr:
    """Parse user text into a sympy expression over `variables`.

    `variables`: scalar names (t, q, u), or a mapping of names to shapes: () for a scalar, (3,)
    for a vector, (3, 3) for a matrix, whose elements are written with constant indices
    (`loadVector[1]`, `stiffness[0][2]`) and become the symbols element_symbol(name, index).
    `parameters`: named constants (a document's `parameters` block). Raises ExpressionError with
    a message naming the offending construct and its column; BudgetExceeded past `budget`.
    """
    shapes = dict(variables) if isinstance(variables, Mapping) else {v: () for v in variables}
    if not isinstance(text, str):
        raise ExpressionError(f"expected a string, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"expression is too long ({len(text)} characters, at most {MAX_LENGTH})")
    if not text.strip():
        raise ExpressionError("expression is empty")
    if "\x00" in text:  # checked here: CPython's parser reports them as SyntaxError or ValueError
        raise ExpressionError("expression contains null bytes")
    # Bracket depth before ast.parse: CPython's parser recurses on nesting.
    depth = deepest = 0
    for ch in text:
        depth += (ch in "([{") - (ch in ")]}")
        deepest = max(deepest, depth)
    if deepest > MAX_DEPTH:
        raise ExpressionError(f"expression is nested too deeply (more than {MAX_DEPTH} levels)")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        where = f" at column {exc.offset}" if exc.offset else ""
        raise ExpressionError(f"syntax error{where}: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError):  # pathological unbracketed chains
        raise ExpressionError("expression cannot be parsed") from None
    nodes = _check_shape(tree.body)
    if budget is not None:
        budget.charge(nodes)
    expr = _Builder(shapes, dict(parameters or {})).build(tree.body)[0]
    if any(sum(not f.is_number for f in m.args) > MAX_FACTORS for m in expr.atoms(sp.Mul)):
        raise ExpressionError(
            f"a product of more than {MAX_FACTORS} varying factors is too costly to differentiate")
    return expr


def _check_shape(root: ast.AST) -> int:
    """Depth and size limits, iteratively, before the recursive builder runs.

    Depth counts what the builder recurses on: chains (a + b - c * d, ---t) are built in a loop
    and cost no depth, so long sums are fine while 31 nested brackets are not.
    """
    stack, count = [(root, 1)], 0
    while stack:
        node, depth = stack.pop()
        count += 1
        if depth > MAX_DEPTH:
            raise ExpressionError(f"expression is nested too deeply (more than {MAX_DEPTH} levels)")
        if count > MAX_NODES:
            raise ExpressionError(f"expression is too large (more than {MAX_NODES} elements)")
        stack.extend((child, depth + (not _continues_chain(node, child)))
                     for child in ast.iter_child_nodes(node) if isinstance(child, ast.expr))
    return count


def _is_chain(node: ast.AST) -> bool:
    return isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div))


def _is_sign(node: ast.AST) -> bool:
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub))


def _continues_chain(parent: ast.AST, child: ast.AST) -> bool:
    return (_is_sign(parent) and _is_sign(child)) or (
        _is_chain(parent) and _is_chain(child) and child is parent.left)


def _number_text(v: float) -> str:
    """A short rendering of a possibly huge number for messages (f'{v:g}' overflows on big ints)."""
    digits = str(v) if not isinstance(v, int) else str(abs(v))
    if len(digits) <= 12:
        return digits
    return f"{v:.3g}" if isinstance(v, float) else f"a {len(digits)}-digit integer"


def _where(node: ast.AST) -> str:
    return f" (column {node.col_offset + 1})" if hasattr(node, "col_offset") else ""


class _Builder:
    """Translates an allowed AST into (sympy expression, float value if constant else None)."""

    def __init__(self, shapes: dict[str, tuple[int, ...]], parameters: dict[str, float]):
        self.shapes, self.parameters = shapes, parameters

    def fail(self, node: ast.AST, message: str):
        raise ExpressionError(message + _where(node))

    def build(self, node: ast.AST) -> tuple[sp.Expr, float | None]:
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, ast.Name):
            return self.name(node)
        if _is_sign(node):  # ---t: a loop, not recursion (see _check_shape)
            negate, inner = False, node
            while _is_sign(inner):
                negate ^= isinstance(inner.op, ast.USub)
                inner = inner.operand
            expr, value = self.build(inner)
            return self.checked(node, -expr, None if value is None else -value) if negate else (expr, value)
        if _is_chain(node):  # a + b * c - d is left-nested: fold it left to right in a loop
            spine = []
            while _is_chain(node):
                spine.append(node)
                node = node.left
            acc = self.build(node)
            for link in reversed(spine):
                acc = self.binary(link, acc, self.build(link.right))
            return acc
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            if any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow) for n in ast.walk(node.right)):
                self.fail(node, "power towers (a**b**c) are not allowed")
            return self.binary(node, self.build(node.left), self.build(node.right))
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.IfExp):
            return self.select(node, node.test, node.body, node.orelse, "the condition of 'a if condition else b'")
        if isinstance(node, ast.Subscript):
            return self.element(node)
        self.fail(node, self.describe(node))

    def describe(self, node: ast.AST) -> str:
        if isinstance(node, ast.Attribute):
            return f"attribute access (.{node.attr}) is not allowed"
        if isinstance(node, ast.Subscript):
            return "indexing ([...]) is only allowed on a vector or matrix argument"
        if isinstance(node, ast.Lambda):
            return "lambda is not allowed"
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return "comprehensions are not allowed"
        if isinstance(node, (ast.Compare, ast.BoolOp)) or (isinstance(node, ast.UnaryOp)
                                                          and isinstance(node.op, ast.Not)):
            return ("a comparison (and, or, not) is only allowed as a condition: "
                    "a if condition else b, where(condition, a, b)")
        if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.BoolOp)):
            return f"operator {type(node.op).__name__} is not allowed (use + - * / **)"
        return f"{type(node).__name__} is not allowed in an expression"

    def constant(self, node: ast.Constant):
        v = node.value
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            what = "strings" if isinstance(v, (str, bytes)) else f"{type(v).__name__} constants"
            self.fail(node, f"{what} are not allowed")
        if not abs(v) <= MAX_MAGNITUDE:  # also rejects inf/nan (1e999)
            self.fail(node, f"number {_number_text(v)} is too large (at most {MAX_MAGNITUDE:g} in magnitude)")
        # Integers stay exact so 2*pi and 1/3 are exact; floats keep their value as written.
        return (sp.Integer(v) if isinstance(v, int) else sp.Float(v)), float(v)

    def name(self, node: ast.Name):
        shape = self.shapes.get(node.id)
        if shape == ():
            return symbol(node.id), None
        if shape is not None:
            self.fail(node, f"'{node.id}' has {len(shape)} dimension(s): index it with constant integers, "
                            f"e.g. {node.id}{'[0]' * len(shape)}")
        if node.id in self.parameters:
            v = self.parameters[node.id]
            return (sp.Integer(v) if isinstance(v, int) else sp.Float(v)), float(v)
        if node.id in CONSTANTS:
            return CONSTANTS[node.id]
        allowed = ", ".join((*self.shapes, *self.parameters, *CONSTANTS))
        if node.id in SYMBOLS:
            self.fail(node, f"'{node.id}' may not appear in this expression (allowed names: {allowed})")
        if node.id in FUNCTIONS:
            self.fail(node, f"function '{node.id}' must be called, e.g. {node.id}(t)")
        self.fail(node, f"unknown name '{node.id}' (allowed names: {allowed})")

    def binary(self, node: ast.BinOp, left_built, right_built):
        (left, lv), (right, rv) = left_built, right_built
        if isinstance(node.op, ast.Pow) and rv is not None and not abs(rv) <= MAX_EXPONENT:
            self.fail(node, f"exponent {rv:.3g} is too large (at most {MAX_EXPONENT} in magnitude)")
        if isinstance(node.op, ast.Div) and right == 0:
            self.fail(node, "division by zero")
        apply, value = OPERATORS[type(node.op)], None
        if lv is not None and rv is not None:
            try:  # float() raises TypeError on a complex power, e.g. (-8)**(1/3)
                value = float(apply(lv, rv))
            except (ArithmeticError, TypeError):
                self.fail(node, "constant subexpression is undefined or too large")
        return self.checked(node, apply(left, right), value)

    def call(self, node: ast.Call):
        if not isinstance(node.func, ast.Name):
            self.fail(node, self.describe(node.func) if isinstance(node.func, ast.Attribute)
                      else "only plain function names can be called, e.g. sin(t)")
        fname = node.func.id
        if fname not in FUNCTIONS:
            self.fail(node, f"unknown function '{fname}' (allowed: {', '.join(sorted(FUNCTIONS))})")
        if node.keywords:
            self.fail(node, f"keyword arguments are not allowed in {fname}()")
        if any(isinstance(a, ast.Starred) for a in node.args):
            self.fail(node, f"starred arguments are not allowed in {fname}()")
        (lo, hi), build, evaluate = FUNCTIONS[fname]
        if not lo <= len(node.args) <= hi:
            count = str(lo) if lo == hi else f"{lo} to {hi}"
            self.fail(node, f"{fname}() takes {count} arguments, got {len(node.args)}")
        if fname == "where":
            return self.where(node)
        built = [self.build(a) for a in node.args]
        args, values = [b[0] for b in built], [b[1] for b in built]
        if fname == "smoothstep" and (args[2] - args[1]).is_zero:
            self.fail(node, "smoothstep(x, x0, x1) needs x0 != x1")
        value = None
        if all(v is not None for v in values):
            try:
                value = float(evaluate(*values))
            except (ArithmeticError, ValueError):
                self.fail(node, f"{fname}() is undefined or too large for these constant arguments")
        return self.checked(node, build(*args), value)

    def element(self, node: ast.Subscript):
        """vector[i], matrix[i][j]: one symbol per element, the indices constant integers in range."""
        indices, inner = [], node
        while isinstance(inner, ast.Subscript):
            index = inner.slice
            if not (isinstance(index, ast.Constant) and type(index.value) is int and index.value >= 0):
                self.fail(index, "an index must be a constant non-negative integer, e.g. [0]")
            indices.append(index.value)
            inner = inner.value
        shape = self.shapes.get(inner.id) if isinstance(inner, ast.Name) else None
        if not shape:
            self.fail(node, self.describe(node))
        indices.reverse()
        if len(indices) != len(shape) or any(i >= n for i, n in zip(indices, shape)):
            self.fail(node, f"'{inner.id}' has shape {list(shape)}: index it with {len(shape)} "
                            f"index(es) below {', '.join(map(str, shape))}")
        return element_symbol(inner.id, tuple(indices)), None

    def where(self, node: ast.Call):
        return self.select(node, *node.args, "the first argument of where()")

    def select(self, node: ast.AST, test: ast.AST, then: ast.AST, otherwise: ast.AST, what: str):
        condition, holds = self.condition(test, what)
        (a, av), (b, bv) = self.build(then), self.build(otherwise)
        if holds is not None:  # constant: decide now
            return (a, av) if holds else (b, bv)
        return self.checked(node, Select(condition, a, b), None)

    def condition(self, node: ast.AST, what: str) -> tuple[sp.Expr, bool | None]:
        """(condition node, its truth if constant else None) of a comparison, and/or/not of them."""
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            c, holds = self.condition(node.operand, "the operand of not")
            return Negation(c), None if holds is None else not holds
        if isinstance(node, ast.BoolOp):
            every = isinstance(node.op, ast.And)
            parts = [self.condition(v, f"an operand of {'and' if every else 'or'}") for v in node.values]
            if any(holds is (not every) for _, holds in parts):  # a constant False in and, True in or
                return sp.S.Zero, not every
            varying = [c for c, holds in parts if holds is None]
            if not varying:
                return sp.S.Zero, every
            return (varying[0] if len(varying) == 1 else (AllOf if every else AnyOf)(*varying)), None
        if not isinstance(node, ast.Compare):
            self.fail(node, f"{what} must be a comparison, e.g. t < 1")
        if any(type(op) not in COMPARISONS for op in node.ops):
            self.fail(node, "conditions may use < <= > >= == != only")
        operands = [self.build(n) for n in (node.left, *node.comparators)]
        # a < b < c means a < b and b < c
        tests = [(COMPARISONS[type(op)], x, y) for op, x, y in zip(node.ops, operands, operands[1:])]
        if all(x[1] is not None and y[1] is not None for _, x, y in tests):
            return sp.S.Zero, all(compare(x[1], y[1]) for (_, compare), x, y in tests)
        nodes = [build(x[0], y[0]) for (build, _), x, y in tests]
        return (nodes[0] if len(nodes) == 1 else AllOf(*nodes)), None

    def checked(self, node: ast.AST, expr: sp.Expr, value: float | None):
        """Keep constants bounded so later operations on them stay cheap."""
        if value is not None and not abs(value) <= MAX_MAGNITUDE:
            self.fail(node, f"constant subexpression is too large (at most {MAX_MAGNITUDE:g})")
        if isinstance(expr, sp.Rational) and max(expr.p.bit_length(),
                                                 expr.q.bit_length()) > MAX_RATIONAL_BITS:
            self.fail(node, "constant subexpression is too large or too precise")
        if expr in NONFINITE:
            self.fail(node, "expression is undefined (division by zero or infinity)")
        return expr, value


def derivative(expr: sp.Expr, variable: str, budget: Budget | None = None) -> sp.Expr:
    """d expr / d variable; steps, floor and ceil count as flat (derivative zero almost everywhere)."""
    d = sp.diff(expr, symbol(variable))
    d = d.xreplace({e: sp.S.Zero for e in d.atoms(sp.DiracDelta, sp.Derivative, sp.Subs)
                    if isinstance(e, sp.DiracDelta) or _is_floor_derivative(e)})
    if d.has(sp.Derivative, sp.Subs):
        raise ExpressionError(f"cannot differentiate with respect to {variable}")
    _charge_size(d, budget, f"the derivative with respect to {variable} is too large")
    return d


def _charge_size(e: sp.Expr, budget: Budget | None, too_large: str) -> None:
    """Count e's tree nodes against MAX_DERIVATIVE_SIZE and the budget, stopping at either."""
    cap = MAX_DERIVATIVE_SIZE if budget is None else min(MAX_DERIVATIVE_SIZE, budget.remaining() + 1)
    size = 0
    for size, _ in enumerate(sp.preorder_traversal(e), 1):
        if size > cap:
            break
    if budget is not None:
        budget.charge(size)
    if size > MAX_DERIVATIVE_SIZE:
        raise ExpressionError(too_large)


def _is_floor_derivative(e: sp.Basic) -> bool:
    if isinstance(e, sp.Subs):  # the chain rule's d floor(x)/dx at x = 3*t
        e = e.expr
    return isinstance(e, sp.Derivative) and isinstance(e.expr, (sp.floor, sp.ceiling))


# sympy node -> opcode, for nodes whose arguments are all evaluated first
_OPCODES = {sp.sin: P.SIN, sp.cos: P.COS, sp.tan: P.TAN, sp.asin: P.ASIN, sp.acos: P.ACOS, sp.atan: P.ATAN,
            sp.atan2: P.ATAN2, sp.sinh: P.SINH, sp.cosh: P.COSH, sp.tanh: P.TANH, sp.exp: P.EXP, sp.log: P.LOG,
            sp.Abs: P.ABS, sp.sign: P.SIGN, sp.floor: P.FLOOR, sp.ceiling: P.CEIL, MinOf: P.MIN, MaxOf: P.MAX,
            Less: P.LT, LessEq: P.LE, Equal: P.EQ, NotEqual: P.NE, Negation: P.NOT}


def to_program(expr: sp.Expr, slots: Mapping[str, int], budget: Budget | None = None) -> P.ProgramSet:
    """expr as a one-program ProgramSet; `slots` maps each variable's symbol name to its index in x.

    Common subexpressions are computed once (temporaries), also across the branches of a
    condition: a hoisted value that is undefined where its branch is not taken (log(t) in
    `log(t) if t > 0 else 0`) is NaN in an unused temporary and harms nothing.
    """
    try:
        replacements, (reduced,) = sp.cse([expr])
        emitter = _Emitter(slots, {sym: k for k, (sym, _) in enumerate(replacements)})
        for k, (_, e) in enumerate(replacements):
            emitter.emit(e)
            emitter.push(P.STORE, k)
        emitter.emit(reduced)
    except (RecursionError, MemoryError):
        raise ExpressionError("expression is too complex to compile") from None
    if budget is not None:
        budget.charge(len(emitter.code))
    return P.ProgramSet(np.array(emitter.code, np.int64).ravel(), np.array(emitter.consts, float),
                        np.array([0, len(emitter.code)], np.int64), emitter.deepest + len(replacements))


class _Emitter:
    """Postfix code of sympy trees (see programs.py for the instruction set)."""

    def __init__(self, slots: Mapping[str, int], temps: dict[sp.Symbol, int]):
        self.slots, self.temps = slots, temps
        self.code: list[list[int]] = []
        self.consts: list[float] = []
        self.depth = self.deepest = 0

    def push(self, op: int, arg: int = 0) -> None:
        pops, pushes = P.EFFECT[op]
        self.depth += pushes - pops
        self.deepest = max(self.deepest, self.depth)
        self.code.append([op, arg])

    def constant(self, value: float) -> None:
        if not math.isfinite(value):  # e.g. t*1e100*1e100*1e100*1e100, whose coefficients sympy multiplies out
            raise ExpressionError(f"a constant of the expression is undefined or beyond the float range ({value})")
        self.consts.append(value)
        self.push(P.CONST, len(self.consts) - 1)

    def emit(self, e: sp.Basic) -> None:
        if e.is_Number or isinstance(e, sp.NumberSymbol):
            return self.constant(float(e))
        if e.is_Symbol:
            if e in self.temps:
                return self.push(P.LOAD, self.temps[e])
            if e.name not in self.slots:
                raise ExpressionError(f"'{e.name}' is not a variable of this expression")
            return self.push(P.VAR, self.slots[e.name])
        if e.is_Add or e.is_Mul and not any(_is_reciprocal(f) for f in e.args):
            op = P.ADD if e.is_Add else P.MUL
            self.emit(e.args[0])
            for a in e.args[1:]:
                self.emit(a)
                self.push(op)
            return None
        if e.is_Mul:  # a*b/(c*d) as a*b/c/d
            numerator = [f for f in e.args if not _is_reciprocal(f)]
            self.emit(sp.Mul(*numerator))
            for f in e.args:
                if _is_reciprocal(f):
                    self.emit(f.base if f.exp == -1 else sp.Pow(f.base, -f.exp))
                    self.push(P.DIV)
            return None
        if e.is_Pow:
            base, exponent = e.args
            if exponent == sp.S.Half:
                self.emit(base)
                return self.push(P.SQRT)
            if _is_reciprocal(e):
                self.constant(1.0)
                self.emit(base if exponent == -1 else sp.Pow(base, -exponent))
                return self.push(P.DIV)
            self.emit(base)
            self.emit(exponent)
            return self.push(P.POW)
        if isinstance(e, Select):
            return self.select(*e.args)
        if isinstance(e, Hermite):
            self.emit(e.args[0])
            return self.push(P.HERMITE, int(e.args[1]))
        if isinstance(e, (AllOf, AnyOf)):
            op = P.AND if isinstance(e, AllOf) else P.OR
            self.emit(e.args[0])
            for a in e.args[1:]:
                self.emit(a)
                self.push(op)
            return None
        op = _OPCODES.get(type(e))
        if op is None:
            raise ExpressionError(f"{type(e).__name__} cannot be compiled")
        for a in e.args:
            self.emit(a)
        return self.push(op)

    def select(self, condition, a, b) -> None:
        """condition; JUMP_IF_FALSE else; a; JUMP end; else: b; end:"""
        self.emit(condition)
        self.push(P.JUMP_IF_FALSE)
        to_else = len(self.code) - 1
        self.emit(a)
        self.push(P.JUMP)
        to_end = len(self.code) - 1
        self.code[to_else][1] = len(self.code)
        self.depth -= 1  # the else branch starts from the depth before a
        self.emit(b)
        self.code[to_end][1] = len(self.code)


def _is_reciprocal(f: sp.Basic) -> bool:
    return f.is_Pow and f.exp.is_Number and f.exp < 0


def compile_expression(expr: sp.Expr, variables: tuple[str, ...], label: str = "expression",
                       budget: Budget | None = None) -> Callable[..., float]:
    """A plain-float function f(*values) of the scalar `variables` (in that order), for Python
    callers (checks, tests): the program of to_program, run by the compiled evaluator. Raises
    EvaluationError ("<label> is undefined at t=..., q=...") where the expression is undefined
    (log of a negative, division by zero, overflow, a complex power).
    """
    program = to_program(expr, {v: k for k, v in enumerate(variables)}, budget)
    code, consts, start = program.code, program.consts, program.start
    work = np.empty(program.work_size)

    def f(*args: float) -> float:
        value = P.eval_program(code, consts, start, 0, np.array(args, dtype=float), work)
        if not math.isfinite(value):
            at = ", ".join(f"{v}={a:.6g}" for v, a in zip(variables, args))
            raise EvaluationError(f"{label} is undefined at {at}")
        return value

    return f
