"""Motion specs (SPEC section 2) compiled to laws: levels, methods, built-ins, derivative checks."""
import math

import pytest
from pydantic import ValidationError

import multibody
import multibody.model
from multibody import ExpressionLimits
from multibody.motion_laws import build_motion_law
from multibody.motions import MOTION_ADAPTER, EvaluationError, MotionError, MotionLaw

# Exact analytic values: tolerances are a few ulps of float rounding.
REL = 1e-13


def law(doc: dict, path: str = "motions[0]") -> MotionLaw:
    return build_motion_law(MOTION_ADAPTER.validate_python(doc), path, doc.get("name", "m"))


def problems(doc: dict) -> list[tuple[str, str]]:
    with pytest.raises(MotionError) as info:
        law(doc)
    return info.value.problems


def custom(level: str, **fields) -> dict:
    return {"motionType": "Custom", "name": "drive", "joint": "slider", "level": level, **fields}


def test_spec_example_position_law_with_given_derivatives():
    m = law(custom("Position", position="0.1*sin(2*pi*t)", positionDot="0.2*pi*cos(2*pi*t)",
                   positionDotDot="-0.4*pi**2*sin(2*pi*t)"))
    w = 2 * math.pi
    for t in (0.0, 0.1, 0.25, 0.6):
        assert m.q(t) == pytest.approx(0.1 * math.sin(w * t), rel=REL, abs=1e-16)
        assert m.u(t, 0.0) == pytest.approx(0.1 * w * math.cos(w * t), rel=REL, abs=1e-15)
        assert m.udot(t, 0.0, 0.0) == pytest.approx(-0.1 * w * w * math.sin(w * t), rel=REL, abs=1e-14)
        assert m.u(t, 123.0) == m.u(t, 0.0) and m.udot(t, 1.0, 2.0) == m.udot(t, 0.0, 0.0)  # q(t) only
    assert (m.level, m.method, m.is_free) == ("Position", "Prescribed", False)


def test_position_derivatives_are_derived_when_omitted():
    m = law(custom("Position", position="0.1*sin(2*pi*t)"))
    assert m.u(0.1, 0.0) == pytest.approx(0.2 * math.pi * math.cos(0.2 * math.pi), rel=REL)
    assert m.udot(0.1, 0.0, 0.0) == pytest.approx(-0.4 * math.pi ** 2 * math.sin(0.2 * math.pi), rel=REL)


@pytest.mark.parametrize("level", ["Position", "Velocity", "Acceleration"])
def test_sinusoid_prescribes_the_level_quantity(level):
    a, w, phi = 0.3, 4.0, 0.5
    m = law({"motionType": "Sinusoid", "joint": 2, "level": level, "amplitude": a, "rate": w, "phase": phi})
    t = 0.37
    s, c = math.sin(w * t + phi), math.cos(w * t + phi)
    if level == "Position":
        assert (m.q(t), m.u(t, 0.0), m.udot(t, 0.0, 0.0)) == pytest.approx((a * s, a * w * c, -a * w * w * s),
                                                                           rel=REL)
    elif level == "Velocity":
        assert [m.field(k) for k in range(3)] == [None, "velocity", "velocityDot"]
        assert m.u(t, 9.0) == pytest.approx(a * s, rel=REL)
        assert m.udot(t, 9.0, 1.0) == pytest.approx(a * w * c, rel=REL)
    else:
        assert [m.field(k) for k in range(3)] == [None, None, "acceleration"]
        with pytest.raises(ValueError, match="has no rate"):
            m.u(t, 9.0)
        assert m.udot(t, 9.0, 1.0) == pytest.approx(a * s, rel=REL)


def test_steady_is_a_constant_rate():
    m = law({"motionType": "Steady", "joint": "crank", "u": 2.5, "Vshow": False})
    assert m.level == "Velocity"
    assert (m.u(0.0, 0.0), m.u(3.0, 1.7), m.udot(3.0, 1.7, 2.5)) == (2.5, 2.5, 0.0)


def test_velocity_law_u_equals_a_t_has_udot_a():
    m = law(custom("Velocity", velocity="3*t"))
    assert (m.u(2.0, 0.4), m.udot(2.0, 0.4, 6.0)) == (6.0, 3.0)


def test_velocity_law_udot_is_the_total_time_derivative():
    # u = t*q  =>  udot = du/dt + du/dq * u = q + t*u
    m = law(custom("Velocity", velocity="t*q", velocityDot="q + t*u"))
    t, q, u = 0.7, 1.3, -0.4
    assert m.u(t, q) == pytest.approx(t * q, rel=REL)
    assert m.udot(t, q, u) == pytest.approx(q + t * u, rel=REL)
    # derived, not given: the exact total derivative, also where u depends on q nonlinearly
    m = law(custom("Velocity", velocity="sin(t)*exp(q)"))
    assert m.udot(t, q, u) == pytest.approx(math.exp(q) * (math.cos(t) + math.sin(t) * u), rel=REL)


def test_acceleration_law():
    m = law(custom("Acceleration", acceleration="-4*q - 0.2*u + sin(t)"))
    assert m.udot(0.0, 1.0, 2.0) == pytest.approx(-4.4, rel=REL)


@pytest.mark.parametrize("level, zero", [
    ("Position", {"q": (0.3,), "u": (0.3, 1.0), "udot": (0.3, 1.0, 2.0)}),
    ("Velocity", {"u": (0.3, 1.0), "udot": (0.3, 1.0, 2.0)}),
    ("Acceleration", {"udot": (0.3, 1.0, 2.0)}),
])
def test_method_zero_makes_the_level_quantity_and_those_below_zero(level, zero):
    m = law(custom(level, method="Zero"))
    assert m.method == "Zero" and not m.is_free
    for attribute, args in zero.items():
        assert getattr(m, attribute)(*args) == 0.0
    if level != "Position":
        assert m.field(0) is None


def test_method_free_prescribes_nothing():
    m = law(custom("Velocity", method="Free"))
    assert m.is_free and m.programs is None


def test_derivative_mismatch_names_motion_field_and_place():
    found = problems(custom("Position", position="0.1*sin(2*pi*t)", positionDot="0.2*pi*cos(2*pi*t) + 0.3*t",
                            positionDotDot="-0.4*pi*sin(2*pi*t)"))
    paths = [p for p, _ in found]
    assert paths == ["motions[0].positionDot", "motions[0].positionDotDot"]
    assert "positionDot is not the time derivative of position (differs by" in found[0][1]
    assert "at t=" in found[0][1]
    assert "positionDotDot is not the second time derivative of position" in found[1][1]


def test_rounded_derivative_coefficients_are_a_mismatch():
    # 0.628 for 0.2*pi: a relative error of 5e-4, far above the 1e-8 tolerance
    found = problems(custom("Position", position="0.1*sin(2*pi*t)", positionDot="0.628*cos(2*pi*t)"))
    assert found[0][0] == "motions[0].positionDot"


def test_equivalent_forms_of_the_derivative_are_accepted():
    m = law(custom("Position", position="sin(t)**2", positionDot="sin(2*t)", positionDotDot="2 - 4*sin(t)**2"))
    assert m.udot(0.3, 0.0, 0.0) == pytest.approx(2 * math.cos(0.6), rel=REL)
    law(custom("Velocity", velocity="exp(q)*t", velocityDot="exp(q)*(1 + t*u)"))


def test_velocity_dot_mismatch_names_the_field():
    found = problems(custom("Velocity", velocity="t*q", velocityDot="q"))
    assert found[0][0] == "motions[0].velocityDot"
    assert "velocityDot is not the time derivative of velocity" in found[0][1]
    assert "q=" in found[0][1] and "u=" in found[0][1]


def test_piecewise_and_smoothstep_derivatives_are_accepted_and_derived():
    m = law(custom("Position", position="smoothstep(t, 0, 2)",
                   positionDot="where(0 < t < 2, 3*t/4*(2 - t), 0)"))
    assert m.udot(0.5, 0.0, 0.0) == pytest.approx(1.5 - 1.5 * 0.5, rel=REL)  # d/dt (3t/2 - 3t^2/4)
    assert (m.u(3.0, 0.0), m.udot(3.0, 0.0, 0.0)) == (0.0, 0.0)
    m = law(custom("Position", position="t**2/2 if t < 1 else t - 0.5", positionDot="min(t, 1)"))
    assert (m.udot(0.5, 0.0, 0.0), m.udot(2.0, 0.0, 0.0)) == (1.0, 0.0)


def test_fields_of_another_level_missing_fields_and_bad_expressions_are_all_reported():
    found = problems(custom("Position", velocity="3*t", positionDot="q + 1"))
    assert sorted(found) == sorted([
        ("motions[0].velocity", "velocity does not belong to level Position "
                                "(it uses position, positionDot, positionDotDot)"),
        ("motions[0].positionDot", "positionDot: 'q' may not appear in this expression "
                                   "(allowed names: t, pi, e) (column 1)"),
        ("motions[0].position", "position is required for a Prescribed motion at level Position"),
    ])


def test_position_may_only_depend_on_time():
    [(path, message)] = problems(custom("Position", position="q*t"))
    assert path == "motions[0].position" and "'q' may not appear" in message


def test_expressions_with_method_zero_or_free_are_errors():
    assert problems(custom("Velocity", method="Zero", velocity="t")) == [
        ("motions[0].velocity", "velocity is not used with method Zero")]
    assert problems(custom("Position", method="Free", position="t")) == [
        ("motions[0].position", "position is not used with method Free")]


def test_hostile_expression_in_a_motion_is_a_problem_not_a_crash():
    [(path, message)] = problems(custom("Acceleration", acceleration="__import__('os').system('ls')"))
    assert path == "motions[0].acceleration" and message.startswith("acceleration: ")


def test_motion_error_message_lists_paths():
    with pytest.raises(MotionError, match=r"motions\[3\]\.position: position is required"):
        build_motion_law(MOTION_ADAPTER.validate_python(custom("Position")), "motions[3]", "drive")


def test_numbers_are_accepted_as_constant_expressions():
    m = law(custom("Velocity", velocity=2))
    assert m.u(0.0, 0.0) == 2.0


def test_undefined_value_during_a_run_raises_evaluation_error_naming_the_motion():
    m = law(custom("Position", position="sqrt(t)"))
    with pytest.raises(EvaluationError, match="motion 'drive' position is undefined at t=-1"):
        m.q(-1.0)


@pytest.mark.parametrize("doc", [
    {"motionType": "Custom", "joint": 1, "level": "Position", "position": "t", "unknownKey": 1},
    {"motionType": "Custom", "joint": 1, "level": "Jerk", "position": "t"},
    {"motionType": "Custom", "joint": 1, "level": "Position", "method": "Locked"},
    {"motionType": "Custom", "level": "Position", "position": "t"},
    {"motionType": "Custom", "joint": -1, "level": "Position", "position": "t"},
    {"motionType": "Custom", "joint": 1.5, "level": "Position", "position": "t"},
    {"motionType": "Sinusoid", "joint": 1, "level": "Position", "amplitude": 1},
    {"motionType": "Sinusoid", "joint": 1, "level": "Position", "amplitude": float("nan"), "rate": 1},
    {"motionType": "Steady", "joint": 1, "level": "Position", "u": 1},
    {"motionType": "Steady", "joint": 1, "method": "Zero", "u": 1},
    {"motionType": "Linear", "joint": 1},
    {"joint": 1, "level": "Position"},
])
def test_structurally_invalid_specs_are_rejected_by_the_schema(doc):
    with pytest.raises(ValidationError):
        MOTION_ADAPTER.validate_python(doc)


def test_mismatch_check_takes_bounded_time():
    # sympy.simplify of this difference ran for over 10 minutes; the numerical check decides at once
    import time
    start = time.thread_time()
    found = problems(custom("Position", position="atan2(sin(t)*cosh(t), 1+t**2)*exp(-t)*log(2+t)",
                            positionDot="exp(-t)"))
    assert found[0][0] == "motions[0].positionDot"
    assert time.thread_time() - start < 2.0


def test_derivative_undefined_at_all_sample_times_cannot_be_checked():
    [(path, message)] = problems(custom("Position", position="sqrt(-t)", positionDot="-0.5/sqrt(-t)"))
    assert path == "motions[0].positionDot" and "cannot be checked" in message


# ---------------------------------------------------------------------------------------------- budget
def sliders(n: int, motion: dict) -> dict:
    """n blocks, each on its own JointPrismaticX, each driven by a copy of motion."""
    eye = [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]
    return {
        "nodes": [{"nodeType": "RigidBodyEP", "referenceCoordinates": [0, 0, 0, 1, 0, 0, 0]} for _ in range(n)],
        "objects": [{"objectType": "Ground"}]
        + [{"objectType": "RigidBody", "nodeNumber": i, "mass": 1.0, "inertia": [0.01, 0.01, 0.01, 0, 0, 0]}
           for i in range(n)]
        + [{"objectType": "JointPrismaticX", "name": f"slider{i}", "markerNumbers": [0, 1 + i]} for i in range(n)],
        "markers": [{"markerType": "BodyRigid", "bodyNumber": 0, "localHT": eye}]
        + [{"markerType": "BodyRigid", "bodyNumber": 1 + i, "localHT": eye} for i in range(n)],
        "motions": [dict(motion, name=f"drive{i}", joint=f"slider{i}") for i in range(n)],
        "simulationSettings": {"timeIntegration": {"endTime": 1.0, "numberOfSteps": 100}},
    }


# about 11,000 cost units and a few tenths of a second of sympy each
HEAVY = {"motionType": "Custom", "level": "Position",
         "position": "*".join(f"sin({i}*t + cos(t))" for i in range(1, 13))}


@pytest.fixture
def built(monkeypatch):
    """The motions whose laws were built (where the expression work is)."""
    calls = []

    def counting(spec, path, name, budget=None, parameters=None):
        calls.append(path)
        return build_motion_law(spec, path, name, budget, parameters)
    monkeypatch.setattr(multibody.model, "build_motion_law", counting)
    return calls


def test_a_joint_with_two_motions_is_an_error_before_any_expression_work(built):
    doc = sliders(1, HEAVY)
    doc["motions"] = [dict(HEAVY, name=f"m{i}", joint="slider0") for i in range(15)]
    doc["motions"][-1]["joint"] = "missing"
    v = multibody.validate_document(doc)
    assert not v.ok and built == ["motions[0]"]
    assert v.problems[0].path == "motions[1].joint" and "already has a motion (motions[0])" in v.problems[0].message
    assert len(v.problems) == 14


def test_motion_and_expression_counts_are_checked_before_any_parse(built):
    v = multibody.validate_document(sliders(4, HEAVY), ExpressionLimits(max_motions=3, names={
        "max_motions": "MBSERVE_MAX_MOTIONS"}))
    assert [(p.path, p.message) for p in v.problems] == [
        ("motions", "4 motions; the limit is 3 per document (MBSERVE_MAX_MOTIONS)")]
    two = dict(HEAVY, positionDot="1", positionDotDot="2")
    v = multibody.validate_document(sliders(2, two), ExpressionLimits(max_expressions=5))
    assert [(p.path, p.message) for p in v.problems] == [
        ("motions", "6 motion expressions; the limit is 5 per document (max_expressions)")]
    assert built == []


def test_expression_cost_is_one_budget_per_document_and_stops_early(built):
    limits = ExpressionLimits(max_cost=30_000, names={"max_cost": "MBSERVE_MAX_EXPRESSION_COST"})
    v = multibody.validate_document(sliders(15, HEAVY), limits)
    [problem] = v.problems
    assert "cost more than 30000 units (MBSERVE_MAX_EXPRESSION_COST" in problem.message
    assert 2 <= len(built) <= 3 and problem.path == built[-1]  # the work stopped at the motion past the limit
    assert multibody.validate_document(sliders(2, HEAVY), limits).ok


def test_expression_seconds_are_part_of_the_budget(built):
    v = multibody.validate_document(sliders(15, HEAVY), ExpressionLimits(max_seconds=0.0))
    [problem] = v.problems
    assert problem.path == "motions[0]" and "s of CPU to parse, differentiate and compile" in problem.message
    assert built == ["motions[0]"]


# ------------------------------------------------------------------------- evaluated over the time span
@pytest.mark.parametrize("motion, path, fragment", [
    ({"level": "Position", "position": "t*1e100*1e100*1e100*1e100"}, "motions[0].position",
     "beyond the float range"),
    ({"level": "Position", "position": "sqrt(t - 0.5)"}, "motions[0].position", "position is undefined or not "
                                                                                 "finite at t = 0 "),
    ({"level": "Position", "position": "log(t)"}, "motions[0].position", "at t = 0 "),
    ({"level": "Position", "position": "sqrt(t)"}, "motions[0].position",
     "positionDot (derived from position) is undefined or not finite at t = 0 "),
    ({"level": "Velocity", "velocity": "sqrt(0.75 - t)"}, "motions[0].velocity", "at t = 0.76 "),
    ({"level": "Velocity", "velocity": "exp(1000*t)"}, "motions[0].velocity", "at t = 0.71 "),
    ({"level": "Acceleration", "acceleration": "1/(t - 0.3)"}, "motions[0].acceleration", "at t = 0.3 "),
])
def test_laws_not_finite_within_the_time_span_are_model_errors(motion, path, fragment):
    v = multibody.validate_document(sliders(1, dict(motion, motionType="Custom")))
    assert [p.path for p in v.problems] == [path], v.problems
    assert fragment in v.problems[0].message


def test_laws_are_checked_only_within_the_time_span():
    doc = sliders(1, {"motionType": "Custom", "level": "Position", "position": "sqrt(t - 0.5)"})
    doc["simulationSettings"]["timeIntegration"].update(startTime=0.5, endTime=1.5)
    [problem] = multibody.validate_document(doc).problems  # sqrt's derivative at t = 0.5
    assert problem.path == "motions[0].position" and "positionDot (derived" in problem.message
    doc["simulationSettings"]["timeIntegration"].update(startTime=0.6)
    assert multibody.validate_document(doc).ok


ROOT = {"motionType": "Custom", "level": "Velocity", "velocity": "sqrt(1 - q)"}  # defined for q <= 1
SQRT_U = {"motionType": "Custom", "level": "Acceleration", "acceleration": "sqrt(u + 2)"}  # for u >= -2


@pytest.mark.parametrize("motion, problem", [
    (ROOT, None),  # no declared range: the run decides
    (dict(ROOT, qRange=[-1, 0.5]), None),
    (dict(ROOT, qRange=[-1, 2]), ("motions[0].velocity", "velocity is undefined or not finite at t = 0, q = 1.25 ")),
    (dict(ROOT, qRange=[0, 1], uRange=[-1, 1]),  # velocityDot = -u/(2 sqrt(1 - q))
     ("motions[0].velocity", "velocityDot (derived from velocity) is undefined or not finite at t = 0, q = 1, "
                             "u = -1 ")),
    (dict(SQRT_U, uRange=[-2, 3]), None),
    (dict(SQRT_U, uRange=[-3, 3]), ("motions[0].acceleration", "at t = 0, u = -3 ")),
    (dict(ROOT, qRange=[2, 1]), ("motions[0].qRange", "must be [min, max] with min <= max")),
])
def test_laws_of_the_state_are_checked_over_declared_ranges(motion, problem):
    v = multibody.validate_document(sliders(1, motion))
    found = [(p.path, p.message) for p in v.problems]
    if problem is None:
        assert found == []
    else:
        assert len(found) == 1 and found[0][0] == problem[0] and problem[1] in found[0][1], found


def test_a_law_of_the_state_undefined_during_the_run_fails_the_job_naming_the_motion():
    # the law depends on q, so validation cannot evaluate it; the run reaches q = t²/2 > 1
    doc = sliders(1, {"motionType": "Custom", "level": "Acceleration", "acceleration": "1 + 1e-9*sqrt(1 - q)"})
    doc["simulationSettings"]["timeIntegration"].update(endTime=2.0, numberOfSteps=200)
    res = multibody.simulate(doc)
    assert res.status == "failed" and res.error["code"] == "motion_evaluation"
    assert "motion 'drive0' acceleration is undefined at t=" in res.error["message"]
    assert 1.3 < res.error["detail"]["time"] < 1.5  # q = t²/2 passes 1 at t = √2
