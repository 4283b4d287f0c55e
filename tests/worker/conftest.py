import contextlib
from pathlib import Path

import pytest

from tests.conftest import example, require_service

PG = "postgresql+psycopg://postgres@127.0.0.1:5432"


@pytest.fixture
def make_job(settings):
    """A queued job in the database, as POST /v1/jobs leaves it (without dispatching it)."""
    import multibody
    from store import jobs
    from store.db import get_sessionmaker

    def make(doc=None, overrides=None) -> str:
        doc = doc or example("mini")
        with get_sessionmaker(settings.database)() as session:
            model = jobs.store_model(session, "anonymous", doc, multibody.validate_document(doc))
            return jobs.create_job(session, "anonymous", model.id, overrides).id
    return make


def job_row(settings, job_id):
    from store.models import Job
    from store.db import get_sessionmaker
    with get_sessionmaker(settings.database)() as session:
        return session.get(Job, job_id)




@contextlib.contextmanager
def fresh_database(prefix: str = "mbserve_test"):
    """A new, empty PostgreSQL database on 127.0.0.1:5432 (its SQLAlchemy URL), dropped after,
    whatever the test did; one a killed run left is dropped by the next run (support.sweep_databases)."""
    import psycopg

    from tests.support import POSTGRES, database_name, drop_database
    require_service("PostgreSQL at 127.0.0.1:5432", lambda: psycopg.connect(POSTGRES + " connect_timeout=3").close())
    name = database_name(prefix)
    with psycopg.connect(POSTGRES, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{PG}/{name}"
    finally:
        from store.db import get_engine
        try:
            get_engine(f"{PG}/{name}").dispose()
        finally:
            drop_database(name)


@pytest.fixture(scope="session")
def postgres_url():
    with fresh_database() as url:
        yield url


@pytest.fixture(scope="session")
def redis_url():
    """A private redis-server on a free port, stopped after: tests never touch data they did not create."""
    import subprocess

    from tests.support import free_port, redis_server, wait_redis
    require_service("redis-server", lambda: subprocess.run(["redis-server", "--version"], check=True,
                                                           capture_output=True))
    port = free_port()
    proc = redis_server(port)
    try:
        wait_redis(port)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@contextlib.contextmanager
def distributed(data: Path, database_url: str, broker_url: str, worker_env: dict | None = None, **env: str):
    """The distributed setup as README "Distributed setup" runs it: `mbserve serve --no-worker`
    on a free port and `mbserve worker` (real Celery processes), both stopped after. `env` adds
    or overrides MBSERVE_* settings, `worker_env` the worker's alone. Yields {"url", "api",
    "worker", "data"}."""
    from tests.support import free_port, start, stop, wait_http
    env = {"MBSERVE_DATABASE_URL": database_url, "MBSERVE_BROKER_URL": broker_url,
           "MBSERVE_DATA_DIR": str(data / "data"), "MBSERVE_WORKER_CONCURRENCY": "2", **env}
    port = free_port()
    api = start(["mbserve.cli", "serve", "--no-worker", "--port", str(port)], env, data / "api.log")
    worker = start(["mbserve.cli", "worker", "--loglevel", "INFO"], {**env, **(worker_env or {})}, data / "worker.log")
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(f"{url}/readyz", api, data / "api.log")
        yield {"url": url, "api": api, "worker": worker, "data": data}
    finally:
        stop(api)
        stop(worker)
