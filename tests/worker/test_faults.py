"""Faults injected for real: the broker restarted with its state lost while jobs are queued."""
import subprocess
import time

import httpx
from sqlalchemy import create_engine, text

from tests.conftest import example, require_service
from tests.support import free_port, start, stop, wait_http, wait_job


def redis_server(port: int) -> subprocess.Popen:
    return subprocess.Popen(["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", "",
                             "--appendonly", "no"], stdout=subprocess.DEVNULL)


def wait_redis(port: int) -> None:
    import redis
    for _ in range(100):
        try:
            redis.Redis(port=port, socket_timeout=1).ping()
            return
        except redis.ConnectionError:
            time.sleep(0.05)
    raise RuntimeError("redis-server did not start")


def test_redis_restarted_with_state_lost_no_job_is_lost(tmp_path, postgres_url):
    require_service("redis-server (a broker this test can restart)",
                    lambda: subprocess.run(["redis-server", "--version"], check=True, capture_output=True))
    port = free_port()
    broker = redis_server(port)
    wait_redis(port)
    env = {"MBSERVE_DATABASE_URL": postgres_url, "MBSERVE_BROKER_URL": f"redis://127.0.0.1:{port}/0",
           "MBSERVE_DATA_DIR": str(tmp_path / "data"), "MBSERVE_RECONCILE_SECONDS": "1",
           "MBSERVE_REQUEUE_AFTER_SECONDS": "3", "MBSERVE_WORKER_CONCURRENCY": "2"}
    api_port = free_port()
    api = start(["mbserve.cli", "serve", "--no-worker", "--port", str(api_port)], env, tmp_path / "api.log")
    worker = None
    try:
        url = f"http://127.0.0.1:{api_port}"
        wait_http(f"{url}/readyz", api, tmp_path / "api.log")
        with httpx.Client(base_url=url, timeout=30) as client:
            ids = [client.post("/v1/jobs", json={"model": example("mini")}).json()["id"] for _ in range(6)]
            broker.kill()  # SIGKILL, no persistence: every queued message is gone
            broker.wait()
            broker = redis_server(port)
            wait_redis(port)
            worker = start(["mbserve.cli", "worker", "--loglevel", "INFO"], env, tmp_path / "worker.log")
            done = [wait_job(client, i, timeout=180) for i in ids]
        assert [j["status"] for j in done] == ["succeeded"] * len(ids)
        engine = create_engine(postgres_url)
        with engine.connect() as conn:
            attempts = conn.execute(text("SELECT attempts FROM jobs WHERE id = ANY(:ids)"), {"ids": ids}).scalars()
            assert sorted(attempts) == [1] * len(ids)  # each ran exactly once
            stored = conn.execute(text("SELECT count(*) FROM results WHERE job_id = ANY(:ids)"), {"ids": ids})
            assert stored.scalar() == len(ids)
        engine.dispose()
    finally:
        stop(api)
        if worker:
            stop(worker)
        broker.kill()
        broker.wait()
