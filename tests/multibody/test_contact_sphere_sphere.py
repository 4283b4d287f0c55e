"""ObjectContactSphereSphere with its NodeGenericData: a ball resting on a sphere (penetration mg/k), a linear
spring-dashpot impact's coefficient of restitution, refused solvers and markers by path, and Exudyn's sensors and
Newton work on balls thrown at spheres (restitution models, friction, the elasto-plastic adhesion model)."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import multibody
from multibody.kernel_cache import WARM_UP_CONTACT
from multibody.values import ModelInvalid
from tests.multibody.exudyn_check import assert_solves_as_exudyn, contact_sensors_and_settings

M, R, K, G = 1.6, 0.1, 1e5, 9.81


def ball_on_sphere(damping: float = 0.0, v0: float = 0.0, gravity: float = G, steps: int = 1000,
                   end: float = 1.0) -> dict:
    """A ball of mass M on a ground sphere, both of radius R, touching at the start and moving up at v0."""
    doc = copy.deepcopy(WARM_UP_CONTACT)
    doc["nodes"][0].update(referenceCoordinates=[0, 0, 2 * R, 1, 0, 0, 0], initialVelocities=[0, 0, v0, 0, 0, 0, 0])
    doc["nodes"][1]["initialCoordinates"] = [0.0, 0.0, 0.0, 0.0]
    doc["objects"][1].update(mass=M, inertia=[0.4 * M * R * R] * 3 + [0, 0, 0])
    doc["objects"][2].update(spheresRadii=[R, R], contactStiffness=K, contactDamping=damping, dynamicFriction=0.0,
                             impactModel=0)
    doc["loads"] = [{"loadType": "ForceVector", "markerNumber": 1, "loadVector": [0, 0, -M * gravity]}]
    doc["sensors"] = [{"sensorType": "Object", "objectNumber": 2, "outputVariableType": var, "name": var}
                      for var in ("Force", "DisplacementLocal")] + [
        {"sensorType": "Body", "bodyNumber": 1, "outputVariableType": "Velocity", "name": "velocity"}]
    doc["simulationSettings"] = {"timeIntegration": {"endTime": end, "numberOfSteps": steps},
                                 "solution": {"sensors": {"writePeriod": end / steps}}}
    return doc


def test_resting_ball_carries_its_weight_at_the_penetration_mg_over_k():
    result = multibody.simulate(ball_on_sphere(damping=2 * np.sqrt(K * M)))
    assert result.status == "succeeded", result.error
    force, gap = result.sensors["Force"].data[-1], result.sensors["DisplacementLocal"].data[-1]
    assert force[1:] == pytest.approx([0, 0, -M * G], abs=1e-6 * M * G)  # on the ground sphere's side (Exudyn's sign)
    assert gap[1] == pytest.approx(-M * G / K, rel=1e-6)


def test_linear_spring_dashpot_impact_has_the_oscillators_coefficient_of_restitution():
    """Without gravity a ball leaves the sphere at v0 and comes back: a damped half oscillation in contact, so the
    rebound speed is v0 exp(-ζπ/√(1-ζ²)), ζ = d / (2√(kM)); the time in contact π/ω_d."""
    zeta, v0 = 0.1, 1.0
    doc = ball_on_sphere(damping=2 * zeta * np.sqrt(K * M), v0=-v0, gravity=0.0, steps=4000, end=0.04)
    doc["nodes"][0]["referenceCoordinates"][2] = 2 * R + 1e-3  # the ball hits at t = 1 ms
    doc["nodes"][1]["initialCoordinates"] = [1e-3, 0.0, 0.0, 0.0]
    result = multibody.simulate(doc)
    assert result.status == "succeeded", result.error
    velocity = result.sensors["velocity"].data[:, 3]
    assert velocity[-1] == pytest.approx(v0 * np.exp(-zeta * np.pi / np.sqrt(1 - zeta ** 2)), rel=2e-3)
    gap = result.sensors["DisplacementLocal"].data
    inside = gap[gap[:, 1] < 0, 0]
    omega_d = np.sqrt(K / M) * np.sqrt(1 - zeta ** 2)
    assert inside[-1] - inside[0] == pytest.approx(np.pi / omega_d, rel=2e-2)


def test_solvers_without_the_discontinuous_iteration_and_wrong_nodes_and_markers_are_refused_by_path():
    for solve, path in (({"type": "Static"}, "solve.type"), ({"type": "Dynamic", "solverType": "RK44"},
                                                              "solve.solverType")):
        with pytest.raises(ModelInvalid) as err:
            multibody.simulate({**ball_on_sphere(), "solve": solve})
        assert path in {p.path for p in err.value.problems}
    bad = ball_on_sphere()
    bad["nodes"][1].update(numberOfDataCoordinates=3, initialCoordinates=[0.0, 0.0, 0.0])
    with pytest.raises(ModelInvalid) as err:
        multibody.simulate(bad)
    assert [p.path for p in err.value.problems] == ["objects[2].nodeNumber"]
    bad = ball_on_sphere()
    bad["objects"][2]["dynamicFriction"] = 0.3
    bad["markers"][1] = {"markerType": "BodyPosition", "bodyNumber": 1}
    with pytest.raises(ModelInvalid) as err:
        multibody.simulate(bad)
    assert [p.path for p in err.value.problems] == ["objects[2].markerNumbers[1]"]
    bad["objects"][2]["dynamicFriction"] = 0.0  # a position marker does without friction
    assert multibody.simulate(bad).status == "succeeded"


exu = pytest.importorskip("exudyn")
OUTPUTS = ("Position", "Displacement", "DisplacementLocal", "Velocity", "Force", "Director1", "Torque")


def exudyn_thrown_balls(case: str, steps: int | None = None):
    """Balls thrown at ground spheres, under gravity: "restitution" a spinning ball with friction and the
    Gonthier/Carvalho-Martins model, bouncing off two spheres, one hollow around it; "plastic" one with the
    elasto-plastic adhesion model (stiffness exponent 2) bouncing on a sphere. Sensors of every output; with
    `steps` Exudyn's adaptive steps of nominal size end/steps and the contacts' recommended steps."""
    from exudyn.itemInterface import (LoadForceVector, MarkerBodyRigid, MarkerNodeRigid, NodeGenericData,
                                      NodePointGround, NodeRigidBodyEP, ObjectContactSphereSphere, ObjectGround,
                                      ObjectRigidBody)
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    ground = mbs.AddObject(ObjectGround())
    node = mbs.AddNode(NodeRigidBodyEP(referenceCoordinates=[0.01, 0, 2 * R + 0.02, 1, 0, 0, 0],
                                       initialVelocities=[0.3, 0.1, -1.0, 0, 5.0, 0, 2.0] if case == "restitution"
                                       else [0, 0, -0.5, 0, 0, 0, 0]))  # the first: spinning
    body = mbs.AddObject(ObjectRigidBody(mass=M, inertia=[0.4 * M * R * R] * 3 + [0, 0, 0], nodeNumber=node))
    m_body = mbs.AddMarker(MarkerBodyRigid(bodyNumber=body))
    m_ground = mbs.AddMarker(MarkerBodyRigid(bodyNumber=ground))
    mbs.AddLoad(LoadForceVector(markerNumber=m_body, loadVector=[0, 0, -M * G]))
    contacts = []
    data = mbs.AddNode(NodeGenericData(numberOfDataCoordinates=4, initialCoordinates=[0.02, 0, 0, 0]))
    if case == "restitution":
        contacts.append(mbs.AddObject(ObjectContactSphereSphere(
            markerNumbers=[m_ground, m_body], nodeNumber=data, spheresRadii=[R, R], contactStiffness=K,
            contactDamping=20.0, dynamicFriction=0.3, frictionProportionalZone=0.01, impactModel=2,
            restitutionCoefficient=0.7, minimumImpactVelocity=0.01)))
        n_outer = mbs.AddNode(NodePointGround(referenceCoordinates=[0, 0, 2 * R]))
        m_outer = mbs.AddMarker(MarkerNodeRigid(nodeNumber=n_outer))
        data2 = mbs.AddNode(NodeGenericData(numberOfDataCoordinates=4, initialCoordinates=[0.1, 0, 0, 0]))
        contacts.append(mbs.AddObject(ObjectContactSphereSphere(
            markerNumbers=[m_body, m_outer], nodeNumber=data2, spheresRadii=[R, 2.2 * R], isHollowSphere1=True,
            contactStiffness=K, dynamicFriction=0.2, impactModel=1, restitutionCoefficient=0.8)))
    else:
        contacts.append(mbs.AddObject(ObjectContactSphereSphere(
            markerNumbers=[m_ground, m_body], nodeNumber=data, spheresRadii=[R, R], contactStiffness=1e7,
            contactStiffnessExponent=2, contactDamping=0.001, contactPlasticityRatio=0.6, constantPullOffForce=0.01,
            adhesionCoefficient=4e4, adhesionExponent=2)))
    fixed = 2000 if case == "restitution" else 1000
    return contact_sensors_and_settings(mbs, contacts, OUTPUTS, [body], end=0.2 if case == "restitution" else 0.5,
                                        steps=steps or fixed, write_period=1e-3, adaptive=steps is not None)


@pytest.mark.parametrize("case", ["restitution", "plastic"])
def test_thrown_balls_give_exudyns_sensors_and_newton_work(case):
    # Newton 13712 vs 13713 (restitution): the Newton matrix differs a little
    assert_solves_as_exudyn(*exudyn_thrown_balls(case), rtol=1e-9, floor=1.0)


@pytest.mark.parametrize("steps", [50, 200])
def test_adaptive_steps_shorten_to_the_recommended_steps_as_exudyns(steps):
    """Exudyn 1.13.6's step sequence (693 and 811 steps): a contact that closes or opens (the adhesive ball leaving
    the sphere) within a step recommends the time to its switch, the step is retried with min(0.75 h, recommended),
    down to the minimum step; each accepted step counts toward the recovery, one of many iterations delays the growth
    (24 times with 200 steps). Main's rules before these gave 194 and 244 sensor rows for Exudyn's 169 and 264.
    (The "restitution" balls, 100 steps: Exudyn's 365 steps too, its Newton matrix a Jacobian and iteration apart.)"""
    assert_solves_as_exudyn(*exudyn_thrown_balls("plastic", steps), rtol=1e-9, floor=1.0, newton_slack=0)
