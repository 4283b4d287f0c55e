"""Job records and their life cycle, without HTTP or a broker: create, claim (lease), heartbeat,
finish, cancel, reconcile. The API, the worker and the tests all go through these functions
(sending the broker's wake-up message is store.queue.dispatch).

A job is claimed with an atomic UPDATE: status queued -> running, or running with an expired
lease -> running under a new token. Only the token's holder can heartbeat or finish it, so a
second delivery of a live job does nothing, and a job whose worker died is taken over.
"""
from __future__ import annotations

import hashlib
import json
import secrets
import time
from datetime import datetime, timedelta

from sqlalchemy import and_, exists, func, insert, or_, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from . import notify
from .config import Settings
from .db import get_autocommit, get_sessionmaker
from .models import Job, Model, SweepVariation, utcnow
from .results import Prepared

FINISHED = ("succeeded", "failed", "canceled")


def new_job_id() -> str:
    """Time-ordered ids (ns clock in hex, then random), so 'newest first' is 'id descending'."""
    return f"{time.time_ns():016x}{secrets.token_hex(8)}"


def content_hash(doc) -> str:
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def model_row(owner: str, doc: dict, validation, digest: str | None = None) -> dict:
    """The columns of the model of this owner and content (`digest`: its content_hash, when the
    caller has it): its id is derived from both."""
    digest = digest or content_hash(doc)
    return dict(id=hashlib.sha256(f"{owner}\0{digest}".encode()).hexdigest()[:32], owner=owner,
                content_hash=digest, document=json.dumps(doc), summary=validation.summary,
                warnings=validation.warnings)


def new_model(owner: str, doc: dict, validation) -> Model:
    """The model row of this owner and content (not added)."""
    return Model(**model_row(owner, doc, validation))


def store_model(session: Session, owner: str, doc: dict, validation) -> Model:
    """The model for this owner and content; the same document twice is one model."""
    fresh = new_model(owner, doc, validation)
    model_id = fresh.id
    model = session.get(Model, model_id)
    if model is None:
        model = fresh
        session.add(model)
        try:
            session.commit()
        except IntegrityError:  # a concurrent request stored the same model first
            session.rollback()
            model = session.get(Model, model_id)
            if model is None:
                raise
    return model


def status_document(job: Job, solution: bool = False) -> dict:
    """`solution`: the job's results hold a solution (its link)."""
    def iso(t: datetime | None) -> str | None:
        return t.isoformat().replace("+00:00", "Z") if t else None
    base = f"/v1/jobs/{job.id}"
    links = {"self": base, "model": f"/v1/models/{job.model_id}", "view": f"/jobs/{job.id}"}
    if job.status in ("succeeded", "failed"):
        links["results"] = f"{base}/results"
    if solution:  # stored: GET /v1/jobs/{id}/solution
        links["solution"] = f"{base}/solution"
    return {"id": job.id, "status": job.status, "progress": job.progress, "modelId": job.model_id,
            "createdAt": iso(job.created_at), "startedAt": iso(job.started_at),
            "finishedAt": iso(job.finished_at), "error": job.error, "links": links}


def noted_document(note: dict) -> dict:
    """The status document a finish's notification carries (store.notify.note_sql, note_text)."""
    columns, solution = notify.read_note(note)
    return status_document(Job(**columns), solution)


_SQLITE_MODEL_INSERT = sqlite.insert(Model.__table__).on_conflict_do_nothing()
_JOB_INSERT = insert(Job.__table__)


def create_job(session: Session, owner: str, model_id: str, overrides: dict | None,
               idempotency_key: str | None = None, request_hash: str | None = None, *,
               model: dict | None = None, durable: bool = True) -> Job:
    """A queued job, committed, with `model` (model_row's columns) stored when it is not yet:
    on PostgreSQL one statement (the model's INSERT ... ON CONFLICT DO NOTHING as a CTE), so in
    an autocommit session one round trip and one commit. Not `durable` (PostgreSQL): the commit
    does not wait for the disk, and the caller sends the job's message and then calls
    `make_durable` before it answers: the flush (~4 ms here) overlaps the message and the
    worker's start instead of preceding them."""
    now = utcnow()
    # dispatched_at is set now, in the same commit, as the caller sends the message next
    values = dict(id=new_job_id(), owner=owner, model_id=model_id, settings_overrides=overrides,
                  status="queued", progress=0.0, attempts=0, created_at=now, dispatched_at=now,
                  idempotency_key=idempotency_key, request_hash=request_hash)
    if session.get_bind().dialect.name == "postgresql":
        stored = postgresql.insert(Model).values(created_at=now, **model).on_conflict_do_nothing() \
            if model is not None else None
        job = insert(Job).values(**values)
        if stored is not None:
            job = job.add_cte(stored.cte("stored_model"))
        if not durable:
            job = _commit_unflushed(job)
        session.execute(job)
    else:  # the same statements every time, the values as parameters: compiled once (~0.3 ms a POST)
        if model is not None:
            session.execute(_SQLITE_MODEL_INSERT, {"created_at": now, **model})
        session.execute(_JOB_INSERT, values)
    session.commit()
    return Job(**values)


def make_durable(settings: Settings, job_id: str) -> None:
    """Returns when the job's row, and every commit before, is on the disk (PostgreSQL): a durable
    commit waits for the WAL's flush up to its own record, past theirs. Its transaction must
    write to the WAL (one that writes nothing commits without a flush): it locks the job's row
    FOR KEY SHARE, which the worker's claim and finish (UPDATEs of other columns) do not wait for,
    as they would for an UPDATE of the row held through the flush."""
    if notify.postgres(settings):
        with get_autocommit(settings.database)() as session:
            session.execute(select(Job.id).where(Job.id == job_id).with_for_update(read=True, key_share=True)).all()


def _commit_unflushed(stmt):
    """PostgreSQL: the statement with a RETURNING column that lets its transaction commit without
    waiting for the WAL's flush (set_config(..., true): this transaction only)."""
    return stmt.returning(func.set_config("synchronous_commit", "off", True))


def _announced(settings: Settings, stmt, durable: bool = True, solution: bool | None = None):
    """The statement, notifying listeners of the job's change at its commit (PostgreSQL: in the
    same round trip, as a RETURNING column). A finish gives `solution` (whether its results hold
    one): its notification is then the note of the job's status columns (store.notify), which
    SQLite's sender builds from the statement's returned row. Not `durable`: its commit does not wait for the WAL
    to reach the disk (~4 ms a commit on the development machine; set_config(..., true) as a
    RETURNING column too, so that an autocommit session's single statement is one round trip):
    for a claim or a heartbeat, whose loss in a crash of the database the lease and the
    reconciler recover from (the job runs again; a finish by the lost claim's token stores
    nothing). A finish, a new job and its model stay durable."""
    if not notify.postgres(settings):
        return stmt if solution is None else stmt.returning(*(Job.__table__.c[c] for c in notify.NOTE_COLUMNS))
    stmt = stmt.returning(notify.pg_notify(Job.id, Job.status) if solution is None else
                          func.pg_notify(notify.CHANNEL, notify.note_sql(Job.__table__, solution)))
    return stmt if durable else _commit_unflushed(stmt)


def _recoverable(session: Session, settings: Settings) -> None:
    """This transaction's commit does not wait for the WAL to reach the disk, as _announced's not
    `durable`, for transactions of several statements: a sweep batch's claim, heartbeat and
    stores but its last (store.sweeps)."""
    if notify.postgres(settings):
        session.execute(text("SET LOCAL synchronous_commit = off"))


def claim(session: Session, settings: Settings, job_id: str) -> tuple[Job, str] | None:
    """Take the job for this worker: (job, token), or None when it is finished, canceled or
    held by a live worker. One statement: UPDATE ... RETURNING (in an autocommit session, as the
    worker's: one round trip), not durable (see _announced). It notifies nobody: a long poll
    waits for the finish, and an event stream hears of the run at its first heartbeat
    (`progress_seconds`); the claim's notification woke the API's listener in the middle of
    every job, ~2 ms of a small job's run on a busy machine (the woken thread took the core)."""
    token = secrets.token_hex(16)
    now = utcnow()
    stmt = (update(Job)
            .where(Job.id == job_id,
                   or_(Job.status == "queued",
                       and_(Job.status == "running", Job.lease_expires_at < now)))
            .values(status="running", lease_token=token,
                    lease_expires_at=now + timedelta(seconds=settings.lease_seconds),
                    attempts=Job.attempts + 1, started_at=now, progress=0.0)
            .returning(Job))
    if notify.postgres(settings):
        stmt = _commit_unflushed(stmt)
    job = session.scalars(stmt, execution_options={"synchronize_session": False}).one_or_none()
    session.commit()
    if job is None:
        return None
    return job, token


def heartbeat(session: Session, settings: Settings, job_id: str, token: str, progress: float) -> bool:
    """Extend the lease and record progress; False when the job is no longer ours (canceled, or
    taken over after our lease expired): the worker then stops."""
    ours = _changed(session, settings, update(Job).where(
        Job.id == job_id, Job.lease_token == token, Job.status == "running").values(
        lease_expires_at=utcnow() + timedelta(seconds=settings.lease_seconds), progress=progress), durable=False)
    session.commit()
    if ours:
        notify.after_commit(settings, job_id, "running")
    return ours


def _changed(session: Session, settings: Settings, stmt, durable: bool = True) -> bool:
    """Run an UPDATE of one job (notifying at commit); whether it matched."""
    if notify.postgres(settings):
        return len(session.execute(_announced(settings, stmt, durable)).all()) == 1
    return session.execute(stmt).rowcount == 1


def finish(settings: Settings, job_id: str, token: str, status: str, *,
           error: dict | None = None, results: Prepared | None = None, sweep_outputs: dict | None = None) -> bool:
    """Final status and results (and a sweep variation's outputs) in one transaction; False
    (nothing stored) when the job is no longer ours. On PostgreSQL, when the results' rows fit
    in one statement (all but big results): that one statement, data-modifying CTEs after the
    job's UPDATE, committed by itself (one round trip and the commit's own flush)."""
    values = dict(status=status, finished_at=utcnow(), error=error, lease_expires_at=None)
    if status == "succeeded":
        values["progress"] = 1.0
    done = update(Job).where(Job.id == job_id, Job.lease_token == token, Job.status == "running").values(**values)
    solution = results is not None and "solution" in results.result.head
    note = None
    if notify.postgres(settings) and (results is None or results.fits_one_statement):
        done = _announced(settings, done.returning(Job.id), solution=solution).cte("done")
        parts = results.insert_after(done) if results is not None else []
        if sweep_outputs is not None:
            parts.append(update(SweepVariation).where(SweepVariation.job_id.in_(select(done.c.id)))
                         .values(outputs=sweep_outputs))
        with get_autocommit(settings.database)() as session:
            ours = session.execute(select(done.c.id).add_cte(
                *(part.cte(f"part{i}") for i, part in enumerate(parts)))).first() is not None
    else:
        with get_sessionmaker(settings.database)() as session:
            rows = session.execute(_announced(settings, done, solution=solution),  # nothing loaded to sync
                                   execution_options={"synchronize_session": False}).all()
            if len(rows) != 1:
                session.rollback()
                return False
            if not notify.postgres(settings):
                note = notify.note_text(rows[0]._mapping, solution)
            if results is not None:
                results.add(session)
            if sweep_outputs is not None:
                session.execute(update(SweepVariation).where(SweepVariation.job_id == job_id)
                                .values(outputs=sweep_outputs))
            session.commit()
            ours = True
    if ours:
        notify.after_commit(settings, job_id, status, note)
    return ours


def cancel(session: Session, settings: Settings, job: Job) -> bool:
    """Cancel a queued or running job; a running worker sees it at its next heartbeat."""
    canceled = _changed(session, settings, update(Job).where(Job.id == job.id, Job.status.in_(("queued", "running")))
                        .values(status="canceled", finished_at=utcnow(), lease_expires_at=None))
    session.commit()
    notify.after_commit(settings, job.id, "canceled")
    session.refresh(job)
    return canceled


def reconcile(session: Session, settings: Settings) -> list[str]:
    """Jobs the broker may have lost: queued and never or long ago sent, or running with an
    expired lease (the worker died). Jobs that used up their attempts fail with `worker_lost`.
    The caller sends them with store.sweeps.dispatch (a sweep's variations go as batches)."""
    now = utcnow()
    expired = and_(Job.status == "running", Job.lease_expires_at < now)
    session.execute(update(Job).where(expired, Job.attempts >= settings.max_attempts).values(
        status="failed", finished_at=now, lease_expires_at=None,
        error={"code": "worker_lost", "message": f"the worker running this job stopped "
               f"{settings.max_attempts} times without finishing it", "detail": []}))
    session.commit()
    stale = now - timedelta(seconds=settings.requeue_after_seconds)
    unsent = now - timedelta(seconds=min(5.0, settings.requeue_after_seconds))
    # a sweep's variations wait unsent (dispatched_at NULL) until their batch's turn (store.sweeps)
    unsent_single = ~exists().where(SweepVariation.job_id == Job.id)
    rows = session.scalars(select(Job.id).where(or_(
        and_(Job.status == "queued", Job.dispatched_at.is_(None), Job.created_at < unsent, unsent_single),
        and_(Job.status == "queued", Job.dispatched_at < stale),
        and_(expired, or_(Job.dispatched_at.is_(None), Job.dispatched_at < now - timedelta(
            seconds=settings.lease_seconds))),
    )).order_by(Job.id).limit(1000)).all()
    if rows:  # the caller sends them now
        session.execute(update(Job).where(Job.id.in_(rows)).values(dispatched_at=now))
        session.commit()
    return list(rows)
