"""Load test: N small jobs posted by concurrent clients over loopback; every job must finish once.

Starts the distributed setup (fresh PostgreSQL database, Redis, `mbserve worker` with 2
processes, `mbserve serve --no-worker`), or the embedded one with --embedded.

    python bench/load_test.py [--jobs 1000] [--clients 16] [--embedded]
"""
from __future__ import annotations

import argparse
import json
import secrets
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.support import free_port, redis_server, start, stop, wait_http, wait_redis  # noqa: E402

MINI = json.loads((ROOT.parent / "shared" / "examples" / "mini" / "model.json").read_text())
SMALL = {"model": MINI, "simulationSettings": {"timeIntegration": {"numberOfSteps": 10}}}


def client_session(url: str, count: int) -> list[str]:
    """One client: post `count` jobs, then wait for all of them; returns their final statuses."""
    with httpx.Client(base_url=url, timeout=60) as client:
        ids = [client.post("/v1/jobs", json=SMALL).raise_for_status().json()["id"] for _ in range(count)]
        statuses = []
        for job_id in ids:
            while (job := client.get(f"/v1/jobs/{job_id}").json())["status"] in ("queued", "running"):
                time.sleep(0.2)
            statuses.append(job["status"])
        return statuses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--embedded", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        env = {"MBSERVE_DATA_DIR": str(work / "data"), "MBSERVE_WORKER_CONCURRENCY": "2",
               "MBSERVE_RATE_LIMIT_PER_MINUTE": "1000000",
               "MBSERVE_READ_RATE_LIMIT_PER_MINUTE": "1000000"}
        db = redis = None
        if args.embedded:
            database = f"sqlite:///{work / 'data' / 'mbserve.sqlite3'}"
        else:
            import psycopg
            db = f"mbserve_load_{secrets.token_hex(4)}"
            with psycopg.connect("host=127.0.0.1 user=postgres dbname=postgres", autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{db}"')
            redis_port = free_port()
            redis = redis_server(redis_port)  # our own: the shared 127.0.0.1:6379 is never touched
            wait_redis(redis_port)
            database = f"postgresql+psycopg://postgres@127.0.0.1:5432/{db}"
            env |= {"MBSERVE_DATABASE_URL": database, "MBSERVE_BROKER_URL": f"redis://127.0.0.1:{redis_port}/0"}
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        procs = [start(["mbserve.cli", "serve", "--port", str(port), *([] if args.embedded else ["--no-worker"])],
                       env, work / "api.log")]
        if not args.embedded:
            procs.append(start(["mbserve.cli", "worker", "--loglevel", "WARNING"], env, work / "worker.log"))
        try:
            wait_http(f"{url}/readyz", procs[0], work / "api.log")
            share = [args.jobs // args.clients + (i < args.jobs % args.clients) for i in range(args.clients)]
            t0 = time.perf_counter()
            with ThreadPoolExecutor(args.clients) as pool:
                statuses = [s for part in pool.map(lambda n: client_session(url, n), share) for s in part]
            seconds = time.perf_counter() - t0
            engine = create_engine(database)
            with engine.connect() as conn:
                jobs = conn.execute(text("SELECT count(*), sum(attempts), max(attempts) FROM jobs")).one()
                results = conn.execute(text("SELECT count(*) FROM results")).scalar()
            engine.dispose()
        finally:
            for p in procs:
                stop(p)
            if redis:
                redis.terminate()
                redis.wait(timeout=10)
            if db:
                import psycopg
                with psycopg.connect("host=127.0.0.1 user=postgres dbname=postgres", autocommit=True) as conn:
                    conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
    print(f"setup: {'embedded (SQLite, filesystem broker)' if args.embedded else 'PostgreSQL + Redis'}, "
          f"2 worker processes, {args.clients} clients")
    print(f"jobs submitted: {len(statuses)}, succeeded: {statuses.count('succeeded')}, "
          f"other: {len(statuses) - statuses.count('succeeded')}")
    print(f"jobs in database: {jobs[0]}, runs (attempts) in total: {jobs[1]}, most runs of one job: {jobs[2]}, "
          f"stored results: {results}")
    print(f"wall time: {seconds:.1f} s, {len(statuses) / seconds:.1f} jobs/s")
    ok = statuses.count("succeeded") == args.jobs == jobs[0] == jobs[1] == results
    print("every job finished exactly once" if ok else "MISMATCH")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
