"""A parameter sweep across the workers against Exudyn's own ParameterVariation, same machine.

- mbserve: 1,000 variations of spring_slider (a 40 x 25 grid over the spring's stiffness and
  damping, the model's own 2,000 steps), Redis + PostgreSQL, `mbserve worker` with 2 processes;
  variations/s from POST /v1/sweeps until the sweep has finished;
- Exudyn: `exudyn.processing.ParameterVariation(useMultiProcessing=True, numberOfThreads=2)` on
  the same grid and model (each variation builds the model and solves it, as the service does),
  before and after mbserve: the mean of the two rates;
- fairness: the end-to-end latency of one mini job (POST, poll every 5 ms) while the sweep runs,
  against the same on idle workers (medians, with the time queued and running); and a second
  owner's sweep of --other variations posted once the first is 30 % done (later, on a fast machine the
  first sweep's last variations are already with the workers: no window to share): its share of the
  variations that finished while both ran (the workers shared fairly: 0.5);
- for scaling on paper: database commits, Redis commands and stored bytes per variation.

    python bench/bench_sweep.py [--stiffness 40] [--damping 25] [--minis 10] [--other 100]

Targets: mbserve / Exudyn >= 0.5; mini latency during the sweep / idle <= 2; the second owner's
share near 0.5.
"""
from __future__ import annotations

import argparse
import json
import secrets
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.support import free_port, redis_server, start, stop, wait_http, wait_redis  # noqa: E402

EXAMPLES = ROOT.parent / "shared" / "examples"
MODEL = json.loads((EXAMPLES / "spring_slider" / "model.json").read_text())
MINI = json.loads((EXAMPLES / "mini" / "model.json").read_text())
SPRING = 3  # objects[spring]


def grid(n_k: int, n_d: int) -> tuple[list[float], list[float]]:
    return list(np.linspace(50.0, 400.0, n_k)), list(np.linspace(0.5, 5.0, n_d))


def exudyn_variation(p: dict) -> float:
    """One variation in Exudyn: build spring_slider with these values, solve, the last x."""
    from bench.exudyn_runner import sensor_data, solve
    doc = json.loads(json.dumps(MODEL))
    doc["objects"][SPRING]["stiffness"], doc["objects"][SPRING]["damping"] = p["stiffness"], p["damping"]
    _, mbs = solve(doc)
    return float(sensor_data(mbs, 0)[-1, 1])


def exudyn_rate(n_k: int, n_d: int) -> float:
    from exudyn.processing import ParameterVariation
    k, d = grid(n_k, n_d)
    t0 = time.perf_counter()
    _, values = ParameterVariation(exudyn_variation, {"stiffness": k, "damping": d}, useMultiProcessing=True,
                                   numberOfThreads=2, showProgress=False)
    elapsed = time.perf_counter() - t0
    assert len(values) == n_k * n_d
    return len(values) / elapsed


def sweep_body(n_k: int, n_d: int) -> dict:
    k, d = grid(n_k, n_d)
    return {"model": MODEL, "design": "grid",
            "parameters": [{"path": "objects[spring].stiffness", "values": k},
                           {"path": "objects[spring].damping", "values": d}],
            "outputs": [{"name": "xEnd", "sensor": "block_position", "column": "PositionX"}]}


def share(db_url: str, first: str, second: str) -> float:
    """The second sweep's share of the variations of both that finished while both ran (from the
    second's creation until the first of the two finished)."""
    import psycopg
    with psycopg.connect(db_url.replace("postgresql+psycopg", "postgresql")) as conn:
        (start,) = conn.execute("SELECT created_at FROM sweeps WHERE id = %s", (second,)).fetchone()
        ends = [conn.execute("SELECT max(j.finished_at) FROM jobs j JOIN sweep_variations v ON v.job_id = j.id "
                             "WHERE v.sweep_id = %s", (s,)).fetchone()[0] for s in (first, second)]
        counts = [conn.execute("SELECT count(*) FROM jobs j JOIN sweep_variations v ON v.job_id = j.id WHERE "
                               "v.sweep_id = %s AND j.finished_at > %s AND j.finished_at <= %s",
                               (s, start, min(ends))).fetchone()[0] for s in (first, second)]
    return counts[1] / sum(counts)


def mini_latency(client: httpx.Client) -> tuple[float, float, float]:
    """(end to end, queued: created until started, running: started until finished) in seconds."""
    t0 = time.perf_counter()
    job = client.post("/v1/jobs", json={"model": MINI}).raise_for_status().json()
    while (job := client.get(f"/v1/jobs/{job['id']}").json())["status"] in ("queued", "running"):
        time.sleep(0.005)
    elapsed = time.perf_counter() - t0
    created, started, finished = (datetime.fromisoformat(job[k]) for k in ("createdAt", "startedAt", "finishedAt"))
    return elapsed, (started - created).total_seconds(), (finished - started).total_seconds()


def medians(latencies: list[tuple[float, float, float]]) -> tuple[float, float, float] | None:
    return tuple(statistics.median(column) for column in zip(*latencies)) if latencies else None


def counters(db_url: str, redis_port: int) -> dict:
    import psycopg
    import redis
    with psycopg.connect(db_url.replace("postgresql+psycopg", "postgresql")) as conn:
        commits = conn.execute("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()").fetchone()[0]
        size = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
    return {"commits": commits, "dbBytes": size,
            "redisCommands": redis.Redis(port=redis_port).info("stats")["total_commands_processed"]}


def mbserve_run(work: Path, n_k: int, n_d: int, minis: int, other: int) -> dict:
    import psycopg
    port = free_port()
    broker = redis_server(port)
    wait_redis(port)
    name = f"mbserve_bench_sweep_{secrets.token_hex(4)}"
    with psycopg.connect("host=127.0.0.1 user=postgres dbname=postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    db = f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    env = {"MBSERVE_DATABASE_URL": db, "MBSERVE_BROKER_URL": f"redis://127.0.0.1:{port}/0",
           "MBSERVE_DATA_DIR": str(work / "data"), "MBSERVE_RATE_LIMIT_PER_MINUTE": "100000",
           "MBSERVE_READ_RATE_LIMIT_PER_MINUTE": "100000", "MBSERVE_REQUIRE_API_KEY": "true",
           "MBSERVE_WORKER_CONCURRENCY": "2"}
    api_port = free_port()
    url = f"http://127.0.0.1:{api_port}"
    procs = [start(["mbserve.cli", "serve", "--no-worker", "--port", str(api_port)], env, work / "api.log"),
             start(["mbserve.cli", "worker", "--concurrency", "2", "--loglevel", "WARNING"], env, work / "worker.log")]
    try:
        wait_http(f"{url}/readyz", procs[0], work / "api.log")
        from service.auth import create_key
        from store.db import get_sessionmaker
        with get_sessionmaker(db)() as session:
            keys = [create_key(session, owner) for owner in ("first", "second")]
        auth = lambda key: {"Authorization": f"Bearer {key}"}  # noqa: E731
        with httpx.Client(base_url=url, timeout=120, headers=auth(keys[0])) as client, \
                httpx.Client(base_url=url, timeout=120, headers=auth(keys[1])) as second:
            mini_latency(client)  # both worker processes warm
            mini_latency(client)
            idle = medians([mini_latency(client) for _ in range(minis)])
            before = counters(db, port)
            t0 = time.perf_counter()
            sweep = client.post("/v1/sweeps", json=sweep_body(n_k, n_d)).raise_for_status().json()
            posted = time.perf_counter() - t0
            time.sleep(2.0)
            during, theirs = [], None
            post_theirs = lambda: second.post("/v1/sweeps", json=sweep_body(other // 10, 10)) \
                .raise_for_status().json()  # noqa: E731
            while (progress := client.get(f"/v1/sweeps/{sweep['id']}").json()["progress"]) < 0.9 \
                    and len(during) < minis:
                if theirs is None and progress >= 0.3:
                    theirs = post_theirs()
                during.append(mini_latency(client))
                time.sleep(0.5)
            theirs = theirs or post_theirs()
            while (status := client.get(f"/v1/sweeps/{sweep['id']}").json())["status"] != "finished" or \
                    second.get(f"/v1/sweeps/{theirs['id']}").json()["status"] != "finished":
                time.sleep(0.1)
            elapsed = time.perf_counter() - t0  # both sweeps' variations, from the first POST
            fair = share(db, sweep["id"], theirs["id"])
            after = counters(db, port)
            table = client.get(f"/v1/sweeps/{sweep['id']}/table").json()
            assert status["done"] == n_k * n_d and all(r[3] is not None for r in table["rows"]), status
    finally:
        for p in procs:
            stop(p)
        broker.kill()
        broker.wait()
        with psycopg.connect("host=127.0.0.1 user=postgres dbname=postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    n = n_k * n_d + other // 10 * 10
    return {"rate": n / elapsed, "share": fair, "posted": posted, "idle": idle, "during": medians(during),
            "minis": len(during), "perVariation": {k: (after[k] - before[k]) / n for k in after}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stiffness", type=int, default=40)
    parser.add_argument("--damping", type=int, default=25)
    parser.add_argument("--minis", type=int, default=10)
    parser.add_argument("--other", type=int, default=100, help="variations of the second owner's sweep")
    args = parser.parse_args()
    n = args.stiffness * args.damping
    # Exudyn before and after mbserve: the mean of the two rates, as the load of a shared machine drifts
    exudyn = [exudyn_rate(args.stiffness, args.damping)]
    with tempfile.TemporaryDirectory() as tmp:
        ours = mbserve_run(Path(tmp), args.stiffness, args.damping, args.minis, args.other)
    exudyn.append(exudyn_rate(args.stiffness, args.damping))
    theirs = statistics.mean(exudyn)
    per = ours["perVariation"]
    print(f"{n} variations of spring_slider (2,000 steps each), 2 processes each")
    print(f"  mbserve sweep (Redis + PostgreSQL, 2 worker processes): {ours['rate']:8.1f} variations/s "
          f"(POST with validation of every variation: {ours['posted']:.2f} s)")
    print(f"  Exudyn ParameterVariation(useMultiProcessing=True, 2):  {theirs:8.1f} variations/s "
          f"(before / after: {exudyn[0]:.1f} / {exudyn[1]:.1f})")
    print(f"  ratio mbserve / Exudyn:                                 {ours['rate'] / theirs:8.3f}  (target >= 0.5)")
    if ours["during"] is not None:
        (idle, idle_queued, idle_running), (during, queued, running) = ours["idle"], ours["during"]
        print(f"  mini job latency idle / during the sweep (median):     {idle * 1e3:6.1f} / "
              f"{during * 1e3:6.1f} ms = {during / idle:.2f}x  (target <= 2; {ours['minis']} jobs)")
        print(f"    of which queued {idle_queued * 1e3:.1f} / {queued * 1e3:.1f} ms, "
              f"running {idle_running * 1e3:.1f} / {running * 1e3:.1f} ms")
    print(f"  a second owner's sweep ({args.other // 10 * 10} variations) posted during the first: its share of "
          f"the variations finished while both ran: {ours['share']:.2f}  (fair: 0.5)")
    print(f"  per variation: {per['commits']:.1f} database commits, {per['redisCommands']:.1f} Redis commands, "
          f"{per['dbBytes'] / 1e3:.1f} kB database growth")


if __name__ == "__main__":
    main()
