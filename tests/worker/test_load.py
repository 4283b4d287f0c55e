"""Load test (issue 6): 1,000 small jobs posted by 16 concurrent clients over loopback HTTP to
the distributed setup (`mbserve serve --no-worker`, Redis, a fresh PostgreSQL database, 2 real
Celery worker processes), bounded in time; every job ends `succeeded`, and each ran exactly
once: one claim (attempts), one stored result row (its sensor chunks in the database), one task that ran it.
The reconciler re-sends jobs queued longer than 10 s, so the tail of the queue is delivered
twice (about 100 duplicates here): those second deliveries must do nothing.

bench/load_test.py is the same with figures printed; this is the gate in the suite."""
import re
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
from sqlalchemy import create_engine, text

from tests.conftest import example
from tests.worker.conftest import distributed, fresh_database

JOBS = 1000
CLIENTS = 16
DEADLINE_SECONDS = 240  # for submitting and finishing all of them; 30-40 s measured on 2 cores
STEPS = 10  # small jobs: the service's overhead is what is loaded, not the solver


def client_session(url: str, count: int, deadline: float, body: dict) -> dict[str, str]:
    """One client: post `count` jobs, then wait for each; {job id: final status}."""
    with httpx.Client(base_url=url, timeout=60) as client:
        ids = []
        for _ in range(count):
            answer = client.post("/v1/jobs", json=body)
            assert answer.status_code == 202, answer.text
            ids.append(answer.json()["id"])
        statuses = {}
        for job_id in ids:
            while (job := client.get(f"/v1/jobs/{job_id}").raise_for_status().json())["status"] in ("queued",
                                                                                                    "running"):
                assert time.monotonic() < deadline, f"job {job_id} still {job['status']} at the deadline"
                time.sleep(0.3)
            statuses[job_id] = job["status"]
        return statuses


def test_1000_jobs_from_concurrent_clients_each_succeed_exactly_once(tmp_path, redis_url):
    import redis
    redis.Redis.from_url(redis_url).flushdb()  # the private server of this session: no messages left from earlier modules
    body = {"model": example("mini"), "simulationSettings": {"timeIntegration": {"numberOfSteps": STEPS}}}
    with fresh_database("mbserve_load") as database:
        with distributed(tmp_path, database, redis_url, MBSERVE_RATE_LIMIT_PER_MINUTE="1000000",
                         MBSERVE_READ_RATE_LIMIT_PER_MINUTE="1000000",
                         MBSERVE_RECONCILE_SECONDS="2", MBSERVE_LEASE_SECONDS="10",
                         MBSERVE_REQUEUE_AFTER_SECONDS="10") as cluster:
            share = [JOBS // CLIENTS + (i < JOBS % CLIENTS) for i in range(CLIENTS)]
            start = time.monotonic()
            deadline = start + DEADLINE_SECONDS
            with ThreadPoolExecutor(CLIENTS) as pool:
                parts = list(pool.map(lambda n: client_session(cluster["url"], n, deadline, body), share))
            seconds = time.monotonic() - start
        statuses = {job_id: status for part in parts for job_id, status in part.items()}
        # read after the processes stopped: each job's row, and its stored results
        engine = create_engine(database)
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT j.id, j.status, j.attempts, count(r.job_id) AS stored, "
                                     "(SELECT count(*) FROM result_chunks c WHERE c.job_id = j.id) AS chunks "
                                     "FROM jobs j LEFT JOIN results r ON r.job_id = j.id GROUP BY j.id")).all()
        engine.dispose()
    log = (tmp_path / "worker.log").read_text()

    # every POST made its own job, and every job ended succeeded
    assert sum(share) == JOBS and len(statuses) == JOBS
    assert sorted(set(statuses.values())) == ["succeeded"], {s: list(statuses.values()).count(s)
                                                             for s in set(statuses.values())}
    # the database holds exactly these jobs, each claimed once, with one stored result
    assert {r.id for r in rows} == set(statuses)
    assert [r for r in rows if (r.status, r.attempts, r.stored) != ("succeeded", 1, 1)] == []
    # the same sensor chunks for every job (the results in the database), no file
    assert len({r.chunks for r in rows}) == 1 and rows[0].chunks > 0
    assert not any((tmp_path / "data" / "results").iterdir())
    # and the workers ran exactly JOBS tasks to the end (a second delivery would return 'skipped')
    ran = re.findall(r"Task mbserve\.run_job\[[^\]]+\] succeeded in [0-9.e-]+s: '(\w+)'", log)
    assert ran.count("succeeded") == JOBS, {o: ran.count(o) for o in set(ran)}
    print(f"\nload test: {JOBS} jobs from {CLIENTS} clients, {len(rows)} in the database, "
          f"{sum(r.attempts for r in rows)} runs, {sum(r.stored for r in rows)} stored results, "
          f"task outcomes {({o: ran.count(o) for o in set(ran)})}, {seconds:.1f} s, {JOBS / seconds:.1f} jobs/s")
