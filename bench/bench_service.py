"""Service overhead and small-job throughput, embedded and (when reachable) Redis + PostgreSQL;
big results from PostgreSQL.

- overhead: median over runs of (end-to-end latency of one mini job: POST, long poll
  `?wait=60`, GET results, one client with keep-alive) minus the job's own solveSeconds; next to
  the in-process solve. The jobs come `--pause` apart: back to back, a job's POST met the
  worker's tail of the one before (Celery's ack and bookkeeping after the finish);
- throughput: mini jobs per second with 2 worker processes (jobs posted by 8 threads sharing one
  client's connections, long poll), next to a no-op Celery task on the same broker and settings
  (2 worker processes): the floor;
- big results (distributed): a ~120 MB results document streamed from PostgreSQL (MB/s), the
  API's RSS before and after, and the median of other requests (GET status) idle and during 20
  concurrent downloads.

    python bench/bench_service.py [--runs 20] [--jobs 40] [--pause 0.05] [--big-steps 400000] [--big-only]

(--big-only: the distributed setup's big results alone.)
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.support import (POSTGRES, database_name, drop_database, free_port, redis_server, start, stop,  # noqa: E402
                           wait_http, wait_redis)

MINI = json.loads((ROOT.parent / "shared" / "examples" / "mini" / "model.json").read_text())


def wait_done(client: httpx.Client, job_id: str) -> dict:
    while True:
        job = client.get(f"/v1/jobs/{job_id}", params={"wait": 60}).json()
        if job["status"] not in ("queued", "running"):
            return job


def latency(url: str, runs: int, pause: float) -> dict:
    """Medians: end to end, end to end - solveSeconds, the client's three requests (POST, long
    poll, GET results), and from the job's own timestamps the wait in the queue (createdAt ->
    startedAt) and the worker's part besides the solve."""
    rows = []
    with httpx.Client(base_url=url, timeout=60) as client:
        for _ in range(runs + 1):
            time.sleep(pause)  # the worker's tail of the previous job (its task's ack, ...) is not this job's
            t0 = time.perf_counter()
            job = client.post("/v1/jobs", json={"model": MINI}).json()
            t1 = time.perf_counter()
            done = wait_done(client, job["id"])
            t2 = time.perf_counter()
            results = client.get(f"/v1/jobs/{job['id']}/results").json()
            total = time.perf_counter() - t0
            solve = results["solver"]["solveSeconds"]
            t = {k: datetime.fromisoformat(done[k]) for k in ("createdAt", "startedAt", "finishedAt")}
            rows.append({"total": total, "overhead": total - solve,
                         "queued": (t["startedAt"] - t["createdAt"]).total_seconds(),
                         "worker": (t["finishedAt"] - t["startedAt"]).total_seconds() - solve,
                         "post": t1 - t0, "wait": t2 - t1, "get": t0 + total - t2})
    return {k: statistics.median(r[k] for r in rows[1:]) for k in rows[0]}  # the first run warms up


def throughput(url: str, jobs: int) -> float:
    limits = httpx.Limits(max_connections=16, max_keepalive_connections=16)
    with httpx.Client(base_url=url, timeout=120, limits=limits) as client:
        def one(_):
            job = client.post("/v1/jobs", json={"model": MINI}).json()
            assert wait_done(client, job["id"])["status"] == "succeeded"
        t0 = time.perf_counter()
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(one, range(jobs)))
        return jobs / (time.perf_counter() - t0)


def big_results(url: str, api_pid: int, steps: int) -> dict:
    """One job with a big results document, then: a full download (MB/s), the API's RSS, and
    GET status medians idle and while 20 clients download the document at once."""
    import psutil
    api = psutil.Process(api_pid)
    overrides = {"timeIntegration": {"numberOfSteps": steps}, "solution": {"sensors": {"writePeriod": 1e-9}}}
    with httpx.Client(base_url=url, timeout=600) as client:
        job = client.post("/v1/jobs", json={"model": MINI, "simulationSettings": overrides}).json()
        done = wait_done(client, job["id"])
        assert done["status"] == "succeeded", done
        rss0 = api.memory_info().rss

        def download() -> tuple[int, float]:
            t0, size = time.perf_counter(), 0
            with client.stream("GET", f"/v1/jobs/{job['id']}/results") as answer:
                for part in answer.iter_raw(1 << 20):
                    size += len(part)
            return size, time.perf_counter() - t0
        download()  # warm: the database's cache
        sizes = [download() for _ in range(3)]
        size, seconds = min(sizes, key=lambda s: s[1])
        rss1 = api.memory_info().rss
        pool = lambda: sum(p.memory_info().rss for p in api.children())  # noqa: E731 (the download pool)

        def status_times(n: int) -> list[float]:
            out = []
            for _ in range(n):
                t0 = time.perf_counter()
                client.get(f"/v1/jobs/{job['id']}").raise_for_status()
                out.append(time.perf_counter() - t0)
                time.sleep(0.01)
            return out
        idle = statistics.median(status_times(50))
        peak, pool_peak = [rss1], [pool()]
        with ThreadPoolExecutor(20) as threads:
            downloads = [threads.submit(download) for _ in range(20)]
            busy = []
            while not all(d.done() for d in downloads):
                busy += status_times(5)
                peak.append(api.memory_info().rss)
                pool_peak.append(pool())
            total = sum(d.result()[0] for d in downloads)
    return {"bytes": size, "mbps": size / seconds / 1e6, "rss0": rss0, "rss1": rss1, "rssPeak": max(peak),
            "poolPeak": max(pool_peak), "idle": idle, "busy": statistics.median(busy), "busyCount": len(busy),
            "total": total}


def noop_floor(env: dict, work: Path, runs: int, jobs: int) -> tuple[float, float]:
    """Median round trip of one no-op task, and no-op tasks per second, 2 worker processes."""
    proc = start(["celery", "-A", "bench.noop_app", "worker", "-c", "2", "-Q", "mbserve", "--loglevel=WARNING",
                  "--without-gossip", "--without-mingle"], env, work / "noop.log")
    try:
        out = subprocess.run([sys.executable, "-m", "bench.noop_app", str(runs), str(jobs)], cwd=ROOT,
                             env={**os.environ, **env}, capture_output=True, text=True, check=True, timeout=300)
    finally:
        stop(proc)
    measured = json.loads(out.stdout)
    return measured["roundTrip"], measured["perSecond"]


def solve_in_process(runs: int) -> float:
    import multibody
    return statistics.median(multibody.simulate(MINI).solver["solveSeconds"] for _ in range(runs))


def run_setup(name: str, env: dict, serve_args: list[str], worker: bool, work: Path, noop_env: dict,
              args) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    procs = [start(["mbserve.cli", "serve", "--port", str(port), *serve_args], env, work / "api.log")]
    if worker:
        procs.append(start(["mbserve.cli", "worker", "--concurrency", "2", "--loglevel", "WARNING"], env,
                           work / "worker.log"))
    try:
        wait_http(f"{url}/readyz", procs[0], work / "api.log")
        lat = None if args.big_only else latency(url, args.runs, args.pause)
        rate = None if args.big_only else throughput(url, args.jobs)
        big = big_results(url, procs[0].pid, args.big_steps) if worker and args.big_steps else None
    finally:
        for p in procs:
            stop(p)
    print(f"\n[{name}]")
    if lat is not None:
        print_small(lat, rate, *noop_floor(noop_env, work, args.runs, args.jobs), args)
    if big:
        print(f"  results document of {big['bytes'] / 1e6:.0f} MB streamed from PostgreSQL: {big['mbps']:8.1f} MB/s")
        print(f"  API RSS: {big['rss0'] / 1e6:.0f} MB before, {big['rss1'] / 1e6:.0f} MB after 4 downloads, "
              f"{big['rssPeak'] / 1e6:.0f} MB peak during 20 concurrent (its download pool: "
              f"{big['poolPeak'] / 1e6:.0f} MB peak)")
        print(f"  GET status median: idle {big['idle'] * 1e3:.1f} ms, during 20 concurrent downloads "
              f"{big['busy'] * 1e3:.1f} ms ({big['busy'] / big['idle']:.2f}x, {big['busyCount']} requests)")


def print_small(lat: dict, rate: float, trip: float, noop_rate: float, args) -> None:
    print(f"  mini job end to end, median of {args.runs}:   {lat['total'] * 1e3:8.1f} ms")
    print(f"  service overhead (latency - solveSeconds): {lat['overhead'] * 1e3:8.1f} ms")
    print(f"    of it: created -> started (API, queue):  {lat['queued'] * 1e3:8.1f} ms")
    print(f"    of it: worker besides the solve:         {lat['worker'] * 1e3:8.1f} ms")
    print(f"  the client's POST / long poll / GET results: {lat['post'] * 1e3:.1f} / {lat['wait'] * 1e3:.1f} / "
          f"{lat['get'] * 1e3:.1f} ms")
    print(f"  no-op Celery task round trip, median:      {trip * 1e3:8.1f} ms  "
          f"(overhead / no-op = {lat['overhead'] / trip:.1f}x)")
    print(f"  mini jobs/s, 2 worker processes:           {rate:8.2f}")
    print(f"  no-op tasks/s, 2 worker processes:         {noop_rate:8.2f}  "
          f"(mini / no-op = {rate / noop_rate:.3f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=40)
    parser.add_argument("--pause", type=float, default=0.05,
                        help="seconds between two jobs of the latency runs (0: back to back)")
    parser.add_argument("--big-steps", type=int, default=400000,
                        help="steps of the big-results job (0: skip); 400000: a ~120 MB document")
    parser.add_argument("--big-only", action="store_true", help="only the big results (distributed)")
    args = parser.parse_args()
    os.chdir(ROOT)
    if not args.big_only:
        solve = solve_in_process(args.runs)
        print(f"in-process solve of the mini example (solveSeconds), median of {args.runs}: {solve * 1e3:.1f} ms")

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        env = {"MBSERVE_DATA_DIR": str(work / "embedded"), "MBSERVE_WORKER_CONCURRENCY": "2",
               "MBSERVE_RATE_LIMIT_PER_MINUTE": "100000", "MBSERVE_READ_RATE_LIMIT_PER_MINUTE": "100000"}
        noop_env = {"MBSERVE_DATA_DIR": str(work / "noop"), "BENCH_RESULT_BACKEND": f"file://{work / 'noop-results'}"}
        (work / "noop-results").mkdir()
        (work / "noop" / "broker").mkdir(parents=True)
        if not args.big_only:
            run_setup("embedded: SQLite, filesystem broker", env, [], False, work, noop_env, args)

        try:
            import psycopg
            name = database_name("mbserve_bench")  # one a killed run leaves, the tests' next run drops
            with psycopg.connect(POSTGRES, autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{name}"')
        except Exception as exc:
            print(f"\n[distributed] skipped: {exc}")
            return
        redis_port = free_port()
        redis = redis_server(redis_port)  # our own: the shared 127.0.0.1:6379 is never touched
        try:
            wait_redis(redis_port)
            env = {"MBSERVE_DATA_DIR": str(work / "distributed"), "MBSERVE_RATE_LIMIT_PER_MINUTE": "100000",
                   "MBSERVE_READ_RATE_LIMIT_PER_MINUTE": "100000",
                   "MBSERVE_DATABASE_URL": f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}",
                   "MBSERVE_BROKER_URL": f"redis://127.0.0.1:{redis_port}/0"}
            noop_env = {"MBSERVE_DATA_DIR": str(work / "noop2"), "MBSERVE_BROKER_URL": f"redis://127.0.0.1:{redis_port}/1",
                        "BENCH_RESULT_BACKEND": f"redis://127.0.0.1:{redis_port}/1"}
            run_setup("distributed: PostgreSQL, Redis broker", env, ["--no-worker"], True, work, noop_env, args)
        finally:
            redis.terminate()
            redis.wait(timeout=10)
            drop_database(name)


if __name__ == "__main__":
    main()
