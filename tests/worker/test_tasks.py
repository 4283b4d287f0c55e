"""The Celery task wrapper: database unreachable -> retry with backoff, never a lost job."""
from celery.exceptions import Retry

from worker.tasks import run_job


def test_database_unreachable_the_task_retries_with_backoff(settings, monkeypatch):
    down = settings.model_copy(update={"database_url": "postgresql+psycopg://postgres@127.0.0.1:1/none"})
    monkeypatch.setattr(run_job.app, "settings", down)
    countdowns = []

    def retry(exc, countdown):  # record instead of re-running (eager mode would recurse)
        countdowns.append(countdown)
        return Retry(exc=exc, when=countdown)
    monkeypatch.setattr(run_job, "retry", retry)
    assert run_job.apply(args=["some-job"]).state == "RETRY"
    assert countdowns == [1]  # 2 ** retries, capped at 60 s


def test_task_runs_the_job(settings, make_job, monkeypatch):
    monkeypatch.setattr(run_job.app, "settings", settings)
    job_id = make_job()
    assert run_job.apply(args=[job_id]).get() == "succeeded"
    assert run_job.apply(args=[job_id]).get() == "skipped"
