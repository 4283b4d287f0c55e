"""`mbserve serve` on its embedded defaults (SQLite, filesystem broker, an embedded worker), end to end."""
import httpx
import pytest

from tests.conftest import EXAMPLES, example
from tests.support import check_like_in_process, kill_busiest_descendant, lasting, wait_job

CASES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "model.json").exists())


@pytest.mark.parametrize("case", CASES)
def test_embedded_results_equal_the_in_process_run(embedded, case):
    with httpx.Client(base_url=embedded, timeout=30) as client:
        check_like_in_process(client, case)


def test_embedded_worker_killed_mid_job_the_job_is_rerun(embedded_server):
    """The filesystem broker loses the message of a killed worker; the lease expires and the
    reconciler queues the job again."""
    url, proc = embedded_server
    with httpx.Client(base_url=url, timeout=30) as client:
        job = client.post("/v1/jobs", json={"model": example("mini"), "simulationSettings": lasting(3)}).json()
        wait_job(client, job["id"], until=("running",))
        kill_busiest_descendant(proc.pid)
        assert wait_job(client, job["id"], timeout=300)["status"] == "succeeded"
        assert client.get(f"/v1/jobs/{job['id']}/results").status_code == 200


def test_a_body_over_the_limit_gets_a_readable_413_not_a_reset(embedded):
    """Issue 18: a 20 MB body got a connection reset, because the server closed the connection
    with the body unread; it now reads and drops it, then answers. With and without
    Content-Length, twice on one client."""
    body = b'{"a": "' + b"x" * 20_000_000 + b'"}'

    def chunks():
        for i in range(0, len(body), 1 << 20):
            yield body[i:i + (1 << 20)]
    with httpx.Client(base_url=embedded, timeout=120) as client:
        for content in (body, chunks(), body):
            answer = client.post("/v1/models", content=content, headers={"content-type": "application/json"})
            assert answer.status_code == 413 and answer.json()["error"]["code"] == "request_too_large"
            assert "MBSERVE_MAX_REQUEST_BYTES" in answer.json()["error"]["message"]
        assert client.get("/healthz").status_code == 200
