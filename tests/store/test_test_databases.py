"""The test databases a killed run leaves behind are dropped by the next run's sweep; those of
live runs, and databases not named by tests.support.database_name, stay."""
import subprocess
import sys
import time

import pytest

from tests.conftest import require_service
from tests.support import POSTGRES, database_name, drop_database, sweep_databases


def names() -> set[str]:
    import psycopg
    with psycopg.connect(POSTGRES, autocommit=True) as conn:
        return {row[0] for row in conn.execute("SELECT datname FROM pg_database")}


@pytest.fixture
def created():
    import psycopg
    require_service("PostgreSQL at 127.0.0.1:5432", lambda: psycopg.connect(POSTGRES + " connect_timeout=3").close())
    made: list[str] = []

    def create(name: str) -> str:
        with psycopg.connect(POSTGRES, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        made.append(name)
        return name
    yield create
    for name in made:
        drop_database(name)


def test_a_killed_runs_database_is_swept_and_a_live_ones_is_not(created):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    dead_pid = int(dead.stdout)
    killed = created(database_name("mbserve_test", pid=dead_pid))
    live = created(database_name("mbserve_test"))
    other = created(f"mbserve_test_{dead_pid}_kept")  # not of database_name's form: not ours to judge
    assert sweep_databases(time.time() - 3600) == []  # made after `before`: a run of now may own it
    assert {killed, live, other} <= names()
    assert sweep_databases(time.time() + 1) == [killed]
    assert killed not in names() and {live, other} <= names()
