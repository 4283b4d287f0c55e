import hashlib
import json
from typing import Annotated, Literal

import multibody
from fastapi import APIRouter, Header, Query, Response
from fastapi.responses import StreamingResponse
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from store import jobs, queue
from store.models import Job, Result
from ...errors import ApiError, not_found
from store.jobs import status_document
from ...limits import check_model
from store.results import document_json, sensor_csv, sensor_json
from ...schemas import ERRORS, JobCreate, JobList, JobStatus
from ..deps import OwnerDep, RateLimited, SessionDep, SettingsDep
from .models import owned_model, validated

router = APIRouter(prefix="/v1/jobs", tags=["jobs"], responses=ERRORS)

Status = Literal["queued", "running", "succeeded", "failed", "canceled"]


def owned_job(session, owner: str, job_id: str) -> Job:
    job = session.scalar(select(Job).where(Job.id == job_id, Job.owner == owner))
    if job is None:
        raise not_found("job", job_id)
    return job


def _accepted(response: Response, job: Job) -> dict:
    response.headers["Location"] = f"/v1/jobs/{job.id}"
    return status_document(job)


@router.post("", status_code=202, response_model=JobStatus, dependencies=[RateLimited])
def create_job(body: JobCreate, response: Response, session: SessionDep, settings: SettingsDep,
               owner: OwnerDep, idempotency_key: Annotated[str | None, Header(max_length=255)] = None):
    request_hash = hashlib.sha256(body.model_dump_json().encode()).hexdigest()
    if idempotency_key is not None:
        earlier = session.scalar(select(Job).where(Job.owner == owner, Job.idempotency_key == idempotency_key))
        if earlier is not None:
            return _same_request(earlier, request_hash, response)
    if (body.model is None) == (body.modelId is None):
        raise ApiError(422, "invalid_request", "give exactly one of modelId and model",
                       [{"path": "$", "message": "exactly one of modelId, model is required"}])
    if body.model is not None:
        check_model(body.model, settings, prefix="model")
        model = jobs.store_model(session, owner, body.model, validated(body.model, settings, "model"))
    else:
        model = owned_model(session, owner, body.modelId)
    overrides = body.simulationSettings
    if body.store is not None and body.store.solution is not None:
        overrides = multibody.merge_settings({"simulationSettings": overrides or {}}, {
            "solution": {"file": {"write": body.store.solution}}})["simulationSettings"]
    if overrides:
        doc = multibody.merge_settings(json.loads(model.document), overrides)
        check_model(doc, settings)
        validated(doc, settings, "")
    try:
        job = jobs.create_job(session, owner, model.id, overrides, idempotency_key, request_hash)
    except IntegrityError:  # the same Idempotency-Key raced us
        session.rollback()
        earlier = session.scalar(select(Job).where(Job.owner == owner, Job.idempotency_key == idempotency_key))
        return _same_request(earlier, request_hash, response)
    queue.dispatch(settings, session, [job.id])
    return _accepted(response, job)


def _same_request(job: Job, request_hash: str, response: Response) -> dict:
    if job.request_hash != request_hash:
        raise ApiError(409, "idempotency_conflict", "this Idempotency-Key was used with a different request")
    return _accepted(response, job)


@router.get("", response_model=JobList)
def list_jobs(session: SessionDep, settings: SettingsDep, owner: OwnerDep, status: Status | None = None,
              limit: Annotated[int, Query(ge=1, le=1000)] = 50, cursor: str | None = None):
    query = select(Job).where(Job.owner == owner)
    if status:
        query = query.where(Job.status == status)
    if cursor:
        query = query.where(Job.id < cursor)
    limit = min(limit, settings.max_list_limit)
    rows = session.scalars(query.order_by(Job.id.desc()).limit(limit + 1)).all()
    return {"items": [status_document(j) for j in rows[:limit]],
            "nextCursor": rows[limit - 1].id if len(rows) > limit else None}


@router.get("/{job_id}", response_model=JobStatus)
def get_job(job_id: str, session: SessionDep, owner: OwnerDep):
    return status_document(owned_job(session, owner, job_id))


@router.delete("/{job_id}", response_model=JobStatus)
def cancel_job(job_id: str, session: SessionDep, owner: OwnerDep):
    job = owned_job(session, owner, job_id)
    if not jobs.cancel(session, job):
        raise ApiError(409, "job_finished", f"job {job_id} already ended with status {job.status!r}")
    return status_document(job)


def finished_result(session, owner: str, job_id: str) -> tuple[Job, Result | None, dict]:
    job = owned_job(session, owner, job_id)
    if job.status in ("queued", "running"):
        raise ApiError(409, "job_not_finished", f"job {job_id} is {job.status}; results come when it has finished")
    if job.status == "canceled":
        raise ApiError(409, "job_canceled", f"job {job_id} was canceled and has no results")
    result = session.get(Result, job_id)
    if result is None:  # failed before the core produced results (time limit, worker lost, ...)
        return job, None, {"status": "failed", "warnings": [], "solver": {}, "error": job.error}
    return job, result, result.head


@router.get("/{job_id}/results", responses={200: {"content": {"application/json": {}},
                                                   "description": "the results document (SPEC section 4)"}})
def get_results(job_id: str, session: SessionDep, settings: SettingsDep, owner: OwnerDep):
    _, result, head = finished_result(session, owner, job_id)
    return StreamingResponse(document_json(settings.results, head, result and result.path,
                                           result.sensors if result else []), media_type="application/json")


@router.get("/{job_id}/sensors/{sensor}", responses={200: {"content": {"application/json": {}, "text/csv": {}}}})
def get_sensor(job_id: str, sensor: str, session: SessionDep, settings: SettingsDep, owner: OwnerDep,
               format: Literal["json", "csv"] = "json"):
    job, result, _ = finished_result(session, owner, job_id)
    found = next((s for s in (result.sensors if result else []) if s["name"] == sensor), None)
    if found is None:
        raise not_found("sensor", sensor)
    if format == "csv":
        return StreamingResponse(sensor_csv(settings.results, result.path, found, job.id), media_type="text/csv",
                                 headers={"Content-Disposition": f'attachment; filename="{job.id}-{found["key"]}.txt"'})
    return StreamingResponse(sensor_json(settings.results, result.path, found), media_type="application/json")
