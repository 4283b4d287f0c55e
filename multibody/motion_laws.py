"""Motion specs compiled to laws (motions.MotionLaw): parsing, symbolic derivatives and
their checks, programs. The one module of the motions that needs sympy.
"""
from __future__ import annotations

import sympy as sp

from . import programs as P
from .expressions import (SYMBOLS, Budget, EvaluationError, ExpressionError, compile_expression, derivative,
                          parse_expression, to_program)
from .motions import (BASE_FIELD, EXPRESSION_FIELDS, MOTION_SLOTS, PROGRAM_FIELDS, CustomMotion, MotionError,
                      MotionLaw, SinusoidMotion, SteadyMotion)

# Sample points for checking given derivatives: irregular values, so that typical breakpoints
# (0, 0.5, 1, ...) of where()/abs() are not hit, where one-sided derivatives legitimately differ.
SAMPLE_T = (0.0137, 0.1234, 0.3719, 0.6180, 0.8813, 1.2345, 1.7321, 2.7183, 4.4721, 9.8696)
SAMPLE_Q = (-0.7310, 0.4142, 1.3027)
SAMPLE_U = (0.5772, -1.2021)
RTOL = 1e-8
MIN_SAMPLES = 3


def build_motion_law(spec: CustomMotion | SinusoidMotion | SteadyMotion, path: str, name: str,
                     budget: Budget | None = None, parameters: dict[str, float] | None = None) -> MotionLaw:
    """Compile a validated motion spec; raises MotionError listing every problem, and
    BudgetExceeded once the document's expressions have used up `budget`.

    `path` locates the motion in the document ("motions[0]"); problem paths extend it with the
    field ("motions[0].positionDot"). `name` names the motion in messages of compiled functions.
    `parameters`: the document's named constants.
    """
    method = getattr(spec, "method", "Prescribed")
    level, base = spec.level, BASE_FIELD[spec.level]
    given, problems = _given_expressions(spec, path, method, budget, parameters or {})
    if isinstance(spec, SinusoidMotion):
        given = {base: spec.amplitude * sp.sin(spec.rate * SYMBOLS["t"] + spec.phase)}
    elif isinstance(spec, SteadyMotion):
        given = {base: sp.Float(spec.u)}
    elif method == "Zero":
        given = {base: sp.S.Zero}
    if problems and base not in given:  # nothing to derive and check the rest against
        raise MotionError(problems)
    if method == "Free":
        return MotionLaw(name, level, "Free")
    try:
        expressions = _complete(given, level, path, problems, budget)
        if problems:
            raise MotionError(problems)
        return _compile(expressions, level, method, name, budget)
    except ExpressionError as exc:  # a derivative too large to use
        raise MotionError([*problems, (f"{path}.{base}", f"{base}: {exc.message}")]) from None


def _given_expressions(spec, path: str, method: str, budget: Budget | None, parameters: dict[str, float]) -> tuple[dict[str, sp.Expr],
                                                                                     list[tuple[str, str]]]:
    """Parse the Custom expression fields that fit the level and method; problems with the rest."""
    problems, parsed = [], {}
    level = spec.level
    for field, (field_level, variables) in EXPRESSION_FIELDS.items():
        text = getattr(spec, field, None)
        if text is None:
            continue
        if field_level != level:
            uses = ", ".join(f for f, (lv, _) in EXPRESSION_FIELDS.items() if lv == level)
            problems.append((f"{path}.{field}", f"{field} does not belong to level {level} (it uses {uses})"))
        elif method != "Prescribed":
            problems.append((f"{path}.{field}", f"{field} is not used with method {method}"))
        else:
            try:
                parsed[field] = parse_expression(str(text), variables, parameters, budget)
            except ExpressionError as exc:
                problems.append((f"{path}.{field}", f"{field}: {exc.message}"))
    base = BASE_FIELD[level]
    if isinstance(spec, CustomMotion) and method == "Prescribed" and getattr(spec, base) is None:
        problems.append((f"{path}.{base}", f"{base} is required for a Prescribed motion at level {level}"))
    return parsed, problems


def _complete(given: dict[str, sp.Expr], level: str, path: str, problems: list,
              budget: Budget | None) -> dict[str, sp.Expr]:
    """Derive what is missing, check what is given (mismatches go to `problems`).

    Returns the expressions the law uses: the given ones where present.
    """

    def reference(field: str, derived: sp.Expr, what: str) -> sp.Expr:
        if field in given:
            mismatch = _mismatch(given[field], derived, EXPRESSION_FIELDS[field][1], budget)
            if mismatch:
                problems.append((f"{path}.{field}", f"{field} is not {what} ({mismatch})"))
            return given[field]
        return derived

    if level == "Position":
        p = given["position"]
        pd = derivative(p, "t", budget)
        out = {"position": p,
               "positionDot": reference("positionDot", pd, "the time derivative of position"),
               "positionDotDot": reference("positionDotDot", derivative(pd, "t", budget),
                                           "the second time derivative of position")}
    elif level == "Velocity":
        v = given["velocity"]
        vdot = derivative(v, "t", budget) + derivative(v, "q", budget) * SYMBOLS["u"]
        out = {"velocity": v, "velocityDot": reference(
            "velocityDot", vdot, "the time derivative of velocity, du/dt + du/dq*u")}
    else:
        out = {"acceleration": given["acceleration"]}
    return out


def _mismatch(given: sp.Expr, derived: sp.Expr, variables: tuple[str, ...], budget: Budget | None) -> str | None:
    """None if `given` equals `derived`, else where and by how much they differ.

    Symbolically only as far as sympy's automatic canonical form goes (given - derived == 0):
    sympy.simplify has no time bound (over 10 minutes measured on a 40-node difference) and a
    timeout cannot stop it safely inside a server. Then numerically, which decides: both sides
    at the sample points, relative tolerance RTOL.
    """
    if given - derived == 0:
        return None
    f, g = compile_expression(given, variables, budget=budget), compile_expression(derived, variables, budget=budget)
    samples = []
    for i, t in enumerate(SAMPLE_T):
        point = dict(t=t, q=SAMPLE_Q[i % len(SAMPLE_Q)], u=SAMPLE_U[i % len(SAMPLE_U)])
        args = [point[v] for v in variables]
        try:
            samples.append((args, f(*args), g(*args)))
        except EvaluationError:  # outside either side's domain: not evidence either way
            continue
    if len(samples) < MIN_SAMPLES:
        return f"it cannot be checked: defined at only {len(samples)} of {len(SAMPLE_T)} sample points"
    scale = max(max(abs(a), abs(b)) for _, a, b in samples)
    # relative per point, plus a floor from the overall scale for values that cross zero
    off = [(abs(a - b), args) for args, a, b in samples
           if abs(a - b) > RTOL * (max(abs(a), abs(b)) + 1e-3 * scale)]
    if not off:
        return None
    size, args = max(off, key=lambda w: w[0])
    at = ", ".join(f"{v}={a:g}" for v, a in zip(variables, args))
    return f"differs by {size:.3g} at {at}"


def _compile(e: dict[str, sp.Expr], level: str, method: str, name: str, budget: Budget | None) -> MotionLaw:
    fields = PROGRAM_FIELDS[level]
    programs = [P.UNDEFINED if field is None else to_program(e[field], MOTION_SLOTS, budget) for field in fields]
    reads = tuple(frozenset() if field is None else frozenset(s.name for s in e[field].free_symbols) | {"t"}
                  for field in fields)
    return MotionLaw(name, level, method, P.ProgramSet.concatenate(programs), reads)
