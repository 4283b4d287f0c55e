"""The Celery app, configured from service.config.Settings (the same object as the API's).

`celery -A worker.celery_app worker` and `mbserve worker` use the module-level `app`.
"""
from __future__ import annotations

from functools import lru_cache

from celery import Celery
from celery.signals import worker_process_init

from service.config import Settings, get_settings

from . import fsbroker  # noqa: F401  registers the 'mbfs' transport alias


@lru_cache
def get_celery(settings: Settings) -> Celery:
    broker = settings.broker_url or "mbfs://"
    app = Celery("mbserve", broker=broker, include=["worker.tasks"], set_as_current=False)
    options: dict = {}
    if settings.broker_url is None:
        folder = str(settings.broker_dir)
        options = {"data_folder_in": folder, "data_folder_out": folder,
                   "polling_interval": settings.broker_poll_seconds}
    elif broker.startswith(("redis", "rediss")):
        # above the time limit, so a running job is not delivered twice (celery#5935); the lease
        # would make such a second delivery do nothing, but it would still hold a worker slot
        options = {"visibility_timeout": settings.job_time_limit + 300}
    app.conf.update(
        # a task is acked after it ran, and re-delivered when its worker process dies
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_ignore_result=True,
        # the cooperative limit (worker.runner) comes first; these catch a stuck solve
        task_soft_time_limit=settings.job_time_limit + 30,
        task_time_limit=settings.job_time_limit + 60,
        worker_concurrency=settings.worker_concurrency,
        broker_transport_options=options,
        broker_connection_retry_on_startup=True,
        # the job is recorded before it is queued: fail fast, the reconciler sends it again
        task_publish_retry_policy={"max_retries": 2, "interval_start": 0.1, "interval_step": 0.2},
        broker_connection_timeout=3,
        worker_send_task_events=False,
        task_default_queue="mbserve",
    )
    app.settings = settings
    return app


@worker_process_init.connect
def _warm_up(**_) -> None:
    """Each worker process loads the core's compiled kernels before its first job (~1 s)."""
    import multibody
    multibody.warm_up()


app = get_celery(get_settings())
