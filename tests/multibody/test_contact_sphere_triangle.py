"""ObjectContactSphereTriangle with its NodeGenericData: a ball resting on a triangle (penetration mg/k), refused
solvers, nodes, markers and parameters by path, and Exudyn 1.13.6's sensors and Newton work on balls thrown at a
triangle's face, rolling over its edges (some left out; Exudyn's CreateSphereQuadContact) and with friction."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import multibody
from multibody.kernel_cache import WARM_UP_TRIANGLE
from multibody.values import ModelInvalid
from tests.multibody.exudyn_check import assert_solves_as_exudyn, contact_sensors_and_settings

M, R, K, G = 1.6, 0.1, 1e5, 9.81


def ball_on_triangle(damping: float = 0.0, steps: int = 1000, end: float = 1.0) -> dict:
    """A ball of mass M touching a triangle on the ground (marker 1: ground) from above, inside its face."""
    doc = copy.deepcopy(WARM_UP_TRIANGLE)
    doc["nodes"][0].update(referenceCoordinates=[0.2, 0.3, R, 1, 0, 0, 0], initialVelocities=[0] * 7)
    doc["nodes"][1]["initialCoordinates"] = [0.0, 0.0, 0.0, 0.0]
    del doc["nodes"][2]
    doc["objects"][0] = {"objectType": "Ground"}
    doc["objects"][1].update(mass=M, inertia=[0.4 * M * R * R] * 3 + [0, 0, 0])
    doc["objects"][2].update(sphereRadius=R, contactStiffness=K, contactDamping=damping, dynamicFriction=0.0,
                             impactModel=0)
    doc["loads"] = [{"loadType": "ForceVector", "markerNumber": 1, "loadVector": [0, 0, -M * G]}]
    doc["sensors"] = [{"sensorType": "Object", "objectNumber": 2, "outputVariableType": var, "name": var}
                      for var in ("Force", "DisplacementLocal", "Position", "Director1")]
    doc["simulationSettings"] = {"timeIntegration": {"endTime": end, "numberOfSteps": steps},
                                 "solution": {"sensors": {"writePeriod": end / steps}}}
    return doc


def test_resting_ball_carries_its_weight_at_the_penetration_mg_over_k():
    result = multibody.simulate(ball_on_triangle(damping=2 * np.sqrt(K * M)))
    assert result.status == "succeeded", result.error
    last = {name: result.sensors[name].data[-1, 1:] for name in ("Force", "DisplacementLocal", "Position",
                                                                "Director1")}
    assert last["Force"] == pytest.approx([0, 0, M * G], abs=1e-6 * M * G)  # on the sphere's side (Exudyn's fVec)
    assert last["DisplacementLocal"][0] == pytest.approx(-M * G / K, rel=1e-6)
    assert last["Director1"] == pytest.approx([0, 0, -1], abs=1e-12)  # from the sphere's center to the triangle
    assert last["Position"] == pytest.approx([0.2, 0.3, -0.5 * M * G / K], abs=1e-9)  # halfway into the overlap


def test_solvers_without_the_discontinuous_iteration_and_wrong_items_are_refused_by_path():
    for solve, path in (({"type": "Static"}, "solve.type"), ({"type": "Dynamic", "solverType": "RK44"},
                                                              "solve.solverType")):
        with pytest.raises(ModelInvalid) as err:
            multibody.simulate({**ball_on_triangle(), "solve": solve})
        assert path in {p.path for p in err.value.problems}
    cases = [  # (change, the path refused)
        (lambda d: d["nodes"][1].update(numberOfDataCoordinates=3, initialCoordinates=[0.0] * 3),
         "objects[2].nodeNumber"),
        (lambda d: d["markers"].__setitem__(0, {"markerType": "BodyPosition", "bodyNumber": 0}),
         "objects[2].markerNumbers[1]"),  # the triangle's marker needs an orientation
        (lambda d: (d["objects"][2].update(dynamicFriction=0.3),
                    d["markers"].__setitem__(1, {"markerType": "BodyPosition", "bodyNumber": 1})),
         "objects[2].markerNumbers[0]"),  # with friction, the sphere's too
        (lambda d: d["objects"][2].update(trianglePoints=[[0, 0, 0], [1, 0, 0]]), "objects[2].trianglePoints"),
        (lambda d: d["objects"][2].update(includeEdges=8), "objects[2].includeEdges"),
        (lambda d: d["objects"][2].update(restitutionCoefficient=0.0), "objects[2].restitutionCoefficient"),
        (lambda d: d["objects"][2].update(impactModel=3), "objects[2].impactModel"),
        (lambda d: d["objects"][2].update(sphereRadius=-0.1), "objects[2].sphereRadius"),
    ]
    for change, path in cases:
        bad = ball_on_triangle()
        change(bad)
        with pytest.raises(ModelInvalid) as err:
            multibody.simulate(bad)
        assert [p.path for p in err.value.problems] == [path], path
    good = ball_on_triangle(steps=10, end=0.01)
    good["markers"][1] = {"markerType": "BodyPosition", "bodyNumber": 1}  # a position marker does without friction
    assert multibody.simulate(good).status == "succeeded"


exu = pytest.importorskip("exudyn")
OUTPUTS = ("Position", "Displacement", "DisplacementLocal", "Director1", "Force", "Torque")


def exudyn_balls(case: str):
    """Balls under gravity on the ground's triangles, sensors of every output:
    "face": a spinning ball with friction (Gonthier/Carvalho-Martins restitution) bouncing on a triangle's face;
    "edges": a ball sliding over a quad's edge (Exudyn's CreateSphereQuadContact: two triangles, edges 0 and 2 of
    the first and 0 and 1 of the second taken; Hunt-Crossley restitution, damping), one off a triangle without its
    edges. (With friction on the second, Exudyn takes 22 Jacobians and 7962 Newton iterations, mbserve 20 and 7957:
    the Newton matrices differ a little, contact_sphere_triangle.triangle_jacobians.)"""
    from exudyn.itemInterface import (LoadForceVector, MarkerBodyRigid, NodeGenericData, NodeRigidBodyEP,
                                      ObjectContactSphereTriangle, ObjectGround, ObjectRigidBody)
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    ground = mbs.AddObject(ObjectGround())
    m_ground = mbs.AddMarker(MarkerBodyRigid(bodyNumber=ground))
    contacts, bodies = [], []

    def ball(position, velocity, mass=M):
        node = mbs.AddNode(NodeRigidBodyEP(referenceCoordinates=list(position) + [1, 0, 0, 0],
                                           initialVelocities=list(velocity)))
        body = mbs.AddObject(ObjectRigidBody(mass=mass, inertia=[0.4 * mass * R * R] * 3 + [0, 0, 0],
                                             nodeNumber=node))
        marker = mbs.AddMarker(MarkerBodyRigid(bodyNumber=body))
        mbs.AddLoad(LoadForceVector(markerNumber=marker, loadVector=[0, 0, -mass * G]))
        bodies.append(body)
        return body, marker

    triangle = exu.Vector3DList([[0, 0, 0], [1, 0, 0], [0, 1, 0]])
    law = dict(contactStiffness=K, impactModel=2, restitutionCoefficient=0.7, minimumImpactVelocity=0.01)
    if case == "face":
        _, m_ball = ball([0.3, 0.2, R + 0.02], [0.3, 0.1, -1.0, 0, 5.0, 0, 2.0])  # spinning
        data = mbs.AddNode(NodeGenericData(numberOfDataCoordinates=4, initialCoordinates=[0.02, 0, 0, 0]))
        contacts.append(mbs.AddObject(ObjectContactSphereTriangle(
            markerNumbers=[m_ball, m_ground], nodeNumber=data, sphereRadius=R, trianglePoints=triangle,
            contactDamping=20.0, dynamicFriction=0.3, frictionProportionalZone=0.03, **law)))
    else:
        b0, _ = ball([0.8, 0.3, R], [1.5, 0.3, 0, 0, 0, 0, 0])  # rolls off the quad's edge x = 1
        quad = mbs.CreateSphereQuadContact(itemNumbers=[b0, ground], sphereRadius=R, quadPoints=exu.Vector3DList(
            [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]]), includeEdges=15, contactDamping=50.0,
            impactModel=1, restitutionCoefficient=0.8, contactStiffness=K)
        contacts += [quad["oContact0"], quad["oContact1"]]
        _, m1 = ball([0.3, 0.3, R], [-1.2, -0.4, 0, 0, 0, 0, 0])  # slides off a triangle without edges
        data = mbs.AddNode(NodeGenericData(numberOfDataCoordinates=4, initialCoordinates=[-1e-9, 0, 0, 0]))
        contacts.append(mbs.AddObject(ObjectContactSphereTriangle(
            markerNumbers=[m1, m_ground], nodeNumber=data, sphereRadius=R, includeEdges=0, trianglePoints=triangle,
            **law)))
    return contact_sensors_and_settings(mbs, contacts, OUTPUTS, bodies, end=0.3 if case == "face" else 0.6,
                                        steps=1500 if case == "face" else 1200, write_period=2e-3)


@pytest.mark.parametrize("case", ["face", "edges"])
def test_balls_on_triangles_give_exudyns_sensors_and_newton_work(case):
    assert_solves_as_exudyn(*exudyn_balls(case), rtol=1e-9, floor=1.0)


def test_exudyns_sphere_triangle_contact_is_exported_by_its_own_name_and_solved():
    """Exudyn 1.13.6's GetObject calls an ObjectContactSphereTriangle "ContactSphereSphere"; the export names it."""
    from mbserve.exudyn import export
    mbs, settings = exudyn_balls("edges")
    doc = export(mbs, settings)
    assert [o["objectType"] for o in doc["objects"]].count("ContactSphereTriangle") == 3
