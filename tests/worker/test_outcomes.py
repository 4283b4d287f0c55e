"""Issue 6 end to end on the distributed setup (Redis, PostgreSQL, a real Celery worker with ONE
pool process, so "the same worker process" is checkable): a solve that blows up ends `failed`
with its reason, a job over the wall-time limit ends `failed` with code `time_limit`, and in
both cases that same process runs the next job; concurrent POSTs with one Idempotency-Key
make one job; a job over one of the core's own bounds, which the API did not check, ends
`failed` with code `limit_exceeded`."""
import copy
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

import httpx
import psutil
import pytest

from tests.conftest import example
from tests.support import long_running, wait_job
from tests.worker.conftest import distributed

TIME_LIMIT = 3.0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, postgres_url, redis_url):
    data = tmp_path_factory.mktemp("outcomes")
    with distributed(data, postgres_url, redis_url, MBSERVE_WORKER_CONCURRENCY="1",
                     MBSERVE_JOB_TIME_LIMIT=str(TIME_LIMIT), MBSERVE_LEASE_SECONDS="4",
                     MBSERVE_RECONCILE_SECONDS="1", MBSERVE_PROGRESS_SECONDS="0.2") as c:
        yield c


@pytest.fixture
def client(cluster):
    with httpx.Client(base_url=cluster["url"], timeout=30) as c:
        yield c


def pool_processes(worker) -> set[int]:
    """The pids of the Celery worker's pool processes (one here), once the pool is up."""
    end = time.monotonic() + 60
    while time.monotonic() < end:
        children = psutil.Process(worker.pid).children(recursive=True)
        if children:
            return {p.pid for p in children}
        time.sleep(0.2)
    raise AssertionError("the Celery pool did not start")


def then_the_same_process_runs_a_job(client, cluster, before: set[int]) -> None:
    follow = client.post("/v1/jobs", json={"model": example("mini")}).json()
    assert wait_job(client, follow["id"])["status"] == "succeeded"
    assert client.get(f"/v1/jobs/{follow['id']}/results").status_code == 200
    assert pool_processes(cluster["worker"]) == before  # not replaced: it did not die
    assert cluster["worker"].poll() is None


def test_a_diverging_solve_fails_with_its_reason_and_the_worker_goes_on(client, cluster):
    """A spring of stiffness 1e300: its force overflows to inf in the first step, Newton cannot
    converge even at the smallest step size."""
    before = pool_processes(cluster["worker"])
    doc = copy.deepcopy(example("spring_slider"))
    doc["objects"][3]["stiffness"] = 1e300
    job = client.post("/v1/jobs", json={"model": doc}).json()
    done = wait_job(client, job["id"])
    assert done["status"] == "failed", done
    assert done["error"]["code"] == "newton_not_converged"
    assert "Newton did not converge at t = " in done["error"]["message"]
    results = client.get(f"/v1/jobs/{job['id']}/results")  # the rows written until the failure
    assert results.status_code == 200
    assert results.json()["status"] == "failed" and results.json()["error"] == done["error"]
    then_the_same_process_runs_a_job(client, cluster, before)


def test_a_job_over_the_wall_time_limit_fails_with_code_time_limit(client, cluster):
    before = pool_processes(cluster["worker"])
    job = client.post("/v1/jobs", json={"model": example("mini"), "simulationSettings": long_running()}).json()
    done = wait_job(client, job["id"], timeout=60)
    assert done["status"] == "failed", done
    assert done["error"]["code"] == "time_limit"
    assert f"limit of {TIME_LIMIT:g} s" in done["error"]["message"]
    ran = datetime.fromisoformat(done["finishedAt"]) - datetime.fromisoformat(done["startedAt"])
    # stopped by the cooperative limit, not Celery's soft/hard limits (30 and 60 s later)
    assert TIME_LIMIT <= ran.total_seconds() < TIME_LIMIT + 10, ran
    results = client.get(f"/v1/jobs/{job['id']}/results")
    assert results.status_code == 200 and results.json()["error"]["code"] == "time_limit"
    then_the_same_process_runs_a_job(client, cluster, before)


def test_a_job_over_a_core_limit_fails_with_limit_exceeded_and_the_worker_goes_on(client, cluster, postgres_url,
                                                                                   redis_url):
    """The API checks a job against the core it runs; a job it did not check (stored before an
    upgrade lowered a bound; here written to the database directly) asks for more steps than the
    core's MAX_STEPS. The worker fails it cleanly: code limit_exceeded naming the bound and the
    path, one claim, no results row; the same process runs the next job."""
    import multibody
    from multibody.settings import MAX_STEPS
    from store import jobs, queue
    from store.config import Settings
    from store.db import get_sessionmaker
    from store.models import Job, Result

    before = pool_processes(cluster["worker"])
    settings = Settings(database_url=postgres_url, broker_url=redis_url, data_dir=cluster["data"] / "data")
    doc = example("mini")
    with get_sessionmaker(settings.database)() as session:
        model = jobs.store_model(session, "anonymous", doc, multibody.validate_document(doc))
        job_id = jobs.create_job(session, "anonymous", model.id,
                                 {"timeIntegration": {"numberOfSteps": 2 * MAX_STEPS}}).id
        queue.dispatch(settings, session, [job_id])
    done = wait_job(client, job_id)
    assert done["status"] == "failed", done
    assert done["error"]["code"] == "limit_exceeded", done["error"]
    assert f"the limit is {MAX_STEPS}" in done["error"]["message"]
    assert [d["path"] for d in done["error"]["detail"]] == ["simulationSettings.timeIntegration.numberOfSteps"]
    with get_sessionmaker(settings.database)() as session:
        assert session.get(Job, job_id).attempts == 1
        assert session.get(Result, job_id) is None
    results = client.get(f"/v1/jobs/{job_id}/results")
    assert results.status_code == 200 and results.json()["error"] == done["error"]
    then_the_same_process_runs_a_job(client, cluster, before)


def test_concurrent_posts_with_one_idempotency_key_make_one_job(client, cluster):
    """Eight clients race with the same key and body on PostgreSQL: one job; then the same key
    with another body is a 409."""
    body = {"model": example("mini"), "simulationSettings": {"timeIntegration": {"numberOfSteps": 20}}}
    key = {"Idempotency-Key": f"race-{time.time_ns()}"}

    def post(_):
        with httpx.Client(base_url=cluster["url"], timeout=30) as c:
            return c.post("/v1/jobs", json=body, headers=key)
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(post, range(8)))
    assert [a.status_code for a in answers] == [202] * 8, [a.text for a in answers]
    ids = {a.json()["id"] for a in answers}
    assert len(ids) == 1
    job_id = ids.pop()
    assert wait_job(client, job_id)["status"] == "succeeded"
    listed = [j["id"] for j in client.get("/v1/jobs", params={"limit": 200}).json()["items"]]
    assert listed.count(job_id) == 1
    other = client.post("/v1/jobs", json={"model": example("mini")}, headers=key)
    assert other.status_code == 409 and other.json()["error"]["code"] == "idempotency_conflict"
