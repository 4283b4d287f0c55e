"""POST/GET/DELETE /v1/sweeps with the worker's own code and no broker: turns and batches are
captured and run in this process (worker.runner.take_turn, execute_batch)."""
import csv
import io
import json

import pytest
from typer.testing import CliRunner

from mbserve.cli import app as cli
from tests.conftest import example
from tests.support import same_document

GRID = {"parameters": [{"path": "objects[spring].stiffness", "values": [50, 100, 200, 400]},
                       {"path": "objects[spring].damping", "range": {"start": 0.5, "stop": 2.5, "num": 5}}],
        "design": "grid",
        "outputs": [{"name": "xEnd", "sensor": "block_position", "column": "PositionX", "reduce": "last"},
                    {"name": "xMin", "sensor": "block_position", "column": "PositionX", "reduce": "min"},
                    {"name": "fMax", "sensor": "spring_force", "column": "ForceX", "reduce": "absMax"},
                    {"name": "fRms", "sensor": "spring_force", "column": "ForceX", "reduce": "rms"},
                    {"name": "xMean", "sensor": "block_position", "column": "PositionX", "reduce": "mean"},
                    {"name": "xAt", "sensor": "block_position", "column": "PositionX", "reduce": {"at": 0.5005}}]}


@pytest.fixture
def settings(settings):
    """Batches run whole here (test_a_batch_sends_back_its_rest_after_its_time checks the time),
    8 variations each (the tests count the 20 of GRID in batches of 8)."""
    return settings.model_copy(update={"sweep_batch_seconds": 600.0, "sweep_batch_size": 8})


@pytest.fixture
def batches(monkeypatch):
    """The sweeps' queue: None for a turn, (sweep id, job ids) for a batch naming its jobs."""
    from store import queue, sweeps
    sent: list[tuple[str, list[str]] | None] = []
    monkeypatch.setattr(sweeps, "send_batch", lambda settings, sweep_id, ids: sent.append((sweep_id, ids)))
    monkeypatch.setattr(sweeps, "send_turns", lambda settings, n: sent.extend([None] * n))
    real = queue.waiting
    monkeypatch.setattr(queue, "waiting", lambda settings, name: len(sent) if name == queue.SWEEP_QUEUE
                        else real(settings, name))
    return sent


@pytest.fixture
def run_batches(settings, batches):
    """Run the captured turns and batches (and the ones they send) until none is left; [(size,
    outcomes)] of the batches run (a turn that found nothing runs none)."""
    from worker.runner import execute_batch, execute_named, take_turn

    def run(limit: int | None = None) -> list[tuple[int, list[str]]]:
        done = []
        while batches and (limit is None or len(done) < limit):
            batch = batches.pop(0)
            if batch is not None:
                done.append((len(batch[1]), execute_named(settings, *batch)))
            elif (batch := take_turn(settings)) is not None:
                done.append((len(batch[1]), execute_batch(settings, *batch)))
        return done
    return run


def post(client, body, status=202):
    answer = client.post("/v1/sweeps", json=body)
    assert answer.status_code == status, answer.text
    return answer


def test_a_4x5_grid_each_row_is_mbserve_run_of_its_variation_bit_for_bit(client, settings, batches, run_batches,
                                                                          tmp_path):
    from store import design
    model = example("spring_slider")
    answer = post(client, {"model": model, **GRID})
    sweep = answer.json()
    assert answer.headers["location"] == f"/v1/sweeps/{sweep['id']}"
    assert (sweep["status"], sweep["total"], sweep["queued"], sweep["progress"]) == ("queued", 20, 20, 0.0)
    assert batches == [None] * 3  # a turn per batch of sweep_batch_size, not 20 messages
    ran = run_batches()
    assert sum(n for n, _ in ran) == 20 and all(n <= settings.sweep_batch_size for n, _ in ran)
    assert [o for _, outcomes in ran for o in outcomes] == ["succeeded"] * 20
    status = client.get(f"/v1/sweeps/{sweep['id']}").json()
    assert (status["status"], status["done"], status["failed"], status["progress"]) == ("finished", 20, 0, 1.0)

    table = client.get(f"/v1/sweeps/{sweep['id']}/table").json()
    names = [o["name"] for o in GRID["outputs"]]
    assert table["columns"] == ["index", "objects[spring].stiffness", "objects[spring].damping", *names,
                                "jobId", "status"]
    dampings = [0.5, 1.0, 1.5, 2.0, 2.5]
    assert [(r[1], r[2]) for r in table["rows"]] == [(k, d) for k in [50, 100, 200, 400] for d in dampings]
    spec = design.SweepSpec.model_validate(GRID)
    for index, k, d, *outputs, job_id, status in table["rows"]:
        doc = json.loads(json.dumps(model))
        doc["objects"][3]["stiffness"], doc["objects"][3]["damping"] = k, d
        path = tmp_path / f"v{index}.json"
        path.write_text(json.dumps(doc))
        run = CliRunner().invoke(cli, ["run", str(path), "-o", str(tmp_path / f"r{index}.json")])
        assert run.exit_code == 0, run.output
        expected = json.loads((tmp_path / f"r{index}.json").read_text())
        served = client.get(f"/v1/jobs/{job_id}/results").text  # an ordinary job of the caller
        assert status == "succeeded" and same_document(served, expected)
        sensors = {name: type("S", (), {"columns": s["columns"], "data": s["data"]})
                   for name, s in expected["sensors"].items()}
        assert outputs == list(design.outputs(spec.outputs, sensors)["values"].values())
    assert table["rows"][0][3] == pytest.approx(0.0, abs=0.1) and table["outputErrors"] == []

    text = client.get(f"/v1/sweeps/{sweep['id']}/table", params={"format": "csv"}).text
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == table["columns"] and len(rows) == 21
    assert [float(v) for v in rows[7][1:3 + len(names)]] == table["rows"][6][1:3 + len(names)]  # lossless


def test_the_table_while_running_has_empty_outputs_for_unfinished_rows(client, batches, run_batches, settings):
    model = example("spring_slider")
    model["simulationSettings"]["timeIntegration"]["numberOfSteps"] = 200
    sweep = post(client, {"model": model, **GRID}).json()
    run_batches(limit=1)
    table = client.get(f"/v1/sweeps/{sweep['id']}/table").json()
    n = settings.sweep_batch_size
    assert [r[-1] for r in table["rows"]] == ["succeeded"] * n + ["queued"] * (20 - n)
    assert all(v is not None for r in table["rows"][:n] for v in r[3:-2])
    assert all(v is None for r in table["rows"][n:] for v in r[3:-2])
    csv_rows = list(csv.reader(io.StringIO(client.get(f"/v1/sweeps/{sweep['id']}/table?format=csv").text)))
    assert csv_rows[-1][3:-2] == [""] * len(GRID["outputs"])
    status = client.get(f"/v1/sweeps/{sweep['id']}").json()
    assert (status["status"], status["done"], status["queued"], status["progress"]) == ("running", n, 20 - n, n / 20)


def test_a_bad_path_is_422_naming_the_parameter(client, batches):
    body = {"model": example("spring_slider"), **GRID,
            "parameters": [GRID["parameters"][0], {"path": "objects[dashpot].damping", "values": [1]}]}
    error = post(client, body, 422).json()["error"]
    assert error["code"] == "sweep_invalid"
    assert [(p["path"], "dashpot" in p["message"]) for p in error["detail"]] == [("parameters[1].path", True)]
    assert batches == [] and client.get("/v1/jobs").json()["items"] == []


def test_an_invalid_variation_is_422_naming_the_variation_and_the_path(client, batches):
    body = {"model": example("spring_slider"), "design": "zip",
            "parameters": [{"path": "objects[spring].stiffness", "values": [100, "stiff", 300]},
                           {"path": "objects[spring].markerNumbers", "values": [[2, 3], [2, 3], [2, 99]]}]}
    error = post(client, body, 422).json()["error"]
    assert error["code"] == "sweep_invalid" and "2 of 3 variations" in error["message"]
    found = {(p["variation"], p["path"]) for p in error["detail"]}
    assert (1, "variations[1].objects[3].stiffness") in found
    assert any(v == 2 and path.startswith("variations[2].objects[3].markerNumbers") for v, path in found), found
    assert all(p["variation"] in (1, 2) for p in error["detail"])
    assert "objects[spring].stiffness = \"stiff\"" in next(p for p in error["detail"] if p["variation"] == 1)["message"]
    assert batches == [] and client.get("/v1/jobs").json()["items"] == []  # nothing was queued


def test_limits_per_sweep_and_per_owner_are_checked_first(batches, settings):
    from fastapi.testclient import TestClient

    from service.app import create_app
    client = TestClient(create_app(settings.model_copy(update={"max_owner_sweep_variations": 40})))
    body = {"model": example("spring_slider"), "design": "latinHypercube", "samples": 10_001, "seed": 1,
            "parameters": [{"path": "objects[spring].stiffness", "range": {"start": 1, "stop": 2}}]}
    error = post(client, body, 422).json()["error"]
    assert error["code"] == "limit_exceeded" and "MBSERVE_MAX_SWEEP_VARIATIONS" in error["detail"][0]["message"]
    body["samples"] = 30
    first = post(client, body).json()
    assert first["seed"] == 1 and first["total"] == 30
    error = post(client, body, 422).json()["error"]
    assert "MBSERVE_MAX_OWNER_SWEEP_VARIATIONS" in error["detail"][0]["message"]
    client.delete(f"/v1/sweeps/{first['id']}")
    assert post(client, body).json()["total"] == 30  # canceled variations no longer count


def test_a_stored_model_and_a_chosen_seed_reported(client, batches):
    model_id = client.post("/v1/models", json=example("spring_slider")).json()["id"]
    body = {"modelId": model_id, "design": "random", "samples": 5,
            "parameters": [{"path": "objects[spring].stiffness", "range": {"start": 10, "stop": 20}}]}
    sweep = post(client, body).json()
    assert sweep["modelId"] == model_id and isinstance(sweep["seed"], int)
    again = post(client, {**body, "seed": sweep["seed"]}).json()
    table = lambda s: [r[1] for r in client.get(f"/v1/sweeps/{s['id']}/table").json()["rows"]]
    assert table(again) == table(sweep) and all(10 <= k <= 20 for k in table(sweep))
    assert client.get("/v1/sweeps/nope").status_code == 404
    assert post(client, {"model": example("spring_slider"), "modelId": model_id, **body}, 422)


def test_cancel_mid_sweep(client, batches, run_batches):
    sweep = post(client, {"model": example("spring_slider"), **GRID}).json()
    run_batches(limit=1)
    canceled = client.delete(f"/v1/sweeps/{sweep['id']}").json()
    assert (canceled["status"], canceled["done"], canceled["canceled"], canceled["queued"]) == ("canceled", 8, 12, 0)
    assert len(batches) == 3 and run_batches() == []  # the turns still queued find no batch left
    rows = client.get(f"/v1/sweeps/{sweep['id']}/table").json()["rows"]
    assert [r[-1] for r in rows] == ["succeeded"] * 8 + ["canceled"] * 12
    job = client.get(f"/v1/jobs/{rows[-1][-2]}").json()
    assert job["status"] == "canceled"


def test_the_reconciler_leaves_unsent_variations_and_restarts_a_stalled_sweep(client, settings, batches, run_batches,
                                                                           monkeypatch):
    import time

    from store import jobs, sweeps
    from store.db import get_sessionmaker
    with monkeypatch.context() as m:  # the API stops between storing the sweep and sending its batches
        m.setattr(sweeps, "start", lambda *a: None)
        sweep = post(client, {"model": example("spring_slider"), **GRID}).json()
    assert batches == []
    time.sleep(settings.requeue_after_seconds + 0.1)
    with get_sessionmaker(settings.database)() as session:
        assert jobs.reconcile(session, settings) == []  # unsent variations wait for their batch's turn
        assert sweeps.restart_stalled(settings, session) == [sweep["id"]]
        assert batches == [None] * 3
        assert sweeps.restart_stalled(settings, session) == []  # its turns are queued
    run_batches()
    assert client.get(f"/v1/sweeps/{sweep['id']}").json()["done"] == 20


@pytest.fixture
def second_owner(settings) -> dict:
    """The headers of another owner's API key."""
    from service.auth import create_key
    from store.db import get_sessionmaker
    with get_sessionmaker(settings.database)() as session:
        return {"Authorization": f"Bearer {create_key(session, 'second')}"}


def running(settings, job_id: str) -> None:
    """A job claimed by a worker (it runs)."""
    from store import jobs
    from store.db import get_sessionmaker
    with get_sessionmaker(settings.database)() as session:
        assert jobs.claim(session, settings, job_id)


def test_a_turn_takes_the_sweep_of_the_owner_with_the_fewest_jobs_running(client, settings, batches, second_owner):
    from worker.runner import take_turn
    first = post(client, {"model": example("spring_slider"), **GRID}).json()
    running(settings, take_turn(settings)[1][0])  # a job of the first owner runs
    second = client.post("/v1/sweeps", json={"model": example("spring_slider"), **GRID}, headers=second_owner).json()
    assert take_turn(settings)[0] == second["id"]  # before the first's batches, posted earlier
    taken, ids = take_turn(settings)
    assert taken == second["id"]  # still none of the second owner's jobs runs
    running(settings, ids[0])
    assert take_turn(settings)[0] == first["id"]  # one each: the older sweep


def test_a_rest_of_an_owner_with_more_jobs_running_lets_another_owner_s_batch_go_first(client, settings, batches,
                                                                                    second_owner):
    from worker.runner import execute_batch, execute_named, take_turn
    first = post(client, {"model": example("spring_slider"), **GRID}).json()
    _, ids = take_turn(settings)
    assert execute_batch(settings.model_copy(update={"sweep_batch_seconds": 0.0}), first["id"], ids)[1] == "deferred"
    rest = batches[-1]
    assert rest == (first["id"], ids[1:])
    running(settings, take_turn(settings)[1][0])  # a job of the first owner runs
    second = client.post("/v1/sweeps", json={"model": example("spring_slider"), **GRID}, headers=second_owner).json()
    assert execute_named(settings, *rest) == ["succeeded"] * 8  # the second's first batch instead
    assert batches[-1] == rest  # to the queue's end again
    assert client.get(f"/v1/sweeps/{second['id']}", headers=second_owner).json()["done"] == 8
    taken, ids = take_turn(settings)
    assert taken == second["id"]
    running(settings, ids[0])
    assert execute_named(settings, *rest) == ["succeeded"] * 7  # one running each: the rest now


def test_a_batch_sends_back_its_rest_after_its_time(client, settings, batches):
    from worker.runner import execute_batch, take_turn
    sweep = post(client, {"model": example("spring_slider"), **GRID}).json()
    assert batches.pop(0) is None
    sweep_id, ids = take_turn(settings)
    outcomes = execute_batch(settings.model_copy(update={"sweep_batch_seconds": 0.0}), sweep_id, ids)
    assert outcomes == ["succeeded"] + ["deferred"] * 7  # one variation, then the rest to the queue's end
    assert batches == [None, None, None, (sweep_id, ids[1:])]  # the turns, the one the turn sent, the rest
    assert client.get(f"/v1/sweeps/{sweep['id']}").json()["done"] == 1


def test_a_single_job_waiting_in_the_broker_runs_at_a_batch_s_next_variation(client, settings, batches, queued,
                                                                               monkeypatch):
    from store import queue
    from worker import runner
    sweep = post(client, {"model": example("spring_slider"), **GRID}).json()
    sweep_id, ids = runner.take_turn(settings)
    assert runner.execute_batch(settings, sweep_id, ids[:2]) == ["succeeded", "succeeded"]  # nothing waiting
    single = client.post("/v1/jobs", json={"model": example("mini")}).json()["id"]
    queue.get_celery(settings).send_task(queue.RUN_JOB, args=[single])  # its message, as dispatch sends it
    ran, real = [], runner.execute
    monkeypatch.setattr(runner, "execute", lambda settings, job_id: ran.append(job_id) or real(settings, job_id))
    assert runner.execute_batch(settings, sweep_id, ids[2:4]) == ["succeeded", "succeeded"]
    assert ran == [single] and client.get(f"/v1/jobs/{single}").json()["status"] == "succeeded"
    assert queue.waiting(settings, queue.JOB_QUEUE) == 1  # its message finds the job taken


def test_a_batch_that_ran_long_stops_for_a_waiting_single_job(client, settings, batches, monkeypatch):
    from store import queue
    from worker import runner
    sweep = post(client, {"model": example("spring_slider"), **GRID}).json()
    sweep_id, ids = runner.take_turn(settings)
    monkeypatch.setattr(runner, "INLINE_SECONDS", 0.0)  # the batch's task near its time limit
    queue.get_celery(settings).send_task(queue.RUN_JOB, args=["0" * 32])
    assert queue.waiting(settings, queue.JOB_QUEUE) == 1
    assert runner.execute_batch(settings, sweep_id, ids) == ["succeeded"] + ["deferred"] * 7
    assert batches[-1] == (sweep_id, ids[1:])
    assert client.get(f"/v1/sweeps/{sweep['id']}").json()["done"] == 1


def test_numbers_of_items_are_checked_without_validating_every_variation(client, batches, monkeypatch):
    import multibody

    from service import variations
    calls = []
    real = multibody.validate_document
    monkeypatch.setattr(multibody, "validate_document", lambda doc, *a, **k: calls.append(1) or real(doc, *a, **k))
    body = {"model": example("spring_slider"), "design": "grid",
            "parameters": [{"path": "objects[spring].stiffness", "range": {"start": 10, "stop": 100, "num": 30}},
                           {"path": "markers[spring_anchor].localPosition[0]", "values": [-1.0, -0.5, -2.0]},
                           {"path": "objects[block].mass", "values": [1.0, 2.0]}]}
    assert post(client, body).json()["total"] == 180
    assert len(calls) <= 1 + 1 + 2 * 3  # the base, then the corners: each parameter's smallest and largest value
    assert variations.item_field(example("spring_slider"), "objects[3].markerNumbers") is None  # references: each
    assert variations.item_field(example("spring_slider"), "objects[3].stiffness") == ("objects", 3, ["stiffness"])


@pytest.mark.parametrize("parameter, bad, says", [
    ({"path": "objects[spring].stiffness", "values": [100, "stiff", 300]}, [1], "objects[3].stiffness"),
    ({"path": "objects[block].mass", "values": [1.0, 0.0, -1.0, 2.0]}, [1, 2], "objects[1].mass"),
    ({"path": "nodes[0].initialCoordinates[1]", "values": [0.0, [1, 2]]}, [1], "nodes[0].initialCoordinates[1]")])
def test_a_bad_number_is_422_naming_each_variation_and_path(client, batches, parameter, bad, says):
    body = {"model": example("spring_slider"), "design": "grid", "parameters": [parameter]}
    error = post(client, body, 422).json()["error"]
    assert error["code"] == "sweep_invalid" and f"{len(bad)} of {len(parameter['values'])} variations" in error["message"]
    assert sorted({p["variation"] for p in error["detail"]}) == bad
    assert all(p["path"] == f"variations[{p['variation']}].{says}" for p in error["detail"]), error["detail"]
    assert batches == []


def test_a_variation_canceled_while_its_batch_runs_is_not_stored_and_the_others_are(client, settings, batches,
                                                                                     monkeypatch):
    from store import jobs, sweeps
    from store.db import get_sessionmaker
    from store.models import Job, Result
    from worker.runner import execute_batch, take_turn
    post(client, {"model": example("spring_slider"), **GRID})
    sweep_id, ids = take_turn(settings)
    real = sweeps.finish_batch

    def cancel_first(settings, session, *args, **kwargs):  # canceled after it ran, before it is stored
        jobs.cancel(session, settings, session.get(Job, ids[0]))
        return real(settings, session, *args, **kwargs)
    monkeypatch.setattr(sweeps, "finish_batch", cancel_first)
    assert execute_batch(settings, sweep_id, ids[:3]) == ["abandoned", "succeeded", "succeeded"]
    with get_sessionmaker(settings.database)() as session:
        assert [session.get(Job, j).status for j in ids[:3]] == ["canceled", "succeeded", "succeeded"]
        assert [session.get(Result, j) is not None for j in ids[:3]] == [False, True, True]


def test_a_batch_whose_worker_died_runs_again_after_its_lease_one_variation_per_message(client, settings, batches,
                                                                                        run_batches):
    """The jobs of a batch not stored (its worker killed, or the database's crash lost an
    asynchronous commit of it) stay running under the batch's lease: after it expires, the
    reconciler sends each alone, and each ends once, with one result."""
    import time

    from store import jobs, sweeps
    from store.db import get_sessionmaker
    from store.models import Job, Result
    from worker.runner import take_turn
    sweep = post(client, {"model": example("spring_slider"), **GRID}).json()
    sweep_id, ids = take_turn(settings)
    with get_sessionmaker(settings.database)() as session:
        assert len(sweeps.claim_batch(session, settings, sweep_id, ids)[2]) == 8  # and the worker dies
        time.sleep(settings.lease_seconds + 0.1)
        lost = jobs.reconcile(session, settings)
        assert lost == ids
        sweeps.dispatch(settings, session, lost)
    assert batches[-8:] == [(sweep_id, [j]) for j in ids] and None not in batches[-8:]
    assert [o for _, outcomes in run_batches() for o in outcomes] == ["succeeded"] * 20  # and the others
    with get_sessionmaker(settings.database)() as session:
        assert [session.get(Job, j).attempts for j in ids] == [2] * 8
        assert all(session.get(Result, j) is not None for j in ids)
    assert client.get(f"/v1/sweeps/{sweep['id']}").json()["done"] == 20


def test_a_batch_s_heartbeat_extends_the_leases_it_holds_and_drops_a_canceled_job(client, settings, batches):
    import time

    from store import jobs, sweeps
    from store.db import get_sessionmaker
    from store.models import Job
    from worker.runner import take_turn
    post(client, {"model": example("spring_slider"), **GRID})
    sweep_id, ids = take_turn(settings)
    with get_sessionmaker(settings.database)() as session:
        _, token, taken = sweeps.claim_batch(session, settings, sweep_id, ids)
        leases = {j.id: j.lease_expires_at for j, _ in taken}
        jobs.cancel(session, settings, session.get(Job, ids[1]))
        time.sleep(0.01)
        held = sweeps.heartbeat_batch(session, settings, token, set(ids), ids[0], 0.5)
        assert held == set(ids) - {ids[1]}
        session.expire_all()
        rows = {j: session.get(Job, j) for j in ids}
        assert all(rows[j].lease_expires_at > leases[j] for j in held) and rows[ids[0]].progress == 0.5
        assert rows[ids[1]].status == "canceled" and rows[ids[2]].progress == 0.0
