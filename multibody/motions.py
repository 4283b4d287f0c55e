"""Prescribed motions (SPEC section 2), after Simbody's SimTK::Motion.

    spec = MOTION_ADAPTER.validate_python(doc["motions"][0])      # structure (pydantic)
    law = build_motion_law(spec, "motions[0]", "drive")           # meaning; MotionError lists problems
    law.q(t), law.qd(t), law.qdd(t)                               # Position level

A law speaks in the joint's free coordinate q (sliding displacement or rotation angle) and its
rate u = dq/dt. Like Simbody, every level prescribes the acceleration, and the position level
the velocity too, so a solver can read the law at whatever level it enforces it:

    level         q, qd, qdd (t)   u(t, q), du_dq        udot(t, q, u), dudot_dq, dudot_du
    Position      given            qd(t), 0              qdd(t), 0, 0
    Velocity      None             given                 du/dt + du/dq * u, and its partials
    Acceleration  None             None                  given, and its partials
    (method Free: all None)

Derivatives that are not given are derived symbolically; given ones are checked against them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Callable, Literal, Union

import sympy as sp
from pydantic import (BaseModel, ConfigDict, Field, FiniteFloat, StrictFloat, StrictInt, StrictStr, TypeAdapter,
                      model_validator)

from .expressions import (SYMBOLS, EvaluationError, ExpressionError, compile_expression, derivative,
                          parse_expression)

Level = Literal["Position", "Velocity", "Acceleration"]
Method = Literal["Prescribed", "Zero", "Free"]
Expression = Union[StrictStr, StrictInt, StrictFloat]  # a number is a constant expression
VISUALIZATION_KEY = re.compile(r"V[A-Za-z]")  # Exudyn's Vshow, Vcolor, VaxisRadius, ...

# field -> (level, the variables it may use)
EXPRESSION_FIELDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "position": ("Position", ("t",)),  # Simbody: q(t) depends on time only
    "positionDot": ("Position", ("t",)),
    "positionDotDot": ("Position", ("t",)),
    "velocity": ("Velocity", ("t", "q")),
    "velocityDot": ("Velocity", ("t", "q", "u")),
    "acceleration": ("Acceleration", ("t", "q", "u")),
}
BASE_FIELD = {"Position": "position", "Velocity": "velocity", "Acceleration": "acceleration"}

# Sample points for checking given derivatives: irregular values, so that typical breakpoints
# (0, 0.5, 1, ...) of where()/abs() are not hit, where one-sided derivatives legitimately differ.
SAMPLE_T = (0.0137, 0.1234, 0.3719, 0.6180, 0.8813, 1.2345, 1.7321, 2.7183, 4.4721, 9.8696)
SAMPLE_Q = (-0.7310, 0.4142, 1.3027)
SAMPLE_U = (0.5772, -1.2021)
RTOL = 1e-8
MIN_SAMPLES = 3


class _Motion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: StrictStr | None = None
    joint: Annotated[StrictInt, Field(ge=0)] | StrictStr = Field(
        description="the JointPrismaticX / JointRevoluteZ whose free coordinate is prescribed: "
                    "objects index or name")

    @model_validator(mode="before")
    @classmethod
    def _ignore_visualization(cls, data):
        # Exudyn item dictionaries carry Vshow, Vcolor, ...: accepted and ignored, as for other items.
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if not VISUALIZATION_KEY.match(k)}
        return data


class CustomMotion(_Motion):
    """Motion::Custom: expressions over t, q, u for the level's quantities."""
    motionType: Literal["Custom"]
    level: Level
    method: Method = "Prescribed"
    position: Expression | None = Field(None, description="q(t)")
    positionDot: Expression | None = Field(None, description="dq/dt; derived when omitted")
    positionDotDot: Expression | None = Field(None, description="d2q/dt2; derived when omitted")
    velocity: Expression | None = Field(None, description="u(t, q)")
    velocityDot: Expression | None = Field(None, description="total du/dt = ∂u/∂t + ∂u/∂q·u; derived when omitted")
    acceleration: Expression | None = Field(None, description="udot(t, q, u)")


class SinusoidMotion(_Motion):
    """Motion::Sinusoid: amplitude * sin(rate * t + phase) is q, u or udot, by level."""
    motionType: Literal["Sinusoid"]
    level: Level
    amplitude: FiniteFloat
    rate: FiniteFloat
    phase: FiniteFloat = 0.0


class SteadyMotion(_Motion):
    """Motion::Steady: constant rate u."""
    motionType: Literal["Steady"]
    level: Literal["Velocity"] = "Velocity"
    u: FiniteFloat


MotionSpec = Annotated[Union[CustomMotion, SinusoidMotion, SteadyMotion], Field(discriminator="motionType")]
MOTION_ADAPTER: TypeAdapter = TypeAdapter(MotionSpec)


class MotionError(ValueError):
    """Every problem found in one motion, as (path, message) pairs."""

    def __init__(self, problems: list[tuple[str, str]]):
        self.problems = list(problems)
        super().__init__("; ".join(f"{path}: {message}" for path, message in self.problems))


@dataclass(frozen=True)
class MotionLaw:
    """A compiled motion; see the module docstring for which functions each level provides.

    All functions take and return plain floats and raise EvaluationError where undefined.
    """
    name: str
    level: Level
    method: Method
    q: Callable[[float], float] | None = None
    qd: Callable[[float], float] | None = None
    qdd: Callable[[float], float] | None = None
    u: Callable[[float, float], float] | None = None
    du_dq: Callable[[float, float], float] | None = None
    udot: Callable[[float, float, float], float] | None = None
    dudot_dq: Callable[[float, float, float], float] | None = None
    dudot_du: Callable[[float, float, float], float] | None = None

    @property
    def is_free(self) -> bool:
        return self.method == "Free"


def build_motion_law(spec: CustomMotion | SinusoidMotion | SteadyMotion, path: str, name: str) -> MotionLaw:
    """Compile a validated motion spec; raises MotionError listing every problem.

    `path` locates the motion in the document ("motions[0]"); problem paths extend it with the
    field ("motions[0].positionDot"). `name` names the motion in messages of compiled functions.
    """
    method = getattr(spec, "method", "Prescribed")
    level, base = spec.level, BASE_FIELD[spec.level]
    given, problems = _given_expressions(spec, path, method)
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
        expressions = _complete(given, level, path, problems)
        if problems:
            raise MotionError(problems)
        return _compile(expressions, level, method, name)
    except ExpressionError as exc:  # a derivative too large to use
        raise MotionError([*problems, (f"{path}.{base}", f"{base}: {exc.message}")]) from None


def _given_expressions(spec, path: str, method: str) -> tuple[dict[str, sp.Expr], list[tuple[str, str]]]:
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
                parsed[field] = parse_expression(str(text), variables)
            except ExpressionError as exc:
                problems.append((f"{path}.{field}", f"{field}: {exc.message}"))
    base = BASE_FIELD[level]
    if isinstance(spec, CustomMotion) and method == "Prescribed" and getattr(spec, base) is None:
        problems.append((f"{path}.{base}", f"{base} is required for a Prescribed motion at level {level}"))
    return parsed, problems


def _complete(given: dict[str, sp.Expr], level: str, path: str, problems: list) -> dict[str, sp.Expr]:
    """Derive what is missing, check what is given (mismatches go to `problems`).

    Returns the expressions the law uses: the given ones where present.
    """

    def reference(field: str, derived: sp.Expr, what: str) -> sp.Expr:
        if field in given:
            mismatch = _mismatch(given[field], derived, EXPRESSION_FIELDS[field][1])
            if mismatch:
                problems.append((f"{path}.{field}", f"{field} is not {what} ({mismatch})"))
            return given[field]
        return derived

    if level == "Position":
        p = given["position"]
        pd = derivative(p, "t")
        out = {"position": p,
               "positionDot": reference("positionDot", pd, "the time derivative of position"),
               "positionDotDot": reference("positionDotDot", derivative(pd, "t"),
                                           "the second time derivative of position")}
    elif level == "Velocity":
        v = given["velocity"]
        vdot = derivative(v, "t") + derivative(v, "q") * SYMBOLS["u"]
        out = {"velocity": v, "velocityDot": reference(
            "velocityDot", vdot, "the time derivative of velocity, du/dt + du/dq*u")}
    else:
        out = {"acceleration": given["acceleration"]}
    return out


def _mismatch(given: sp.Expr, derived: sp.Expr, variables: tuple[str, ...]) -> str | None:
    """None if `given` equals `derived`, else where and by how much they differ.

    Symbolically only as far as sympy's automatic canonical form goes (given - derived == 0):
    sympy.simplify has no time bound (over 10 minutes measured on a 40-node difference) and a
    timeout cannot stop it safely inside a server. Then numerically, which decides: both sides
    at the sample points, relative tolerance RTOL.
    """
    if given - derived == 0:
        return None
    f, g = compile_expression(given, variables), compile_expression(derived, variables)
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


def _compile(e: dict[str, sp.Expr], level: str, method: str, name: str) -> MotionLaw:
    def fn(expr, variables, field):
        return compile_expression(expr, variables, f"motion '{name}' {field}")

    tqu = ("t", "q", "u")
    if level == "Position":
        zero = sp.S.Zero
        return MotionLaw(
            name, level, method,
            q=fn(e["position"], ("t",), "position"),
            qd=fn(e["positionDot"], ("t",), "positionDot"),
            qdd=fn(e["positionDotDot"], ("t",), "positionDotDot"),
            u=fn(e["positionDot"], ("t", "q"), "positionDot"),
            du_dq=fn(zero, ("t", "q"), "du_dq"),
            udot=fn(e["positionDotDot"], tqu, "positionDotDot"),
            dudot_dq=fn(zero, tqu, "dudot_dq"),
            dudot_du=fn(zero, tqu, "dudot_du"))
    if level == "Velocity":
        v, vdot = e["velocity"], e["velocityDot"]
        return MotionLaw(
            name, level, method,
            u=fn(v, ("t", "q"), "velocity"),
            du_dq=fn(derivative(v, "q"), ("t", "q"), "d(velocity)/dq"),
            udot=fn(vdot, tqu, "velocityDot"),
            dudot_dq=fn(derivative(vdot, "q"), tqu, "d(velocityDot)/dq"),
            dudot_du=fn(derivative(vdot, "u"), tqu, "d(velocityDot)/du"))
    a = e["acceleration"]
    return MotionLaw(
        name, level, method,
        udot=fn(a, tqu, "acceleration"),
        dudot_dq=fn(derivative(a, "q"), tqu, "d(acceleration)/dq"),
        dudot_du=fn(derivative(a, "u"), tqu, "d(acceleration)/du"))
