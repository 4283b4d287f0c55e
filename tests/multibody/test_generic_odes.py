"""NodeGenericODE2 and ObjectGenericODE2: M q̈ + K q + D q̇ = f with constant matrices, dense or sparse.

The model: a chain of N masses m on springs k, fixed to ground at one end, free at the other,
K = k·tridiag(-1, 2, -1) with K[N-1, N-1] = k. Its eigenfrequencies are
ω_j = 2√(k/m)·sin((2j-1)π / (2(2N+1))), j = 1..N (a fixed-free chain), its modes
φ_j[i] = sin((2j-1)(i+1)π / (2N+1)). Started in mode 1 at rest it moves as φ_1 cos(ω_1 t).
Tolerances: generalized-α without numerical damping (ρ∞ = 1, trapezoidal) at ω₁h ≈ 6e-4 has a phase
error ~(ωh)²ωt/12 of the amplitude, ~1e-7 here (1e-5 allowed); RK44's is ~(ωh)⁴ per period (1e-9
allowed); the static deflection K u = f and the same chain of mass points hold to round-off.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import multibody
from multibody.api import load_model
from multibody.solvers.generalized_alpha import solve_dynamic
from multibody.values import ModelInvalid

N, MASS, K = 4, 0.5, 200.0


def chain_matrices() -> tuple[np.ndarray, np.ndarray]:
    stiffness = K * (2 * np.eye(N) - np.eye(N, k=1) - np.eye(N, k=-1))
    stiffness[-1, -1] = K
    return MASS * np.eye(N), stiffness


def omega(j: int) -> float:
    return 2 * math.sqrt(K / MASS) * math.sin((2 * j - 1) * math.pi / (2 * (2 * N + 1)))


def mode(j: int) -> np.ndarray:
    return np.sin((2 * j - 1) * np.arange(1, N + 1) * math.pi / (2 * N + 1))


def sparse(matrix: np.ndarray) -> dict:
    r, c = np.nonzero(matrix)
    return {"numberOfRows": len(matrix), "numberOfColumns": len(matrix),
            "triplets": [[float(i), float(j), float(matrix[i, j])] for i, j in zip(r, c)]}


def generic_chain(form: str, q0: np.ndarray, solver: str = "GeneralizedAlpha", force=None) -> dict:
    M, Kc = chain_matrices()
    as_form = (lambda x: x.tolist()) if form == "dense" else sparse
    return {
        "nodes": [{"nodeType": "GenericODE2", "name": "chain", "numberOfODE2Coordinates": N,
                   "initialCoordinates": q0.tolist()}],
        "objects": [{"objectType": "GenericODE2", "name": "springs", "nodeNumbers": ["chain"],
                     "massMatrix": as_form(M), "stiffnessMatrix": as_form(Kc),
                     "forceVector": [] if force is None else list(force)}],
        "sensors": [{"sensorType": "Node", "name": "q", "nodeNumber": 0, "outputVariableType": "Coordinates"},
                    {"sensorType": "Object", "name": "q_t", "objectNumber": 0, "outputVariableType": "Coordinates_t"}],
        "simulationSettings": {"timeIntegration": {"endTime": 0.5, "numberOfSteps": 5000,
                                                   "generalizedAlpha": {"spectralRadius": 1.0}},
                               "solution": {"sensors": {"writePeriod": 0.01}}},
        "solve": {"type": "Dynamic", "solverType": solver},
    }


def point_chain(q0: np.ndarray) -> dict:
    """The same chain from mass points (x only: y and z held by stiff coordinate springs would change
    nothing in x) and coordinate spring-dampers between x coordinates, the first to a ground node."""
    doc = {"nodes": [{"nodeType": "PointGround"}] + [{"nodeType": "Point", "initialCoordinates": [x, 0.0, 0.0]}
                                                      for x in q0],
           "objects": [{"objectType": "MassPoint", "nodeNumber": i + 1, "mass": MASS} for i in range(N)]
           + [{"objectType": "ConnectorCoordinateSpringDamper", "markerNumbers": [i, i + 1], "stiffness": K}
              for i in range(N)],
           "markers": [{"markerType": "NodeCoordinate", "nodeNumber": i, "coordinate": 0} for i in range(N + 1)],
           "sensors": [{"sensorType": "Node", "nodeNumber": i + 1, "outputVariableType": "Coordinates"}
                       for i in range(N)]}
    doc["simulationSettings"] = generic_chain("dense", q0)["simulationSettings"]
    return doc


@pytest.mark.parametrize("form", ["dense", "sparse"])
def test_chain_moves_in_its_first_mode_at_the_closed_form_frequency(form):
    res = solve_dynamic(load_model(generic_chain(form, 0.01 * mode(1))))
    q, v = res.sensors["q"].data, res.sensors["q_t"].data
    t = q[:, :1]
    exact = 0.01 * mode(1) * np.cos(omega(1) * t)
    assert np.abs(q[:, 1:] - exact).max() < 1e-5 * 0.01
    assert np.abs(v[:, 1:] + 0.01 * mode(1) * omega(1) * np.sin(omega(1) * t)).max() < 1e-5 * 0.01 * omega(1)


def test_generic_chain_is_the_chain_of_mass_points():
    q0 = 0.01 * mode(2) + 0.005 * mode(3)
    generic = multibody.simulate(generic_chain("sparse", q0))
    points = multibody.simulate(point_chain(q0))
    assert generic.status == points.status == "succeeded"
    ours = generic.sensors["q"].data
    theirs = np.column_stack([points.sensors[name].data[:, 1] for name in list(points.sensors)])
    assert np.abs(ours[:, 1:] - theirs).max() < 1e-12


def test_static_deflection_solves_k_u_f():
    force = np.array([0.0, 1.0, 0.0, 2.0])
    doc = generic_chain("sparse", np.zeros(N), force=force)
    doc["solve"] = {"type": "Static"}
    res = multibody.simulate(doc)
    assert res.status == "succeeded", res.error
    u = np.linalg.solve(chain_matrices()[1], force)
    assert res.sensors["q"].data[-1, 1:] == pytest.approx(u, rel=1e-10)


@pytest.mark.parametrize("form", ["dense", "sparse"])
def test_explicit_solver_solves_with_the_mass_matrix(form):
    """RK44 with a non-diagonal (still constant) M: M scaled by a full SPD matrix S (M' = Sᵀ M S,
    K' = Sᵀ K S) has the same frequencies; q = S⁻¹ φ cos(ωt)."""
    M, Kc = chain_matrices()
    S = np.eye(N) + 0.3 * np.eye(N, k=1) + 0.1 * np.eye(N, k=-2)
    doc = generic_chain(form, np.linalg.solve(S, 0.01 * mode(1)), solver="RK44")
    as_form = (lambda x: x.tolist()) if form == "dense" else sparse
    doc["objects"][0].update(massMatrix=as_form(S.T @ M @ S), stiffnessMatrix=as_form(S.T @ Kc @ S))
    res = multibody.simulate(doc)
    assert res.status == "succeeded", res.error
    q = res.sensors["q"].data
    exact = np.cos(omega(1) * q[:, :1]) * np.linalg.solve(S, 0.01 * mode(1))
    assert np.abs(q[:, 1:] - exact).max() < 1e-9 * 0.01


@pytest.mark.parametrize("change, path, words", [
    (lambda o: o.update(massMatrix=np.eye(N - 1).tolist()), "objects[0].massMatrix", "3 x 3"),
    (lambda o: o.update(stiffnessMatrix={"numberOfRows": N, "numberOfColumns": N, "triplets": [[0, N, 1.0]]}),
     "objects[0].stiffnessMatrix.triplets[0]", "not an entry"),
    (lambda o: o.update(dampingMatrix=[[1.0, 0.0], [0.0]]), "objects[0].dampingMatrix", "differ in length"),
    (lambda o: o.update(forceVector=[1.0]), "objects[0].forceVector", "1 entries"),
    (lambda o: o.update(nodeNumbers=["chain", "chain"]), "objects[0].nodeNumbers", "twice"),
])
def test_sizes_are_checked_against_the_nodes_coordinates(change, path, words):
    doc = generic_chain("dense", np.zeros(N))
    change(doc["objects"][0])
    with pytest.raises(ModelInvalid) as err:
        load_model(doc)
    problems = [p for p in err.value.problems if p.path == path]
    assert problems and words in problems[0].message and problems[0].item == "springs"


def test_node_initial_values_must_have_its_size():
    doc = generic_chain("dense", np.zeros(N))
    doc["nodes"][0]["initialCoordinates_t"] = [0.0]
    with pytest.raises(ModelInvalid) as err:
        load_model(doc)
    assert any(p.path.startswith("nodes[0]") and "numberOfODE2Coordinates" in p.message for p in err.value.problems)


def test_node_size_comes_with_its_values():
    """A size without values would let a small document ask for any amount of memory: refused, before allocating."""
    doc = generic_chain("dense", np.zeros(N))
    doc["nodes"][0] = {"nodeType": "GenericODE2", "numberOfODE2Coordinates": 10 ** 12}
    with pytest.raises(ModelInvalid) as err:
        load_model(doc)
    assert any(p.path.startswith("nodes[0]") and "initialCoordinates" in p.message for p in err.value.problems)


# ------------------------------------------------------------------------------- against Exudyn
exu = pytest.importorskip("exudyn")


def exudyn_model():
    """Two GenericODE2 nodes (2 + 3 coordinates) and a Point node in one ObjectGenericODE2 with sparse M,
    dense K and D and a force vector; a coordinate spring-damper from a ground node, a coordinate
    constraint, a Coordinate load; node and body sensors (Exudyn takes no object sensor on a body)."""
    from exudyn.itemInterface import (LoadCoordinate, MarkerNodeCoordinate, NodeGenericODE2, NodePoint,
                                      NodePointGround, ObjectConnectorCoordinate,
                                      ObjectConnectorCoordinateSpringDamper, ObjectGenericODE2, SensorBody,
                                      SensorNode)
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    n0 = mbs.AddNode(NodeGenericODE2(numberOfODE2Coordinates=2, referenceCoordinates=[1.0, 2.0],
                                     initialCoordinates=[0.1, -0.05], initialCoordinates_t=[0.0, 0.3]))
    n1 = mbs.AddNode(NodeGenericODE2(numberOfODE2Coordinates=3, referenceCoordinates=[0, 0, 0],
                                     initialCoordinates=[0.02, 0.0, 0.01], initialCoordinates_t=[0, 0, 0]))
    n2 = mbs.AddNode(NodePoint(referenceCoordinates=[0, 0, 0], initialCoordinates=[0.0, 0.04, 0.0]))
    ground = mbs.AddNode(NodePointGround())
    rng = np.random.default_rng(3)
    A = rng.normal(size=(8, 8))
    M = np.diag(rng.uniform(0.5, 2.0, 8)) + 0.05 * (A + A.T) * (np.abs(A + A.T) > 1.2)
    B = rng.normal(size=(8, 8))
    Kg = 50.0 * (B @ B.T / 8 + np.eye(8))
    D = 0.01 * Kg
    mass = exu.MatrixContainer()
    r, c = np.nonzero(M)
    mass.SetWithSparseMatrixCSR(8, 8, [[i, j, M[i, j]] for i, j in zip(r, c)], useDenseMatrix=False)
    generic = mbs.AddObject(ObjectGenericODE2(nodeNumbers=[n0, n1, n2], massMatrix=mass, stiffnessMatrix=Kg,
                                              dampingMatrix=D, forceVector=np.linspace(-1.0, 1.0, 8)))
    mg = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=ground, coordinate=0))
    m01 = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=n0, coordinate=1))
    m12 = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=n1, coordinate=2))
    m21 = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=n2, coordinate=1))
    mbs.AddObject(ObjectConnectorCoordinateSpringDamper(markerNumbers=[mg, m01], stiffness=80.0, damping=0.5))
    mbs.AddObject(ObjectConnectorCoordinate(markerNumbers=[m12, m21], factor1=0.5))
    mbs.AddLoad(LoadCoordinate(markerNumber=m12, load=0.7))
    out = exu.OutputVariableType
    for node in (n0, n1, n2):
        for var in (out.Coordinates, out.Coordinates_t, out.Coordinates_tt):
            mbs.AddSensor(SensorNode(nodeNumber=node, outputVariableType=var, storeInternal=True))
    for var in (out.Coordinates, out.Coordinates_t, out.Coordinates_tt, out.Force):  # Exudyn: body sensors
        mbs.AddSensor(SensorBody(bodyNumber=generic, outputVariableType=var, storeInternal=True))
    mbs.Assemble()
    settings = exu.SimulationSettings()
    settings.timeIntegration.numberOfSteps = 200
    settings.timeIntegration.endTime = 0.5
    settings.timeIntegration.newton.relativeTolerance = 1e-12
    settings.timeIntegration.verboseMode = 0
    settings.solution.file.write = False
    return mbs, settings


def test_generic_odes_give_exudyns_sensors():
    from mbserve.exudyn import export
    mbs, settings = exudyn_model()
    doc = export(mbs, settings)
    assert set(doc["objects"][0]["massMatrix"]) == {"numberOfRows", "numberOfColumns", "triplets"}
    ours = multibody.simulate(doc)
    assert ours.status == "succeeded", ours.error
    exu.SolveDynamic(mbs, settings)
    assert len(ours.sensors) == mbs.systemData.NumberOfSensors()
    for i, (name, series) in enumerate(ours.sensors.items()):
        theirs = np.asarray(mbs.GetSensorStoredData(i))
        assert theirs.shape == series.data.shape, name
        assert np.abs(series.data - theirs).max() <= 1e-9 * (1.0 + np.abs(theirs).max()), name
