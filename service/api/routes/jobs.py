import asyncio
import contextlib
import hashlib
import json
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Annotated, Literal

import multibody
import orjson
from fastapi import APIRouter, Header, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse
from sqlalchemy import JSON, Connection, Text, bindparam, cast, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from store import jobs, queue
from store.models import Job, Result
from ...errors import ApiError, checked_id, not_found
from store.db import get_autocommit, get_autocommit_engine, get_engine
from store.jobs import FINISHED, noted_document, status_document
from store.notify import RECHECK_SECONDS, postgres
from ...downloads import raw_bytes, response as download
from ...limits import check_json, check_model
from store.formats import HEAD_KEYS, META_KEYS, document_json, sensor_csv, sensor_json
from store.results import open_source, with_small_chunks
from ...schemas import ERRORS, KEY_PATTERN, Cursor, JobCreate, JobList, JobStatus
from ...warmup import with_detail
from ..deps import ClientGone, OwnerDep, RateLimited, SessionDep, SettingsDep
from .models import owned_model, validated

router = APIRouter(prefix="/v1/jobs", tags=["jobs"], responses=ERRORS)

KEEPALIVE_SECONDS = 15.0
LONG_POLL_MAX_SECONDS = 60
EVENTS_DOC = ("server-sent events: `event: progress` with the status document whenever status or progress "
              "change, then `event: end` with the final status document, and the stream ends; a "
              "`: keep-alive` comment every 15 s")

Status = Literal["queued", "running", "succeeded", "failed", "canceled"]


def owned_job(session, owner: str, job_id: str) -> Job:
    job = session.scalar(select(Job).where(Job.id == checked_id("job", job_id), Job.owner == owner))
    if job is None:
        raise not_found("job", job_id)
    return job


def status_response(doc: dict, status_code: int = 200, headers: dict | None = None) -> Response:
    """A status document answered as its response model (JobStatus) writes it: its fields in
    order, `error` as JobError, `progress` a float (a finish's note from PostgreSQL's JSON may
    carry 1 for 1.0), encoded once by orjson. Through the model, the validation and
    serialization of the returned dict were ~0.2 ms of the API's CPU per POST and long poll."""
    error = doc["error"]
    body = {**doc, "progress": float(doc["progress"]), "statusDetail": doc.get("statusDetail"),
            "error": None if error is None else {"code": error["code"], "message": error["message"],
                                                 "detail": error.get("detail")}}
    return Response(orjson.dumps(body), status_code, headers, media_type="application/json")


def _accepted(job: Job) -> Response:
    return status_response(status_document(job), 202, {"Location": f"/v1/jobs/{job.id}"})


@router.post("", status_code=202, response_model=JobStatus, dependencies=[RateLimited])
def create_job(body: JobCreate, request: Request, settings: SettingsDep, owner: OwnerDep,
               gone: ClientGone, idempotency_key: Annotated[str | None, Header(pattern=KEY_PATTERN)] = None):
    # a connection of its own, not SessionDep: a plain `def` dependency's setup and teardown
    # would be two more thread hops of the job's round trip. The job's statements run on the Core
    # connection, without an ORM session's execution (~0.15 ms of CPU idle, ~0.5 loaded, on
    # PostgreSQL; ~0.07 idle on SQLite), the session on it only for the lookups of retried
    # requests and stored models. PostgreSQL: autocommit, the job's one statement its own
    # transaction (no BEGIN and COMMIT round trips); SQLite: one transaction of the model's and
    # the job's INSERTs (in autocommit each took a commit of its own, and the embedded POST ~2x
    # the time)
    engine = get_autocommit_engine if postgres(settings) else get_engine
    with engine(settings.database).connect() as conn, Session(conn) as session:
        return _create_job(session, conn, body, settings, owner, gone, idempotency_key, request.app.state.waiters)


def _create_job(session: Session, conn: Connection, body: JobCreate, settings, owner: str, gone,
                idempotency_key: str | None, waiters):
    """`conn` runs the job's statements, `session` (on it) reads."""
    check_json(body.model, settings, "model")
    check_json(body.simulationSettings, settings, "simulationSettings")
    # only a retried request is compared with its first (a mini model's dump and hash: ~0.3 ms)
    request_hash = hashlib.sha256(body.model_dump_json().encode()).hexdigest() if idempotency_key is not None else None
    if idempotency_key is not None:
        earlier = session.scalar(select(Job).where(Job.owner == owner, Job.idempotency_key == idempotency_key))
        if earlier is not None:
            return _same_request(earlier, request_hash)
    if (body.model is None) == (body.modelId is None):
        raise ApiError(422, "invalid_request", "give exactly one of modelId and model",
                       [{"path": "$", "message": "exactly one of modelId, model is required"}])
    if body.model is not None:
        check_model(body.model, settings, prefix="model", run=not body.simulationSettings)  # else: below
        # stored with the job, in its statement; the content hash computed once for both
        digest = jobs.content_hash(body.model)
        model = jobs.model_row(owner, body.model, validated(body.model, settings, "model", gone, digest=digest),
                               digest)
        model_id = model["id"]
    else:
        stored = owned_model(session, owner, body.modelId)
        model, model_id = None, stored.id
    overrides = body.simulationSettings
    if body.store is not None and body.store.solution is not None:
        overrides = multibody.merge_settings({"simulationSettings": overrides or {}}, {
            "solution": {"file": {"write": body.store.solution}}})["simulationSettings"]
    if overrides or body.model is None:  # the limits hold for what this job will run
        doc = multibody.merge_settings(body.model if body.model is not None else json.loads(stored.document),
                                       overrides)
        check_model(doc, settings)
        if overrides:
            validated(doc, settings, "", gone)
    try:
        job = jobs.create_job(conn, owner, model_id, overrides, idempotency_key, request_hash, model=model,
                              durable=False)
    except IntegrityError:  # the same Idempotency-Key raced us
        conn.rollback()
        session.rollback()
        earlier = session.scalar(select(Job).where(Job.owner == owner, Job.idempotency_key == idempotency_key))
        return _same_request(earlier, request_hash)
    waiters.add_created(job.id, owner)  # before its message: its finish note is kept for the long poll
    with jobs.made_durable(settings, job.id):  # before the client hears of the job; meanwhile a worker may start it
        queue.dispatch(settings, conn, [job.id])
    return _accepted(job)


def _same_request(job: Job, request_hash: str) -> Response:
    if job.request_hash != request_hash:
        raise ApiError(409, "idempotency_conflict", "this Idempotency-Key was used with a different request")
    return _accepted(job)


@router.get("", response_model=JobList)
def list_jobs(request: Request, session: SessionDep, settings: SettingsDep, owner: OwnerDep, status: Status | None = None,
              limit: Annotated[int, Query(ge=1, le=1000)] = 50, cursor: Cursor = None):
    query = select(Job).where(Job.owner == owner)
    if status:
        query = query.where(Job.status == status)
    if cursor:
        query = query.where(Job.id < cursor)
    limit = min(limit, settings.max_list_limit)
    rows = session.scalars(query.order_by(Job.id.desc()).limit(limit + 1)).all()
    return {"items": [with_detail(request.app, status_document(j)) for j in rows[:limit]],
            "nextCursor": rows[limit - 1].id if len(rows) > limit else None}


def _job_and_result(result):
    """The query of a job of an owner (bound parameters `job_id`, `owner`) and `result` (its
    Result or one of its columns, None before it has one)."""
    return select(Job, result).outerjoin(Result, Result.job_id == Job.id).where(
        Job.id == bindparam("job_id"), Job.owner == bindparam("owner"))


# built once: built per request, their construction and cache key were ~0.5 ms of a GET's CPU
_STATUS_QUERY = _job_and_result(Result.head)


def _labeled(entity, prefix: str) -> list:
    """A table's columns for a Core read, labeled `<prefix>_<column>`; JSON ones as their text,
    parsed once by _entity: in a join with a result's chunks the columns come once per chunk."""
    return [(cast(c, Text) if isinstance(c.type, JSON) else c).label(f"{prefix}_{c.key}")
            for c in entity.__table__.c]


def _entity(entity, row, prefix: str):
    """The ORM object (not in a session) of a row's `prefix` columns (_labeled)."""
    return entity(**{c.key: json.loads(value) if isinstance(c.type, JSON) and value is not None else value
                     for c in entity.__table__.c for value in (row[f"{prefix}_{c.key}"],)})


# a download's read on a Core connection: through an ORM session, its execution, the entities'
# loading and the JSON columns parsed once per chunk were ~0.7 ms of CPU idle, ~2 ms loaded,
# on the path of every small job's results
_RESULT_QUERY = with_small_chunks(select(*_labeled(Job, "j"), *_labeled(Result, "r")).outerjoin(
    Result, Result.job_id == Job.id).where(Job.id == bindparam("job_id"), Job.owner == bindparam("owner")))


def _status_now(settings, owner: str, job_id: str) -> dict:
    """The long poll's read: the job and its result's head, one query outside a transaction."""
    params = {"job_id": checked_id("job", job_id), "owner": owner}
    with get_autocommit(settings.database)() as session:
        row = session.execute(_STATUS_QUERY, params).one_or_none()
    if row is None:
        raise not_found("job", job_id)
    job, head = row
    return status_document(job, head is not None and "solution" in head)


async def _changes(request: Request, settings, owner: str, job_id: str, seconds: float,
                   final_only: bool = False) -> AsyncIterator[dict]:
    """The job's status document now, then after each change (`final_only`: each that may have
    finished it), until it has finished or `seconds` have passed (then once more). After a
    finish's notification, the document it carries (the first read, or the POST of this
    process that created the job, checked the owner)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    waiters = request.app.state.waiters
    with waiters.watch(job_id, final_only) as waiter:
        # a long poll on a job this process created for this owner skips the first read while
        # no finish note has come (registered first: a note after this check wakes the waiter)
        skip, note = waiters.unfinished_or_note(job_id, owner) if final_only and seconds > 0 else (False, None)
        while True:
            if skip:
                skip = False
            else:
                doc = with_detail(request.app, noted_document(note) if note is not None else
                                  await run_in_threadpool(_status_now, settings, owner, job_id))
                yield doc
                if doc["status"] in FINISHED or deadline <= loop.time():
                    return
            with contextlib.suppress(TimeoutError):  # re-read anyway: a notification may be lost
                await asyncio.wait_for(waiter.changed.wait(), min(max(deadline - loop.time(), 0), RECHECK_SECONDS))
            note = waiter.take()


@router.get("/{job_id}", response_model=JobStatus)
async def get_job(job_id: str, request: Request, settings: SettingsDep, owner: OwnerDep,
                  wait: Annotated[float, Query(ge=0, le=LONG_POLL_MAX_SECONDS, description=
                                               "long poll: answer when the job has finished, or after "
                                               "this many seconds")] = 0):
    doc = None
    async for doc in _changes(request, settings, owner, job_id, wait, final_only=True):
        if doc["status"] in FINISHED:
            break
    if wait > 0 and "results" in doc["links"]:  # the client's next request, most likely
        request.app.state.read_ahead.start(settings, owner, job_id, request.app.state.waiters)
    return status_response(doc)


@router.get("/{job_id}/events", responses={200: {"content": {"text/event-stream": {"schema": {"type": "string"}}},
                                                  "description": EVENTS_DOC}})
async def job_events(job_id: str, request: Request, settings: SettingsDep, owner: OwnerDep):
    await run_in_threadpool(_status_now, settings, owner, job_id)  # a 404 before the stream starts

    async def stream() -> AsyncIterator[bytes]:
        last = None
        while True:
            async for doc in _changes(request, settings, owner, job_id, KEEPALIVE_SECONDS):
                final = doc["status"] in FINISHED
                if (doc["status"], doc["progress"]) != last or final:
                    last = (doc["status"], doc["progress"])
                    yield f"event: {'end' if final else 'progress'}\ndata: {json.dumps(doc)}\n\n".encode()
                if final:
                    return
            yield b": keep-alive\n\n"

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@router.delete("/{job_id}", response_model=JobStatus)
def cancel_job(job_id: str, session: SessionDep, settings: SettingsDep, owner: OwnerDep):
    job = owned_job(session, owner, job_id)
    if not jobs.cancel(session, settings, job):
        raise ApiError(409, "job_finished", f"job {job_id} already ended with status {job.status!r}")
    return status_document(job)


def finished_result(settings, owner: str, job_id: str) -> tuple[Job, Result | None, dict, list[tuple[int, bytes]]]:
    """A download's first read: the job, its result, the result's head and, when small and in
    the database, its chunks (store.results.with_small_chunks: for open_source)."""
    with get_autocommit_engine(settings.database).connect() as conn:
        rows = conn.execute(_RESULT_QUERY, {"job_id": checked_id("job", job_id), "owner": owner}).all()
    if not rows:
        raise not_found("job", job_id)
    first = rows[0]._mapping
    job = _entity(Job, first, "j")
    result = _entity(Result, first, "r") if first["r_job_id"] is not None else None
    chunks = [(row.sensor, row.data) for row in rows if row.sensor is not None]
    if job.status in ("queued", "running"):
        raise ApiError(409, "job_not_finished", f"job {job_id} is {job.status}; results come when it has finished")
    if job.status == "canceled":
        raise ApiError(409, "job_canceled", f"job {job_id} was canceled and has no results")
    if result is None:  # failed before the core produced results (time limit, worker lost, ...)
        return job, None, {"status": "failed", "warnings": [], "solver": {}, "error": job.error}, []
    return job, result, result.head, chunks


class ReadAhead:
    """Results documents read ahead: a client that long-polled a job until it finished asks for
    its results next (`mbserve submit`, the Python client). The long poll's answer starts reading
    a small document (up to BYTES of floats) in a thread while the answer travels to the client,
    and that owner's GET of the results answers from it: no read and no thread hop on its path.
    A finished job's results never change. Each document is answered once; at most KEPT are
    kept, the oldest dropped (a client that never asks). Speculative work, so only when no other
    job is waited for (clients that only poll, 8 jobs at a time, paid ~2 ms of the API's CPU per
    job for it, and the API's CPU is their bound). Used in the event loop only."""
    KEPT = 32
    BYTES = 256 << 10

    def __init__(self):
        self.items: OrderedDict[tuple[str, str], asyncio.Future] = OrderedDict()

    def start(self, settings, owner: str, job_id: str, waiters) -> None:
        if (job_id, owner) not in self.items and not waiters.others_waited_for(job_id):
            self.items[job_id, owner] = asyncio.ensure_future(run_in_threadpool(_read_ahead, settings, owner, job_id))
            while len(self.items) > self.KEPT:
                self.items.popitem(last=False)

    async def take(self, owner: str, job_id: str) -> Response | None:
        """The answer read ahead for this owner's GET of the job's results, if any (once)."""
        ahead = self.items.pop((job_id, owner), None)
        return None if ahead is None else await ahead


def _read_ahead(settings, owner: str, job_id: str) -> Response | None:
    """The results document's answer when small (whole, not streamed), else None; None as well
    for an error, which the GET meets again by itself."""
    try:
        _, result, head, chunks = finished_result(settings, owner, job_id)
        arrays = result.sensors if result else []
        if raw_bytes(arrays) > ReadAhead.BYTES or not all("rows" in a for a in arrays):
            return None
        return _document(settings, result, head, chunks)
    except Exception:
        return None


def _document(settings, result: Result | None, head: dict, chunks: list[tuple[int, bytes]]) -> Response:
    source = open_source(settings, get_autocommit(settings.database), result, chunks)
    sensors = result.sensors if result else []
    return download(settings, source, sensors, lambda text: document_json(source, head, sensors, text),
                    "application/json")


def _results(settings, owner: str, job_id: str, data: bool):
    _, result, head, chunks = finished_result(settings, owner, job_id)
    if not data:  # the head and the sensors' metadata, from the database alone
        return {**{k: head[k] for k in HEAD_KEYS if k in head},
                "sensors": {s["name"]: {**{k: s[k] for k in META_KEYS}, "rows": s["rows"]}
                            for s in (result.sensors if result else [])}}
    return _document(settings, result, head, chunks)


@router.get("/{job_id}/results", responses={200: {"content": {"application/json": {}},
                                                   "description": "the results document (SPEC section 4)"}})
async def get_results(job_id: str, request: Request, settings: SettingsDep, owner: OwnerDep,
                      data: Annotated[bool, Query(description="false: each sensor's `rows` (a count) instead of "
                                                              "its `data`")] = True):
    answer = await request.app.state.read_ahead.take(owner, job_id) if data else None
    return answer if answer is not None else await run_in_threadpool(_results, settings, owner, job_id, data)


@router.get("/{job_id}/sensors/{sensor}", responses={200: {"content": {"application/json": {}, "text/csv": {}}}})
def get_sensor(job_id: str, sensor: str, settings: SettingsDep, owner: OwnerDep,
               format: Literal["json", "csv"] = "json"):
    job, result, _, chunks = finished_result(settings, owner, job_id)
    found = next((s for s in (result.sensors if result else []) if s["name"] == sensor), None)
    if found is None:
        raise not_found("sensor", sensor)
    source = open_source(settings, get_autocommit(settings.database), result, chunks)
    if format == "csv":
        return download(settings, source, [found], lambda text: sensor_csv(source, found, job.id, text), "text/csv",
                        {"Content-Disposition": f'attachment; filename="{job.id}-{found["key"]}.txt"'})
    return download(settings, source, [found], lambda text: sensor_json(source, found, text), "application/json")
