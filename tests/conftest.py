import json
import os
import signal
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT.parent / "shared" / "examples"
if not EXAMPLES.is_dir():
    EXAMPLES = ROOT / "examples"


def pytest_configure(config) -> None:
    """SIGTERM (a timeout, a stopped CI job) ends the run as Ctrl-C does: pytest then runs the
    finalizers that drop test databases and stop servers. A forked child dies of it as usual."""
    main = os.getpid()

    def terminated(signum, frame):
        if os.getpid() != main:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, terminated)


def pytest_sessionstart(session) -> None:
    """Drop the PostgreSQL test databases killed runs left behind (none when PostgreSQL is absent)."""
    import time

    from tests.support import sweep_databases
    try:
        stale = sweep_databases(time.time())
    except Exception:  # not reachable, no psycopg: the tests that need it say so
        return
    if stale:
        print(f"dropped {len(stale)} test database(s) of killed runs: {', '.join(stale)}")


def example(name: str) -> dict:
    return json.loads((EXAMPLES / name / "model.json").read_text())


@pytest.fixture
def settings(tmp_path):
    from store.config import Settings
    s = Settings(data_dir=tmp_path / "data", reconcile_seconds=0, lease_seconds=3,
                 progress_seconds=0.1, requeue_after_seconds=2)
    s.ensure_dirs()
    from store.db import migrate
    migrate(s.database)
    return s


@pytest.fixture
def mini() -> dict:
    return example("mini")


def require_service(name: str, probe) -> None:
    """Integration tests need Redis/PostgreSQL: skip locally when absent, fail when CI=true."""
    try:
        probe()
    except Exception as exc:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{name} is not reachable and CI=true: {exc}")
        pytest.skip(f"{name} is not reachable: {exc}")


@pytest.fixture(scope="session")
def embedded_server(tmp_path_factory):
    """`mbserve serve` as a user starts it: a subprocess on a free port with its own data directory."""
    from tests.support import free_port, start, stop, wait_http
    data = tmp_path_factory.mktemp("embedded")
    port = free_port()
    log = data / "serve.log"
    proc = start(["mbserve.cli", "serve", "--port", str(port), "--data-dir", str(data / "data")],
                 {"MBSERVE_LEASE_SECONDS": "5", "MBSERVE_RECONCILE_SECONDS": "1",
                  "MBSERVE_REQUEUE_AFTER_SECONDS": "5"}, log)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(f"{url}/readyz", proc, log)
        yield url, proc
    finally:
        stop(proc)


@pytest.fixture(scope="session")
def embedded(embedded_server) -> str:
    """The URL of the shared `mbserve serve`."""
    return embedded_server[0]
