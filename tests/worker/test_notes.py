"""A finish's notification carries the job's status document (store.notify's note), so a long poll
answers without reading the job again: on SQLite and on PostgreSQL it equals what a read gives,
and a note over PostgreSQL's payload limit goes as the plain '<id> <status>' (then read)."""
import queue
import time

import pytest

import multibody
from store import jobs, notify
from store.config import Settings
from store.db import get_autocommit, get_sessionmaker, migrate
from tests.conftest import example


@pytest.fixture(params=["sqlite", "postgresql"])
def note_settings(request, settings, tmp_path):
    if request.param == "sqlite":
        return settings
    s = Settings(database_url=request.getfixturevalue("postgres_url"), data_dir=tmp_path / "pg")
    s.ensure_dirs()
    migrate(s.database)
    return s


def test_a_finish_notification_carries_the_status_document_a_read_gives(note_settings):
    s = note_settings
    notes = queue.Queue()
    listener = notify.Listener(s, lambda job_id, status, note: notes.put((job_id, status, note)))
    listener.start()
    time.sleep(1.0)  # listening before the first change
    doc = example("mini")
    try:
        long_error = {"code": "model_invalid", "message": "x" * notify.NOTE_LIMIT, "detail": []}
        for status, error, noted in (("succeeded", None, True), ("failed", {"code": "c", "message": "m", "detail": [
                {"path": "$.a", "message": "ü"}]}, True), ("failed", long_error, False)):
            with get_sessionmaker(s.database)() as session:
                model = jobs.store_model(session, "anonymous", doc, multibody.validate_document(doc))
                job = jobs.create_job(session, "anonymous", model.id, None)
            with get_autocommit(s.database)() as session:
                _, token = jobs.claim(session, s, job.id)
            assert jobs.finish(s, job.id, token, status, error=error)
            while (got := notes.get(timeout=10))[1] != status:
                pass
            with get_autocommit(s.database)() as session:
                read = jobs.status_document(session.get(jobs.Job, job.id))
            assert got[0] == job.id
            if noted:
                assert jobs.noted_document(got[2]) == read
            else:
                assert got[2] is None
    finally:
        listener.stop()
