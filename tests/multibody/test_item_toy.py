"""A new item type from one module (tests/multibody/toy_item.py: a zero-length spring and an
equal-height constraint, with kernels of their own) solved by every solver, against closed forms.

A mass point m on the zero-length spring k to ground oscillates in x and y with ω = √(k/m); with
gravity along -z and the equal-height constraint to ground it stays at z = 0, and the constraint's
multiplier is the weight, λ = -m g (M a - f + C_qᵀλ = 0 with C_q = 1 on z).
Tolerances: generalized-α at ωh = 0.006 is second order with a phase error ~(ωh)²·ωt/12 ≈ 1e-5 of
the amplitude over the run (2e-4 allowed); RK44's error is ~(ωh)⁴ per period (1e-9 allowed); the
multiplier and the static solve hold to Newton's tolerance (1e-8).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba.core.caching import Cache

import multibody
from multibody import items
from multibody.api import load_model
from tests.multibody import toy_item

MASS, K, G, AMPLITUDE = 0.5, 20.0, 9.81, (0.1, 0.05)
OMEGA = np.sqrt(K / MASS)


@pytest.fixture(autouse=True)
def toy_types(monkeypatch):
    """The toy types registered in place of the core's compiled types (the step loops, compiled per
    registry, then hold the two toy types alone: a shorter compile); the kernels compiled for them
    are not written to numba's cache, whose index would then pickle the toy classes: a later process
    that cannot import `tests` (the `mbserve` console script) would fail to read the index."""
    monkeypatch.setattr(Cache, "save_overload", lambda self, sig, data: None)
    with items.registry(*toy_item.ITEMS, without=lambda item: item.kernels is not None):
        yield


def model(constrained: bool, solve: dict | None = None, load=None) -> dict:
    doc = {
        "nodes": [{"nodeType": "Point", "initialCoordinates": [*AMPLITUDE, 0.0]}],
        "objects": [{"objectType": "Ground"}, {"objectType": "MassPoint", "nodeNumber": 0, "mass": MASS},
                    {"objectType": "ToyZeroLengthSpring", "name": "spring", "markerNumbers": [1, 0], "stiffness": K}],
        "markers": [{"markerType": "NodePosition", "nodeNumber": 0}, {"markerType": "BodyPosition", "bodyNumber": 0}],
        "loads": [],
        "sensors": [{"sensorType": "Node", "name": "position", "nodeNumber": 0, "outputVariableType": "Position"}],
        "simulationSettings": {"timeIntegration": {"endTime": 1.0, "numberOfSteps": 1000}},
    }
    if constrained:
        doc["objects"].append({"objectType": "ToyEqualHeight", "name": "height", "markerNumbers": [1, 0]})
        doc["loads"].append({"loadType": "ForceVector", "markerNumber": 0, "loadVector": [0.0, 0.0, -MASS * G]})
        doc["sensors"].append({"sensorType": "Object", "name": "lambda", "objectNumber": 3,
                               "outputVariableType": "Force"})
    if load is not None:
        doc["loads"].append({"loadType": "ForceVector", "markerNumber": 0, "loadVector": load})
    if solve:
        doc["solve"] = solve
    return doc


def check_oscillation(position: np.ndarray, tol: float) -> None:
    t = position[:, 0]
    for axis, amplitude in enumerate(AMPLITUDE):
        exact = amplitude * np.cos(OMEGA * t)
        assert np.abs(position[:, 1 + axis] - exact).max() < tol * amplitude, axis


def test_toy_types_in_generalized_alpha_match_the_oscillator_and_the_weight():
    res = multibody.simulate(model(constrained=True))
    position, lam = res.sensors["position"].data, res.sensors["lambda"].data
    check_oscillation(position, 2e-4)
    assert np.abs(position[:, 3]).max() < 1e-10  # held at the ground's height
    assert lam[1:, 1] == pytest.approx(-MASS * G, abs=1e-8 * MASS * G)


@pytest.mark.parametrize("solver", ["RK44", "DOPRI5"])
def test_toy_spring_in_explicit_solvers_matches_the_oscillator(solver):
    res = multibody.simulate(model(constrained=False, solve={"type": "Dynamic", "solverType": solver}))
    check_oscillation(res.sensors["position"].data, 1e-9 if solver == "RK44" else 1e-6)


def test_explicit_solvers_refuse_the_toy_constraint_as_declared():
    with pytest.raises(multibody.ModelInvalid, match="cannot solve the constraints of height"):
        load_model(model(constrained=True, solve={"type": "Dynamic", "solverType": "RK44"}))


def test_toy_types_in_the_static_solver_balance_the_load():
    res = multibody.simulate(model(constrained=True, solve={"type": "Static"}, load=[2.0, 0.0, 0.0]))
    position, lam = res.sensors["position"].data[-1], res.sensors["lambda"].data[-1]
    # the spring balances the x load (2 N) from the start in x, y: x = 2/k, y = 0; z held at 0; the
    # static solver's multipliers have the opposite sign (Exudyn's f + C_qᵀλ = 0, solvers/static.py)
    assert position[1:] == pytest.approx([2.0 / K, 0.0, 0.0], abs=1e-8)
    assert lam[1] == pytest.approx(MASS * G, abs=1e-8 * MASS * G)


def test_a_toy_type_is_checked_like_a_core_one():
    doc = model(constrained=False)
    doc["markers"][0] = {"markerType": "NodeCoordinate", "nodeNumber": 0, "coordinate": 0}
    with pytest.raises(multibody.ModelInvalid, match="position markers"):
        load_model(doc)


def test_the_toy_types_stay_out_of_the_kernel_cache():
    """A kernel compiled for a model with toy types (kernels.work, a cheap one) is not saved."""
    from multibody.kernel_cache import kernels
    from multibody.kernels import work
    system = load_model(model(constrained=True)).system
    work(system.model, system.n2, system.nae)
    indexes = [Path(k._cache._cache_file._index_path) for k in kernels()]
    assert not [p.name for p in indexes if p.is_file() and b"toy_item" in p.read_bytes()]
