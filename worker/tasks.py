"""Thin Celery tasks: everything but the broker plumbing lives in worker.runner."""
from __future__ import annotations

from sqlalchemy.exc import OperationalError

from store.queue import RUN_JOB
from store.sweeps import RUN_BATCH

from . import runner
from .celery_app import app


@app.task(name=RUN_JOB, bind=True, max_retries=None)
def run_job(self, job_id: str) -> str:
    try:
        return runner.execute(self.app.settings, job_id)
    except OperationalError as exc:  # database unreachable: try again later, with backoff
        raise self.retry(exc=exc, countdown=min(60, 2 ** min(self.request.retries, 6)))


@app.task(name=RUN_BATCH, bind=True, max_retries=None)
def run_sweep_batch(self, sweep_id: str, job_ids: list[str], rest: bool = False) -> list[str]:
    """A batch of a sweep's variations: one message and one task for many small jobs."""
    try:
        return runner.execute_batch(self.app.settings, sweep_id, job_ids, rest)
    except OperationalError as exc:  # the jobs already finished are skipped when it runs again
        raise self.retry(exc=exc, countdown=min(60, 2 ** min(self.request.retries, 6)))
