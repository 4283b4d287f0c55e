"""The distributed setup for real: Redis broker, a fresh PostgreSQL database, `mbserve worker`
(Celery, 2 processes) and `mbserve serve --no-worker`, all started by these tests. The worker
has a data directory of its own: API and worker share only the database and the broker."""
import json
import time

import httpx
import pytest

from tests.conftest import EXAMPLES, example
from tests.support import check_like_in_process, kill_busiest_descendant, lasting, long_running, wait_job
from tests.worker.conftest import distributed

CASES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "model.json").exists())


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, postgres_url, redis_url):
    data = tmp_path_factory.mktemp("distributed")
    with distributed(data, postgres_url, redis_url, {"MBSERVE_DATA_DIR": str(data / "worker-data")},
                     MBSERVE_LEASE_SECONDS="4",
                     MBSERVE_RECONCILE_SECONDS="1", MBSERVE_REQUEUE_AFTER_SECONDS="10",
                     MBSERVE_PROGRESS_SECONDS="0.2") as c:
        yield c

@pytest.fixture
def client(cluster):
    with httpx.Client(base_url=cluster["url"], timeout=30) as c:
        yield c


@pytest.mark.parametrize("case", CASES)
def test_distributed_results_equal_the_in_process_run(client, case):
    check_like_in_process(client, case)


def test_cancel_a_running_job(client):
    job = client.post("/v1/jobs", json={"model": example("mini"), "simulationSettings": long_running()}).json()
    wait_job(client, job["id"], until=("running",))
    canceled = client.delete(f"/v1/jobs/{job['id']}")
    assert canceled.status_code == 200 and canceled.json()["status"] == "canceled"
    # the worker notices at its next heartbeat and is free for the next job
    follow = client.post("/v1/jobs", json={"model": example("mini")}).json()
    assert wait_job(client, follow["id"])["status"] == "succeeded"
    assert client.get(f"/v1/jobs/{job['id']}").json()["status"] == "canceled"


def test_worker_killed_mid_job_the_job_is_rerun_and_stored_once(client, cluster):
    """SIGKILL the pool process running a job: Celery re-delivers it (acks_late, reject on worker
    lost) or the reconciler re-queues it when the lease expires; either way it ends succeeded once."""
    overrides = lasting(seconds=4)
    job = client.post("/v1/jobs", json={"model": example("mini"), "simulationSettings": overrides}).json()
    wait_job(client, job["id"], until=("running",))
    kill_busiest_descendant(cluster["worker"].pid)
    done = wait_job(client, job["id"], timeout=300)
    assert done["status"] == "succeeded", done
    results = client.get(f"/v1/jobs/{job['id']}/results")
    assert results.status_code == 200 and json.loads(results.content)["status"] == "succeeded"
    for data in ("data", "worker-data"):  # the results are in the database, no file anywhere
        assert not (cluster["data"] / data / "results" / job["id"]).exists()


def test_a_big_result_from_a_worker_with_its_own_data_dir_is_served_from_the_database(client):
    """Over a MiB of sensor rows (several chunks per sensor), stored by a worker that shares no
    directory with the API."""
    import multibody
    overrides = {"timeIntegration": {"numberOfSteps": 10000}, "solution": {"sensors": {"writePeriod": 1e-9}}}
    job = client.post("/v1/jobs", json={"model": example("mini"), "simulationSettings": overrides}).json()
    done = client.get(f"/v1/jobs/{job['id']}", params={"wait": 60}).json()
    assert done["status"] == "succeeded", done
    served = json.loads(client.get(f"/v1/jobs/{job['id']}/results").content)
    expected = multibody.simulate(multibody.merge_settings(example("mini"), overrides)).to_document()
    assert served["sensors"] == expected["sensors"]
    assert sum(len(s["data"]) * len(s["columns"]) * 8 for s in served["sensors"].values()) > 2 ** 20


def test_long_poll_and_events_are_woken_by_the_worker(client):
    job = client.post("/v1/jobs", json={"model": example("mini")}).json()
    t0 = time.monotonic()
    done = client.get(f"/v1/jobs/{job['id']}", params={"wait": 30}).json()
    assert done["status"] == "succeeded" and time.monotonic() - t0 < 25
    job = client.post("/v1/jobs", json={"model": example("mini"), "simulationSettings": lasting(seconds=3)}).json()
    events = []
    with client.stream("GET", f"/v1/jobs/{job['id']}/events", timeout=60) as answer:
        for line in answer.iter_lines():
            if line.startswith("event: "):
                events.append(line[7:])
            elif line.startswith("data: "):
                events[-1] = (events[-1], json.loads(line[6:]))
    assert events[-1][0] == "end" and events[-1][1]["status"] == "succeeded"
    assert any(0 < doc["progress"] < 1 for _, doc in events[:-1])  # progress while running
