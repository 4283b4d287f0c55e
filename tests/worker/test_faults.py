"""Faults injected for real: the broker restarted with its state lost while jobs are queued;
the database stopped while jobs run."""
import shutil
import subprocess
import time
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text

from tests.conftest import example, require_service
from tests.support import free_port, lasting, redis_server, start, stop, wait_http, wait_job, wait_redis


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


class PrivatePostgres:
    """A PostgreSQL cluster of this test's own (initdb in a temp dir), so it can be stopped."""

    def __init__(self):
        import glob
        import os
        import tempfile
        self.bin = Path(sorted(glob.glob("/usr/lib/postgresql/*/bin"))[-1])
        self.data = Path(tempfile.mkdtemp(prefix="mbserve-pg-"))
        self.port = free_port()
        self.as_owner = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []  # initdb refuses root
        if self.as_owner:
            shutil.chown(self.data, "postgres")
        self._run("initdb", "-D", str(self.data / "db"), "-A", "trust", "-U", "postgres")

    def _run(self, tool: str, *args: str) -> None:
        subprocess.run([*self.as_owner, str(self.bin / tool), *args], check=True, capture_output=True)

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.data / "db"), "-w", "-l", str(self.data / "log"), "-o",
                  f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1 -c fsync=off", "start")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data / "db"), "-w", "-m", "immediate", "stop")

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def remove(self) -> None:
        subprocess.run([*self.as_owner, str(self.bin / "pg_ctl"), "-D", str(self.data / "db"), "-m", "immediate",
                        "stop"], capture_output=True)
        shutil.rmtree(self.data, ignore_errors=True)


def test_postgres_stopped_the_api_answers_503_and_jobs_finish_after_it_is_back(tmp_path, redis_url):
    require_service("PostgreSQL server binaries (initdb, pg_ctl)",
                    lambda: sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))[-1])
    pg = PrivatePostgres()
    pg.start()
    env = {"MBSERVE_DATABASE_URL": pg.url, "MBSERVE_BROKER_URL": redis_url, "MBSERVE_DATA_DIR": str(tmp_path / "d"),
           "MBSERVE_RECONCILE_SECONDS": "1", "MBSERVE_REQUEUE_AFTER_SECONDS": "3", "MBSERVE_LEASE_SECONDS": "3"}
    port = free_port()
    api = start(["mbserve.cli", "serve", "--no-worker", "--port", str(port)], env, tmp_path / "api.log")
    worker = start(["mbserve.cli", "worker", "--loglevel", "INFO"], env, tmp_path / "worker.log")
    try:
        url = f"http://127.0.0.1:{port}"
        wait_http(f"{url}/readyz", api, tmp_path / "api.log")
        with httpx.Client(base_url=url, timeout=30) as client:
            first = client.post("/v1/jobs", json={"model": example("mini")}).json()
            assert wait_job(client, first["id"])["status"] == "succeeded"
            running = client.post("/v1/jobs", json={"model": example("mini"), "simulationSettings": lasting(3)}).json()
            pg.stop()
            for answer in (client.get(f"/v1/jobs/{first['id']}"), client.post("/v1/models", json=example("mini")),
                           client.get("/readyz")):
                assert answer.status_code == 503, answer.text
            time.sleep(3)  # the worker's heartbeats and commits fail meanwhile
            pg.start()
            done = wait_job(client, running["id"], timeout=180)
            assert done["status"] == "succeeded", done
            assert client.get(f"/v1/jobs/{running['id']}/results").status_code == 200
    finally:
        stop(api)
        stop(worker)
        pg.remove()
