"""Prescribed motions (SPEC section 2), after Simbody's SimTK::Motion.

    spec = MOTION_ADAPTER.validate_python(doc["motions"][0])      # structure (pydantic)
    law = motion_laws.build_motion_law(spec, "motions[0]", "drive")  # meaning; MotionError lists problems
    law.q(t), law.u(t, q), law.udot(t, q, u)                      # from Python
    law.programs                                                  # for compiled code (programs.py)

A law speaks in the joint's free coordinate q (sliding displacement or rotation angle) and its
rate u = dq/dt. Like Simbody, every level prescribes the acceleration, and the position level
the velocity too, so a solver can read the law at whatever level it enforces it. Its three
programs (programs.MOTION_PROGRAMS, variables x = [t, q, u]) are

    level         coordinate q(t)   rate u(t, q)    rate_dot u̇(t, q, u)
    Position      position          positionDot     positionDotDot
    Velocity      NaN               velocity        velocityDot = ∂u/∂t + ∂u/∂q·u
    Acceleration  NaN               NaN             acceleration
    (method Free: no programs)

Derivatives that are not given are derived symbolically (exactly); given ones are checked
against them (motion_laws.py, the part that needs sympy).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Annotated, Literal, Union

import numpy as np
from pydantic import (AllowInfNan, BaseModel, ConfigDict, Field, FiniteFloat, Strict, StrictFloat, StrictInt, StrictStr,
                      TypeAdapter, field_validator, model_validator)

from . import programs as P
from .field_docs import add_descriptions
from .programs import EvaluationError

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

# a range is a JSON list: lax as a tuple (a list becomes the pair), strict in its numbers
StrictFinite = Annotated[float, Strict(), AllowInfNan(False)]


class _Motion(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra=add_descriptions, defer_build=True)

    name: StrictStr | None = None
    """the motion's name, for sensors"""
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
    """Position (q = q(t)), Velocity (u = u(t, q)) or Acceleration (u̇ = u̇(t, q, u))"""
    method: Method = "Prescribed"
    """Prescribed; Zero (the level's quantity is zero); Free (no motion)"""
    position: Expression | None = Field(None, description="q(t)")
    positionDot: Expression | None = Field(None, description="dq/dt; derived when omitted")
    positionDotDot: Expression | None = Field(None, description="d2q/dt2; derived when omitted")
    velocity: Expression | None = Field(None, description="u(t, q)")
    velocityDot: Expression | None = Field(None, description="total du/dt = ∂u/∂t + ∂u/∂q·u; derived when omitted")
    acceleration: Expression | None = Field(None, description="udot(t, q, u)")
    qRange: tuple[StrictFinite, StrictFinite] | None = Field(
        None, strict=False, description="[min, max] of the coordinate during the run, if known: laws of q are evaluated over it "
                          "(and the time span) at validation")
    uRange: tuple[StrictFinite, StrictFinite] | None = Field(
        None, strict=False, description="[min, max] of the rate during the run, if known: as qRange, for laws of u")

    @field_validator("qRange", "uRange")
    @classmethod
    def _ordered(cls, value):
        if value is not None and value[0] > value[1]:
            raise ValueError("must be [min, max] with min <= max")
        return value


class SinusoidMotion(_Motion):
    """Motion::Sinusoid: amplitude * sin(rate * t + phase) is q, u or udot, by level."""
    motionType: Literal["Sinusoid"]
    level: Level
    """which quantity the sine gives: q, u or u̇"""
    amplitude: FiniteFloat
    """a in a·sin(rate·t + phase)"""
    rate: FiniteFloat
    """rate in rad/s"""
    phase: FiniteFloat = 0.0
    """phase in rad"""


class SteadyMotion(_Motion):
    """Motion::Steady: constant rate u."""
    motionType: Literal["Steady"]
    level: Literal["Velocity"] = "Velocity"
    """always Velocity"""
    u: FiniteFloat
    """the constant rate of the coordinate"""


MotionSpec = Annotated[Union[CustomMotion, SinusoidMotion, SteadyMotion], Field(discriminator="motionType")]
MOTION_ADAPTER: TypeAdapter = TypeAdapter(MotionSpec, config=ConfigDict(defer_build=True))  # built when first used


class MotionError(ValueError):
    """Every problem found in one motion, as (path, message) pairs."""

    def __init__(self, problems: list[tuple[str, str]]):
        self.problems = list(problems)
        super().__init__("; ".join(f"{path}: {message}" for path, message in self.problems))


# the document field behind each of a level's programs (None: the level does not define it)
PROGRAM_FIELDS = {"Position": ("position", "positionDot", "positionDotDot"),
                  "Velocity": (None, "velocity", "velocityDot"),
                  "Acceleration": (None, None, "acceleration")}
MOTION_SLOTS = {"t": 0, "q": 1, "u": 2}


@dataclass(frozen=True)
class MotionLaw:
    """A compiled motion: its programs (see the module docstring) or None for method Free."""
    name: str
    level: Level
    method: Method
    programs: P.ProgramSet | None = None
    reads: tuple[frozenset, ...] = ()  # per program: the variables it reads, among t, q, u

    @property
    def is_free(self) -> bool:
        return self.method == "Free"

    def field(self, k: int) -> str | None:
        """The document field of program k (its derivation for Zero and the built-ins)."""
        return PROGRAM_FIELDS[self.level][k]

    def evaluate(self, k: int, t: float, q: float = 0.0, u: float = 0.0) -> float:
        """Program k at (t, q, u); EvaluationError naming the motion and field where undefined."""
        if self.programs is None or self.field(k) is None:
            raise ValueError(f"a {self.method} motion at level {self.level} has no {P.MOTION_PROGRAMS[k]}")
        value = self.programs(k, (t, q, u))
        if not math.isfinite(value):
            raise undefined(self, k, t, q, u)
        return value

    def q(self, t: float) -> float:
        return self.evaluate(0, t)

    def u(self, t: float, q: float) -> float:
        return self.evaluate(1, t, q)

    def udot(self, t: float, q: float, u: float) -> float:
        return self.evaluate(2, t, q, u)


RANGE_SAMPLES = 9  # points of a declared qRange or uRange, ends included
STATE_TIMES = 1000  # at most this many intervals of the time span for laws of q or u


def undefined_on_grid(law: MotionLaw, times: np.ndarray, q_range=None, u_range=None) -> tuple | None:
    """(program, t, q, u) of the first program not finite on the grid: `times`, and for a law
    of q or u the declared range's samples (a law of a variable without a range is skipped)."""
    if law.programs is None:
        return None
    code, consts, start, size = law.programs
    x, work = np.zeros(3), np.empty(size)
    ranges = {"q": q_range, "u": u_range}
    for k, reads in enumerate(law.reads):
        state = sorted(reads & {"q", "u"})
        if not reads or any(ranges[v] is None for v in state):  # not reads: the level has no such program
            continue
        samples = {v: np.linspace(*ranges[v], RANGE_SAMPLES) if v in state else [0.0] for v in ("q", "u")}
        ts = times if not state or len(times) <= STATE_TIMES + 1 else np.linspace(times[0], times[-1],
                                                                                  STATE_TIMES + 1)
        for q in samples["q"]:
            for u in samples["u"]:
                x[1], x[2] = q, u
                i = P.first_undefined(code, consts, start, k, ts, x, work)
                if i >= 0:
                    return k, float(ts[i]), float(q), float(u)
    return None


def undefined(law: MotionLaw, k: int, t: float, q: float, u: float) -> EvaluationError:
    variables = EXPRESSION_FIELDS[law.field(k)][1]
    at = ", ".join(f"{v}={a:.6g}" for v, a in zip(("t", "q", "u"), (t, q, u)) if v in variables)
    return EvaluationError(f"motion '{law.name}' {law.field(k)} is undefined at {at}")
