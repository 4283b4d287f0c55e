"""The task's logic without a broker: claims, leases, cancel, time limit, reconciler."""
import json
import threading
import time
from datetime import timedelta

from sqlalchemy import select, update

from store import jobs, queue
from store.models import Job, Result, utcnow
from store.db import get_sessionmaker
from tests.support import long_running
from tests.worker.conftest import job_row
from worker.runner import execute


def wait_for(predicate, timeout=30.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    raise AssertionError("condition not reached in time")


def test_job_runs_once_and_a_second_delivery_does_nothing(settings, make_job):
    job_id = make_job()
    assert execute(settings, job_id) == "succeeded"
    assert execute(settings, job_id) == "skipped"
    with get_sessionmaker(settings.database)() as session:
        assert session.scalar(select(Job.attempts).where(Job.id == job_id)) == 1
        assert session.get(Result, job_id) is not None
        assert session.get(Result, job_id).storage == "db"  # small results: in the finish transaction, no file
    assert not (settings.results / job_id).exists()


def test_delivery_of_a_job_held_by_a_live_worker_is_skipped(settings, make_job):
    job_id = make_job()
    with get_sessionmaker(settings.database)() as session:
        assert jobs.claim(session, settings.model_copy(update={"lease_seconds": 60}), job_id) is not None
    assert execute(settings, job_id) == "skipped"
    assert job_row(settings, job_id).status == "running"


def test_job_of_a_dead_worker_is_taken_over_after_its_lease_expires(settings, make_job):
    job_id = make_job()
    with get_sessionmaker(settings.database)() as session:
        jobs.claim(session, settings.model_copy(update={"lease_seconds": 60}), job_id)
        session.execute(update(Job).where(Job.id == job_id).values(lease_expires_at=utcnow() - timedelta(seconds=1)))
        session.commit()
    assert execute(settings, job_id) == "succeeded"
    assert job_row(settings, job_id).attempts == 2


def test_cancel_stops_a_running_job_cooperatively(settings, make_job):
    job_id = make_job(overrides=long_running())
    outcome = []
    worker = threading.Thread(target=lambda: outcome.append(execute(settings, job_id)))
    worker.start()
    wait_for(lambda: job_row(settings, job_id).progress > 0)
    with get_sessionmaker(settings.database)() as session:
        assert jobs.cancel(session, settings, session.get(Job, job_id))
    worker.join(30)
    assert outcome == ["abandoned"]
    row = job_row(settings, job_id)
    assert row.status == "canceled" and row.finished_at is not None
    with get_sessionmaker(settings.database)() as session:
        assert session.get(Result, job_id) is None


def test_wall_time_limit_fails_the_job_with_code_time_limit(settings, make_job):
    job_id = make_job(overrides=long_running())
    assert execute(settings.model_copy(update={"job_time_limit": 0.5}), job_id) == "failed"
    assert job_row(settings, job_id).error["code"] == "time_limit"


def test_results_over_the_size_limit_fail_the_job_and_store_nothing(settings, make_job):
    job_id = make_job()
    assert execute(settings.model_copy(update={"max_result_bytes": 1000}), job_id) == "failed"
    error = job_row(settings, job_id).error
    assert error["code"] == "result_too_large" and "MBSERVE_MAX_RESULT_BYTES" in error["message"]
    with get_sessionmaker(settings.database)() as session:
        assert session.get(Result, job_id) is None


def test_progress_is_reported_while_running(settings, make_job):
    job_id = make_job(overrides=long_running())
    seen = []
    worker = threading.Thread(target=execute, args=(settings, job_id))
    worker.start()
    wait_for(lambda: seen.append(job_row(settings, job_id).progress) or len(set(seen)) >= 3)
    with get_sessionmaker(settings.database)() as session:
        jobs.cancel(session, settings, session.get(Job, job_id))
    worker.join(30)
    assert 0 < max(seen) < 1


def test_reconciler_requeues_lost_jobs_and_fails_exhausted_ones(settings, make_job):
    never_sent, expired, exhausted, fresh = (make_job() for _ in range(4))
    past = utcnow() - timedelta(seconds=600)
    with get_sessionmaker(settings.database)() as session:
        session.execute(update(Job).where(Job.id != fresh).values(created_at=past))
        session.execute(update(Job).where(Job.id == never_sent).values(dispatched_at=None))
        session.execute(update(Job).where(Job.id == expired).values(
            status="running", attempts=1, lease_expires_at=past, dispatched_at=past))
        session.execute(update(Job).where(Job.id == exhausted).values(
            status="running", attempts=settings.max_attempts, lease_expires_at=past))
        session.execute(update(Job).where(Job.id == fresh).values(dispatched_at=utcnow()))
        session.commit()
        assert sorted(jobs.reconcile(session, settings)) == sorted([never_sent, expired])
    row = job_row(settings, exhausted)
    assert row.status == "failed" and row.error["code"] == "worker_lost"


def test_a_job_the_broker_did_not_take_is_left_for_the_reconciler(settings, make_job):
    job_id = make_job()
    down = settings.model_copy(update={"broker_url": "redis://127.0.0.1:1/0"})
    with get_sessionmaker(settings.database)() as session:
        queue.dispatch(down, session, [job_id])  # logs, does not raise
    row = job_row(settings, job_id)
    assert row.status == "queued" and row.dispatched_at is None


def test_an_exception_in_the_core_fails_the_job_and_the_next_job_runs(settings, make_job, monkeypatch):
    """A crash inside the solve (not a numerical failure the core reports itself) fails that job
    with code internal_error and its reason; the same process then runs the next job."""
    from worker import runner
    real = runner.run

    def crash(loaded, **kwargs):
        raise FloatingPointError("overflow encountered in the solver")
    crashing, following = make_job(), make_job()
    monkeypatch.setattr(runner, "run", crash)
    assert execute(settings, crashing) == "failed"
    row = job_row(settings, crashing)
    assert row.status == "failed" and row.error["code"] == "internal_error"
    assert row.error["message"] == "FloatingPointError: overflow encountered in the solver"
    with get_sessionmaker(settings.database)() as session:
        assert session.get(Result, crashing) is None
    monkeypatch.setattr(runner, "run", real)
    assert execute(settings, following) == "succeeded"


def test_jobs_of_the_same_content_reuse_the_loaded_model_and_give_the_same_results(settings, make_job):
    """The second job of a content skips loading and compiling (worker.runner.LOADED), and its
    results equal the first's."""
    from store.formats import document_json
    from store.results import open_source
    from worker.runner import LOADED
    first, second = make_job(overrides={"timeIntegration": {"numberOfSteps": 40}}), \
        make_job(overrides={"timeIntegration": {"numberOfSteps": 40}})
    assert execute(settings, first) == "succeeded"
    cached = list(LOADED.items.values())[-1]
    assert execute(settings, second) == "succeeded"
    assert list(LOADED.items.values())[-1] is cached
    with get_sessionmaker(settings.database)() as session:
        a, b = session.get(Result, first), session.get(Result, second)
        assert a.sensors == b.sensors
    texts = []
    for r in (a, b):
        source = open_source(settings, get_sessionmaker(settings.database), r)
        doc = json.loads(b"".join(document_json(source, r.head, r.sensors)))
        doc["solver"].pop("solveSeconds")
        texts.append(doc)
    assert texts[0] == texts[1]
