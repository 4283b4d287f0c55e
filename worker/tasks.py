"""Thin Celery tasks: everything but the broker plumbing lives in worker.runner."""
from __future__ import annotations

from sqlalchemy.exc import OperationalError

from store.queue import RUN_JOB, SWEEP_QUEUE
from store.sweeps import RUN_BATCH, RUN_TURN

from . import runner
from .celery_app import app


@app.task(name=RUN_JOB, bind=True, max_retries=None)
def run_job(self, job_id: str) -> str:
    try:
        return runner.execute(self.app.settings, job_id)
    except OperationalError as exc:  # database unreachable: try again later, with backoff
        raise self.retry(exc=exc, countdown=min(60, 2 ** min(self.request.retries, 6)))


@app.task(name=RUN_BATCH, bind=True, max_retries=None)
def run_sweep_batch(self, sweep_id: str, job_ids: list[str]) -> list[str]:
    """Named variations of a sweep (the rest of a batch, or jobs the broker lost)."""
    try:
        return runner.execute_named(self.app.settings, sweep_id, job_ids)
    except OperationalError as exc:  # the jobs already finished are skipped when it runs again
        raise self.retry(exc=exc, countdown=min(60, 2 ** min(self.request.retries, 6)))


@app.task(name=RUN_TURN, bind=True, max_retries=None)
def run_sweep_turn(self) -> list[str]:
    """A sweep's turn: one message and one task for the next batch of many small jobs."""
    try:
        taken = runner.take_turn(self.app.settings)
    except OperationalError as exc:  # nothing taken
        raise self.retry(exc=exc, countdown=min(60, 2 ** min(self.request.retries, 6)))
    if taken is None:
        return []
    try:
        return runner.execute_batch(self.app.settings, *taken)
    except OperationalError:  # the batch goes on as a message of its own, which retries with backoff
        run_sweep_batch.apply_async(args=list(taken), queue=SWEEP_QUEUE, countdown=1)
        return ["deferred"] * len(taken[1])
