"""Sweeps on the distributed setup for real: Redis, a fresh PostgreSQL database, `mbserve worker`
(2 processes) and `mbserve serve --no-worker`."""
import time

import httpx
import pytest
from sqlalchemy import create_engine, text

from tests.conftest import example
from tests.support import kill_busiest_descendant
from tests.worker.conftest import distributed, fresh_database


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, redis_url):
    with fresh_database("mbserve_sweep") as db, \
            distributed(tmp_path_factory.mktemp("sweeps"), db, redis_url, MBSERVE_LEASE_SECONDS="3",
                        MBSERVE_RECONCILE_SECONDS="1", MBSERVE_REQUEUE_AFTER_SECONDS="20",
                        MBSERVE_PROGRESS_SECONDS="0.2", MBSERVE_SWEEP_BATCH_SIZE="4") as c:
        yield {**c, "database": db}


@pytest.fixture
def client(cluster):
    with httpx.Client(base_url=cluster["url"], timeout=60) as c:
        yield c


def sweep_body(steps: int, stiffness: list, damping: list) -> dict:
    model = example("spring_slider")
    model["simulationSettings"]["timeIntegration"]["numberOfSteps"] = steps
    return {"model": model, "design": "grid",
            "parameters": [{"path": "objects[spring].stiffness", "values": stiffness},
                           {"path": "objects[spring].damping", "values": damping}],
            "outputs": [{"name": "xEnd", "sensor": "block_position", "column": "PositionX"}]}


def wait_sweep(client, sweep_id, until, timeout=300) -> dict:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        status = client.get(f"/v1/sweeps/{sweep_id}").raise_for_status().json()
        if until(status):
            return status
        time.sleep(0.1)
    raise AssertionError(f"sweep {sweep_id}: {status}")


def test_a_worker_killed_mid_sweep_every_variation_ends_once(client, cluster):
    sweep = client.post("/v1/sweeps", json=sweep_body(20_000, [50, 100, 200, 400], [0.5, 1, 2, 4])).json()
    assert sweep["total"] == 16
    running = wait_sweep(client, sweep["id"], lambda s: s["done"] >= 2 and s["running"] >= 1)
    table = client.get(f"/v1/sweeps/{sweep['id']}/table").json()  # readable while running
    done = [r for r in table["rows"] if r[-1] == "succeeded"]
    assert len(done) >= running["done"] and all(isinstance(r[3], float) for r in done)
    assert all(r[3] is None for r in table["rows"] if r[-1] != "succeeded")
    kill_busiest_descendant(cluster["worker"].pid)
    final = wait_sweep(client, sweep["id"], lambda s: s["status"] == "finished")
    assert (final["done"], final["failed"], final["canceled"]) == (16, 0, 0), final
    rows = client.get(f"/v1/sweeps/{sweep['id']}/table").json()["rows"]
    ids = [r[-2] for r in rows]
    assert all(isinstance(r[3], float) for r in rows)
    engine = create_engine(cluster["database"])
    with engine.connect() as conn:
        attempts = conn.execute(text("SELECT attempts FROM jobs WHERE id = ANY(:ids)"), {"ids": ids}).scalars().all()
        stored = conn.execute(text("SELECT count(*) FROM results WHERE job_id = ANY(:ids)"), {"ids": ids}).scalar()
    engine.dispose()
    # the killed process held one batch (4 claimed at once): those of it not stored, and no
    # other, ran twice; all ended once, with one result each
    assert stored == 16 and max(attempts) <= 2 and attempts.count(2) <= 4, attempts
    for job_id in ids:  # one stored result per job, whichever attempt stored it
        folder = cluster["data"] / "data" / "results" / job_id
        assert not folder.exists() or len(list(folder.iterdir())) == 1


def test_cancel_mid_sweep_stops_it(client):
    sweep = client.post("/v1/sweeps", json=sweep_body(5_000, list(range(100, 1100, 100)), [1, 2, 3])).json()
    wait_sweep(client, sweep["id"], lambda s: s["done"] >= 2)
    canceled = client.delete(f"/v1/sweeps/{sweep['id']}").json()
    assert canceled["status"] == "canceled" and canceled["queued"] == canceled["running"] == 0
    time.sleep(2)  # batches still in the broker find their jobs canceled; running ones stop
    after = client.get(f"/v1/sweeps/{sweep['id']}").json()
    assert (after["done"], after["canceled"]) == (canceled["done"], canceled["canceled"])
    assert after["done"] + after["canceled"] == 30 and after["done"] < 30
    single = client.post("/v1/jobs", json={"model": example("mini")}).json()  # the workers are free again
    end = time.monotonic() + 60
    while client.get(f"/v1/jobs/{single['id']}").json()["status"] != "succeeded":
        assert time.monotonic() < end
        time.sleep(0.1)
