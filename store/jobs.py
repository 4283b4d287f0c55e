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
import re
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from functools import lru_cache
from select import select as wait_io

from sqlalchemy import Float, and_, bindparam, exists, func, insert, or_, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from . import notify
from .config import Settings
from .db import get_autocommit_engine, get_engine
from .models import Job, Model, SweepVariation, utcnow
from .results import Prepared, insert_after

FINISHED = ("succeeded", "failed", "canceled")


_JOB_ID = re.compile(r"[0-9a-f]{32}")


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


_JOBS = Job.__table__
_SQLITE_MODEL_INSERT = sqlite.insert(Model.__table__).on_conflict_do_nothing()
_JOB_INSERT = insert(_JOBS)
# the columns create_job gives a new job
_NEW_JOB_COLUMNS = ("id", "owner", "model_id", "settings_overrides", "status", "progress", "attempts", "created_at",
                    "dispatched_at", "idempotency_key", "request_hash")


def create_job(session: Session | Connection, owner: str, model_id: str, overrides: dict | None,
               idempotency_key: str | None = None, request_hash: str | None = None, *,
               model: dict | None = None, durable: bool = True) -> Job:
    """A queued job, committed, with `model` (model_row's columns) stored when it is not yet:
    on PostgreSQL one statement (the model's INSERT ... ON CONFLICT DO NOTHING as a CTE), so in
    an autocommit session one round trip and one commit. Not `durable` (PostgreSQL): the commit
    does not wait for the disk, and the caller sends the job's message inside `made_durable`
    before it answers: the flush (~4 ms here) overlaps the message and the worker's start
    instead of preceding them."""
    now = utcnow()
    # dispatched_at is set now, in the same commit, as the caller sends the message next
    values = dict(id=new_job_id(), owner=owner, model_id=model_id, settings_overrides=overrides,
                  status="queued", progress=0.0, attempts=0, created_at=now, dispatched_at=now,
                  idempotency_key=idempotency_key, request_hash=request_hash)
    dialect = session.dialect if isinstance(session, Connection) else session.get_bind().dialect
    if dialect.name == "postgresql":
        params = {f"j_{k}": v for k, v in values.items()}
        if model is not None:
            params |= {f"m_{k}": v for k, v in model.items()} | {"m_created_at": now}
        session.execute(_pg_create_statement(model is not None, durable), params)
    else:  # the same statements every time, the values as parameters: compiled once (~0.3 ms a POST)
        if model is not None:
            session.execute(_SQLITE_MODEL_INSERT, {"created_at": now, **model})
        session.execute(_JOB_INSERT, values)
    session.commit()
    return Job(**values)


@lru_cache
def _pg_create_statement(with_model: bool, durable: bool):
    """PostgreSQL: the job's INSERT, with the model's INSERT ... ON CONFLICT DO NOTHING as a CTE
    (`with_model`), built once: the values are bound parameters (j_<column>, m_<column>).
    Built per POST with the values in it, its cache key walked the whole model document."""
    job = _JOB_INSERT.values({k: bindparam(f"j_{k}", type_=_JOBS.c[k].type) for k in _NEW_JOB_COLUMNS})
    if with_model:
        models = Model.__table__
        job = job.add_cte(postgresql.insert(models).values(
            {c.key: bindparam(f"m_{c.key}", type_=c.type) for c in models.c}).on_conflict_do_nothing().cte("stored_model"))
    return job if durable else _commit_unflushed(job)


# the durable write's statement, sent on the driver's connection (psycopg's libpq wrapper: a
# query sent now, its answer read later) in the simple query protocol, which commits it by itself
_DURABLE_SQL = f"SELECT id FROM {_JOBS.name} WHERE id = '{{}}' FOR KEY SHARE"


@contextmanager
def made_durable(settings: Settings, job_id: str) -> Iterator[None]:
    """Returns from its block when the job's row, and every commit before, is on the disk
    (PostgreSQL): a durable commit waits for the WAL's flush up to its own record, past theirs.
    Its statement is sent as the block starts and its answer awaited as it ends, so the flush
    (0.3-6 ms on the development machine) overlaps the block (the job's message). Its
    transaction must write to the WAL (one that writes nothing commits without a flush): it
    locks the job's row FOR KEY SHARE, which the worker's claim and finish (UPDATEs of other
    columns) do not wait for, as they would for an UPDATE of the row held through the flush."""
    if not notify.postgres(settings):
        yield
        return
    from psycopg import OperationalError, pq
    assert _JOB_ID.fullmatch(job_id)  # in the statement's text: an id of new_job_id's form only
    with get_autocommit_engine(settings.database).connect() as conn:
        pg = conn.connection.driver_connection.pgconn
        pg.send_query(_DURABLE_SQL.format(job_id).encode())
        while pg.flush():  # a non-blocking connection: the rest once the socket takes it
            wait_io([], [pg.socket], [])
        try:
            yield
        finally:  # its answer read even when the block raised: the connection goes back to the pool idle
            pg.consume_input()
            while pg.is_busy():
                wait_io([pg.socket], [], [])
                pg.consume_input()
            failed = None
            while (result := pg.get_result()) is not None:
                if result.status not in (pq.ExecStatus.TUPLES_OK, pq.ExecStatus.COMMAND_OK):
                    failed = result.error_message.decode(errors="replace")
        if failed is not None:
            raise OperationalError(f"the job's durable write failed: {failed}")


def _commit_unflushed(stmt):
    """PostgreSQL: the statement with a RETURNING column that lets its transaction commit without
    waiting for the WAL's flush (set_config(..., true): this transaction only)."""
    return stmt.returning(func.set_config("synchronous_commit", "off", True))


def _announced(settings: Settings, stmt, durable: bool = True):
    """The statement, notifying listeners of the job's change at its commit (PostgreSQL: in the
    same round trip, as a RETURNING column). Not `durable`: its commit does not wait for the WAL
    to reach the disk (~4 ms a commit on the development machine; set_config(..., true) as a
    RETURNING column too, so that an autocommit session's single statement is one round trip):
    for the worker's claim, heartbeat and finish, whose loss in a crash of the database the lease
    and the reconciler recover from (the job runs again; a finish by a lost claim's token stores
    nothing). What a user asked for stays durable: a new job and its model, a cancel."""
    if not notify.postgres(settings):
        return stmt
    stmt = stmt.returning(notify.pg_notify(Job.id, Job.status))
    return stmt if durable else _commit_unflushed(stmt)


def _recoverable(session: Session | Connection, settings: Settings) -> None:
    """This transaction's commit does not wait for the WAL to reach the disk, as _announced's not
    `durable`, for transactions of several statements: a big result's finish, a sweep batch's
    claim, heartbeat and stores but its last (store.sweeps)."""
    if notify.postgres(settings):
        session.execute(text("SET LOCAL synchronous_commit = off"))


@lru_cache
def _claim_statement(postgres: bool):
    """The claim's UPDATE ... RETURNING, built once: a statement built per job cost its
    construction and cache key (SQLAlchemy) again, and the ORM's returning(Job) its bulk-update
    machinery, together ~1 ms of CPU a job on the development machine."""
    now = bindparam("c_now", type_=_JOBS.c.started_at.type)
    stmt = (update(_JOBS)
            .where(_JOBS.c.id == bindparam("c_id"),
                   or_(_JOBS.c.status == "queued", and_(_JOBS.c.status == "running", _JOBS.c.lease_expires_at < now)))
            .values(status="running", lease_token=bindparam("c_token"),
                    lease_expires_at=bindparam("c_lease", type_=_JOBS.c.lease_expires_at.type),
                    attempts=_JOBS.c.attempts + 1, started_at=now, progress=0.0)
            .returning(*_JOBS.c))
    return _commit_unflushed(stmt) if postgres else stmt


def claim(session: Session | Connection, settings: Settings, job_id: str) -> tuple[Job, str] | None:
    """Take the job for this worker: (job, token), or None when it is finished, canceled or
    held by a live worker. One statement: UPDATE ... RETURNING (on an autocommit connection, as
    the worker's: one round trip), not durable (see _announced). It notifies nobody: a long poll
    waits for the finish, and an event stream hears of the run at its first heartbeat
    (`progress_seconds`); the claim's notification woke the API's listener in the middle of
    every job, ~2 ms of a small job's run on a busy machine (the woken thread took the core)."""
    token = secrets.token_hex(16)
    now = utcnow()
    row = session.execute(_claim_statement(notify.postgres(settings)), {
        "c_id": job_id, "c_now": now, "c_token": token,
        "c_lease": now + timedelta(seconds=settings.lease_seconds)}).one_or_none()
    session.commit()
    if row is None:
        return None
    return Job(**{c.key: row._mapping[c] for c in _JOBS.c}), token


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
    job's UPDATE, committed by itself (one round trip). Its commit does not wait for the WAL's
    flush (see _announced): PostgreSQL shows a commit and sends its NOTIFY only after the flush,
    0.3-4 ms on the development machine, on the path of every job's long poll. A
    crash of the database within the WAL writer's delay (wal_writer_delay, 200 ms by default)
    may undo a finish a client already saw; the job, still running under its lease or queued
    (its claim lost too), then runs again and is finished again: a job is never lost, and its
    results come from the same document (a big result's file is fsynced before the commit
    that points to it: prepare)."""
    solution = results is not None and "solution" in results.result.head
    params = {"f_id": job_id, "f_token": token, "f_status": status, "f_finished": utcnow(), "f_error": error,
              "f_progress": 1.0 if status == "succeeded" else None}
    note = None
    postgres = notify.postgres(settings)
    if postgres and (results is None or results.fits_one_statement):
        stmt = _finish_statement(results is not None and results.result.storage == "db", results is not None,
                                 sweep_outputs is not None, solution)
        with get_autocommit_engine(settings.database).connect() as conn:
            ours = conn.execute(stmt, {**params, "o_outputs": sweep_outputs,
                                       **(results.after_params() if results is not None else {})}).first() is not None
    else:  # one transaction on a Core connection (closed uncommitted: rolled back)
        with get_engine(settings.database).connect() as conn:
            _recoverable(conn, settings)
            rows = conn.execute(_finish_update(postgres, solution), params).all()
            if len(rows) != 1:
                return False
            if not postgres:
                note = notify.note_text(rows[0]._mapping, solution)
            if results is not None:
                results.add(conn)
            if sweep_outputs is not None:
                conn.execute(update(SweepVariation).where(SweepVariation.job_id == job_id)
                             .values(outputs=sweep_outputs))
            conn.commit()
            ours = True
    if ours:
        notify.after_commit(settings, job_id, status, note)
    return ours


@lru_cache
def _finish_update(postgres: bool, solution: bool):
    """A finish's UPDATE of the job, built once (its values bound parameters f_*): it returns
    the job's note (store.notify: PostgreSQL sends it at the commit, as a RETURNING column;
    SQLite's sender builds it from the returned columns), `solution` saying whether its results
    hold one. Built per job, with the values in it, its construction, cache key and compilation
    were, with the results' INSERTs, ~1/3 of a small job's CPU in the worker's pool process."""
    stmt = (update(_JOBS)
            .where(_JOBS.c.id == bindparam("f_id"), _JOBS.c.lease_token == bindparam("f_token"),
                   _JOBS.c.status == "running")
            .values(status=bindparam("f_status"), finished_at=bindparam("f_finished", type_=_JOBS.c.finished_at.type),
                    error=bindparam("f_error", type_=_JOBS.c.error.type), lease_expires_at=None,
                    progress=func.coalesce(bindparam("f_progress", type_=Float), _JOBS.c.progress)))
    if postgres:
        return stmt.returning(_JOBS.c.id, func.pg_notify(notify.CHANNEL, notify.note_sql(_JOBS, solution)))
    return stmt.returning(*(_JOBS.c[c] for c in notify.NOTE_COLUMNS))


@lru_cache
def _finish_statement(chunks: bool, results: bool, outputs: bool, solution: bool):
    """PostgreSQL: a finish as one statement, built once per shape: the job's UPDATE
    (_finish_update), then as data-modifying CTEs the results row, its chunks (`chunks`) and a
    sweep variation's outputs, all values bound parameters."""
    done = _commit_unflushed(_finish_update(True, solution)).cte("done")
    parts = insert_after(done, chunks) if results else []
    if outputs:
        variations = SweepVariation.__table__
        parts.append(update(variations).where(variations.c.job_id.in_(select(done.c.id)))
                     .values(outputs=bindparam("o_outputs", type_=variations.c.outputs.type)))
    return select(done.c.id).add_cte(*(part.cte(f"part{i}") for i, part in enumerate(parts)))


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
