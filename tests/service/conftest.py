import pytest
from fastapi.testclient import TestClient


@pytest.fixture
def queued(monkeypatch):
    """Jobs the API dispatched; `run_queued()` runs them with the worker's own code, no broker."""
    from store import queue
    sent: list[str] = []
    monkeypatch.setattr(queue, "dispatch", lambda settings, session, ids: sent.extend(ids))
    return sent


@pytest.fixture
def run_queued(settings, queued):
    from worker.runner import execute

    def run() -> list[str]:
        outcomes = [execute(settings, job_id) for job_id in queued]
        queued.clear()
        return outcomes
    return run


@pytest.fixture
def client(settings, queued):
    from service.app import create_app
    with TestClient(create_app(settings)) as c:
        yield c
