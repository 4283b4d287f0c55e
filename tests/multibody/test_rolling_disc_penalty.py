"""ObjectConnectorRollingDiscPenalty with its NodeGenericData: a disc resting on the plane (penalty force = weight,
penetration mg/k), refused solvers and nodes by path, and Exudyn's sensors on a slipping, tilted disc."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import multibody
from multibody.kernel_cache import WARM_UP_PENALTY
from multibody.values import ModelInvalid
from tests.multibody.exudyn_check import assert_solves_as_exudyn

M, R, K, G = 2.0, 0.5, 1e5, 9.81


def resting_disc(damping: float = 2e3, steps: int = 200) -> dict:
    """A disc of mass M on its rim, upright, dropped from the unloaded contact: it settles at mg/k."""
    doc = copy.deepcopy(WARM_UP_PENALTY)
    doc["nodes"][0].update(referenceCoordinates=[0, 0, R, 1, 0, 0, 0], initialVelocities=[0] * 7)
    doc["objects"][1].update(mass=M, inertia=[0.5 * M * R * R, 0.25 * M * R * R, 0.25 * M * R * R, 0, 0, 0])
    doc["objects"][2].update(discRadius=R, contactStiffness=K, contactDamping=damping, rollingViscousFriction=0.0)
    doc["nodes"][1]["initialCoordinates"] = [0.0, 0.0, -1.0]  # in contact from the start
    doc["loads"][0]["loadVector"] = [0, 0, -M * G]
    doc["sensors"] = [{"sensorType": "Object", "objectNumber": 2, "outputVariableType": var, "name": var}
                      for var in ("ForceLocal", "Position")]
    doc["simulationSettings"] = {"timeIntegration": {"endTime": 1.0, "numberOfSteps": steps}}
    return doc


def test_resting_disc_carries_its_weight_at_the_penetration_mg_over_k():
    result = multibody.simulate(resting_disc())
    assert result.status == "succeeded", result.error
    force, position = result.sensors["ForceLocal"].data[-1], result.sensors["Position"].data[-1]
    assert force[3] == pytest.approx(M * G, rel=1e-6)  # normal force on the disc [lateral, forward, normal]
    assert abs(force[1]) + abs(force[2]) < 1e-9  # no slip, no friction
    assert position[3] == pytest.approx(-M * G / K, rel=1e-6)  # the contact point below the plane


def test_solvers_without_the_discontinuous_iteration_and_wrong_nodes_are_refused_by_path():
    for solve, path in (({"type": "Static"}, "solve.type"), ({"type": "Dynamic", "solverType": "RK44"},
                                                              "solve.solverType")):
        with pytest.raises(ModelInvalid) as err:
            multibody.simulate({**resting_disc(), "solve": solve})
        assert path in {p.path for p in err.value.problems}
    bad = resting_disc()
    bad["nodes"][1]["numberOfDataCoordinates"] = 2
    bad["nodes"][1]["initialCoordinates"] = []
    with pytest.raises(ModelInvalid) as err:
        multibody.simulate(bad)
    assert [p.path for p in err.value.problems] == ["objects[2].nodeNumber"]
    bad = resting_disc()
    bad["objects"][2]["nodeNumber"] = 0  # the disc's rigid-body node
    with pytest.raises(ModelInvalid) as err:
        multibody.simulate(bad)
    assert "GenericData" in err.value.problems[0].message and err.value.problems[0].path == "objects[2].nodeNumber"
    bad = resting_disc()
    bad["nodes"][1]["initialCoordinates"] = [0.0, 1.0]
    with pytest.raises(ModelInvalid) as err:
        multibody.simulate(bad)
    assert err.value.problems[0].path.startswith("nodes[1]")


exu = pytest.importorskip("exudyn")


def exudyn_slipping_disc(angle: float = 0.0, linear: bool = False):
    """A tilted disc thrown on the plane slipping and spinning (friction, proportional zone, viscous and rolling
    friction), under gravity; sensors of every output variable."""
    from exudyn.itemInterface import (LoadForceVector, MarkerBodyRigid, NodeGenericData, NodeRigidBodyEP,
                                      ObjectConnectorRollingDiscPenalty, ObjectGround, ObjectRigidBody, SensorObject)
    from exudyn.rigidBodyUtilities import RotationMatrix2EulerParameters, RotationMatrixY
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    tilt = 0.2
    ep = RotationMatrix2EulerParameters(RotationMatrixY(tilt))
    ground = mbs.AddObject(ObjectGround())
    z = R * np.cos(tilt) - 2e-4
    node = mbs.AddNode(NodeRigidBodyEP(referenceCoordinates=[0, 0, z] + list(ep),
                                       initialVelocities=[0.3, 1.0, 0, 0, 0, 0, 0]))
    body = mbs.AddObject(ObjectRigidBody(mass=M, inertia=[0.5 * M * R * R, 0.25 * M * R * R, 0.25 * M * R * R, 0, 0, 0],
                                         nodeNumber=node))
    m0 = mbs.AddMarker(MarkerBodyRigid(bodyNumber=ground))
    m1 = mbs.AddMarker(MarkerBodyRigid(bodyNumber=body))
    data = mbs.AddNode(NodeGenericData(numberOfDataCoordinates=3, initialCoordinates=[0, 0, 0]))
    disc = mbs.AddObject(ObjectConnectorRollingDiscPenalty(
        markerNumbers=[m0, m1], nodeNumber=data, discRadius=R, contactStiffness=K, contactDamping=500.0,
        dryFriction=[0.4, 0.3], dryFrictionProportionalZone=0.05, viscousFriction=[0.1, 0.2],
        rollingViscousFriction=0.02, dryFrictionAngle=angle, useLinearProportionalZone=linear))
    mbs.AddLoad(LoadForceVector(markerNumber=m1, loadVector=[0, 0, -M * G]))
    for var in ("Position", "Velocity", "VelocityLocal", "ForceLocal", "RotationMatrix"):
        mbs.AddSensor(SensorObject(objectNumber=disc, storeInternal=True,
                                   outputVariableType=getattr(exu.OutputVariableType, var)))
    mbs.Assemble()
    settings = exu.SimulationSettings()
    settings.timeIntegration.endTime = 0.2
    settings.timeIntegration.numberOfSteps = 200
    settings.timeIntegration.verboseMode = 0
    settings.solution.file.write = False
    return mbs, settings


@pytest.mark.parametrize("angle, linear, tolerance", [(0.0, False, 1.0), (0.3, True, 1e-2)])
def test_slipping_disc_gives_exudyns_sensors(angle, linear, tolerance):
    """(tolerance 1e-2: Exudyn repeats Newton in about half of the steps; the same Newton rules and discontinuous
    iteration: Newton counts within a few, 1165 vs 1166, 1867 vs 1868)"""
    mbs, settings = exudyn_slipping_disc(angle, linear)
    settings.timeIntegration.discontinuous.iterationTolerance = tolerance
    assert_solves_as_exudyn(mbs, settings, rtol=1e-8, floor=0.0)
