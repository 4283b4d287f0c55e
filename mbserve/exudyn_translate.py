"""Python user functions as mbserve expressions: `export(mbs, ..., user_functions="translate")`.

    translation = translate(function, sig, item, index, span, taken)   # Translation or Untranslatable

The function's source (inspect.getsource; a def or a lambda) is read with `ast` and executed
symbolically: its parameters become Exudyn's argument names for the parameter (by position:
mbs, t, then user_functions.SIGNATURES' arguments), local variables are substituted, `if`
statements and `a if c else b` become conditionals (the rest of the function is continued in
each branch), numeric globals and closure constants become the document's `parameters` (or
literals), math/numpy functions the expression language has keep their name, the script's own
helper functions are inlined, lists and numpy arrays become one expression per component, and
arithmetic on constants only is done here in Python. Anything else (mbs, loops, side effects,
unknown calls) is refused with the reason.

The result is then checked: the Python function and the compiled expression (the programs a
solve runs) are evaluated at sample arguments (t over the solve's time span, the varying
arguments at several magnitudes) and must agree to 1e-12 relative; a translation that does not
is refused, never used.
"""
from __future__ import annotations

import ast
import builtins
import inspect
import keyword
import math
import operator
import textwrap
import types
from dataclasses import dataclass, field

import numpy as np

from multibody.programs import ProgramSet
from multibody.schema import PARAMETER_NAME, RESERVED_NAMES
from multibody.user_functions import Signature, UserFunctions

TOLERANCE = 1e-12  # relative, per sample; plus 1e-14 of the component's largest magnitude over the samples
SAMPLES = 40
MAX_INLINE_DEPTH = 8
MAX_UNROLL = 64  # items of a for loop
SCALES = (0.0, 1e-3, 0.1, 1.0, 10.0)  # magnitudes of the varying arguments' samples

# Python callables -> the expression language's function of that name
_ALIASES = {"sin": ("sin",), "cos": ("cos",), "tan": ("tan",), "asin": ("asin", "arcsin"),
            "acos": ("acos", "arccos"), "atan": ("atan", "arctan"), "atan2": ("atan2", "arctan2"),
            "sinh": ("sinh",), "cosh": ("cosh",), "tanh": ("tanh",), "exp": ("exp",), "log": ("log",),
            "sqrt": ("sqrt",), "abs": ("abs", "fabs", "absolute"), "sign": ("sign",), "floor": ("floor",),
            "ceil": ("ceil",), "min": ("min",), "max": ("max",)}
FUNCTION_NAMES = {getattr(module, alias): name for name, aliases in _ALIASES.items() for alias in aliases
                  for module in (math, np, builtins) if hasattr(module, alias)}
# Exudyn's symbolic functions (exudyn.symbolic, used in symbolic user functions) stand for the numeric ones of
# their name
SYMBOLIC_MODULE = "exudyn.exudynCPP.symbolic"
NUMERIC_BY_NAME = {name: f for f, name in FUNCTION_NAMES.items() if getattr(f, "__name__", "") == name}
FOLDED = (np.array, np.asarray, float, int, len, range, np.heaviside)  # called here when all arguments are constants
_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
              ast.Pow: operator.pow, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}
_COMPARISONS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
                ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Is: operator.is_, ast.IsNot: operator.is_not}
_NUMBER = (int, float, np.integer, np.floating)


class Untranslatable(Exception):
    """The function has no expression form here (or its translation disagrees); str() says why."""


@dataclass
class Translation:
    value: str | list[str]  # the expression(s) for the document
    parameters: dict[str, float]  # the named constants it uses, for the document's parameters block


@dataclass
class Py:
    """A Python object the function reads (a global, closure constant or a value computed from
    them alone); `name`: the global's name, for the parameters block."""
    obj: object
    name: str | None = None


@dataclass
class Vec:
    """A vector of scalar expressions: a numpy array (elementwise arithmetic) or a list."""
    items: list
    array: bool


class _Bind(ast.stmt):
    """An unrolled loop's `target = item` (item already a value)."""
    _fields = ("target", "value")


class _Mbs:
    """The `mbs` argument: the system's state, which an expression cannot read."""


@dataclass
class _Context:
    sig: Signature
    taken: dict[str, float]  # the document's parameters so far
    parameters: dict[str, float] = field(default_factory=dict)


def translate(function, sig: Signature, item: dict, index: int, span: tuple[float, float],
              taken: dict[str, float], mbs=None, symbolic: bool = False) -> Translation:
    """`function` (Exudyn's user function of `item`, list index `index`) as an expression of
    signature `sig`, checked against the function over the time span `span`; `taken`: the
    document's parameters so far (names are not reused for other values). Untranslatable says why."""
    if not isinstance(function, types.FunctionType):
        raise Untranslatable(f"it is a {type(function).__name__}, not a Python function")
    context = _Context(sig, taken)
    arguments: list = [_Mbs(), ast.Name("t")]
    for name, shape in sig.arguments.items():
        arguments.append(Vec([_element(name, i) for i in range(shape[0])], array=symbolic) if shape else ast.Name(name))
    result = _Function(context, 0).call(function, arguments, {})
    value = _result(result, sig, context)
    _check(function, sig, value, context.parameters, item, index, span, mbs, symbolic)
    return Translation(value, context.parameters)


def _element(name: str, i: int) -> ast.expr:
    return ast.Subscript(ast.Name(name), ast.Constant(i))


class _Function:
    """Symbolic execution of one function body (depth: how deeply helpers are inlined)."""

    def __init__(self, context: _Context, depth: int):
        self.context, self.depth = context, depth

    def call(self, function, arguments: list, keywords: dict):
        if self.depth > MAX_INLINE_DEPTH:
            raise Untranslatable(f"helper functions are nested more than {MAX_INLINE_DEPTH} deep")
        name = getattr(function, "__name__", "?")
        node = _parse(function)
        try:
            bound = inspect.signature(function).bind(*arguments, **keywords)
        except TypeError as exc:
            raise Untranslatable(f"{name} cannot take the arguments it is given ({exc})") from None
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in inspect.signature(function).parameters.values()):
            raise Untranslatable(f"{name} takes *args or **kwargs")
        bound.apply_defaults()
        env = {k: (v if isinstance(v, (ast.AST, Vec, Py, _Mbs)) else Py(v)) for k, v in bound.arguments.items()}
        self.function, self.names = function, _Names(function)
        body = [ast.Return(node.body)] if isinstance(node, ast.Lambda) else node.body
        self.assigned_globals = {n for s in ast.walk(node) if isinstance(s, (ast.Global, ast.Nonlocal))
                                 for n in s.names} & {t.id for s in ast.walk(node) for t in ast.walk(s)
                                                      if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
        if self.assigned_globals:
            raise Untranslatable(f"{name} assigns the global(s) {', '.join(sorted(self.assigned_globals))}")
        return self.block(body, env)

    # statements: the rest of the body is continued in each branch of an `if`
    def block(self, statements: list, env: dict):
        env = dict(env)
        for k, st in enumerate(statements):
            if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) and isinstance(st.value.value, str):
                continue  # a docstring
            if isinstance(st, (ast.Pass, ast.Global, ast.Nonlocal)):
                continue
            if isinstance(st, ast.Return):
                if st.value is None:
                    raise Untranslatable(f"line {st.lineno}: it returns None")
                return self.expr(st.value, env)
            if isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is not None:
                for target in (st.targets if isinstance(st, ast.Assign) else [st.target]):
                    self.assign(target, self.expr(st.value, env), env, st)
                continue
            if isinstance(st, _Bind):
                self.assign(st.target, st.value, env, st)
                continue
            if isinstance(st, ast.AugAssign) and isinstance(st.target, (ast.Name, ast.Subscript)):
                value = self.binary(st.op, self.expr(st.target, env), self.expr(st.value, env), st)
                self.assign(st.target, value, env, st)
                continue
            if isinstance(st, ast.For) and not st.orelse:  # unrolled over a constant range or a vector
                items = self.expr(st.iter, env)
                items = items.items if isinstance(items, Vec) else list(items.obj) \
                    if isinstance(items, Py) and isinstance(items.obj, (range, list, tuple, np.ndarray)) else None
                if items is None or len(items) > MAX_UNROLL or any(
                        isinstance(n, (ast.Break, ast.Continue)) for n in ast.walk(st)):
                    raise Untranslatable(f"line {st.lineno}: a for loop over {ast.unparse(st.iter)} (only loops "
                                         f"without break/continue over at most {MAX_UNROLL} known items unroll)")
                unrolled = [s for item in items
                            for s in (_Bind(st.target, item if isinstance(item, (ast.AST, Py)) else Py(item),
                                            lineno=st.lineno), *st.body)]
                return self.block(unrolled + statements[k + 1:], env)
            if isinstance(st, ast.If):
                rest = statements[k + 1:]
                test = self.expr(st.test, env)
                if isinstance(test, Py):  # decided here (a global flag)
                    return self.block((st.body if test.obj else st.orelse) + rest, env)
                return self.choose(test, self.block(st.body + rest, env), self.block(st.orelse + rest, env), st)
            raise Untranslatable(f"line {st.lineno}: {_describe(st)}")
        raise Untranslatable("it can end without returning a value")

    def assign(self, target: ast.AST, value, env: dict, st: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (Vec, Py)):
            items = value.items if isinstance(value, Vec) else list(value.obj)
            if len(items) != len(target.elts):
                raise Untranslatable(f"line {st.lineno}: unpacks {len(items)} values into {len(target.elts)}")
            for t, v in zip(target.elts, items):
                self.assign(t, v if isinstance(v, (ast.AST, Py)) else Py(v), env, st)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):  # v[i] = ...: a new vector
            vector, index = self.vector(self.expr(target.value, env)), self.expr(target.slice, env)
            if not (isinstance(vector, Vec) and isinstance(index, Py) and isinstance(index.obj, int)
                    and -len(vector.items) <= index.obj < len(vector.items)):
                raise Untranslatable(f"line {st.lineno}: assigns to {ast.unparse(target)}")
            items = list(vector.items)
            items[index.obj] = value
            env[target.value.id] = Vec(items, vector.array)
        else:
            raise Untranslatable(f"line {st.lineno}: assigns to {ast.unparse(target)} (only names and vector "
                                 "elements are allowed)")

    # expressions: Py (constant), ast.expr (scalar), Vec, _Mbs
    def expr(self, node: ast.AST, env: dict):
        if isinstance(node, ast.Constant):
            return Py(node.value)
        if isinstance(node, ast.Name):
            return self.name(node, env)
        if isinstance(node, ast.Attribute):
            base = self.expr(node.value, env)
            if isinstance(base, Py) and isinstance(base.obj, types.ModuleType) and hasattr(base.obj, node.attr):
                return Py(getattr(base.obj, node.attr))
            raise Untranslatable(f"line {node.lineno}: reads {ast.unparse(node)}"
                                 + (" (the system's state)" if isinstance(base, _Mbs) else ""))
        if isinstance(node, ast.Subscript):
            return self.subscript(node, env)
        if isinstance(node, ast.BinOp):
            return self.binary(node.op, self.expr(node.left, env), self.expr(node.right, env), node)
        if isinstance(node, ast.UnaryOp):
            return self.unary(node, self.expr(node.operand, env))
        if isinstance(node, ast.Compare):
            return self.compare(node, env)
        if isinstance(node, ast.BoolOp):
            values = [self.expr(v, env) for v in node.values]
            if all(isinstance(v, Py) for v in values):
                return Py(_fold_boolop(node.op, [v.obj for v in values]))
            return ast.BoolOp(node.op, [self.condition(v, node) for v in values])
        if isinstance(node, ast.IfExp):
            test = self.expr(node.test, env)
            if isinstance(test, Py):
                return self.expr(node.body if test.obj else node.orelse, env)
            return self.choose(test, self.expr(node.body, env), self.expr(node.orelse, env), node)
        if isinstance(node, (ast.List, ast.Tuple)):
            items = [self.expr(e, env) for e in node.elts]
            if all(isinstance(v, Py) for v in items):
                return Py([v.obj for v in items])
            return Vec([self.scalar(v, node) for v in items], array=False)
        if isinstance(node, ast.Call):
            return self.call_node(node, env)
        raise Untranslatable(f"line {node.lineno}: {_describe(node)}")

    def name(self, node: ast.Name, env: dict):
        if node.id in env:
            return env[node.id]
        found, value = self.names.lookup(node.id)
        if not found:
            raise Untranslatable(f"line {node.lineno}: the name {node.id} is not defined")
        return Py(value, node.id)

    def subscript(self, node: ast.Subscript, env: dict):
        base, index = self.expr(node.value, env), self.expr(node.slice, env)
        if not (isinstance(index, Py) and isinstance(index.obj, (int, np.integer)) and not isinstance(index.obj, bool)):
            raise Untranslatable(f"line {node.lineno}: {ast.unparse(node)} is not indexed by a constant integer")
        i = int(index.obj)
        if isinstance(base, Vec):
            if not -len(base.items) <= i < len(base.items):
                raise Untranslatable(f"line {node.lineno}: {ast.unparse(node)} is out of range")
            return base.items[i]
        if isinstance(base, Py):
            try:
                return Py(base.obj[i])
            except Exception as exc:  # noqa: BLE001 - whatever the object's indexing raises
                raise Untranslatable(f"line {node.lineno}: {ast.unparse(node)} fails ({exc})") from None
        raise Untranslatable(f"line {node.lineno}: {ast.unparse(node)} indexes a scalar")

    def binary(self, op: ast.operator, left, right, node: ast.AST):
        if isinstance(left, Py) and isinstance(right, Py):
            return self.fold(lambda: _OPERATORS[type(op)](left.obj, right.obj), node)
        left, right = self.vector(left), self.vector(right)
        if type(op) not in _OPERATORS or isinstance(op, (ast.FloorDiv, ast.Mod)):
            raise Untranslatable(f"line {node.lineno}: the operator {type(op).__name__} on a varying value")
        if isinstance(left, Vec) or isinstance(right, Vec):
            vectors = [v for v in (left, right) if isinstance(v, Vec)]
            if not any(v.array for v in vectors):
                raise Untranslatable(f"line {node.lineno}: arithmetic on a Python list (not a numpy array)")
            if len({len(v.items) for v in vectors}) > 1:
                raise Untranslatable(f"line {node.lineno}: vectors of different lengths")
            n = len(vectors[0].items)
            pick = (lambda v, i: v.items[i] if isinstance(v, Vec) else v)
            return Vec([self.binary(op, pick(left, i), pick(right, i), node) for i in range(n)], array=True)
        return ast.BinOp(self.scalar(left, node), op, self.scalar(right, node))

    def unary(self, node: ast.UnaryOp, operand):
        if isinstance(operand, Py):
            return self.fold(lambda: {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
                                      ast.Invert: operator.invert}[type(node.op)](operand.obj), node)
        if isinstance(node.op, ast.Not):
            return ast.UnaryOp(ast.Not(), self.condition(operand, node))
        if isinstance(operand, Vec) and operand.array and isinstance(node.op, (ast.USub, ast.UAdd)):
            return Vec([ast.UnaryOp(node.op, self.scalar(v, node)) for v in operand.items], array=True)
        if isinstance(node.op, (ast.USub, ast.UAdd)):
            return ast.UnaryOp(node.op, self.scalar(operand, node))
        raise Untranslatable(f"line {node.lineno}: {_describe(node)}")

    def compare(self, node: ast.Compare, env: dict):
        operands = [self.expr(n, env) for n in (node.left, *node.comparators)]
        if all(isinstance(v, Py) for v in operands):
            return self.fold(lambda: all(_COMPARISONS[type(op)](a.obj, b.obj)
                                         for a, op, b in zip(operands, node.ops, operands[1:])), node)
        pairs = [ast.Compare(self.scalar(a, node), [op], [self.scalar(b, node)])
                 for a, op, b in zip(operands, node.ops, operands[1:])]
        return pairs[0] if len(pairs) == 1 else ast.BoolOp(ast.And(), pairs)

    def call_node(self, node: ast.Call, env: dict):
        callee = self.expr(node.func, env)
        if not isinstance(callee, Py) or any(isinstance(a, ast.Starred) for a in node.args) \
                or any(k.arg is None for k in node.keywords):
            raise Untranslatable(f"line {node.lineno}: calls {ast.unparse(node.func)}")
        args = [self.expr(a, env) for a in node.args]
        keywords = {k.arg: self.expr(k.value, env) for k in node.keywords}
        f, label = _numeric(callee.obj), ast.unparse(node.func)
        if all(isinstance(a, Py) for a in [*args, *keywords.values()]) and not isinstance(f, types.FunctionType) \
                and ((_hashable(f) and f in FUNCTION_NAMES) or any(f is g for g in FOLDED)):
            return self.fold(lambda: f(*[a.obj for a in args], **{k: v.obj for k, v in keywords.items()}), node)
        if f in (np.array, np.asarray) and len(args) == 1 and not keywords:
            v = self.vector(args[0])
            if not isinstance(v, Vec):
                raise Untranslatable(f"line {node.lineno}: {label} of a scalar")
            return Vec(v.items, array=True)
        if f is len and len(args) == 1 and isinstance(args[0], Vec):
            return Py(len(args[0].items))
        if f is float and len(args) == 1 and not keywords:
            return self.scalar(args[0], node)
        if f is np.heaviside and len(args) == 2 and isinstance(args[1], Py):
            x = self.scalar(args[0], node)  # heaviside(x, h0): 0 below 0, h0 at 0, 1 above
            return ast.IfExp(ast.Compare(x, [ast.Lt()], [ast.Constant(0)]), ast.Constant(0.0),
                             ast.IfExp(ast.Compare(x, [ast.Gt()], [ast.Constant(0)]), ast.Constant(1.0),
                                       self.scalar(args[1], node)))
        name = FUNCTION_NAMES.get(f) if _hashable(f) else None
        if name is not None and not keywords:
            if name in ("min", "max") and len(args) == 1 and isinstance(args[0], Vec):
                args = args[0].items
            if len(args) == 1 and isinstance(args[0], Vec) and args[0].array:  # a numpy function, elementwise
                return Vec([ast.Call(ast.Name(name), [self.scalar(v, node)], []) for v in args[0].items], array=True)
            return ast.Call(ast.Name(name), [self.scalar(a, node) for a in args], [])
        if isinstance(f, types.FunctionType):  # the script's own helper: inlined
            return _Function(self.context, self.depth + 1).call(f, args, keywords)
        raise Untranslatable(f"line {node.lineno}: calls {label}, which has no expression form")

    def choose(self, test, a, b, node: ast.AST):
        condition = self.condition(test, node)
        a, b = self.vector(a), self.vector(b)
        if isinstance(a, Vec) != isinstance(b, Vec):
            raise Untranslatable(f"line {node.lineno}: one branch gives a vector, the other a scalar")
        if isinstance(a, Vec):
            if len(a.items) != len(b.items):
                raise Untranslatable(f"line {node.lineno}: the branches give vectors of different lengths")
            return Vec([self.choose(condition, x, y, node) for x, y in zip(a.items, b.items)],
                       array=a.array and b.array)
        a, b = self.scalar(a, node), self.scalar(b, node)
        return a if ast.dump(a) == ast.dump(b) else ast.IfExp(condition, a, b)

    def condition(self, value, node: ast.AST) -> ast.expr:
        if isinstance(value, (ast.Compare, ast.BoolOp)) or (isinstance(value, ast.UnaryOp)
                                                            and isinstance(value.op, ast.Not)):
            return value
        return ast.Compare(self.scalar(value, node), [ast.NotEq()], [ast.Constant(0)])  # Python's truth value

    def vector(self, value):
        """A constant list or array as a Vec of constants; anything else unchanged."""
        if isinstance(value, Py) and isinstance(value.obj, (list, tuple, np.ndarray)):
            array = np.asarray(value.obj)
            if array.ndim != 1 or not np.issubdtype(array.dtype, np.number):
                raise Untranslatable(f"a constant of shape {array.shape} where a vector of numbers is needed")
            return Vec([Py(x) for x in value.obj], array=isinstance(value.obj, np.ndarray))
        return value

    def scalar(self, value, node: ast.AST) -> ast.expr:
        if isinstance(value, ast.AST):
            return value
        if isinstance(value, _Mbs):
            raise Untranslatable(f"line {getattr(node, 'lineno', '?')}: uses mbs (the system's state)")
        if isinstance(value, Vec):
            raise Untranslatable(f"line {getattr(node, 'lineno', '?')}: a vector where a number is needed")
        return self.constant(value, node)

    def constant(self, value: Py, node: ast.AST) -> ast.expr:
        v = value.obj
        if isinstance(v, (bool, np.bool_)):
            return ast.Constant(int(v))
        if not isinstance(v, _NUMBER) or (isinstance(v, np.ndarray)):
            raise Untranslatable(f"line {getattr(node, 'lineno', '?')}: "
                                 f"{value.name or repr(v)[:40]} is a {type(v).__name__}, not a number")
        v = int(v) if isinstance(v, (int, np.integer)) else float(v)
        if not math.isfinite(v):
            raise Untranslatable(f"line {getattr(node, 'lineno', '?')}: {v} is not finite")
        if v == math.pi:
            return ast.Name("pi")
        name, context = value.name, self.context
        if name is not None and PARAMETER_NAME.fullmatch(name) and not keyword.iskeyword(name) \
                and name not in RESERVED_NAMES and name not in context.sig.arguments \
                and {context.taken.get(name, float(v)), context.parameters.get(name, float(v))} == {float(v)}:
            context.parameters[name] = float(v)
            return ast.Name(name)
        return ast.UnaryOp(ast.USub(), ast.Constant(-v)) if v < 0 else ast.Constant(v)

    def fold(self, compute, node: ast.AST) -> Py:
        try:
            return Py(compute())
        except Exception as exc:  # noqa: BLE001 - the Python error the function itself would raise
            raise Untranslatable(f"line {getattr(node, 'lineno', '?')}: {type(exc).__name__}: {exc}") from None


class _Names:
    """A function's free names: its closure, then its globals, then builtins."""

    def __init__(self, function):
        closure = function.__closure__ or ()
        self.closure = {}
        for name, cell in zip(function.__code__.co_freevars, closure):
            try:
                self.closure[name] = cell.cell_contents
            except ValueError:  # a cell not yet filled
                pass
        self.globals = function.__globals__

    def lookup(self, name: str) -> tuple[bool, object]:
        for space in (self.closure, self.globals, vars(builtins)):
            if name in space:
                return True, space[name]
        return False, None


def _parse(function) -> ast.FunctionDef | ast.Lambda:
    try:
        source = textwrap.dedent(inspect.getsource(function))
    except (OSError, TypeError):
        raise Untranslatable(f"the source of {function.__name__} is not available") from None
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a lambda inside a larger statement: its lines alone may not parse
        try:
            tree = ast.parse("(" + source.strip().rstrip(",") + ")")
        except SyntaxError:
            raise Untranslatable(f"the source of {function.__name__} cannot be read apart from its context") \
                from None
    if function.__name__ == "<lambda>":
        found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)
                 and len(n.args.args) == function.__code__.co_argcount]
        if len(found) != 1:
            raise Untranslatable(f"{len(found)} lambdas of its arguments on its source lines: which one is ambiguous")
        return found[0]
    found = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function.__name__]
    if not found:
        raise Untranslatable(f"the definition of {function.__name__} is not in its source")
    return found[0]


def _describe(node: ast.AST) -> str:
    what = {ast.For: "a for loop", ast.While: "a while loop", ast.Expr: "a statement with a side effect",
            ast.Try: "try/except", ast.With: "a with block", ast.ListComp: "a list comprehension",
            ast.GeneratorExp: "a generator", ast.Lambda: "a lambda", ast.Raise: "raise",
            ast.FunctionDef: "a nested def", ast.Import: "import", ast.ImportFrom: "import"}
    text = what.get(type(node), f"a {type(node).__name__}")
    return text + (f" ({ast.unparse(node)[:60]})" if isinstance(node, ast.Expr) else "") + " has no expression form"


def _fold_boolop(op: ast.boolop, values: list):
    result = values[0]
    for v in values[1:]:
        result = (result and v) if isinstance(op, ast.And) else (result or v)
    return result


def _hashable(obj) -> bool:
    try:
        hash(obj)
    except TypeError:
        return False
    return True


def _result(result, sig: Signature, context: _Context) -> str | list[str]:
    body = _Function(context, 0)
    if not sig.result:
        if isinstance(result, (Vec, _Mbs)) or (isinstance(result, Py) and not isinstance(result.obj, _NUMBER)):
            raise Untranslatable("it returns a vector where Exudyn expects a number")
        return ast.unparse(body.scalar(result, ast.Module()))
    result = body.vector(result)
    if not isinstance(result, Vec) or len(result.items) != sig.result[0]:
        raise Untranslatable(f"it returns {'a number' if not isinstance(result, Vec) else len(result.items)} "
                             f"where Exudyn expects a vector of {sig.result[0]}")
    return [ast.unparse(body.scalar(v, ast.Module())) for v in result.items]


def _numeric(f):
    """An exudyn.symbolic function as the numpy, math or builtin function of that name; other callables as they are."""
    if getattr(f, "__module__", None) != SYMBOLIC_MODULE:
        return f
    return NUMERIC_BY_NAME.get(getattr(f, "__name__", ""), f)


def _check(function, sig: Signature, value, parameters: dict[str, float], item: dict, index: int,
           span: tuple[float, float], mbs, symbolic: bool) -> None:
    """Untranslatable unless `function` and the compiled `value` agree at the samples (where
    both are defined, and the function is at half of them at least)."""
    from multibody.expressions import Budget  # sympy: only once a translation is checked
    from multibody.user_function_programs import compile_user_function, item_constants
    programs, problems = compile_user_function(sig, "translation", value, item_constants(sig, item, index),
                                               parameters, Budget(10**7), "translation")
    if programs is None:
        raise Untranslatable("its translation is not an allowed expression: " + "; ".join(m for _, m in problems))
    rng = np.random.default_rng(index)
    start, end = span
    t = np.concatenate([np.linspace(start, end, 9), rng.uniform(start, end, SAMPLES - 9)])
    varying = {name: [rng.standard_normal(SAMPLES) * np.resize(SCALES, SAMPLES) for _ in range(
        sig.arguments[name][0] if sig.arguments[name] else 1)] for name in sig.varying}
    count = max(1, len(value) if isinstance(value, list) else 1)
    ours = UserFunctions(ProgramSet.concatenate(programs)).evaluate(
        0, count, t, *[column for name in sig.varying for column in varying[name]])
    scale = np.max(np.where(np.isfinite(ours), np.abs(ours), 0.0), axis=0)  # each component's largest magnitude
    agreed = 0
    for k in range(SAMPLES):
        args = []
        for name, shape in sig.arguments.items():
            if name in varying:
                columns = [float(c[k]) for c in varying[name]]
                args.append((np.array(columns) if symbolic else columns) if shape else columns[0])
            else:
                v = index if sig.from_item[name] == "itemNumber" else item[sig.from_item[name]]
                args.append((np.array(v, float) if symbolic else list(v)) if shape else v)
        try:
            theirs = np.asarray(function(mbs, float(t[k]), *args), float).reshape(-1)
        except Exception:  # noqa: BLE001 - outside the function's domain: ours must be undefined there too
            theirs = np.full(count, np.nan)
        if theirs.size != count:
            raise Untranslatable(f"at t = {t[k]:.6g} the function returns {theirs.size} values, not {count}")
        mine = ours[k]
        for c in range(count):
            a, b = theirs[c], mine[c]
            if not (np.isfinite(a) or np.isfinite(b)):
                continue
            if not abs(a - b) <= TOLERANCE * max(abs(a), abs(b)) + 1e-14 * scale[c]:
                raise Untranslatable(f"its translation {value!r} gives {b!r} where the function gives {a!r} "
                                     f"(component {c}, t = {t[k]:.6g}, arguments {args})")
        agreed += bool(np.isfinite(theirs).all())
    if agreed < SAMPLES // 2:
        raise Untranslatable(f"the function is defined at only {agreed} of {SAMPLES} sample arguments: "
                             "too few to check its translation")
