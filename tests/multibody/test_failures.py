"""A simulation that cannot go on ends with status "failed" and an error that says when, why
and which items; the sensors keep the rows written until then."""
import copy

import pytest

import multibody


def test_singular_mass_matrix_names_the_node(mini_model):
    doc = copy.deepcopy(mini_model)
    doc["objects"][1]["inertia"] = [0, 0, 0, 0, 0, 0]  # rotations without inertia or constraint
    doc["objects"][2]["activeConnector"] = False
    res = multibody.simulate(doc)
    assert res.status == "failed"
    assert res.error["code"] == "singular_matrix"
    assert "node0" in res.error["detail"]["items"]
    assert res.error["detail"]["time"] > 0


def test_newton_not_converged_reports_time_and_reason(mini_model):
    doc = copy.deepcopy(mini_model)
    newton = {"relativeTolerance": 0.0, "absoluteTolerance": 0.0, "maxIterations": 2}
    doc["simulationSettings"]["timeIntegration"]["newton"] = newton
    doc["simulationSettings"]["timeIntegration"]["minimumStepSize"] = 1e-3
    res = multibody.simulate(doc)
    assert res.status == "failed" and res.error["code"] == "newton_not_converged"
    assert "Newton did not converge at t = " in res.error["message"]
    assert 0 < res.error["detail"]["time"] <= 0.01
    doc_out = res.to_document()
    assert doc_out["status"] == "failed" and doc_out["error"] == res.error
    assert len(doc_out["sensors"]["joint_HT"]["data"]) == 1  # the t0 row only


def test_cancel_stops_the_solve(mini_model):
    with pytest.raises(multibody.SimulationCanceled):
        multibody.simulate(mini_model, cancel=lambda: True)


def test_progress_is_reported_as_a_fraction(mini_model):
    seen = []
    multibody.simulate(mini_model, progress=seen.append)
    assert seen and all(0.0 <= f <= 1.0 for f in seen)
