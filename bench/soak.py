"""Soak (issue 18): 8 clients for 60 s, each alternating a valid job and one of the red team's
hostile requests, against the distributed setup with 2 worker processes.

    python bench/soak.py [--seconds 60] [--clients 8]

A fresh PostgreSQL database, a private redis-server, `mbserve serve --no-worker`, `mbserve
worker` (concurrency 2). Checks, and prints: every valid job succeeded exactly once (one claim,
one stored result), no hostile request got a 5xx or a dropped connection, the worker's pool
processes are the ones it started with (none died), and the RSS of the API and of the worker
processes sampled every second (first and largest). Exit 1 when a check fails.
"""
from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import psutil
from sqlalchemy import create_engine, text

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.fuzz import MINI, FUZZ_ENV, Tally, hostile_requests, seed  # noqa: E402

VALID = {"model": MINI, "simulationSettings": {"timeIntegration": {"numberOfSteps": 20}}}


def rss_mb(pid: int) -> float:
    """RSS of a process and its descendants, MB."""
    proc = psutil.Process(pid)
    return sum(p.memory_info().rss for p in [proc, *proc.children(recursive=True)]) / 2**20


def client_loop(url: str, hostile: list, offset: int, stop: float, tally: Tally) -> list[str]:
    """Valid job, hostile request, valid job, ... until `stop`; returns the valid jobs' ids."""
    ids = []
    requests = itertools.cycle(hostile[offset:] + hostile[:offset])
    with httpx.Client(base_url=url, timeout=120) as client:
        while time.monotonic() < stop:
            answer = tally.send(client, "POST", "/v1/jobs", json=VALID)
            if answer is not None and answer.status_code == 202:
                ids.append(answer.json()["id"])
            method, path, kwargs, _ = next(requests)
            tally.send(client, method, path, **kwargs)
    return ids


def main() -> int:
    from tests.support import free_port, redis_server, wait_redis
    from tests.worker.conftest import distributed, fresh_database
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()
    redis_port = free_port()
    redis = redis_server(redis_port)
    try:
        wait_redis(redis_port)
        with tempfile.TemporaryDirectory() as tmp, fresh_database("mbserve_soak") as database, \
                distributed(Path(tmp), database, f"redis://127.0.0.1:{redis_port}/0", **FUZZ_ENV) as setup:
            return soak(setup, database, args)
    finally:
        redis.terminate()
        redis.wait(timeout=10)


def soak(setup: dict, database: str, args) -> int:
    url, api, worker = setup["url"], setup["api"], setup["worker"]
    with httpx.Client(base_url=url, timeout=60) as client:
        ids = seed(client)  # also waits until the pool has run a job: it is up
    pool = {p.pid for p in psutil.Process(worker.pid).children(recursive=True)}
    hostile = hostile_requests(ids)
    samples = {"api": [], "worker": []}
    done = threading.Event()

    def sample():
        while not done.wait(1.0):
            samples["api"].append(rss_mb(api.pid))
            samples["worker"].append(rss_mb(worker.pid))
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    tally = Tally()
    stop = time.monotonic() + args.seconds
    with ThreadPoolExecutor(args.clients) as clients:
        valid = [i for part in clients.map(lambda k: client_loop(url, hostile, k * 3 % len(hostile), stop, tally),
                                           range(args.clients)) for i in part]
    print(f"{args.clients} clients, {args.seconds:g} s: {len(valid)} valid jobs posted; {tally.summary()}")
    end = time.monotonic() + 300
    with httpx.Client(base_url=url, timeout=60) as client:
        for job_id in valid:
            while client.get(f"/v1/jobs/{job_id}").json()["status"] in ("queued", "running") \
                    and time.monotonic() < end:
                time.sleep(0.2)
    done.set()
    sampler.join()
    with create_engine(database).connect() as conn:
        rows = conn.execute(text("SELECT j.status, j.attempts, (SELECT count(*) FROM results r WHERE r.job_id = j.id) "
                                 "FROM jobs j WHERE j.id = ANY(:ids)"), {"ids": valid}).all()
    succeeded_once = sum(1 for status, attempts, results in rows if status == "succeeded" and attempts == 1
                         and results == 1)
    pool_after = {p.pid for p in psutil.Process(worker.pid).children(recursive=True)}
    print(f"valid jobs: {len(valid)} posted, {len(rows)} recorded, {succeeded_once} succeeded with one claim and "
          f"one stored result")
    print(f"worker pool processes: {sorted(pool)} at start, {sorted(pool_after)} at the end; worker "
          f"{'running' if worker.poll() is None else 'exited'}")
    for name, values in samples.items():
        print(f"RSS {name} (with its children): first {values[0]:.0f} MB, largest {max(values):.0f} MB, "
              f"last {values[-1]:.0f} MB ({len(values)} samples)")
    ok = (tally.ok() and succeeded_once == len(valid) == len(rows) and pool_after == pool and worker.poll() is None)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
