"""Issue 18: the CI slice of bench/fuzz.py, 2,000 generated requests (the red team's, schemathesis
per operation and stateful, hypothesis with nesting, NUL, huge numbers and unicode in every
field) against the app on PostgreSQL, where a NUL byte used to reach psycopg: no 5xx, every
error answer of the documented shape. The full run (>= 10,000 per setup, over real HTTP) is
`python bench/fuzz.py`."""
import schemathesis
from fastapi.testclient import TestClient

from bench.fuzz import MINI, fuzz
from service.app import create_app
from store.db import migrate
from tests.worker.conftest import fresh_database

REQUESTS = 2_000


def test_two_thousand_generated_requests_get_no_5xx(settings, queued):
    from worker.runner import execute
    with fresh_database("mbserve_fuzz") as url:
        s = settings.model_copy(update={"database_url": url, "rate_limit_per_minute": 10**8,
                                             "read_rate_limit_per_minute": 10**8})
        migrate(s.database)
        app = create_app(s)
        with TestClient(app, raise_server_exceptions=False) as client:
            model = client.post("/v1/models", json=MINI).json()["id"]
            job = client.post("/v1/jobs", json={"modelId": model}).json()["id"]
            assert execute(s, queued.pop()) == "succeeded"  # no broker here: the worker's code runs it now
            tally = fuzz(client, schemathesis.openapi.from_asgi("/openapi.json", app), {}, REQUESTS,
                         ids={"model": model, "job": job}, log=lambda *_: None)
    assert tally.requests >= REQUESTS
    assert tally.ok(), tally.summary()
