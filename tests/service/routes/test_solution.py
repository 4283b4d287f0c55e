"""GET /v1/jobs/{id}/solution: stored when the job or the model asks, as JSON and as Exudyn's file."""
import numpy as np

import multibody
from tests.service.routes.test_jobs import submit


def test_solution_served_as_json_and_as_exudyn_file(client, run_queued, mini):
    job = submit(client, {"model": mini, "store": {"solution": True}})
    assert job["links"]["view"] == f"/jobs/{job['id']}"
    assert client.get(f"/v1/jobs/{job['id']}/solution").status_code == 409  # not run yet
    assert run_queued() == ["succeeded"]
    assert client.get(f"/v1/jobs/{job['id']}").json()["links"]["solution"] == f"/v1/jobs/{job['id']}/solution"
    served = client.get(f"/v1/jobs/{job['id']}/solution")
    assert served.status_code == 200, served.text
    expected = multibody.simulate(mini, store_solution=True).solution.to_dict()
    assert served.json() == expected  # lossless: the same floats as in process
    csv = client.get(f"/v1/jobs/{job['id']}/solution", params={"format": "csv"})
    assert csv.headers["content-type"].startswith("text/csv")
    lines = csv.text.splitlines()
    assert lines[4] == "#number of written coordinates [nODE2, nVel2, nAcc2, nODE1, nVel1, nAlgebraic, nData] = " \
                       f"[{','.join(map(str, expected['columnsExported']))}]"
    assert np.array_equal(np.loadtxt(lines, comments="#", delimiter=",", ndmin=2), np.array(expected["data"]))
    # the results document is unchanged by the stored solution
    assert "solution" not in client.get(f"/v1/jobs/{job['id']}/results").json()


def test_solution_from_the_model_settings_and_404_without(client, run_queued, mini):
    plain = submit(client, {"model": mini})
    asked = multibody.merge_settings(mini, {"solution": {"file": {"write": True, "writePeriod": 0.05}}})
    by_model = submit(client, {"model": asked})
    declined = submit(client, {"model": asked, "store": {"solution": False}})
    assert run_queued() == ["succeeded"] * 3
    assert "solution" not in client.get(f"/v1/jobs/{plain['id']}").json()["links"]
    answer = client.get(f"/v1/jobs/{plain['id']}/solution")
    assert answer.status_code == 404 and answer.json()["error"]["code"] == "not_found"
    assert client.get(f"/v1/jobs/{declined['id']}/solution").status_code == 404
    rows = client.get(f"/v1/jobs/{by_model['id']}/solution").json()["data"]
    end = mini["simulationSettings"]["timeIntegration"]["endTime"]
    assert rows[0][0] == 0.0 and abs(rows[-1][0] - end) < 1e-12
    assert client.post("/v1/jobs", json={"model": mini, "store": {"sensors": True}}).status_code == 422


def test_results_without_data_give_each_sensors_metadata_and_row_count(client, run_queued, mini):
    job = submit(client, {"model": mini})
    run_queued()
    full = client.get(f"/v1/jobs/{job['id']}/results").json()
    head = client.get(f"/v1/jobs/{job['id']}/results", params={"data": "false"}).json()
    assert {k: head[k] for k in ("status", "warnings", "solver")} == {k: full[k] for k in ("status", "warnings", "solver")}
    for name, sensor in full["sensors"].items():
        rows = sensor.pop("data")
        assert head["sensors"][name] == {**sensor, "rows": len(rows)}
