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
from pydantic import (BaseModel, ConfigDict, Field, FiniteFloat, StrictFloat, StrictInt, StrictStr, TypeAdapter,
                      model_validator)

from . import programs as P
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
    time_only: tuple[bool, ...] = ()  # per program: reads t only (not q, u)

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


def undefined_in_time(law: MotionLaw, times: np.ndarray) -> tuple[int, float] | None:
    """(program, t) of the first program that reads only t and is not finite at one of `times`."""
    if law.programs is None:
        return None
    code, consts, start, size = law.programs
    x, work = np.zeros(3), np.empty(size)
    for k, time_only in enumerate(law.time_only):
        i = P.first_undefined(code, consts, start, k, times, x, work) if time_only else -1
        if i >= 0:
            return k, float(times[i])
    return None


def undefined(law: MotionLaw, k: int, t: float, q: float, u: float) -> EvaluationError:
    variables = EXPRESSION_FIELDS[law.field(k)][1]
    at = ", ".join(f"{v}={a:.6g}" for v, a in zip(("t", "q", "u"), (t, q, u)) if v in variables)
    return EvaluationError(f"motion '{law.name}' {law.field(k)} is undefined at {at}")
