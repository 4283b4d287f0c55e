"""The distributed setup for real: Redis broker, a fresh PostgreSQL database, `mbserve worker`
(Celery, 2 processes) and `mbserve serve --no-worker`, all started by these tests."""
import httpx
import pytest

from tests.conftest import EXAMPLES, example
from tests.support import check_like_in_process, kill_busiest_descendant, lasting, long_running, wait_job
from tests.worker.conftest import distributed

CASES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "model.json").exists())


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, postgres_url, redis_url):
    with distributed(tmp_path_factory.mktemp("distributed"), postgres_url, redis_url, MBSERVE_LEASE_SECONDS="4",
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
    assert results.status_code == 200
    stored = list((cluster["data"] / "data" / "results" / job["id"]).iterdir())
    assert len(stored) == 1, stored
