"""A safe expression language for motion laws: whitelisted user text -> sympy -> fast float functions.

    expr = parse_expression("0.1*sin(2*pi*t)", ("t",))    # sympy.Expr; ExpressionError if not allowed
    d = derivative(expr, "t")                              # symbolic; a.e. derivative of kinks and steps
    f = compile_expression(d, ("t",))                      # f(0.25) -> float

User text never reaches eval/exec/sympify: it is parsed by `ast` and every node is translated
by hand, so only numbers, the allowed variables, pi, e, + - * / **, and the functions in
FUNCTIONS can appear. Length, nesting depth, node count, constant magnitudes and exponents are
bounded *before* sympy builds anything, so parsing takes bounded time and memory.
"""
from __future__ import annotations

import ast
import math
import operator
from typing import Callable

import sympy as sp

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

SYMBOLS = {name: sp.Symbol(name, real=True) for name in ("t", "q", "u")}
CONSTANTS = {"pi": (sp.pi, math.pi), "e": (sp.E, math.e)}


class ExpressionError(ValueError):
    """User text that is not an allowed expression; `message` says why (and where)."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class EvaluationError(ArithmeticError):
    """A compiled expression is undefined at the given arguments (log(-1), 1/0, overflow)."""


class Select(sp.Function):
    """Select(a, b, s1, strict1, s2, strict2, ...): a where every s_i > 0 (>= 0 if strict_i is 0),
    else b.

    Our own piecewise node for where(), step() and the derivatives of min/max. sympy's Piecewise solves inequalities when a
    condition contains another Piecewise (seconds for min(t, max(t, 1)), unbounded in general);
    this node does no such evaluation, its derivative is that of the branches (almost
    everywhere), and it prints as a Python conditional, so only the chosen branch is evaluated.
    """

    @classmethod
    def eval(cls, a, b, *conditions):
        if a == b:  # e.g. the derivative of a step
            return a

    def _eval_derivative(self, v):
        a, b, *conditions = self.args
        return Select(a.diff(v), b.diff(v), *conditions)

    def _pythoncode(self, printer):  # the method lambdify's "math" printer looks for
        a, b, *conditions = self.args
        tests = " and ".join(f"({printer._print(s)}) {'>' if strict else '>='} 0"
                             for s, strict in zip(conditions[::2], conditions[1::2]))
        return f"(({printer._print(a)}) if {tests} else ({printer._print(b)}))"


class MinOf(sp.Function):
    """min(a, b) without duplicating a and b (sympy's Min differentiates to Heaviside terms)."""
    nargs = 2
    pick = "min"

    def _eval_derivative(self, v):
        a, b = self.args
        return Select(a.diff(v), b.diff(v), (b - a) if self.pick == "min" else (a - b), INCLUSIVE)

    def _pythoncode(self, printer):
        return f"{self.pick}({printer._print(self.args[0])}, {printer._print(self.args[1])})"


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

    def _pythoncode(self, printer):
        return f"_hermite({printer._print(self.args[0])}, {self.args[1]})"


def _hermite(s: float, k: int) -> float:
    if s <= 0 or s >= 1:
        return 1.0 if (k == 0 and s >= 1) else 0.0
    return s * s * (3 - 2 * s) if k == 0 else 6 * s * (1 - s) if k == 1 else 6 - 12 * s if k == 2 else -12.0


STRICT, INCLUSIVE = sp.Integer(1), sp.Integer(0)


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
    "step": ((1, 1), lambda x: Select(1, 0, x, INCLUSIVE), lambda x: 0.0 if x < 0 else 1.0),
    "smoothstep": ((3, 3), _smoothstep, lambda x, x0, x1: _hermite((x - x0) / (x1 - x0), 0)),
    "where": ((3, 3), None, None),  # where(condition, value_if_true, value_otherwise): _Builder.where
}
# a OP b as a Select condition: sign * (b - a) > 0 (strict) or >= 0; and for constants
COMPARISONS = {ast.Lt: (1, STRICT, operator.lt), ast.LtE: (1, INCLUSIVE, operator.le),
               ast.Gt: (-1, STRICT, operator.gt), ast.GtE: (-1, INCLUSIVE, operator.ge)}
OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
             ast.Div: operator.truediv, ast.Pow: operator.pow}
NONFINITE = {sp.zoo, sp.nan, sp.oo, -sp.oo}


def parse_expression(text: str, variables: tuple[str, ...]) -> sp.Expr:
    """Parse user text into a sympy expression over `variables` (a subset of t, q, u).

    Raises ExpressionError with a message naming the offending construct and its column.
    """
    if not set(variables) <= set(SYMBOLS):
        raise ValueError(f"variables must be among {tuple(SYMBOLS)}")  # a caller's bug, not user input
    if not isinstance(text, str):
        raise ExpressionError(f"expected a string, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"expression is too long ({len(text)} characters, at most {MAX_LENGTH})")
    if not text.strip():
        raise ExpressionError("expression is empty")
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
    except (ValueError, RecursionError, MemoryError):  # null bytes; pathological unbracketed chains
        raise ExpressionError("expression cannot be parsed") from None
    _check_shape(tree.body)
    expr = _Builder(variables).build(tree.body)[0]
    if any(sum(not f.is_number for f in m.args) > MAX_FACTORS for m in expr.atoms(sp.Mul)):
        raise ExpressionError(
            f"a product of more than {MAX_FACTORS} varying factors is too costly to differentiate")
    return expr


def _check_shape(root: ast.AST) -> None:
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

    def __init__(self, variables: tuple[str, ...]):
        self.variables = variables

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
        self.fail(node, self.describe(node))

    def describe(self, node: ast.AST) -> str:
        if isinstance(node, ast.Attribute):
            return f"attribute access (.{node.attr}) is not allowed"
        if isinstance(node, ast.Subscript):
            return "indexing ([...]) is not allowed"
        if isinstance(node, ast.Lambda):
            return "lambda is not allowed"
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return "comprehensions are not allowed"
        if isinstance(node, ast.Compare):
            return "a comparison is only allowed as the condition of where(condition, a, b)"
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
        if node.id in CONSTANTS:
            return CONSTANTS[node.id]
        if node.id in self.variables:
            return SYMBOLS[node.id], None
        allowed = ", ".join((*self.variables, *CONSTANTS))
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

    def where(self, node: ast.Call):
        cond = node.args[0]
        if not isinstance(cond, ast.Compare):
            self.fail(cond, "the first argument of where() must be a comparison, e.g. t < 1")
        if any(type(op) not in COMPARISONS for op in cond.ops):
            self.fail(cond, "where() conditions may use < <= > >= only")
        operands = [self.build(n) for n in (cond.left, *cond.comparators)]
        (a, av), (b, bv) = self.build(node.args[1]), self.build(node.args[2])
        # a < b < c means a < b and b < c
        tests = [(COMPARISONS[type(op)], x, y) for op, x, y in zip(cond.ops, operands, operands[1:])]
        if all(x[1] is not None and y[1] is not None for _, x, y in tests):  # constant: decide now
            holds = all(compare(x[1], y[1]) for (_, _, compare), x, y in tests)
            return (a, av) if holds else (b, bv)
        conditions = [c for (sign, strict, _), (x, _), (y, _) in tests for c in (sign * (y - x), strict)]
        return self.checked(node, Select(a, b, *conditions), None)

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


def derivative(expr: sp.Expr, variable: str) -> sp.Expr:
    """d expr / d variable; steps, floor and ceil count as flat (derivative zero almost everywhere)."""
    d = sp.diff(expr, SYMBOLS[variable])
    d = d.xreplace({e: sp.S.Zero for e in d.atoms(sp.DiracDelta, sp.Derivative, sp.Subs)
                    if isinstance(e, sp.DiracDelta) or _is_floor_derivative(e)})
    if d.has(sp.Derivative, sp.Subs):
        raise ExpressionError(f"cannot differentiate with respect to {variable}")
    for size, _ in enumerate(sp.preorder_traversal(d)):
        if size > MAX_DERIVATIVE_SIZE:
            raise ExpressionError(f"the derivative with respect to {variable} is too large")
    return d


def _is_floor_derivative(e: sp.Basic) -> bool:
    if isinstance(e, sp.Subs):  # the chain rule's d floor(x)/dx at x = 3*t
        e = e.expr
    return isinstance(e, sp.Derivative) and isinstance(e.expr, (sp.floor, sp.ceiling))


def compile_expression(expr: sp.Expr, variables: tuple[str, ...],
                       label: str = "expression") -> Callable[..., float]:
    """A plain-float function f(*values) of `variables` (in that order) for scalar calls.

    Python's math module, not numpy: about a microsecond per scalar call. Raises EvaluationError
    ("<label> is undefined at t=..., q=...") where the expression is undefined (log of a
    negative, division by zero, overflow, a complex power).
    """
    try:
        # Common subexpressions are shared, except across where() branches: hoisting a branch's
        # subexpression (log(t) in where(t > 0, log(t), 0)) would evaluate it where undefined.
        raw = sp.lambdify([SYMBOLS[v] for v in variables], expr, cse=not expr.has(Select),
                          modules=[{"_hermite": _hermite}, "math"])
    except (RecursionError, MemoryError):
        raise ExpressionError(f"{label} is too complex to compile") from None

    def f(*args: float) -> float:
        try:
            return float(raw(*args))
        except (ArithmeticError, ValueError, TypeError):  # TypeError: float() of a complex power
            at = ", ".join(f"{v}={a:.6g}" for v, a in zip(variables, args))
            raise EvaluationError(f"{label} is undefined at {at}") from None

    return f
