"""VelocityVerlet (issue 13), Exudyn's velocity Verlet: v½ = v + h/2 a, q' = q + h v½ (Lie group nodes: ν ∘ exp(h ω̄½)),
a' = M⁻¹ f(q', v½, t + h), v' = v½ + h/2 a', from the acceleration at the start.

An undamped mass on a spring against its closed form: second order (halving h quarters the error); and against
Exudyn 1.13.6 to round-off: a damped mass point falling (forces of v½) with its z fixed by an eliminated
ConnectorCoordinate (the t0 row's initial acceleration keeps z's, as Exudyn's), and test_rotveclg's free Lie group
body with every node and body output variable.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import multibody

K, M, X0, V0 = 40.0, 0.5, 0.1, 0.3


def oscillator(steps: int, end: float = 1.0) -> dict:
    """A mass point on an undamped Cartesian spring to the ground, moving along x."""
    return {
        "nodes": [{"nodeType": "Point", "initialCoordinates": [X0, 0, 0], "initialVelocities": [V0, 0, 0]}],
        "objects": [{"objectType": "Ground"}, {"objectType": "MassPoint", "nodeNumber": 0, "mass": M},
                    {"objectType": "ConnectorCartesianSpringDamper", "markerNumbers": [1, 0],
                     "stiffness": [K, K, K]}],
        "markers": [{"markerType": "NodePosition", "nodeNumber": 0}, {"markerType": "BodyPosition", "bodyNumber": 0}],
        "sensors": [{"sensorType": "Node", "nodeNumber": 0, "outputVariableType": "Position", "name": "x"}],
        "simulationSettings": {"timeIntegration": {"endTime": end, "numberOfSteps": steps}},
        "solve": {"type": "Dynamic", "solverType": "VelocityVerlet"},
    }


def position_error(steps: int) -> float:
    res = multibody.simulate(oscillator(steps))
    assert res.status == "succeeded", res.error
    t, x = res.sensors["x"].data[:, 0], res.sensors["x"].data[:, 1]
    w = math.sqrt(K / M)
    return float(np.abs(x - (X0 * np.cos(w * t) + V0 / w * np.sin(w * t))).max())


def test_oscillator_converges_with_second_order():
    coarse, fine = position_error(200), position_error(400)
    assert coarse < 1e-3 * X0  # ~ (ωh)² ωT / 24 of the amplitude
    assert 3.8 < coarse / fine < 4.2


exu = pytest.importorskip("exudyn")

from tests.multibody.exudyn_check import exudyn_settings  # noqa: E402
from tests.multibody.test_planar import assert_exudyns_sensors  # noqa: E402
from tests.multibody.test_rotveclg import exudyn_free_body  # noqa: E402


def solved_both_ways(mbs, settings):
    from mbserve.exudyn import export
    ours = multibody.simulate(export(mbs, settings, solve={"type": "Dynamic", "solverType": "VelocityVerlet"}))
    assert ours.status == "succeeded", ours.error
    exu.SolveDynamic(mbs, settings, solverType=exu.DynamicSolverType.VelocityVerlet)
    return ours, mbs


def exudyn_damped_point():
    """A mass point thrown upwards in gravity on a damped spring to the ground, z fixed by a ConnectorCoordinate."""
    from exudyn.itemInterface import (LoadForceVector, MarkerNodeCoordinate, MarkerNodePosition, NodePointGround,
                                      ObjectConnectorCoordinate, SensorNode)
    mbs = exu.SystemContainer().AddSystem()
    body = mbs.CreateMassPoint(referencePosition=[1, 0, 0], initialVelocity=[0.5, 2.0, 0.7], mass=2.0)
    ground = mbs.CreateGround()
    mbs.CreateSpringDamper(itemNumbers=[ground, body], referenceLength=0.8, stiffness=400.0, damping=3.0)
    node = mbs.GetObject(body)["nodeNumber"]
    mbs.AddLoad(LoadForceVector(markerNumber=mbs.AddMarker(MarkerNodePosition(nodeNumber=node)),
                                loadVector=[0, -2 * 9.81, -5.0]))
    fixed = mbs.AddNode(NodePointGround())
    mbs.AddObject(ObjectConnectorCoordinate(markerNumbers=[mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=fixed, coordinate=0)),
                                                           mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=node,
                                                                                              coordinate=2))]))
    for var in ("Position", "Velocity", "Acceleration"):
        mbs.AddSensor(SensorNode(nodeNumber=node, storeInternal=True,
                                 outputVariableType=getattr(exu.OutputVariableType, var)))
    mbs.Assemble()
    return mbs, exudyn_settings(0.5, 500, write_period=0.01)


def test_damped_point_with_an_eliminated_coordinate_gives_exudyns_sensors():
    ours, mbs = solved_both_ways(*exudyn_damped_point())
    assert_exudyns_sensors(ours, mbs)
    acceleration = ours.sensors[list(ours.sensors)[2]].data
    assert acceleration[0, 3] == pytest.approx(-2.5) and np.all(acceleration[1:, 3] == 0.0)


def test_free_lie_group_body_gives_exudyns_sensors():
    assert_exudyns_sensors(*solved_both_ways(*exudyn_free_body()))
