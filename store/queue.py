"""The queue interface: the Celery app on the configured broker, and `dispatch` (send a job's
wake-up message). The worker (`worker.celery_app`) adds its execution options to the same app."""
from __future__ import annotations

import logging
from functools import lru_cache

from celery import Celery
from sqlalchemy import Connection, update
from sqlalchemy.orm import Session

from . import fsbroker  # noqa: F401  registers the 'mbfs' transport alias
from .config import Settings
from .models import Job
from .notify import socket_address

log = logging.getLogger(__name__)

RUN_JOB = "mbserve.run_job"
JOB_QUEUE = "mbserve"
SWEEP_QUEUE = "mbserve.sweeps"  # batches of sweep variations (store.sweeps), apart from single jobs
# a worker process that is free takes a single job whenever one is queued, a sweep's batch only
# when none is ("priority": the queues in this order, not in turn), so a single job waits for a
# running batch to stop (at its next variation: worker.runner), never for the batches queued before it
WORKER_QUEUES = f"{JOB_QUEUE},{SWEEP_QUEUE}"
QUEUE_ORDER = "priority"


@lru_cache
def get_celery(settings: Settings) -> Celery:
    broker = settings.broker_url or "mbfs://"
    app = Celery("mbserve", broker=broker, set_as_current=False)
    options: dict = {"queue_order_strategy": QUEUE_ORDER}
    if settings.broker_url is None:
        folder = str(settings.broker_dir)
        options |= {"data_folder_in": folder, "data_folder_out": folder,
                   "polling_interval": settings.broker_poll_seconds,
                   "wake_address": socket_address(settings, "broker")}
    elif broker.startswith(("redis", "rediss")):
        # above the time limit, so a running job is not delivered twice (celery#5935); the lease
        # would make such a second delivery do nothing, but it would still hold a worker slot
        options["visibility_timeout"] = settings.job_time_limit + 300
    app.conf.update(
        task_ignore_result=True,
        broker_transport_options=options,
        broker_connection_retry_on_startup=True,
        # the job is recorded before it is queued: fail fast, the reconciler sends it again
        task_publish_retry_policy={"max_retries": 2, "interval_start": 0.1, "interval_step": 0.2},
        broker_connection_timeout=3,
        task_default_queue=JOB_QUEUE,
    )
    app.settings = settings
    return app


def dispatch(settings: Settings, session: Session | Connection, job_ids: list[str]) -> None:
    """Send the wake-up messages. A failure is logged, not raised: the job is recorded, and the
    reconciler sends it again (soon, as dispatched_at is cleared)."""
    app = get_celery(settings)
    for i, job_id in enumerate(job_ids):
        try:
            app.send_task(RUN_JOB, args=[job_id])
        except Exception as exc:
            log.warning("could not queue job(s) %s (the reconciler will retry): %s", job_ids[i:], exc)
            session.execute(update(Job).where(Job.id.in_(job_ids[i:])).values(dispatched_at=None))
            session.commit()
            return


def waiting(settings: Settings, name: str) -> int:
    """The messages in a queue not yet taken by a worker (one round trip on Redis: LLEN of its
    priority lists; a directory listing on the filesystem broker)."""
    with get_celery(settings).pool.acquire(block=True) as conn:
        return conn.default_channel.queue_declare(queue=name).message_count


def check_broker(settings: Settings) -> None:
    """Raises when the broker cannot be reached (the API's readiness check)."""
    with get_celery(settings).connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=2)
