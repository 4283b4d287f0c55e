"""User-function expressions compiled to programs (programs.py) with the derivatives the Newton
matrix needs; the one module of the user functions that needs sympy.

Per item with a user function, consecutive programs of one set (variables x = [t, the
signature's varying arguments, vectors flattened]):

    loads                             the result's components (3, or 1 for LoadCoordinate)
    ConnectorSpringDamper             f, ∂f/∂deltaL, ∂f/∂deltaL_t                  x = [t, deltaL, deltaL_t]
    ConnectorCoordinateSpringDamper   f, ∂f/∂displacement, ∂f/∂velocity            x = [t, displacement, velocity]
    ConnectorCartesianSpringDamper    F_i, ∂F_i/∂displacement_j, ∂F_i/∂velocity_j  x = [t, displacement[3], velocity[3]]
                                      (i-major: 3 + 9 + 9 programs)
"""
from __future__ import annotations

import sympy as sp

from . import programs as P
from .expressions import Budget, ExpressionError, derivative, element_symbol, parse_expression, symbol, to_program
from .user_functions import Signature, UserFunctions, signature

# the item fields that take a user function, per list
FIELDS = {"loads": ("loadVectorUserFunction", "loadUserFunction"), "objects": ("springForceUserFunction",)}


def set_user_functions(doc) -> list[tuple[str, int, str, object]]:
    """(list, index, parameter, value) of every user function set in the document."""
    found = []
    for kind, names in FIELDS.items():
        for i, item in enumerate(getattr(doc, kind)):
            for name in names:
                value = getattr(item, name, 0) if item is not None else 0
                if not (isinstance(value, int) and value == 0):
                    found.append((kind, i, name, value))
    return found


def _slots(sig: Signature) -> dict[str, int]:
    """Symbol name -> index in x: t, then the varying arguments' elements."""
    names = ["t"] + [s for name in sig.varying for s in _block_slots(sig, name)]
    return {n: k for k, n in enumerate(names)}


def item_constants(sig: Signature, item, index: int) -> dict[sp.Symbol, sp.Expr]:
    """The constant arguments' symbols -> the item's values (itemNumber: its index); `item` has
    them as attributes (a schema item) or keys (a dictionary)."""
    out = {}
    for arg, param in sig.from_item.items():
        value = index if param == "itemNumber" else item[param] if isinstance(item, dict) else getattr(item, param)
        if sig.arguments[arg]:
            out.update({element_symbol(arg, (i,)): sp.Float(float(v)) for i, v in enumerate(value)})
        else:
            out[symbol(arg)] = sp.Integer(value) if isinstance(value, int) else sp.Float(float(value))
    return out


def compile_user_functions(doc, budget: Budget) -> tuple[UserFunctions, list[tuple[str, str]]]:
    """Every user function of the document compiled; (path, message) problems for the ones that
    are not allowed expressions. BudgetExceeded once the document's expressions cost too much."""
    parts, first, fields, problems, count = [], {}, {}, [], 0
    for kind, i, name, value in set_user_functions(doc):
        item = getattr(doc, kind)[i]
        item_type = getattr(item, "loadType" if kind == "loads" else "objectType")
        sig = signature(kind, item_type, name)
        path = f"{kind}[{i}].{name}"
        if sig is None:  # the schema admits expressions only where a signature exists
            problems.append((path, f"{item_type}.{name} does not take an expression"))
            continue
        programs, own = compile_user_function(sig, name, value, item_constants(sig, item, i), doc.parameters, budget,
                                              path)
        problems += own
        if programs is None:
            continue
        first[(kind, i)] = count
        fields[(kind, i)] = name
        count += len(programs)
        parts += programs
    return UserFunctions(P.ProgramSet.concatenate(parts) if parts else P.UNDEFINED, first, fields), problems


def compile_user_function(sig: Signature, name: str, value, constants: dict[sp.Symbol, sp.Expr], parameters,
                          budget: Budget, path: str) -> tuple[list[P.ProgramSet] | None, list[tuple[str, str]]]:
    """One user function's programs (its result's components, then their derivatives, as the
    module's docstring orders them), or None and the (path, message) problems."""
    texts = [value] if isinstance(value, str) else list(value)
    shapes = {"t": (), **sig.arguments}
    results, problems = [], []
    for k, text in enumerate(texts):
        where = path if isinstance(value, str) else f"{path}[{k}]"
        try:
            results.append(parse_expression(text, shapes, parameters, budget).xreplace(constants))
        except ExpressionError as exc:
            problems.append((where, f"{name}: {exc.message}"))
    if problems:
        return None, problems
    slots = _slots(sig)
    try:
        exprs = results + [derivative(r, s, budget) for block in sig.varying for r in results
                           for s in _block_slots(sig, block)]
        return [to_program(e, slots, budget) for e in exprs], []
    except ExpressionError as exc:  # a derivative too large
        return None, [(path, f"{name}: {exc.message}")]


def _block_slots(sig: Signature, name: str) -> list[str]:
    shape = sig.arguments[name]
    return [name] if not shape else [element_symbol(name, (i,)).name for i in range(shape[0])]
