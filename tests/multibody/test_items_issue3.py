"""Issue 3 item set: explicit solvers' handling of constraints as Exudyn's, and the
redundant-constraint check. (Their cross-checks against Exudyn are in test_exudyn_cases.py.)

"""
from __future__ import annotations


import numpy as np
import pytest

import multibody

from .conftest import CASES, load_json


def _coordinate_model(solver: str) -> dict:
    """A mass point: a coordinate spring on x, its y fixed to a ground coordinate (offset ignored by the
    elimination, as in Exudyn), a coordinate load on y."""
    coord = [{"markerType": "NodeCoordinate", "nodeNumber": n, "coordinate": c} for n, c in ((0, 0), (1, 0), (1, 1))]
    return {
        "nodes": [{"nodeType": "PointGround"},
                  {"nodeType": "Point", "initialCoordinates": [0.05, 0.0, 0.01], "initialVelocities": [0, 0, 0.1]}],
        "objects": [{"objectType": "MassPoint", "nodeNumber": 1, "mass": 0.7},
                    {"objectType": "ConnectorCoordinateSpringDamper", "markerNumbers": [0, 1], "stiffness": 30.0,
                     "damping": 0.3, "offset": 0.01},
                    {"objectType": "ConnectorCoordinate", "markerNumbers": [0, 2], "offset": 0.02, "name": "fixY"}],
        "markers": coord,
        "loads": [{"loadType": "Coordinate", "markerNumber": 2, "load": 0.3}],
        "sensors": [{"sensorType": "Node", "nodeNumber": 1, "outputVariableType": "Coordinates", "name": "q"},
                    {"sensorType": "Object", "objectNumber": "fixY", "outputVariableType": "Force", "name": "f"}],
        "simulationSettings": {"timeIntegration": {"endTime": 0.5, "numberOfSteps": 50}},
        "solve": {"type": "Dynamic", "solverType": solver},
    }


@pytest.mark.parametrize("solver", ["ExplicitEuler", "ExplicitMidpoint", "RK44", "DOPRI5"])
def test_explicit_eliminates_ground_coordinate_constraint(solver):
    r = multibody.simulate(_coordinate_model(solver))
    assert r.status == "succeeded"
    q = r.sensors["q"].data
    assert np.all(q[:, 2] == 0.0) and np.all(r.sensors["f"].data[:, 1] == 0.0)
    assert np.abs(q[:, 3] - (0.01 + 0.1 * q[:, 0])).max() < 1e-12  # z is free: z0 + v0 t


def test_explicit_refuses_what_exudyn_refuses():
    doc = load_json(CASES / "spherical_and_generic" / "model.json")
    doc["solve"]["solverType"] = "RK44"
    with pytest.raises(multibody.ModelInvalid) as exc:
        multibody.simulate(doc)
    messages = " ".join(str(p) for p in exc.value.problems)
    assert "solve.solverType" in messages and "Euler-parameter nodes" in messages
    assert "spherical" in messages and "generic" in messages  # joints named


# ------------------------------------------------------------------------------ redundant constraints
def test_closed_planar_loop_of_revolute_joints_is_redundant():
    doc = load_json(CASES / "slider_crank" / "model.json")
    doc["objects"][6] = {"objectType": "JointRevoluteZ", "markerNumbers": [4, 5], "name": "rodSliderJoint"}
    doc["sensors"] = [s for s in doc["sensors"] if s.get("objectNumber") != 6]
    r = multibody.simulate(doc)
    assert r.status == "failed" and r.error["code"] == "redundant_constraints"
    assert set(r.error["detail"]["items"]) == {"crankJoint", "crankRodJoint", "rodSliderJoint", "sliderJoint"}


def test_prismatic_and_revolute_between_the_same_bodies_are_redundant():
    doc = load_json(CASES / "slider_crank" / "model.json")
    # a revolute joint on the slider's prismatic markers (ground - slider) conflicts with the prismatic joint
    doc["objects"].append({"objectType": "JointRevoluteZ", "markerNumbers": [6, 7], "name": "extra"})
    r = multibody.simulate(doc)
    assert r.status == "failed" and r.error["code"] == "redundant_constraints"
    assert {"extra", "sliderJoint"} <= set(r.error["detail"]["items"])
    assert "extra" in r.error["message"]
