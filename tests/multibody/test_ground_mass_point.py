"""ObjectMassPoint on a NodePointGround (issue 13): Exudyn's fixed point, `MassPoint(physicsMass=0,
nodeNumber=<PointGround>)` as its four-bar test model builds its ground. The node has no coordinates,
so the mass acts nowhere; markers on the node hold the mechanism. Checked: a rod pendulum hung from
such a point against Exudyn 1.13.6 run here (every sensor), the hanging rod's force m g (closed form),
and the bad input.
"""
from __future__ import annotations

import exudyn as exu
import numpy as np
import pytest
from exudyn.itemInterface import (LoadForceVector, MarkerNodePosition, NodePoint, NodePointGround, ObjectConnectorDistance,
                                  ObjectMassPoint)

import multibody
from mbserve.exudyn import export
from multibody.model import load_model
from multibody.values import ModelInvalid
from tests.multibody.test_planar import assert_exudyns_sensors, with_sensors

G, L, MASS = 9.81, 0.8, 0.5


def exudyn_pendulum(x0: float):
    """A mass point on a rod of length L from a PointGround node's zero-mass MassPoint, under its weight."""
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    ground = mbs.AddNode(NodePointGround(referenceCoordinates=[0, 0, 0]))
    bob = mbs.AddNode(NodePoint(referenceCoordinates=[x0, -np.sqrt(L * L - x0 * x0), 0]))
    mbs.AddObject(ObjectMassPoint(mass=0, nodeNumber=ground))
    mbs.AddObject(ObjectMassPoint(mass=MASS, nodeNumber=bob))
    m0 = mbs.AddMarker(MarkerNodePosition(nodeNumber=ground))
    m1 = mbs.AddMarker(MarkerNodePosition(nodeNumber=bob))
    rod = mbs.AddObject(ObjectConnectorDistance(markerNumbers=[m0, m1], distance=L))
    mbs.AddLoad(LoadForceVector(markerNumber=m1, loadVector=[0, -MASS * G, 0]))
    return with_sensors(mbs, nodes=[(bob, ("Position", "Velocity")), (ground, ("Position",))],
                        bodies=[(0, ("Position",))], objects=[(rod, ("Force",))], markers=[])


def test_pendulum_from_a_ground_mass_point_gives_exudyns_sensors():
    mbs, settings = exudyn_pendulum(0.4)
    ours = multibody.simulate(export(mbs, settings))
    assert ours.status == "succeeded", ours.error
    exu.SolveDynamic(mbs, settings)
    assert_exudyns_sensors(ours, mbs)
    assert np.abs(np.ptp(ours.sensors[next(iter(ours.sensors))].data[:, 1])) > 0.1  # it swings


def test_hanging_rod_from_a_ground_mass_point_carries_the_weight():
    mbs, settings = exudyn_pendulum(0.0)
    ours = multibody.simulate(export(mbs, settings))
    assert ours.status == "succeeded", ours.error
    force = [s.data for s in ours.sensors.values() if s.outputVariableType == "Force"][0]
    assert np.abs(force[:, 1] - MASS * G).max() < 1e-9 * MASS * G
    ground_body = [s.data for s in ours.sensors.values() if s.outputVariableType == "Position"][2]
    assert np.array_equal(np.unique(ground_body[:, 1:], axis=0), [[0.1, 0.05, 0.0]])  # the fixed point's local point


def test_negative_mass_on_a_ground_point_names_the_item_and_the_path():
    mbs, settings = exudyn_pendulum(0.4)
    doc = export(mbs, settings)
    doc["objects"][0]["mass"] = -1.0
    doc["objects"][1]["mass"] = 0.0  # on a Point node zero stays refused
    with pytest.raises(ModelInvalid) as err:
        load_model(doc)
    problems = {p.path: p.message for p in err.value.problems}
    assert problems == {"objects[0].mass": "must not be negative, got -1.0",
                        "objects[1].mass": "must be positive, got 0.0"}
