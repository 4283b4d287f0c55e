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
