"""The redundant-constraint pre-check at scale: memory O(nnz) of C_q (no dense rows), and the same
items named by the sparse path as by the dense one."""
from __future__ import annotations

import re
import tracemalloc

import numpy as np
import pytest

import multibody
from multibody.model import load_model
from multibody.solvers import redundancy
from multibody.solvers.redundancy import find_redundant

from .conftest import CASES, load_json


def prismatic_chain(n: int, redundant: bool = False) -> dict:
    """n rigid bodies along x, each on a JointPrismaticX to the previous one (the first to ground);
    redundant: a JointRevoluteZ on the last joint's markers as well (4 dependent rows)."""
    objects = [{"objectType": "Ground"}]
    objects += [{"objectType": "RigidBody", "nodeNumber": i, "mass": 1.0, "inertia": [1e-3, 1e-3, 1e-3, 0, 0, 0]}
                for i in range(n)]
    objects += [{"objectType": "JointPrismaticX", "markerNumbers": [i, i + 1], "name": f"joint{i + 1}"}
                for i in range(n)]
    if redundant:
        objects.append({"objectType": "JointRevoluteZ", "markerNumbers": [n - 1, n], "name": "extra"})
    return {"nodes": [{"nodeType": "RigidBodyEP", "referenceCoordinates": [i + 1.0, 0, 0, 1, 0, 0, 0]}
                      for i in range(n)],
            "objects": objects,
            "markers": [{"markerType": "BodyRigid", "bodyNumber": b} for b in range(n + 1)],
            "simulationSettings": {"timeIntegration": {"endTime": 0.01, "numberOfSteps": 1}}}


def _peak_bytes(system) -> tuple[dict | None, int]:
    tracemalloc.start()
    try:
        error = find_redundant(system, 0.0)
        return error, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("redundant", [False, True])
def test_large_chain_check_stays_sparse(redundant):
    n = 3000  # C_q: 18000 rows x 21000 coordinates; as dense rows 3.0 GB, sparse ~2 MB
    system = load_model(prismatic_chain(n, redundant)).system
    system.kinematics(0.0, system.q_init, system.v_init)  # compiled kernels loaded outside the measurement
    error, peak = _peak_bytes(system)
    assert peak < 64e6, f"peak {peak / 1e6:.0f} MB"  # measured ~30 MB: sparse factors and index arrays
    if not redundant:
        assert error is None  # an independent chain is not flagged (smallest pivot ~1e-4, tolerance 1e-8)
    else:
        assert error["code"] == "redundant_constraints" and "rank 18001 of 18005" in error["message"]
        assert ["joint3000", "extra"] in error["detail"]["dependentSets"]
        # the local set first; the chain-wide one (a valid dependency too) listed with its size only
        assert "dependent: joint3000, extra; joint1, joint2," in error["message"]
        assert "... (3001 items)" in error["message"] and len(error["message"]) < 1000


@pytest.mark.parametrize("edit, items", [
    ("loop", {"crankJoint", "crankRodJoint", "rodSliderJoint", "sliderJoint"}),  # closed planar loop in 3D
    ("double", {"extra", "sliderJoint"}),  # a revolute joint on the prismatic joint's markers
])
def test_sparse_path_names_the_same_items_as_the_dense_one(monkeypatch, edit, items):
    doc = load_json(CASES / "slider_crank" / "model.json")
    if edit == "loop":
        doc["objects"][6] = {"objectType": "JointRevoluteZ", "markerNumbers": [4, 5], "name": "rodSliderJoint"}
        doc["sensors"] = [s for s in doc["sensors"] if s.get("objectNumber") != 6]
    else:
        doc["objects"].append({"objectType": "JointRevoluteZ", "markerNumbers": [6, 7], "name": "extra"})
    dense = multibody.simulate(doc).error
    monkeypatch.setattr(redundancy, "DENSE_MAX_ENTRIES", 0)
    sparse = multibody.simulate(doc).error
    assert dense["code"] == sparse["code"] == "redundant_constraints"
    assert set(dense["detail"]["items"]) == set(sparse["detail"]["items"]) == items
    assert dense["message"].split(";")[0] == sparse["message"].split(";")[0]  # the same rank


def test_sparse_path_passes_the_independent_examples(monkeypatch):
    monkeypatch.setattr(redundancy, "DENSE_MAX_ENTRIES", 0)
    for case in ("slider_crank", "spherical_and_generic", "revolute_prismatic_testmodel", "coordinate_items"):
        system = load_model(load_json(CASES / case / "model.json")).system
        assert find_redundant(system, 0.0) is None, case


def test_thousands_of_constraints_on_one_body_are_refused_before_the_product_is_formed():
    """4,000 JointSphericals from the ground to one body: 12,000 rows on its 7 coordinates, C_q C_qᵀ
    dense with 1.4e8 entries (2.3 GB, and as much again for its factors) within the item limits;
    refused from C_q's pattern instead, with the items and the limit."""
    n = 4000
    doc = prismatic_chain(n)
    doc["objects"][n + 1:] = [{"objectType": "JointSpherical", "markerNumbers": [0, 1], "name": f"hub{i}"}
                              for i in range(n)]
    system = load_model(doc).system
    system.kinematics(0.0, system.q_init, system.v_init)
    error, peak = _peak_bytes(system)
    assert peak < 64e6, f"peak {peak / 1e6:.0f} MB"
    assert error["code"] == "limit_exceeded"
    # its 12,000 rows, and the body's Euler-parameter row where the column is one of its rotation's
    assert re.match(r"1200[01] constraint equations of 400[01] items act on one coordinate", error["message"])
    assert error["detail"]["items"][:2] == ["hub0", "hub1"]
    result = multibody.simulate(doc)
    assert result.status == "failed" and result.error["code"] == "limit_exceeded"


def test_ignore_singular_jacobian_solves_a_duplicated_joint():
    """linearSolver.ignoreSingularJacobian (Exudyn's Bricard mechanism relies on it): the slider crank with
    its crank joint twice solves as the slider crank; the two joints share the one joint's force."""
    doc = load_json(CASES / "slider_crank" / "model.json")
    single = multibody.simulate(doc)
    reference = single.to_document()["sensors"]
    doc["objects"].append(dict(doc["objects"][4], name="crankJointCopy"))
    copy = len(doc["objects"]) - 1
    doc["sensors"].append({"sensorType": "Object", "objectNumber": copy, "outputVariableType": "ForceLocal",
                           "name": "copy_ForceLocal"})
    refused = multibody.simulate(doc)
    assert refused.status == "failed" and refused.error["code"] == "redundant_constraints"
    doc["simulationSettings"]["linearSolver"] = {"ignoreSingularJacobian": True}
    results = multibody.simulate(doc)
    assert results.status == "succeeded", results.error
    for count in ("newtonIterations", "jacobians"):  # Newton's path as without the copy
        assert results.solver[count] == single.solver[count]
    sensors = results.to_document()["sensors"]
    for name, series in reference.items():
        if name.startswith("crankJoint_") and name.endswith(("ForceLocal", "TorqueLocal")):
            continue
        # the motion to round-off; forces to what Newton's tolerance leaves of the multipliers (measured 1.3e-7 of 27)
        atol = 1e-6 if name.endswith(("ForceLocal", "TorqueLocal")) else 1e-10
        assert np.allclose(sensors[name]["data"], series["data"], rtol=0, atol=atol), name
    shared = np.add(sensors["crankJoint_ForceLocal"]["data"], sensors["copy_ForceLocal"]["data"])
    shared[:, 0] /= 2  # the time column
    assert np.allclose(shared, reference["crankJoint_ForceLocal"]["data"], rtol=0, atol=1e-6)
