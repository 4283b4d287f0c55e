"""The Python client (SPEC section 6) against a live `mbserve serve`."""
import copy

import numpy as np
import pytest

from mbserve.client import Client, ClientError, Conflict, InvalidRequest, NotFound, ServiceUnreachable
from tests.conftest import EXAMPLES, example
from tests.support import long_running


@pytest.fixture
def client(embedded):
    with Client(embedded) as c:
        yield c


def test_submit_wait_and_results_equal_mbserve_run(client, capsys):
    import multibody
    job = client.submit(EXAMPLES / "mini" / "model.json")  # a path; a dict works the same
    assert job.wait(progress=True) == "succeeded" and job.progress == 1.0
    expected = multibody.simulate(example("mini"))  # what `mbserve run` writes
    results = job.results()
    assert results.status == "succeeded" and set(results.sensors) == set(expected.sensors)
    for name, sensor in expected.sensors.items():
        got = results.sensors[name]
        assert got.columns == sensor.columns and got.outputVariableType == sensor.outputVariableType
        assert np.array_equal(got.data, sensor.data)  # the API's floats are lossless
        assert np.array_equal(job.sensor(name).data, sensor.data)
        assert np.array_equal(got.column("time"), sensor.data[:, 0])
        frame = got.to_pandas()
        assert list(frame.columns) == sensor.columns and np.array_equal(frame.to_numpy(), sensor.data)


def test_settings_overrides_as_keywords(client):
    job = client.submit(example("mini"), timeIntegration={"numberOfSteps": 10})
    sensor = next(iter(job.results().sensors.values()))
    assert len(sensor.data) == 11  # the start row, then one per step (write period = step)


def test_the_stored_solution_as_an_array(client):
    job = client.submit(example("mini"), store_solution=True, timeIntegration={"numberOfSteps": 20})
    assert job.wait(progress=False) == "succeeded"
    solution = job.solution()
    assert solution["columns"][0] == "time" and solution["data"].shape == (solution["rows"], len(solution["columns"]))
    assert solution["data"][-1, 0] == pytest.approx(1.0)  # the mini example ends at t = 1
    with pytest.raises(NotFound):
        client.submit(example("mini"), store_solution=False).solution()


def test_an_invalid_model_raises_422_with_its_problems(client):
    doc = copy.deepcopy(example("mini"))
    doc["objects"][1]["mass"] = -1.0
    doc["loads"][0]["markerNumber"] = 7
    with pytest.raises(InvalidRequest) as err:
        client.submit(doc)
    assert err.value.status == 422 and err.value.code
    found = {p.path: p.message for p in err.value.problems}
    assert "positive" in found["model.objects[1].mass"] and "markers" in found["model.loads[0].markerNumber"]


def test_unknown_job_and_sensor_are_404(client):
    with pytest.raises(NotFound):
        client.job("0123456789abcdef")
    job = client.submit(example("mini"))
    job.wait(progress=False)
    with pytest.raises(NotFound) as err:
        job.sensor("no_such_sensor")
    assert "no_such_sensor" in str(err.value)


def test_cancel_a_long_job(client):
    job = client.submit(example("mini"), **long_running())
    assert job.cancel() == "canceled"
    assert job.wait(progress=False, timeout=30) == "canceled" and job.status == "canceled"
    with pytest.raises(Conflict):
        job.results()
    with pytest.raises(Conflict):
        job.cancel()


def test_no_service_and_a_url_without_scheme_are_client_errors(tmp_path):
    from tests.support import free_port
    with pytest.raises(ServiceUnreachable, match="no mbserve service answers"):
        Client(f"http://127.0.0.1:{free_port()}").submit(example("mini"))
    with pytest.raises(ClientError, match="http://"):
        Client("127.0.0.1:8000")
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with pytest.raises(ClientError, match="not a JSON document"):
        Client("http://127.0.0.1:1").submit(bad)


def small_sweep(steps: int = 200) -> dict:
    model = example("spring_slider")
    model["simulationSettings"]["timeIntegration"]["numberOfSteps"] = steps
    return {"model": model, "design": "zip",
            "parameters": [{"path": "objects[spring].stiffness", "values": [50.0, 100.0, 200.0]},
                           {"path": "objects[spring].damping", "values": [0.5, 1.0, 2.0]}],
            "outputs": [{"name": "xEnd", "sensor": "block_position", "column": "PositionX"},
                        {"name": "fMax", "sensor": "spring_force", "column": "ForceX", "reduce": "absMax"}]}


def test_sweep_table_as_a_dataframe(client):
    import multibody
    sweep = client.sweep(small_sweep())
    final = sweep.wait(progress=True, timeout=120)
    assert (final["status"], final["done"], final["total"]) == ("finished", 3, 3)
    table = sweep.table()
    assert list(table.columns) == ["objects[spring].stiffness", "objects[spring].damping", "xEnd", "fMax", "jobId",
                                   "status"]
    assert list(table.index) == [0, 1, 2] and list(table["status"]) == ["succeeded"] * 3
    doc = small_sweep()["model"]
    doc["objects"][3]["stiffness"], doc["objects"][3]["damping"] = 200.0, 2.0
    expected = multibody.simulate(doc).sensors["block_position"]
    assert table.loc[2, "xEnd"] == expected.data[-1, 1]  # the same floats as the in-process run
    assert np.array_equal(client.job(table.loc[2, "jobId"]).sensor("block_position").data, expected.data)


def test_sweep_with_a_bad_path_raises_with_the_problem(client):
    body = small_sweep()
    body["parameters"][0]["path"] = "objects[nope].stiffness"
    with pytest.raises(InvalidRequest) as err:
        client.sweep(body)
    assert [p.path for p in err.value.problems] == ["parameters[0].path"]
